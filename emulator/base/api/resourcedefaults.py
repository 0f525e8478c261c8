"""Upstream's defaulting of the ``resource.k8s.io/v1`` kinds (``pkg/apis/resource/v1/defaults.go``
and the ``+default`` tags of ``k8s.io/api/resource/v1``) and the fields its strategies drop
while their feature gate is off (``dropDisabledFields`` of ``pkg/registry/resource/*/strategy.go``).

Defaults: a request (``exactly``, or each ``firstAvailable`` entry) without ``allocationMode``
is ``ExactCount``, and ``ExactCount`` without ``count`` is 1; a device toleration's operator is
``Equal``. Idempotent: a stored object is unchanged by ``default_resource``.

Gates (v1.34 defaults, ``DRA_GATES``): the beta gates ``DRAPrioritizedList``, ``DRAAdminAccess``
and ``DRAResourceClaimDeviceStatus`` are on, so ``firstAvailable``, ``adminAccess`` and
``status.devices`` are kept. The alpha gates ``DRADeviceTaints`` (device taints, request
tolerations), ``DRAPartitionableDevices`` (shared counters, counter consumption, per-device node
selection), ``DRAConsumableCapacity`` (``allowMultipleAllocations``, capacity request policies,
capacity requests, ``distinctAttribute``, share IDs, consumed capacity),
``DRADeviceBindingConditions`` (``bindsToNode``, binding conditions) and ``DRAExtendedResource``
(``extendedResourceName``) are off: upstream's API server drops those fields on create (and on
update when the stored object did not use them yet). ``dropped_fields`` names what a written
object loses, so the scenario loader and ``serve`` warn about it instead of dropping it silently,
and ``drop_disabled`` drops them as upstream does (the emulator has no gate switches: v1.34's
defaults hold).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final, TypeVar

from msgspec.structs import replace

from emulator.base.api.resource import (
    ALLOCATION_MODE_EXACT_COUNT,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceSlice,
)
from emulator.base.api.resourcestatus import DeviceToleration

__all__ = ["DRA_GATES", "default_claim_spec", "default_resource", "drop_disabled", "dropped_fields"]

DRA_GATES: Final = {
    "DRAAdminAccess": True,
    "DRAConsumableCapacity": False,
    "DRADeviceBindingConditions": False,
    "DRADeviceTaints": False,
    "DRAExtendedResource": False,
    "DRAPartitionableDevices": False,
    "DRAPrioritizedList": True,
    "DRAResourceClaimDeviceStatus": True,
}
"""The DRA feature gates of v1.34 with their default values (``pkg/features``)."""


def _tolerations(ts: list[DeviceToleration]) -> list[DeviceToleration]:
    if all(t.operator for t in ts):
        return ts
    return [t if t.operator else replace(t, operator="Equal") for t in ts]


_Counted = TypeVar("_Counted", ExactDeviceRequest, DeviceSubRequest)


def _counted(r: _Counted) -> _Counted:
    """An exact request's or a sub-request's mode, count and tolerations defaulted."""
    mode = r.allocation_mode or ALLOCATION_MODE_EXACT_COUNT
    count = 1 if mode == ALLOCATION_MODE_EXACT_COUNT and r.count == 0 else r.count
    tolerations = _tolerations(r.tolerations)
    if (mode, count) == (r.allocation_mode, r.count) and tolerations is r.tolerations:
        return r
    return replace(r, allocation_mode=mode, count=count, tolerations=tolerations)


def _request(r: DeviceRequest) -> DeviceRequest:
    exactly = _counted(r.exactly) if r.exactly is not None else None
    subs = [_counted(s) for s in r.first_available]
    if exactly is r.exactly and all(a is b for a, b in zip(subs, r.first_available, strict=True)):
        return r
    return replace(r, exactly=exactly, first_available=subs)


def default_claim_spec(spec: ResourceClaimSpec) -> ResourceClaimSpec:
    """A claim spec with upstream's defaults (``spec`` itself when it has them all)."""
    requests = [_request(r) for r in spec.devices.requests]
    if all(a is b for a, b in zip(requests, spec.devices.requests, strict=True)):
        return spec
    return replace(spec, devices=replace(spec.devices, requests=requests))


def default_resource(obj: Any) -> Any:
    """``obj`` (a ``resource.k8s.io`` kind) with upstream's defaults; other objects unchanged."""
    if isinstance(obj, ResourceClaim):
        spec = default_claim_spec(obj.spec)
        return obj if spec is obj.spec else replace(obj, spec=spec)
    if isinstance(obj, ResourceClaimTemplate):
        spec = default_claim_spec(obj.spec.spec)
        return obj if spec is obj.spec.spec else replace(obj, spec=replace(obj.spec, spec=spec))
    return obj


# --- fields of gates that are off ------------------------------------------------------------


def _claim_spec_gated(spec: ResourceClaimSpec, path: str) -> Iterator[tuple[str, str]]:
    for i, r in enumerate(spec.devices.requests):
        rp = f"{path}.devices.requests[{i}]"
        subs: list[tuple[str, Any]] = [(f"{rp}.exactly", r.exactly)] if r.exactly is not None else []
        subs += [(f"{rp}.firstAvailable[{j}]", s) for j, s in enumerate(r.first_available)]
        for sp, s in subs:
            if s.tolerations:
                yield f"{sp}.tolerations", "DRADeviceTaints"
            if s.capacity is not None:
                yield f"{sp}.capacity", "DRAConsumableCapacity"
    for i, c in enumerate(spec.devices.constraints):
        if c.distinct_attribute is not None:
            yield f"{path}.devices.constraints[{i}].distinctAttribute", "DRAConsumableCapacity"


