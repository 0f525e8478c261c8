"""``TaintToleration`` (upstream ``plugins/tainttoleration/taint_toleration.go``): Filter, PreScore,
Score (with a reversed NormalizeScore).

What this module owns: whether a pod's tolerations let it onto a node's hard taints, and how much
a node's soft (``PreferNoSchedule``) taints count against it. Toleration matching itself is
``emulator.base.api.taints`` (``Toleration.ToleratesTaint``: empty effect matches every effect,
empty key with ``Exists`` every key, ``Exists`` ignores the value, ``Equal``/"" compares it).

==============  ===========================================================================
point           behaviour
==============  ===========================================================================
Filter          the first node taint with effect ``NoSchedule`` or ``NoExecute`` that no
                toleration tolerates → ``UnschedulableAndUnresolvable``
                "node(s) had untolerated taint(s)" (``ERR_REASON_UNTOLERATED``: since
                #134740, cherry-picked to release-1.34, the message names no taint key or
                value); ``PreferNoSchedule`` never filters
PreScore        keeps the pod's tolerations whose effect is ``PreferNoSchedule`` or empty
                (CycleState ``PreScoreTaintToleration``); never skips
Score           the number of the node's ``PreferNoSchedule`` taints none of those tolerate
NormalizeScore  ``default_normalize_score(100, reverse=True)``: highest count 0 → every node
                100; else ``100 - 100 * count // highest``
==============  ===========================================================================

Events (v1.34, QueueingHints on):

==========================  ===============================================================
event                       hint: Queue when …
==========================  ===============================================================
Node Add|UpdateNodeTaint    the node had an untolerated NoSchedule/NoExecute taint (or is
                            new) and now has none
Pod UpdatePodToleration     the updated pod is the rejected pod itself
==========================  ===============================================================

Vectorised (``filter_all`` / ``score_all`` / ``normalize_score_all``): the per-node functions
above, evaluated once per node and pod tolerations as ``NodeTable`` derived columns (re-evaluated
only when a node object changes); Filter code 1 is the one "untolerated taint(s)" status.

It does not own NoExecute eviction (a taint manager, not the scheduler).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from agents.scheduler.framework.interface import ALL_PASS, FilterCodes, Handle, RowScore
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import (
    MAX_NODE_SCORE,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    QueueingHint,
    Status,
)
from agents.scheduler.plugins.helper import default_normalize_score, default_normalize_score_all
from emulator.base.api.core import Node, Pod, Taint, Toleration
from emulator.base.api.taints import find_untolerated_taint, tolerations_tolerate_taint

__all__ = [
    "DO_NOT_SCHEDULE_EFFECTS",
    "ERR_REASON_NOT_MATCH",
    "ERR_REASON_UNTOLERATED",
    "NAME",
    "PRE_SCORE_STATE_KEY",
    "TaintToleration",
    "count_intolerable_taints_prefer_no_schedule",
]

NAME: Final = "TaintToleration"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ERR_REASON_NOT_MATCH: Final = "node(s) had taints that the pod didn't tolerate"
"""Upstream's exported ``ErrReasonNotMatch`` (kept for reference; Filter does not use it)."""
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"
"""Filter's reason since kubernetes#134740 (release-1.34: #135023): the taint's key and value
may be sensitive, so upstream logs them and the pod's status names none."""
_UNTOLERATED: Final = Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNTOLERATED)
_STATUSES: Final = (SUCCESS, _UNTOLERATED)
DO_NOT_SCHEDULE_EFFECTS: Final = ("NoSchedule", "NoExecute")
"""Upstream ``helper.DoNotScheduleTaintsFilterFunc``: the effects Filter enforces."""
_PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"


def _untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    return find_untolerated_taint(taints, tolerations, DO_NOT_SCHEDULE_EFFECTS)


def count_intolerable_taints_prefer_no_schedule(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> int:
    """How many ``PreferNoSchedule`` taints none of ``tolerations`` tolerates."""
    return sum(1 for t in taints if t.effect == _PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, t))


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self


_NO_TOLERATIONS: Final = _PreScoreState(())
"""PreScore's state for a pod without tolerations (shared: the state is immutable)."""

_UNTAINTED: Final = RowScore(
    (NAME, "untainted"),
    lambda info: MAX_NODE_SCORE,
    lambda t, at: np.full(len(at), MAX_NODE_SCORE, dtype=np.int64),
    reads_node=False,
)
"""``score_row`` when no node has a taint."""


class TaintToleration:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self._handle = handle

    def _filter_code(self, node_info: NodeInfo, tolerations: Sequence[Toleration]) -> int:
        node = node_info.node
        taint = _untolerated(node.spec.taints, tolerations) if node is not None else None
        return 0 if taint is None else 1

    def filter_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        if not table.any_taints:
            return ALL_PASS
        tolerations = tuple(pod.spec.tolerations)
        column = table.derived((self, "filter", tolerations), lambda ni: self._filter_code(ni, tolerations))
        codes = column[rows]
        return FilterCodes(codes, _STATUSES) if np.count_nonzero(codes) else ALL_PASS

    # Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return Status(Code.Error, "node not found")
        taint = _untolerated(node.spec.taints, pod.spec.tolerations)
        if taint is None:
            return SUCCESS
        return _UNTOLERATED

    # PreScore / Score / NormalizeScore

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        tolerations = pod.spec.tolerations
        if not tolerations:
            state.write(PRE_SCORE_STATE_KEY, _NO_TOLERATIONS)
            return SUCCESS
        kept = tuple([t for t in tolerations if not t.effect or t.effect == _PREFER_NO_SCHEDULE])
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(kept))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        try:
            s: _PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            return 0, Status(Code.Error, f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        node = node_info.node
        if node is None:
            return 0, Status(Code.Error, "node not found")
        return count_intolerable_taints_prefer_no_schedule(node.spec.taints, s.tolerations_prefer_no_schedule), SUCCESS

    def score_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        try:
            s: _PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            return None
        if not table.any_taints:
            return np.zeros(len(rows), dtype=np.int64)
        tolerations = s.tolerations_prefer_no_schedule

        def count(ni: NodeInfo) -> int:
            node = ni.node
            return count_intolerable_taints_prefer_no_schedule(node.spec.taints, tolerations) if node else 0

        return table.derived((self, "score", tolerations), count)[rows]

    def score_row(self, state: CycleState, pod: Pod, table: NodeTable) -> RowScore | None:
        """With no taint on any node every raw count is 0, so NormalizeScore (reversed) gives
        every node ``MAX_NODE_SCORE`` whichever nodes are scored; otherwise not row-wise."""
        if table.any_taints:
            return None
        try:
            state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            return None  # ``score`` fails
        return _UNTAINTED

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def normalize_score_all(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        return default_normalize_score_all(MAX_NODE_SCORE, True, scores)

    # Events

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
        was_untolerated = old is None or _untolerated(old.spec.taints, pod.spec.tolerations) is not None
        is_untolerated = _untolerated(new.spec.taints, pod.spec.tolerations) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        if new is not None and new.metadata.uid == pod.metadata.uid:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def __repr__(self) -> str:
        return "<TaintToleration>"
