"""Dynamic Resource Allocation as the API stores it: ``resource.k8s.io/v1`` DeviceClass,
ResourceClaim, ResourceClaimTemplate and ResourceSlice, every field of upstream's
``k8s.io/api/resource/v1/types.go`` at v1.34.

A ResourceSlice is what a DRA driver publishes: a pool of devices (attributes, capacities,
counters they consume, taints) reachable from one node, a node selector, or every node. A
ResourceClaim asks for devices (``exactly`` one class with CEL selectors and a count, or the
prioritized list ``firstAvailable``), constrained (``matchAttribute``, ``distinctAttribute``) and
configured (opaque driver parameters); the scheduler writes ``status.allocation`` and
``status.reservedFor``. A DeviceClass names a kind of device (selectors, config). A
ResourceClaimTemplate is a claim spec the resourceclaim controller stamps out per pod.

Owns: the structs, the constants of their enumerations and the annotations and finalizer the
DRA agents pass between them. The status side (allocation results, reservations, device
status) is in ``resourcestatus``; defaulting, validation and the v1beta1/v1beta2 conversion
beside them (``resourcedefaults``, ``resourcevalidation``, ``resourceconvert``).

Wire names follow upstream's JSON tags; fields upstream marks required but the emulator decodes
leniently default to empty so that validation, not the decoder, reports them with their path.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from emulator.base.api.core import NodeSelector
from emulator.base.api.meta import K8s, ObjectMeta
from emulator.base.api.quantity import Quantity
from emulator.base.api.resourcestatus import (
    AllocatedDeviceStatus,
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    DeviceToleration,
    NetworkDeviceData,
    OpaqueDeviceConfiguration,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)

__all__ = [
    "ALLOCATION_MODES",
    "ALLOCATION_MODE_ALL",
    "ALLOCATION_MODE_EXACT_COUNT",
    "API_VERSION",
    "DRA_ADMIN_NAMESPACE_LABEL",
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "FINALIZER",
    "GROUP",
    "POD_CLAIM_NAME_ANNOTATION",
    "RESOURCE_DEVICE_CLASS_PREFIX",
    "RESOURCE_KINDS",
    "TAINT_EFFECTS",
    "TOLERATION_OPERATORS",
    "AllocatedDeviceStatus",
    "AllocationResult",
    "CELDeviceSelector",
    "CapacityRequestPolicy",
    "CapacityRequestPolicyRange",
    "CapacityRequirements",
    "Counter",
    "CounterSet",
    "Device",
    "DeviceAllocationConfiguration",
    "DeviceAllocationResult",
    "DeviceAttribute",
    "DeviceCapacity",
    "DeviceClaim",
    "DeviceClaimConfiguration",
    "DeviceClass",
    "DeviceClassConfiguration",
    "DeviceClassSpec",
    "DeviceConstraint",
    "DeviceCounterConsumption",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSelector",
    "DeviceSubRequest",
    "DeviceTaint",
    "DeviceToleration",
    "ExactDeviceRequest",
    "NetworkDeviceData",
    "OpaqueDeviceConfiguration",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimStatus",
    "ResourceClaimTemplate",
    "ResourceClaimTemplateSpec",
    "ResourcePool",
    "ResourceSlice",
    "ResourceSliceSpec",
]

GROUP: Final = "resource.k8s.io"
API_VERSION: Final = "resource.k8s.io/v1"

FINALIZER: Final = "resource.kubernetes.io/delete-protection"
"""Upstream ``resourceapi.Finalizer``: set on claims allocated through the builtin controller."""
EXTENDED_RESOURCE_CLAIM_ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"
POD_CLAIM_NAME_ANNOTATION: Final = "resource.kubernetes.io/pod-claim-name"
"""On a claim made from a template: the ``spec.resourceClaims[].name`` of the pod it is for."""
RESOURCE_DEVICE_CLASS_PREFIX: Final = "deviceclass.resource.kubernetes.io/"
DRA_ADMIN_NAMESPACE_LABEL: Final = "resource.kubernetes.io/admin-access"
"""A namespace label that allows ``adminAccess`` requests in it (upstream ``DRAAdminNamespaceLabelKey``)."""

ALLOCATION_MODE_EXACT_COUNT: Final = "ExactCount"
ALLOCATION_MODE_ALL: Final = "All"
ALLOCATION_MODES: Final = (ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT)
TAINT_EFFECTS: Final = ("NoExecute", "NoSchedule")
TOLERATION_OPERATORS: Final = ("Equal", "Exists")


# --- ResourceSlice -------------------------------------------------------------------------


class ResourcePool(K8s, frozen=True, omit_defaults=False):
    """Every field is written (upstream's have no ``omitempty``)."""

    name: str = ""
    generation: int = 0
    resource_slice_count: int = 0


class Counter(K8s, frozen=True):
    value: Quantity | None = None


class CounterSet(K8s, frozen=True):
    name: str = ""
    counters: dict[str, Counter] = {}


class DeviceAttribute(K8s, frozen=True):
    """One of four typed values (exactly one is set, validation says)."""

    int_value: int | None = msgspec.field(default=None, name="int")
    bool_value: bool | None = msgspec.field(default=None, name="bool")
    string_value: str | None = msgspec.field(default=None, name="string")
    version_value: str | None = msgspec.field(default=None, name="version")


class CapacityRequestPolicyRange(K8s, frozen=True):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(K8s, frozen=True):
    default: Quantity | None = None
    valid_values: list[Quantity] = []
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(K8s, frozen=True):
    value: Quantity | None = None
    request_policy: CapacityRequestPolicy | None = None


class DeviceCounterConsumption(K8s, frozen=True):
    counter_set: str = ""
    counters: dict[str, Counter] = {}


class DeviceTaint(K8s, frozen=True):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class Device(K8s, frozen=True):
    name: str = ""
    attributes: dict[str, DeviceAttribute] = {}
    capacity: dict[str, DeviceCapacity] = {}
    consumes_counters: list[DeviceCounterConsumption] = []
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = []
    binds_to_node: bool | None = None
    binding_conditions: list[str] = []
    binding_failure_conditions: list[str] = []
    allow_multiple_allocations: bool | None = None


class ResourceSliceSpec(K8s, frozen=True):
    driver: str = ""
    pool: ResourcePool = ResourcePool()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    devices: list[Device] = []
    per_device_node_selection: bool | None = None
    shared_counters: list[CounterSet] = []


class ResourceSlice(K8s, frozen=True):
    api_version: str = API_VERSION
    kind: str = "ResourceSlice"
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceSliceSpec = ResourceSliceSpec()


# --- ResourceClaim -------------------------------------------------------------------------


class CELDeviceSelector(K8s, frozen=True, omit_defaults=False):
    expression: str = ""


class DeviceSelector(K8s, frozen=True):
    cel: CELDeviceSelector | None = None


class CapacityRequirements(K8s, frozen=True):
    requests: dict[str, Quantity] = {}


class ExactDeviceRequest(K8s, frozen=True):
    device_class_name: str = ""
    selectors: list[DeviceSelector] = []
    allocation_mode: str = ""
    """Defaulted to ``ExactCount`` (``resourcedefaults``)."""
    count: int = 0
    """Defaulted to 1 with ``ExactCount``."""
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = []
    capacity: CapacityRequirements | None = None


class DeviceSubRequest(K8s, frozen=True):
    name: str = ""
    device_class_name: str = ""
    selectors: list[DeviceSelector] = []
    allocation_mode: str = ""
    count: int = 0
    tolerations: list[DeviceToleration] = []
    capacity: CapacityRequirements | None = None


class DeviceRequest(K8s, frozen=True):
    """Exactly one of ``exactly`` and ``firstAvailable``."""

    name: str = ""
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] = []


