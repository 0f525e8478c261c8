"""Cluster events and queueing hints (upstream ``framework/events.go``, ``framework/types.go``):
what plugins register to be told about, and their verdict on whether a rejected pod may now fit.

Plugins import these names from ``types.py``, which re-exports them with the rest of the
framework's vocabulary.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from emulator.base.api.core import Pod

__all__ = [
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EventResource",
    "QueueingHint",
    "QueueingHintFn",
]


class ActionType(enum.IntFlag):
    """Upstream ``ActionType`` bits (framework/events.go)."""

    Add = 1 << 0
    Delete = 1 << 1
    UpdateNodeAllocatable = 1 << 2
    UpdateNodeLabel = 1 << 3
    UpdateNodeTaint = 1 << 4
    UpdateNodeCondition = 1 << 5
    UpdateNodeAnnotation = 1 << 6
    UpdatePodLabel = 1 << 7
    UpdatePodScaleDown = 1 << 8
    UpdatePodToleration = 1 << 9
    UpdatePodSchedulingGatesEliminated = 1 << 10
    UpdatePodGeneratedResourceClaim = 1 << 11
    All = (1 << 12) - 1
    Update = (
        UpdateNodeAllocatable
        | UpdateNodeLabel
        | UpdateNodeTaint
        | UpdateNodeCondition
        | UpdateNodeAnnotation
        | UpdatePodLabel
        | UpdatePodScaleDown
        | UpdatePodToleration
        | UpdatePodSchedulingGatesEliminated
        | UpdatePodGeneratedResourceClaim
    )


class EventResource(enum.Enum):
    Pod = "Pod"
    AssignedPod = "AssignedPod"
    UnscheduledPod = "UnscheduledPod"
    Node = "Node"
    PersistentVolume = "PersistentVolume"
    PersistentVolumeClaim = "PersistentVolumeClaim"
    StorageClass = "storage.k8s.io/StorageClass"
    CSINode = "storage.k8s.io/CSINode"
    CSIDriver = "storage.k8s.io/CSIDriver"
    CSIStorageCapacity = "storage.k8s.io/CSIStorageCapacity"
    ResourceClaim = "resource.k8s.io/ResourceClaim"
    ResourceSlice = "resource.k8s.io/ResourceSlice"
    DeviceClass = "resource.k8s.io/DeviceClass"
    WildCard = "*"


_POD_FAMILY: Final = frozenset({EventResource.Pod, EventResource.AssignedPod, EventResource.UnscheduledPod})


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: EventResource
    action: ActionType
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource is EventResource.WildCard and self.action == ActionType.All

    def match(self, incoming: ClusterEvent) -> bool:
        """Upstream ``MatchClusterEvents``: does this registered event cover ``incoming``?"""
        if self.is_wildcard():
            return True
        r = self.resource
        resource_ok = (
            r is EventResource.WildCard
            or r is incoming.resource
            or (r is EventResource.Pod and incoming.resource in _POD_FAMILY)
        )
        return resource_ok and bool(self.action & incoming.action) and incoming.action <= self.action

    def __str__(self) -> str:
        if self.label:
            return self.label
        return f"{self.resource.value}{self.action.name or int(self.action)}"


class QueueingHint(enum.Enum):
    QueueSkip = 0
    Queue = 1


QueueingHintFn = Callable[[Pod, Any, Any], QueueingHint]
"""``hint(pod, old_obj, new_obj) -> QueueingHint``; an exception counts as Queue."""


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None
