"""Upstream ``framework.NodeInfo`` (``framework/types.go``): one node and the pods on it, with
their sums, and the pieces it is made of.

What this module owns: ``NodeInfo`` (requested and non-zero requested ``Resource``, allocatable,
the pods and the pods with (anti-)affinity terms, used host ports, image states) with its
``add_pod`` / ``remove_pod`` / ``replace_pod`` / ``clone`` and its ``generation`` (from the
global ``next_generation``, which incremental snapshots compare); ``HostPortInfo`` (upstream's
conflict rule for 0.0.0.0); ``ImageStateSummary``.

What it does not own: the cache that keeps one NodeInfo per node and the snapshot that clones
them (``agents.scheduler.cache``), the columnar view over a snapshot's NodeInfos
(``node_table.py``), the PodInfos themselves (``pod_info.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from emulator.base.api.core import Node, Pod

from .pod_info import PodInfo
from .resource import Resource

__all__ = ["HostPortInfo", "ImageStateSummary", "NodeInfo", "next_generation"]


class HostPortInfo:
    """Used host ports of a node: ip → set of (protocol, port)."""

    __slots__ = ("_ports",)

    def __init__(self) -> None:
        self._ports: dict[str, dict[tuple[str, int], int]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        bucket = self._ports.setdefault(ip or "0.0.0.0", {})
        key = (protocol or "TCP", port)
        bucket[key] = bucket.get(key, 0) + 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        ip = ip or "0.0.0.0"
        bucket = self._ports.get(ip)
        if not bucket:
            return
        key = (protocol or "TCP", port)
        n = bucket.get(key, 0) - 1
        if n > 0:
            bucket[key] = n
        else:
            bucket.pop(key, None)
            if not bucket:
                del self._ports[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """Upstream ``CheckConflict``: 0.0.0.0 conflicts with the same (protocol, port) on any IP."""
        ip = ip or "0.0.0.0"
        key = (protocol or "TCP", port)
        if ip == "0.0.0.0":
            return any(key in b for b in self._ports.values())
        return key in self._ports.get(ip, {}) or key in self._ports.get("0.0.0.0", {})

    def __len__(self) -> int:
        return sum(sum(b.values()) for b in self._ports.values())

    def __bool__(self) -> bool:
        """``len(self) > 0``: no bucket is kept empty and no count at 0 (``add``, ``remove``)."""
        return bool(self._ports)

    def clone(self) -> HostPortInfo:
        c = _new_host_ports(HostPortInfo)  # without ``__init__`` (every snapshot clone takes one)
        ports = self._ports
        c._ports = {ip: dict(b) for ip, b in ports.items()} if ports else {}
        return c


_new_host_ports: Final = object.__new__


@dataclass(slots=True)
class ImageStateSummary:
    size: int
    num_nodes: int


_generation = itertools.count(1)

next_generation: Final[Callable[[], int]] = _generation.__next__
"""``next_generation()``: the global, monotonically increasing NodeInfo generation (upstream
``nextGeneration``); the counter's own ``__next__`` (a C call: five a pod in churn)."""


class NodeInfo:
    """Aggregated information about one node and the pods on it (assumed ones included).

    ``allocatable`` is shared between a NodeInfo and its clones (the snapshot's, the
    simulations'): read-only for plugins; ``set_node`` replaces it."""

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None) -> None:
        self.node: Node | None = None
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.generation = next_generation()
        if node is not None:
            self.set_node(node)

    @property
    def name(self) -> str:
        return self.node.metadata.name if self.node is not None else ""

    def set_node(self, node: Node) -> None:
        from emulator.base.api.resources import node_allocatable

        self.node = node
        self.allocatable = Resource.from_amounts(node_allocatable(node))
        self.generation = next_generation()

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity():
            self.pods_with_affinity.append(pi)
        if pi.required_anti_affinity_terms:
            self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, 1)

    def remove_pod(self, pod: Pod) -> bool:
        uid = pod.metadata.uid
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            if lst:  # (mostly empty: no loop set up)
                for i, p in enumerate(lst):
                    if p.pod.metadata.uid == uid:  # ``p.uid`` without the property's call
                        lst[i] = lst[-1]
                        lst.pop()
                        break
        pods = self.pods
        for i, p in enumerate(pods):
            if p.pod.metadata.uid == uid:
                pods[i] = pods[-1]
                pods.pop()
                self._update(p, -1)
                return True
        return False

    def replace_pod(self, pi: PodInfo) -> bool:
        """``remove_pod`` of the pod with ``pi``'s UID then ``add_pod(pi)``, for a ``pi`` whose
        derived data equals the filed one's (same spec: ``cache.reuse_pod_info``) and which has
        no host ports: the same lists in the same order (the removal swaps the last entry into
        the pod's place, the addition appends), the same amounts; one new generation. False
        (nothing changed) when the pod is not on this node."""
        uid = pi.pod.metadata.uid
        pods = self.pods
        # From the end: the pod an update confirms is usually among the last added. UIDs are
        # unique on a node, so the direction finds the same entry.
        for i in range(len(pods) - 1, -1, -1):
            if pods[i].pod.metadata.uid == uid:
                break
        else:
            return False
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for j, q in enumerate(lst):
                if q.pod.metadata.uid == uid:
                    lst[j] = lst[-1]
                    lst[-1] = pi
                    break
        pods[i] = pods[-1]
        pods[-1] = pi
        self.generation = next_generation()
        return True

    def _update(self, pi: PodInfo, sign: int) -> None:
        # ``self.requested.add_resource(pi.resource, sign)`` inline (every add and remove)
        r, o = self.requested, pi.resource
        r.milli_cpu += sign * o.milli_cpu
        r.memory += sign * o.memory
        r.ephemeral_storage += sign * o.ephemeral_storage
        r.allowed_pod_number += sign * o.allowed_pod_number
        if o.scalar_resources:
            scalars = r.scalar_resources
            for name, v in o.scalar_resources.items():
                scalars[name] = scalars.get(name, 0) + sign * v
        nz = self.non_zero_requested
        nz.milli_cpu += sign * pi.non_zero_cpu
        nz.memory += sign * pi.non_zero_memory
        if pi.host_ports:
            for ip, proto, port in pi.host_ports:
                if sign > 0:
                    self.used_ports.add(ip, proto, port)
                else:
                    self.used_ports.remove(ip, proto, port)
        self.generation = next_generation()

    def clone(self, image_states: dict[str, ImageStateSummary] | None = None) -> NodeInfo:
        """A copy whose lists and amounts are its own; ``image_states``: the clone's (shared,
        read-only: the cache's snapshot clones), else a copy of this NodeInfo's."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        # shared with the clone: replaced by ``set_node``, never changed in place. Plugins and
        # simulations (preemption, nominated pods) must treat ``allocatable`` as read-only.
        c.allocatable = self.allocatable
        c.image_states = dict(self.image_states) if image_states is None else image_states
        c.generation = self.generation
        return c

    def __repr__(self) -> str:
        return (
            f"<NodeInfo {self.name} pods={len(self.pods)} "
            f"cpu={self.requested.milli_cpu}/{self.allocatable.milli_cpu}m "
            f"mem={self.requested.memory}/{self.allocatable.memory} gen={self.generation}>"
        )