class DeviceConstraint(K8s, frozen=True):
    requests: list[str] = []
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(K8s, frozen=True):
    requests: list[str] = []
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(K8s, frozen=True):
    requests: list[DeviceRequest] = []
    constraints: list[DeviceConstraint] = []
    config: list[DeviceClaimConfiguration] = []


class ResourceClaimSpec(K8s, frozen=True):
    devices: DeviceClaim = DeviceClaim()


class ResourceClaim(K8s, frozen=True):
    api_version: str = API_VERSION
    kind: str = "ResourceClaim"
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceClaimSpec = ResourceClaimSpec()
    status: ResourceClaimStatus = ResourceClaimStatus()


class ResourceClaimTemplateSpec(K8s, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceClaimSpec = ResourceClaimSpec()


class ResourceClaimTemplate(K8s, frozen=True):
    api_version: str = API_VERSION
    kind: str = "ResourceClaimTemplate"
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceClaimTemplateSpec = ResourceClaimTemplateSpec()


# --- DeviceClass ---------------------------------------------------------------------------


class DeviceClassConfiguration(K8s, frozen=True):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassSpec(K8s, frozen=True):
    selectors: list[DeviceSelector] = []
    config: list[DeviceClassConfiguration] = []
    extended_resource_name: str | None = None


class DeviceClass(K8s, frozen=True):
    api_version: str = API_VERSION
    kind: str = "DeviceClass"
    metadata: ObjectMeta = ObjectMeta()
    spec: DeviceClassSpec = DeviceClassSpec()


RESOURCE_KINDS: Final[tuple[type[Any], ...]] = (DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice)
