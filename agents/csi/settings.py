"""What one simulated CSI driver is (the scenario's ``storage.drivers`` entry, as the agent
takes it) and the names its objects carry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from emulator.base.client.client import Latency

__all__ = [
    "CAPACITY_NAMESPACE",
    "DRIVER_NAME_LABEL",
    "MANAGED_BY_LABEL",
    "DriverSettings",
    "attacher_finalizer",
]

CAPACITY_NAMESPACE: Final = "kube-system"
"""Where the CSIStorageCapacity objects go (upstream: the external-provisioner's namespace)."""
DRIVER_NAME_LABEL: Final = "csi.storage.k8s.io/drivername"
MANAGED_BY_LABEL: Final = "csi.storage.k8s.io/managed-by"


def attacher_finalizer(driver: str) -> str:
    """The external-attacher's finalizer on a VolumeAttachment it attached
    (``external-attacher/<driver with dots and slashes as dashes>``)."""
    return "external-attacher/" + driver.replace(".", "-").replace("/", "-")


@dataclass(frozen=True, slots=True)
class DriverSettings:
    name: str
    topology_keys: tuple[str, ...] = ()
    attach_limit: int | None = None
    provision_delay: Latency = field(default_factory=Latency)
    attach_delay: Latency = field(default_factory=Latency)
    capacity_per_topology: int | None = None
    """Bytes per topology segment and StorageClass; None: no capacity tracking."""
