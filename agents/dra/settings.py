"""What one simulated DRA driver is (the scenario's node groups' ``devices`` sections for
one driver name, as the agent takes them) and the names its objects carry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from emulator.base.api.resource import DeviceAttribute, DeviceCapacity
from emulator.base.client.client import Latency

__all__ = ["DEFAULT_DEVICE_PREFIX", "MAX_DEVICES_PER_SLICE", "DRADriverSettings", "NodeDevices"]

DEFAULT_DEVICE_PREFIX: Final = "gpu-"
MAX_DEVICES_PER_SLICE: Final = 128
"""Upstream ``ResourceSliceMaxDevices``: one slice per node holds every device of the node."""


@dataclass(frozen=True, slots=True)
class NodeDevices:
    """The devices the driver publishes on each node of one group."""

    count: int
    attributes: Mapping[str, DeviceAttribute] = field(default_factory=dict)
    capacity: Mapping[str, DeviceCapacity] = field(default_factory=dict)
    prepare_delay: Latency = field(default_factory=Latency)
    name_prefix: str = DEFAULT_DEVICE_PREFIX
    allow_multiple_allocations: bool | None = None
    """The devices' ``allowMultipleAllocations`` (DRAConsumableCapacity: several claims share
    a device, each consuming part of its capacity)."""

    def __post_init__(self) -> None:
        if not 0 <= self.count <= MAX_DEVICES_PER_SLICE:
            raise ValueError(f"count must be in [0, {MAX_DEVICES_PER_SLICE}], got {self.count}")

    def names(self) -> list[str]:
        """``<prefix>0`` .. ``<prefix><count - 1>``."""
        return [f"{self.name_prefix}{i}" for i in range(self.count)]


@dataclass(frozen=True, slots=True)
class DRADriverSettings:
    name: str
    nodes: Mapping[str, NodeDevices]
    """Node name → what the driver publishes there (nodes not named get nothing)."""
