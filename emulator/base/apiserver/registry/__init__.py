"""One strategy per kind: the registry the API server looks a kind's rules up in.

Adding a kind: its strategy module here (a ``Strategy`` subclass, see ``strategy``) and one
line in ``STRATEGIES`` (``docs/architecture.md``, "Adding a kind", lists the other places).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from emulator.base.apiserver.registry.autoscaling import HorizontalPodAutoscalerStrategy
from emulator.base.apiserver.registry.config import ConfigMapStrategy, SecretStrategy
from emulator.base.apiserver.registry.controllerrevisions import ControllerRevisionStrategy
from emulator.base.apiserver.registry.events import EventStrategy
from emulator.base.apiserver.registry.karpenter import NodeClaimStrategy, NodePoolStrategy
from emulator.base.apiserver.registry.leases import LeaseStrategy
from emulator.base.apiserver.registry.nodes import NamespaceStrategy, NodeStrategy
from emulator.base.apiserver.registry.pods import BindingStrategy, PodStrategy, bind_pod
from emulator.base.apiserver.registry.priorityclasses import PriorityClassStrategy
from emulator.base.apiserver.registry.resource import (
    DeviceClassStrategy,
    ResourceClaimStrategy,
    ResourceClaimTemplateStrategy,
    ResourceSliceStrategy,
)
from emulator.base.apiserver.registry.storage import (
    CSIDriverStrategy,
    CSINodeStrategy,
    CSIStorageCapacityStrategy,
    PersistentVolumeClaimStrategy,
    PersistentVolumeStrategy,
    StorageClassStrategy,
    VolumeAttachmentStrategy,
)
from emulator.base.apiserver.registry.strategy import FieldGetter, StoreView, Strategy, field_text
from emulator.base.apiserver.registry.workloads import (
    CronJobStrategy,
    DaemonSetStrategy,
    DeploymentStrategy,
    JobStrategy,
    PodDisruptionBudgetStrategy,
    ReplicaSetStrategy,
    ServiceStrategy,
    StatefulSetStrategy,
)

__all__ = [
    "CLUSTER_SCOPED",
    "STRATEGIES",
    "FieldGetter",
    "StoreView",
    "Strategy",
    "bind_pod",
    "field_text",
    "selectable_fields",
]

STRATEGIES: Final[dict[str, type[Strategy]]] = {
    s.kind: s
    for s in (
        PodStrategy,
        NodeStrategy,
        BindingStrategy,
        EventStrategy,
        NamespaceStrategy,
        PriorityClassStrategy,
        LeaseStrategy,
        DeploymentStrategy,
        ReplicaSetStrategy,
        StatefulSetStrategy,
        DaemonSetStrategy,
        JobStrategy,
        CronJobStrategy,
        ServiceStrategy,
        PodDisruptionBudgetStrategy,
        ControllerRevisionStrategy,
        ConfigMapStrategy,
        SecretStrategy,
        PersistentVolumeStrategy,
        PersistentVolumeClaimStrategy,
        StorageClassStrategy,
        CSIDriverStrategy,
        CSINodeStrategy,
        CSIStorageCapacityStrategy,
        VolumeAttachmentStrategy,
        DeviceClassStrategy,
        ResourceClaimStrategy,
        ResourceClaimTemplateStrategy,
        ResourceSliceStrategy,
        HorizontalPodAutoscalerStrategy,
        NodePoolStrategy,
        NodeClaimStrategy,
    )
}
"""Every stored kind's strategy class, by kind: the API server makes one of each, the watch
hub and the HTTP door read the selectable fields here (``selectable_fields``)."""

CLUSTER_SCOPED: Final = frozenset(k for k, s in STRATEGIES.items() if not s.namespaced)
_NO_FIELDS: Final[Mapping[str, FieldGetter]] = {}


def selectable_fields(kind: str) -> Mapping[str, FieldGetter]:
    """``kind``'s selectable fields besides those of every kind (empty for an unknown kind)."""
    strategy = STRATEGIES.get(kind)
    return _NO_FIELDS if strategy is None else strategy.fields
