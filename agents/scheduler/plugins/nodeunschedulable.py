"""``NodeUnschedulable`` (upstream ``plugins/nodeunschedulable/node_unschedulable.go``): Filter.

A node with ``spec.unschedulable: true`` (cordoned) rejects every pod that does not tolerate the
taint ``node.kubernetes.io/unschedulable:NoSchedule``: ``UnschedulableAndUnresolvable`` "node(s)
were unschedulable" (preemption cannot help). Registered events (v1.34, QueueingHints on):

=========================  ====================================================================
event                      hint: Queue when …
=========================  ====================================================================
Node Add|UpdateNodeTaint   the node was added schedulable, or went unschedulable → schedulable
Pod UpdatePodToleration    it is the rejected pod itself and it now tolerates the taint
=========================  ====================================================================

``filter_all`` (vectorised) reads the ``NodeTable``'s ``unschedulable`` column.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from agents.scheduler.framework.interface import ALL_PASS, FilterCodes, Handle
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    QueueingHint,
    Status,
)
from emulator.base.api.core import Node, Pod, Taint
from emulator.base.api.taints import tolerations_tolerate_taint

__all__ = [
    "ERR_REASON_UNKNOWN_CONDITION",
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "UNSCHEDULABLE_TAINT",
    "NodeUnschedulable",
]

NAME: Final = "NodeUnschedulable"
ERR_REASON_UNKNOWN_CONDITION: Final = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT: Final = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
_STATUSES: Final = (SUCCESS, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE))


def _tolerates(pod: Pod) -> bool:
    return tolerations_tolerate_taint(pod.spec.tolerations, UNSCHEDULABLE_TAINT)


class NodeUnschedulable:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNKNOWN_CONDITION)
        if node.spec.unschedulable and not _tolerates(pod):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)
        return SUCCESS

    def filter_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        if not table.any_unschedulable or _tolerates(pod):
            return ALL_PASS
        codes = table.unschedulable[rows].astype(np.int64)
        return FilterCodes(codes, _STATUSES) if np.count_nonzero(codes) else ALL_PASS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
                self.is_schedulable_after_pod_toleration_change,
            ),
        ]

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        if new is None:
            return QueueingHint.QueueSkip
        if (old is None and not new.spec.unschedulable) or (
            old is not None and old.spec.unschedulable and not new.spec.unschedulable
        ):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        if new is not None and new.metadata.uid == pod.metadata.uid and _tolerates(new):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def __repr__(self) -> str:
        return "<NodeUnschedulable>"
