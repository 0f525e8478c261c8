"""Validation of the ``resource.k8s.io/v1`` kinds (upstream ``pkg/apis/resource/validation``,
v1.34): the entry points for all four kinds (``resource_problems``, ``resource_update_problems``)
and the rules of DeviceClasses and ResourceSlices; a claim's and a template's claim spec, a
claim's status writes and the helpers every kind shares are ``claimvalidation``'s.

ResourceSlice: a driver name and a pool (name of DNS subdomains, ``resourceSliceCount`` > 0,
``generation`` >= 0), exactly one of ``nodeName``/``nodeSelector`` (one term)/``allNodes``/
``perDeviceNodeSelection``, not both devices and shared counters, at most 128 devices (64 once
one has taints or consumes counters) with unique DNS-label names, at most 32 attributes and
capacities per device, each attribute exactly one typed value (strings and versions at most 64
bytes, versions semver 2.0.0), qualified attribute and capacity names. DeviceClass: selectors
(CEL), opaque configs, an extended resource name. On update a slice's driver, pool name and
node name are immutable, and a class's unchanged selectors and configs are not re-checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from emulator.base.api.claimvalidation import (
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    RESERVED_FOR_MAX_SIZE,
    Problem,
    binding_condition_problems,
    claim_spec_problems,
    claim_status_problems,
    dns_label_problems,
    invalid,
    opaque_problems,
    pool_name_problems,
    qualified_name_problems,
    selector_problems,
    subdomain_problems,
    too_long,
    too_many,
    unique_name_problems,
    validate_cel_selector,
)
from emulator.base.api.labels import label_value_errors, qualified_name_errors
from emulator.base.api.labelselector import label_name_problems, label_problems
from emulator.base.api.podvalidation import node_selector_problems
from emulator.base.api.quantity import Quantity
from emulator.base.api.resource import (
    TAINT_EFFECTS,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceTaint,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from emulator.base.api.volumevalidation import csi_driver_name_problems, quantity_problem, supported

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "RESERVED_FOR_MAX_SIZE",
    "Problem",
    "claim_status_problems",
    "resource_problems",
    "resource_update_problems",
    "validate_cel_selector",
]

SLICE_MAX_DEVICES: Final = 128
SLICE_MAX_DEVICES_ADVANCED: Final = 64
SLICE_MAX_COUNTER_SETS: Final = 8
MAX_ATTRIBUTES_AND_CAPACITIES: Final = 32
DEVICE_TAINTS_MAX_LENGTH: Final = 4
ATTRIBUTE_MAX_VALUE_LENGTH: Final = 64
DEVICE_CONFIG_MAX_SIZE: Final = 32
_IMMUTABLE: Final = "field is immutable"
_NODE_FIELDS: Final = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
_NUM = r"(0|[1-9]\d*)"
_PRE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER_RE: Final = re.compile(rf"^{_NUM}\.{_NUM}\.{_NUM}(-{_PRE}(\.{_PRE})*)?(\+{_BUILD}(\.{_BUILD})*)?$")


# --- device classes -------------------------------------------------------------------------------


def _device_class(dc: DeviceClass, old: DeviceClass | None) -> Iterator[Problem]:
    spec = dc.spec
    if old is None or spec.selectors != old.spec.selectors:
        yield from selector_problems(spec.selectors, "spec.selectors")
    if len(spec.config) > DEVICE_CONFIG_MAX_SIZE:
        yield "spec.config", too_many(len(spec.config), DEVICE_CONFIG_MAX_SIZE)
    else:
        stored = old is not None and spec.config == old.spec.config
        for i, c in enumerate(spec.config):
            yield from opaque_problems(c.opaque, f"spec.config[{i}]", stored=stored)
    name = spec.extended_resource_name
    if name is not None and not _is_extended_resource_name(name):
        yield "spec.extendedResourceName", invalid(name, "must be a valid extended resource name")


def _is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``: not ``kubernetes.io/``-prefixed, not ``requests.``-prefixed,
    with a domain, and ``requests.<name>`` a qualified name."""
    if name.startswith("requests.") or "/" not in name:
        return False
    domain = name.split("/", 1)[0]
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return False
    return not qualified_name_errors("requests." + name)


# --- resource slices ------------------------------------------------------------------------------


