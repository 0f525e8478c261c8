"""The allocator's vocabulary (upstream ``structured/internal/types.go`` and the request
accessors of ``internal/stable/allocator_stable.go``, v1.34).

What this module owns: ``Features`` (the DRA feature gates the allocator reads), ``DeviceID``
(driver, pool, device), the two error kinds (``AllocationError``: stop the scheduling attempt;
``NodeAllocationError``: upstream's ``ErrFailedAllocationOnNode``, only this node fails), the
request accessor that hides whether a request is a ``DeviceRequest.exactly`` or a
``firstAvailable`` sub-request, and the allocator's plain results (``DeviceResult``,
``ClaimAllocation``), which the plugin turns into API ``AllocationResult``s.

It reads the ``resource.k8s.io/v1`` structs by their upstream field names only (duck-typed),
so that the allocator is pure code over whatever objects the informers hold — a future
autoscaler simulating a node can call it with its own objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, Protocol

__all__ = [
    "ALLOCATION_MODE_ALL",
    "ALLOCATION_MODE_EXACT_COUNT",
    "ALLOCATION_RESULTS_MAX_SIZE",
    "AllocationError",
    "ClaimAllocation",
    "ConfigResult",
    "DeviceID",
    "DeviceResult",
    "Features",
    "NodeAllocationError",
    "RequestAccessor",
    "SelectorBackend",
    "claim_ref",
]

ALLOCATION_MODE_EXACT_COUNT: Final = "ExactCount"
ALLOCATION_MODE_ALL: Final = "All"
ALLOCATION_RESULTS_MAX_SIZE: Final = 32
"""Upstream ``resourceapi.AllocationResultsMaxSize``."""


@dataclass(frozen=True, slots=True)
class Features:
    """The DRA feature gates the allocator reads, with v1.34's defaults."""

    admin_access: bool = True  # DRAAdminAccess: beta, on
    prioritized_list: bool = True  # DRAPrioritizedList: beta, on
    partitionable_devices: bool = False  # DRAPartitionableDevices: alpha
    device_taints: bool = False  # DRADeviceTaints: alpha
    device_binding_and_status: bool = False  # DRADeviceBindingConditions: alpha
    consumable_capacity: bool = False  # DRAConsumableCapacity: alpha


class DeviceID(NamedTuple):
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


class AllocationError(Exception):
    """A problem with the input (a missing class, a bad selector): the whole scheduling
    attempt stops (upstream: an error from ``Allocate`` that is not ``ErrFailedAllocationOnNode``)."""


class NodeAllocationError(AllocationError):
    """Upstream ``ErrFailedAllocationOnNode``: allocation failed on this node only; the
    message becomes the node's unschedulable reason."""


class SelectorBackend(Protocol):
    """What the allocator needs of CEL (``emulator.base.api.dracel``): compile an expression
    (cached; raises on a compile error) and build a device's view."""

    def compile(self, expression: str) -> Any: ...

    def view(self, driver: str, device: Any) -> Any: ...


def claim_ref(claim: Any) -> str:
    """``klog.KObj(claim)``: ``namespace/name``, or the name alone without a namespace."""
    ns = claim.metadata.namespace
    return f"{ns}/{claim.metadata.name}" if ns else claim.metadata.name


@dataclass(frozen=True, slots=True)
class RequestAccessor:
    """A request or a ``firstAvailable`` sub-request, as the search sees it."""

    name: str
    device_class_name: str
    allocation_mode: str
    count: int
    admin_access: bool
    has_admin_access: bool
    selectors: Sequence[Any]
    tolerations: Sequence[Any]
    capacity: Any = None

    @staticmethod
    def of_request(request: Any) -> RequestAccessor:
        ex = request.exactly
        admin = getattr(ex, "admin_access", None)
        return RequestAccessor(
            name=request.name,
            device_class_name=ex.device_class_name or "",
            allocation_mode=ex.allocation_mode or ALLOCATION_MODE_EXACT_COUNT,
            count=ex.count if ex.count is not None else 1,
            admin_access=bool(admin),
            has_admin_access=admin is not None,
            selectors=ex.selectors or (),
            tolerations=getattr(ex, "tolerations", None) or (),
            capacity=getattr(ex, "capacity", None),
        )

    @staticmethod
    def of_sub_request(sub: Any) -> RequestAccessor:
        return RequestAccessor(
            name=sub.name,
            device_class_name=sub.device_class_name or "",
            allocation_mode=sub.allocation_mode or ALLOCATION_MODE_EXACT_COUNT,
            count=sub.count if sub.count is not None else 1,
            admin_access=False,
            has_admin_access=False,
            selectors=sub.selectors or (),
            tolerations=getattr(sub, "tolerations", None) or (),
            capacity=getattr(sub, "capacity", None),
        )


@dataclass(frozen=True, slots=True)
class DeviceResult:
    """Upstream ``DeviceRequestAllocationResult`` before it becomes an API struct."""

    request: str  # "req" or "req/sub"
    id: DeviceID
    admin_access: bool | None = None
    tolerations: Sequence[Any] = ()
    binding_conditions: Sequence[str] = ()
    binding_failure_conditions: Sequence[str] = ()
    share_id: str | None = None
    """A share of a device with ``allowMultipleAllocations`` (consumable capacity)."""
    consumed_capacity: Mapping[str, int] | None = None
    """What the share consumes, milli per capacity name."""


@dataclass(frozen=True, slots=True)
class ConfigResult:
    """Upstream ``DeviceAllocationConfiguration``: ``source`` FromClass | FromClaim."""

    source: str
    requests: tuple[str, ...]
    configuration: Any  # the DeviceConfiguration of the class or the claim (``opaque``)


@dataclass(frozen=True, slots=True)
class ClaimAllocation:
    """One claim's ``AllocationResult``: devices, config, and the node selector (None: any node)."""

    devices: tuple[DeviceResult, ...]
    config: tuple[ConfigResult, ...] = ()
    node_selector: Any = None


ClassGetter = Callable[[str], Any]
"""A device class by name, or None (upstream ``DeviceClassLister.Get``)."""
