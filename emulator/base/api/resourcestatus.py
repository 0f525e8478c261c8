"""The status side of a ``resource.k8s.io/v1`` ResourceClaim (upstream ``k8s.io/api/resource/v1``
v1.34): the allocation the scheduler writes (``status.allocation``), the consumers it reserves
the claim for (``status.reservedFor``), and what drivers report per device (``status.devices``),
with the two types the spec shares with them (a device toleration, an opaque configuration).

Owns the structs only; ``emulator.base.api.resource`` re-exports them beside the kinds.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from emulator.base.api.core import NodeSelector
from emulator.base.api.meta import Condition, K8s
from emulator.base.api.quantity import Quantity

__all__ = [
    "CONFIG_SOURCES",
    "CONFIG_SOURCE_CLAIM",
    "CONFIG_SOURCE_CLASS",
    "AllocatedDeviceStatus",
    "AllocationResult",
    "DeviceAllocationConfiguration",
    "DeviceAllocationResult",
    "DeviceRequestAllocationResult",
    "DeviceToleration",
    "NetworkDeviceData",
    "OpaqueDeviceConfiguration",
    "ResourceClaimConsumerReference",
    "ResourceClaimStatus",
]

CONFIG_SOURCE_CLASS: Final = "FromClass"
CONFIG_SOURCE_CLAIM: Final = "FromClaim"
CONFIG_SOURCES: Final = (CONFIG_SOURCE_CLAIM, CONFIG_SOURCE_CLASS)


class DeviceToleration(K8s, frozen=True):
    key: str = ""
    operator: str = ""
    """Defaulted to ``Equal``."""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class OpaqueDeviceConfiguration(K8s, frozen=True, omit_defaults=False):
    """Both fields are written (no ``omitempty`` upstream); ``parameters`` is the driver's JSON
    object, kept as written (upstream ``runtime.RawExtension``)."""

    driver: str = ""
    parameters: Any = None


class DeviceRequestAllocationResult(K8s, frozen=True):
    request: str = ""
    """The request's name, or ``<request>/<subrequest>`` for a ``firstAvailable`` choice."""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = []
    binding_conditions: list[str] = []
    binding_failure_conditions: list[str] = []
    share_id: str | None = msgspec.field(default=None, name="shareID")
    consumed_capacity: dict[str, Quantity] = {}


class DeviceAllocationConfiguration(K8s, frozen=True):
    source: str = ""
    requests: list[str] = []
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(K8s, frozen=True):
    results: list[DeviceRequestAllocationResult] = []
    config: list[DeviceAllocationConfiguration] = []


class AllocationResult(K8s, frozen=True):
    devices: DeviceAllocationResult = DeviceAllocationResult()
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class ResourceClaimConsumerReference(K8s, frozen=True):
    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


class NetworkDeviceData(K8s, frozen=True):
    interface_name: str = ""
    ips: list[str] = []
    hardware_address: str = ""


class AllocatedDeviceStatus(K8s, frozen=True):
    driver: str = ""
    pool: str = ""
    device: str = ""
    share_id: str | None = msgspec.field(default=None, name="shareID")
    conditions: list[Condition] = []
    data: Any = None
    network_data: NetworkDeviceData | None = None


class ResourceClaimStatus(K8s, frozen=True):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = []
    devices: list[AllocatedDeviceStatus] = []