def _attribute(attr: DeviceAttribute, path: str) -> Iterator[Problem]:
    n = 0
    for value in (attr.bool_value, attr.int_value):
        n += value is not None
    if attr.string_value is not None:
        n += 1
        if len(attr.string_value.encode()) > ATTRIBUTE_MAX_VALUE_LENGTH:
            yield f"{path}.string", too_long(ATTRIBUTE_MAX_VALUE_LENGTH)
    if attr.version_value is not None:
        n += 1
        v = attr.version_value
        if _SEMVER_RE.fullmatch(v) is None:
            yield f"{path}.version", invalid(v, "must be a string compatible with semver.org spec 2.0.0")
        if len(v.encode()) > ATTRIBUTE_MAX_VALUE_LENGTH:
            yield f"{path}.version", too_long(ATTRIBUTE_MAX_VALUE_LENGTH)
    if n == 0:
        yield path, invalid("", "exactly one value must be specified")
    elif n > 1:
        yield path, invalid(attr, "exactly one value must be specified")


def _taint(t: DeviceTaint, path: str) -> Iterator[Problem]:
    yield from label_name_problems(t.key, f"{path}.key")
    if t.value:
        for msg in label_value_errors(t.value):
            yield f"{path}.value", invalid(t.value, msg)
    if not t.effect:
        yield f"{path}.effect", "Required value"
    elif t.effect not in TAINT_EFFECTS:
        yield f"{path}.effect", supported(t.effect, TAINT_EFFECTS)


def _quantities(values: Mapping[str, Any], path: str) -> Iterator[Problem]:
    for name in sorted(values):
        q = values[name].value
        if q is None:
            yield f"{path}[{name}].value", "Required value"
        elif isinstance(q, Quantity) and (problem := quantity_problem(q, f"{path}[{name}].value")):
            yield problem