def _slice_gated(obj: ResourceSlice) -> Iterator[tuple[str, str]]:
    spec = obj.spec
    if spec.per_device_node_selection is not None:
        yield "spec.perDeviceNodeSelection", "DRAPartitionableDevices"
    if spec.shared_counters:
        yield "spec.sharedCounters", "DRAPartitionableDevices"
    for i, d in enumerate(spec.devices):
        dp = f"spec.devices[{i}]"
        if d.taints:
            yield f"{dp}.taints", "DRADeviceTaints"
        if d.consumes_counters:
            yield f"{dp}.consumesCounters", "DRAPartitionableDevices"
        for attr, wire in (("node_name", "nodeName"), ("node_selector", "nodeSelector"), ("all_nodes", "allNodes")):
            if getattr(d, attr) is not None:
                yield f"{dp}.{wire}", "DRAPartitionableDevices"
        if d.allow_multiple_allocations is not None:
            yield f"{dp}.allowMultipleAllocations", "DRAConsumableCapacity"
        for name in sorted(d.capacity):
            if d.capacity[name].request_policy is not None:
                yield f"{dp}.capacity[{name}].requestPolicy", "DRAConsumableCapacity"
        if d.binds_to_node is not None:
            yield f"{dp}.bindsToNode", "DRADeviceBindingConditions"
        if d.binding_conditions:
            yield f"{dp}.bindingConditions", "DRADeviceBindingConditions"
        if d.binding_failure_conditions:
            yield f"{dp}.bindingFailureConditions", "DRADeviceBindingConditions"


def dropped_fields(obj: Any, gates: Mapping[str, bool] | None = None) -> list[tuple[str, str]]:
    """The fields of ``obj`` that upstream's API server, with ``gates`` (default: v1.34's),
    drops on create, as ``(path, gate)`` in field order."""
    on = DRA_GATES if gates is None else {**DRA_GATES, **gates}
    found: list[tuple[str, str]] = []
    if isinstance(obj, ResourceClaim):
        found = list(_claim_spec_gated(obj.spec, "spec"))
    elif isinstance(obj, ResourceClaimTemplate):
        found = list(_claim_spec_gated(obj.spec.spec, "spec.spec"))
    elif isinstance(obj, ResourceSlice):
        found = list(_slice_gated(obj))
    elif isinstance(obj, DeviceClass) and obj.spec.extended_resource_name is not None:
        found = [("spec.extendedResourceName", "DRAExtendedResource")]
    return [(path, gate) for path, gate in found if not on[gate]]


def _drop_claim_spec(spec: ResourceClaimSpec, on: dict[str, bool]) -> ResourceClaimSpec:
    taints, capacity = on["DRADeviceTaints"], on["DRAConsumableCapacity"]

    def counted(r: _Counted) -> _Counted:
        return replace(r, tolerations=r.tolerations if taints else [], capacity=r.capacity if capacity else None)

    requests = [
        replace(
            r,
            exactly=counted(r.exactly) if r.exactly is not None else None,
            first_available=[counted(s) for s in r.first_available],
        )
        for r in spec.devices.requests
    ]
    constraints = spec.devices.constraints
    if not capacity:
        constraints = [replace(c, distinct_attribute=None) for c in constraints]
    return replace(spec, devices=replace(spec.devices, requests=requests, constraints=constraints))


def _drop_device(d: Device, on: dict[str, bool]) -> Device:
    if not on["DRADeviceTaints"]:
        d = replace(d, taints=[])
    if not on["DRAPartitionableDevices"]:
        d = replace(d, consumes_counters=[], node_name=None, node_selector=None, all_nodes=None)
    if not on["DRAConsumableCapacity"]:
        capacity = {k: replace(v, request_policy=None) for k, v in d.capacity.items()}
        d = replace(d, allow_multiple_allocations=None, capacity=capacity)
    if not on["DRADeviceBindingConditions"]:
        d = replace(d, binds_to_node=None, binding_conditions=[], binding_failure_conditions=[])
    return d


def drop_disabled(obj: Any, gates: Mapping[str, bool] | None = None) -> Any:
    """``obj`` without the fields of the gates that are off (``gates`` over v1.34's defaults;
    ``obj`` itself when it has none), as upstream's ``dropDisabledFields`` on create."""
    if not dropped_fields(obj, gates):
        return obj
    on = DRA_GATES if gates is None else {**DRA_GATES, **gates}
    if isinstance(obj, ResourceClaim):
        return replace(obj, spec=_drop_claim_spec(obj.spec, on))
    if isinstance(obj, ResourceClaimTemplate):
        return replace(obj, spec=replace(obj.spec, spec=_drop_claim_spec(obj.spec.spec, on)))
    if isinstance(obj, ResourceSlice):
        spec = obj.spec
        if not on["DRAPartitionableDevices"]:
            spec = replace(spec, per_device_node_selection=None, shared_counters=[])
        return replace(obj, spec=replace(spec, devices=[_drop_device(d, on) for d in spec.devices]))
    if isinstance(obj, DeviceClass):
        return replace(obj, spec=replace(obj.spec, extended_resource_name=None))
    return obj
