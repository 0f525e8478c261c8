"""The DRA side of the observer's GPU allocation: devices published per node and the part of a
device each allocated ResourceClaim holds, so that ``gpuAllocation`` counts DRA devices as it
counts ``nvidia.com/gpu`` (``gpuSharing: dra`` traces, ``scenarios/gpu-claims.yaml``).

Units are milli-devices: a whole device (a ``nvidia.com/gpu`` or a DRA device) is 1000. A
claim's result on a device shared through consumable capacity holds the largest fraction of the
device's capacities it consumed (``share: 250m`` of ``1``: 250); any other result a whole
device; an ``adminAccess`` result none. A pod holds the sum of its claims' (a claim shared by
several pods counts for each); a node offers 1000 per device of the ResourceSlices naming it.
Every device counts, whatever its driver: the scenarios' DRA devices are GPUs.
"""

from __future__ import annotations

from typing import Any

from emulator.base.api.core import Pod

__all__ = ["DeviceUse"]

WHOLE = 1000


def _milli(q: Any) -> int:
    return int(q.milli)


class DeviceUse:
    """What the observer knows of DRA devices (O(devices) per slice write, O(results) per claim)."""

    def __init__(self) -> None:
        self.slices: dict[str, tuple[str, int]] = {}
        """Slice name → (its node, its device count)."""
        self.per_node: dict[str, int] = {}
        self.capacity: dict[tuple[str, str, str], dict[str, int]] = {}
        """(driver, pool, device) → its capacities in milli."""
        self.claims: dict[str, int] = {}
        """``namespace/name`` → milli-devices its allocation holds."""

    def node_devices(self, node: str) -> int:
        return WHOLE * self.per_node.get(node, 0)

    def slice(self, old: Any, new: Any) -> str | None:
        """A ResourceSlice write; the node whose device count changed, if any."""
        obj = new if new is not None else old
        name, before = obj.metadata.name, self.slices.get(obj.metadata.name)
        spec = obj.spec
        if new is not None:
            for d in spec.devices:
                key = (spec.driver, spec.pool.name, d.name)
                self.capacity[key] = {k: _milli(c.value) for k, c in d.capacity.items() if c.value is not None}
        node = spec.node_name or ""
        after = (node, len(spec.devices)) if new is not None and node else None
        if after == before:
            return None
        if before is not None:
            self.per_node[before[0]] -= before[1]
        if after is None:
            self.slices.pop(name, None)
        else:
            self.slices[name] = after
            self.per_node[node] = self.per_node.get(node, 0) + after[1]
        return node or (before[0] if before is not None else None)

    def claim(self, old: Any, new: Any) -> None:
        """A ResourceClaim write: what its allocation holds now."""
        obj = new if new is not None else old
        key = f"{obj.metadata.namespace}/{obj.metadata.name}"
        allocation = new.status.allocation if new is not None else None
        if allocation is None:
            self.claims.pop(key, None)
            return
        held = 0
        for r in allocation.devices.results:
            if r.admin_access:
                continue
            cap = self.capacity.get((r.driver, r.pool, r.device), {})
            parts = [WHOLE * _milli(q) // cap[k] for k, q in r.consumed_capacity.items() if cap.get(k)]
            held += min(max(parts), WHOLE) if parts else WHOLE
        self.claims[key] = held

    def pod_devices(self, pod: Pod) -> int:
        """Milli-devices the pod's allocated claims hold (0 for a pod without claims)."""
        if not pod.spec.resource_claims:
            return 0
        ns = pod.metadata.namespace
        names = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
        total = 0
        for entry in pod.spec.resource_claims:
            claim = entry.resource_claim_name or names.get(entry.name)
            if claim:
                total += self.claims.get(f"{ns}/{claim}", 0)
        return total