def _device(d: Device, path: str, per_device: bool) -> Iterator[Problem]:
    yield from dns_label_problems(d.name, f"{path}.name")
    total = len(d.attributes) + len(d.capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES:
        detail = f"the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"
        yield path, f"Invalid value: {total}: {detail}"
    for name in sorted(d.attributes):
        yield from qualified_name_problems(name, f"{path}.attributes")
        yield from _attribute(d.attributes[name], f"{path}.attributes[{name}]")
    for name in sorted(d.capacity):
        yield from qualified_name_problems(name, f"{path}.capacity")
        cap = d.capacity[name]
        if cap.request_policy is not None and not d.allow_multiple_allocations:
            yield f"{path}.capacity[{name}].requestPolicy", "Forbidden: allowMultipleAllocations must be true"
    yield from _quantities(d.capacity, f"{path}.capacity")
    if len(d.taints) > DEVICE_TAINTS_MAX_LENGTH:
        yield f"{path}.taints", too_many(len(d.taints), DEVICE_TAINTS_MAX_LENGTH)
    else:
        for i, t in enumerate(d.taints):
            yield from _taint(t, f"{path}.taints[{i}]")
    if per_device:
        yield from _per_device_node(d, path)
    elif d.node_name is not None or d.node_selector is not None or d.all_nodes is not None:
        detail = (
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true "
            "in the ResourceSlice spec"
        )
        yield path, f"Invalid value: null: {detail}"
    yield from binding_condition_problems(d.binding_conditions, d.binding_failure_conditions, path)


def _per_device_node(d: Device, path: str) -> Iterator[Problem]:
    chosen: list[str] = []
    if d.node_name is not None:
        if d.node_name:
            chosen.append("`nodeName`")
            yield from subdomain_problems(d.node_name, f"{path}.nodeName")
        else:
            yield f"{path}.nodeName", invalid("", "must not be empty")
    if d.node_selector is not None:
        chosen.append("`nodeSelector`")
        yield from node_selector_problems(d.node_selector, f"{path}.nodeSelector")
    if d.all_nodes is not None:
        if d.all_nodes:
            chosen.append("`allNodes`")
        else:
            yield f"{path}.allNodes", "Invalid value: false: must be either unset or set to true"
    detail = (
        "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is "
        "set to true in the ResourceSlice spec"
    )
    if not chosen:
        yield path, f"Required value: {detail}"
    elif len(chosen) > 1:
        yield path, invalid("{" + ", ".join(chosen) + "}", detail)


def _slice(rs: ResourceSlice, old: ResourceSlice | None) -> Iterator[Problem]:
    spec = rs.spec
    yield from csi_driver_name_problems(spec.driver, "spec.driver")
    yield from pool_name_problems(spec.pool.name, "spec.pool.name")
    if spec.pool.resource_slice_count <= 0:
        yield (
            "spec.pool.resourceSliceCount",
            f"Invalid value: {spec.pool.resource_slice_count}: must be greater than zero",
        )
    if spec.pool.generation < 0:
        yield "spec.pool.generation", f"Invalid value: {spec.pool.generation}: must be greater than or equal to zero"
    if old is not None:
        for path, new_v, old_v in (
            ("spec.pool.name", spec.pool.name, old.spec.pool.name),
            ("spec.driver", spec.driver, old.spec.driver),
            ("spec.nodeName", spec.node_name, old.spec.node_name),
        ):
            if new_v != old_v:
                yield path, invalid(new_v if new_v is not None else None, _IMMUTABLE)
    chosen: list[str] = []
    if spec.node_name is not None:
        if spec.node_name:
            chosen.append("`nodeName`")
            yield from subdomain_problems(spec.node_name, "spec.nodeName")
        else:
            yield "spec.nodeName", invalid("", "must be either unset or set to a non-empty string")
    if spec.node_selector is not None:
        chosen.append("`nodeSelector`")
        yield from node_selector_problems(spec.node_selector, "spec.nodeSelector")
        if len(spec.node_selector.node_selector_terms) != 1:
            terms = spec.node_selector.node_selector_terms
            yield "spec.nodeSelector.nodeSelectorTerms", invalid(terms, "must have exactly one node selector term")
    for attr, wire in (("all_nodes", "allNodes"), ("per_device_node_selection", "perDeviceNodeSelection")):
        value = getattr(spec, attr)
        if value is not None:
            if value:
                chosen.append(f"`{wire}`")
            else:
                yield f"spec.{wire}", "Invalid value: false: must be either unset or set to true"
    if not chosen:
        yield "spec", f"Required value: {_NODE_FIELDS}"
    elif len(chosen) > 1:
        yield "spec", invalid("{" + ", ".join(chosen) + "}", f"{_NODE_FIELDS}, but multiple fields are set")
    advanced = any(d.taints or d.consumes_counters for d in spec.devices)
    limit = SLICE_MAX_DEVICES_ADVANCED if advanced else SLICE_MAX_DEVICES
    if len(spec.devices) > limit:
        yield "spec.devices", too_many(len(spec.devices), limit)
    else:
        for i, d in enumerate(spec.devices):
            yield from _device(d, f"spec.devices[{i}]", bool(spec.per_device_node_selection))
        yield from unique_name_problems(spec.devices, "spec.devices")
    if len(spec.shared_counters) > SLICE_MAX_COUNTER_SETS:
        yield "spec.sharedCounters", too_many(len(spec.shared_counters), SLICE_MAX_COUNTER_SETS)
    else:
        for i, cs in enumerate(spec.shared_counters):
            yield from dns_label_problems(cs.name, f"spec.sharedCounters[{i}].name")
            if not cs.counters:
                yield f"spec.sharedCounters[{i}].counters", "Required value"
        yield from unique_name_problems(spec.shared_counters, "spec.sharedCounters")


# --- entry points ---------------------------------------------------------------------------------


def resource_problems(obj: Any) -> Iterator[Problem]:
    """A ``resource.k8s.io`` object's create validation (defaulted first by the caller)."""
    if isinstance(obj, ResourceClaim):
        yield from claim_spec_problems(obj.spec)
    elif isinstance(obj, ResourceClaimTemplate):
        meta = obj.spec.metadata
        yield from label_problems(meta.labels, "spec.metadata.labels")
        yield from claim_spec_problems(obj.spec.spec, "spec.spec")
    elif isinstance(obj, DeviceClass):
        yield from _device_class(obj, None)
    elif isinstance(obj, ResourceSlice):
        yield from _slice(obj, None)


def resource_update_problems(current: Any, candidate: Any) -> Iterator[Problem]:
    """The update rules: a claim's and a template's spec are immutable (nothing else of them is
    re-validated), a class and a slice are validated again against the stored one."""
    if isinstance(candidate, ResourceClaim | ResourceClaimTemplate):
        if candidate.spec != current.spec:
            yield "spec", invalid(candidate.spec, _IMMUTABLE)
    elif isinstance(candidate, DeviceClass):
        yield from _device_class(candidate, current)
    elif isinstance(candidate, ResourceSlice):
        yield from _slice(candidate, current)
