"""``PodTopologySpread`` (upstream ``podtopologyspread/plugin.go``): PreFilter (+ AddPod/RemovePod),
Filter, PreScore, Score (+ NormalizeScore), and its events with queueing hints.

What this module owns: the plugin object — args, which constraints apply to a pod, the cycle-state
keys, and the queueing hints. The arithmetic lives in ``filtering.py`` and ``scoring.py`` (per
node, the reference), ``memo.py`` (``filter_all``) and ``vector.py`` (``score_all`` /
``normalize_score_all``). PreScore parses the soft constraints and defers the reference state
(``PreScoreState.deferred``): the vectorised Score does not need it.

Which constraints apply:

============================  =============================  ====================================
pod has constraints?          PreFilter/Filter (hard)        PreScore/Score (soft)
============================  =============================  ====================================
yes                           its ``DoNotSchedule`` ones     its ``ScheduleAnyway`` ones
no, ``defaultingType: List``  ``defaultConstraints`` of      ``defaultConstraints`` of kind
                              kind DoNotSchedule             ScheduleAnyway
no, ``System`` (default)      none (system defaults are      hostname maxSkew 3, zone maxSkew 5
                              all ScheduleAnyway)
============================  =============================  ====================================

Default constraints take their selector from ``default_selector`` (a ``DefaultSelectorFn``; by
default the handle's ``default_selector`` hook, which the scheduler fills from its Service,
ReplicaSet and StatefulSet informers, ``agents.scheduler.workload_listers``; without a hook, empty),
and an empty selector means no default constraints. No applicable
constraint → PreFilter / PreScore return Skip. System-defaulted scoring tolerates nodes missing a
topology key (``require_all_topologies`` false); otherwise such filtered nodes score 0.

Events (v1.34, QueueingHints GA): Pod Add|UpdatePodLabel|UpdatePodToleration|Delete →
``is_schedulable_after_pod_change``; Node Add|Delete|UpdateNodeLabel|UpdateNodeTaint →
``is_schedulable_after_node_change``. Both consider only the pod's hard constraints.

==========================================================  =======
pod hint                                                    verdict
==========================================================  =======
the changed pod is neither the target nor an assigned pod   Skip
of its namespace
the target itself got other tolerations and has a           Queue
Honor-taints constraint
update with unchanged labels                                Skip
update flipping some constraint's selector match            Queue
add / delete of a pod matching some constraint              Queue
anything else                                               Skip
==========================================================  =======

==========================================================  =======
node hint ("matching": carries every topology key)          verdict
==========================================================  =======
update that flips matching                                  Queue
update of a matching node changing a topology value or      Queue
its taints
add of a matching node / delete of a matching node          Queue
anything else                                               Skip
==========================================================  =======
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agents.scheduler.args import PodTopologySpreadArgs, decode_args
from agents.scheduler.framework.interface import FilterCodes, Handle, PreFilterResult
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import (
    SKIP,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    PodInfo,
    QueueingHint,
    Status,
)
from emulator.base.api.core import Node, Pod, TopologySpreadConstraint

from .common import (
    DO_NOT_SCHEDULE,
    HONOR,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    DefaultSelectorFn,
    MatchCounts,
    Selector,
    build_default_constraints,
    filter_constraints,
    no_default_selector,
    node_labels_match_spread_constraints,
    pod_labels_match_spread_constraints,
    with_default_selector,
)
from .filtering import PreFilterState, filter_node, update_with_pod
from .memo import PreFilterMemo
from .scoring import PreScoreInputs, PreScoreState, init_pre_score_state, normalize_scores, score_node
from .vector import SpreadScorer

__all__ = ["NAME", "PRE_FILTER_STATE_KEY", "PRE_SCORE_STATE_KEY", "PodTopologySpread"]

NAME: Final = "PodTopologySpread"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME


def _error(msg: str) -> Status:
    return Status(Code.Error, msg)


class PodTopologySpread:
    """Spreads pods over topology domains: hard constraints filter, soft ones score."""

    name = NAME

    def __init__(
        self,
        args: Mapping[str, Any] | None = None,
        handle: Handle | None = None,
        *,
        default_selector: DefaultSelectorFn | None = None,
    ) -> None:
        self.args = decode_args(PodTopologySpreadArgs, args)
        self.handle = handle
        self.default_selector: DefaultSelectorFn = default_selector or self._handle_default_selector
        self.system_defaulted = self.args.defaulting_type == "System"
        self.default_constraints: tuple[TopologySpreadConstraint, ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else tuple(self.args.default_constraints)
        )
        self._defaults_by_action: dict[str, list[Constraint]] = {}
        """Filtered default constraints per action, when no default has ``matchLabelKeys`` (then
        filtering does not depend on the pod, and the defaults were validated with the args)."""
        self._pod_independent_defaults = not any(c.match_label_keys for c in self.default_constraints)
        self._match_counts = MatchCounts()
        self._pre_filter_memo = PreFilterMemo(self._match_counts)
        self._scorer = SpreadScorer(self._pre_filter_memo, self._match_counts)

    # --- which constraints apply -----------------------------------------------------------

    def _handle_default_selector(self, pod: Pod) -> Selector:
        """The scheduler's ``handle.default_selector`` hook (Services, ReplicaSets,
        StatefulSets); an empty selector (no default constraints) without one."""
        hook: DefaultSelectorFn | None = getattr(self.handle, "default_selector", None)
        return hook(pod) if hook is not None else no_default_selector(pod)

    def _constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """The pod's constraints of kind ``action``, or the default ones; ``ValueError`` if a
        selector is invalid."""
        if pod.spec.topology_spread_constraints:
            return filter_constraints(pod.spec.topology_spread_constraints, pod.metadata.labels, action)
        if not self._pod_independent_defaults:
            return build_default_constraints(self.default_constraints, pod, action, self.default_selector)
        filtered = self._defaults_by_action.get(action)
        if filtered is None:
            filtered = self._defaults_by_action[action] = filter_constraints(self.default_constraints, {}, action)
        if not filtered:  # (``with_default_selector`` of none is none: the defaults' PreFilter)
            return []
        return with_default_selector(filtered, pod, self.default_selector)

    def get_constraints(self, pod: Pod) -> list[Constraint]:
        """Upstream ``getConstraints``: the hard constraints (what the hints reason about)."""
        return self._constraints(pod, DO_NOT_SCHEDULE)

    # --- PreFilter / Filter -----------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        try:
            constraints = self._constraints(pod, DO_NOT_SCHEDULE)  # ``get_constraints``
        except ValueError as err:
            return None, _error(f"get constraints from pod: obtaining pod's hard topology spread constraints: {err}")
        if not constraints:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, self._pre_filter_memo.state(pod, nodes, constraints))
        return None, SUCCESS

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        return self._update(state, pod_to_schedule, pod_info_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._update(state, pod_to_schedule, pod_info_to_remove, node_info, -1)

    def _update(self, state: CycleState, pod: Pod, pi: PodInfo, node_info: NodeInfo, delta: int) -> Status:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        update_with_pod(s, pi.pod, pod, node_info.node, delta)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        return filter_node(s, pod, node_info)

    def filter_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        """``filter`` over table rows (None: run it per node)."""
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return None
        return self._pre_filter_memo.filter_codes(s, pod, table, rows)

    @staticmethod
    def _pre_filter_state(state: CycleState) -> PreFilterState | Status:
        try:
            s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return _error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        return s

    # --- PreScore / Score -------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        all_nodes = self.handle.snapshot_shared_lister().node_info_list if self.handle is not None else []
        if not all_nodes:
            return SKIP
        try:
            constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        except ValueError as err:
            return _error(f"calculating preScoreState: obtaining pod's soft topology spread constraints: {err}")
        if not constraints:
            return SKIP
        # Nodes lacking a topology key are only tolerated with the system defaults, so that
        # zone-less nodes still get hostname spreading.
        require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        inputs = PreScoreInputs(pod, nodes, all_nodes, require_all)
        memo = self._pre_filter_memo

        def fill() -> PreScoreState:
            s = init_pre_score_state(constraints, nodes, require_all)
            memo.add_pre_score_counts(s.tp_value_to_pod_counts, pod, all_nodes, constraints, require_all=require_all)
            return s

        # The reference state is computed on its first read: the vectorised Score reads none of it.
        state.write(PRE_SCORE_STATE_KEY, PreScoreState.deferred(constraints, inputs, fill))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        s = self._pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        return score_node(s, pod, node_info), SUCCESS

    def score_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        """``score`` over table rows (None: run it per node)."""
        s = self._pre_score_state(state)
        if isinstance(s, Status):
            return None
        return self._scorer.score_all(s, table, rows)

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score_all(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        s = self._pre_score_state(state)
        if isinstance(s, Status):
            raise LookupError(s.message())  # the per-node normalize reports it
        return self._scorer.normalize_score_all(s, scores)

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        s = self._pre_score_state(state)
        if isinstance(s, Status):
            return s
        normalize_scores(s, scores)
        return SUCCESS

    @staticmethod
    def _pre_score_state(state: CycleState) -> PreScoreState | Status:
        try:
            s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            return _error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        return s

    # --- queueing ---------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodToleration | ActionType.Delete
        node_actions = ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, pod_actions), self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, node_actions), self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        if (new is not None and not _involved(new, pod)) or (old is not None and not _involved(old, pod)):
            return QueueingHint.QueueSkip
        try:
            constraints = self.get_constraints(pod)
        except ValueError:
            return QueueingHint.Queue
        if new is not None and old is not None:
            if (
                pod.metadata.uid == new.metadata.uid
                and new.spec.tolerations != old.spec.tolerations
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.Queue
            before, after = old.metadata.labels, new.metadata.labels
            if before == after:
                return QueueingHint.QueueSkip
            flipped = any(c.selector.matches(before) != c.selector.matches(after) for c in constraints)
            return QueueingHint.Queue if flipped else QueueingHint.QueueSkip
        changed = new if new is not None else old
        if changed is not None and pod_labels_match_spread_constraints(constraints, changed.metadata.labels):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        try:
            constraints = self.get_constraints(pod)
        except ValueError:
            return QueueingHint.Queue
        old_matching = old is not None and node_labels_match_spread_constraints(old.metadata.labels, constraints)
        new_matching = new is not None and node_labels_match_spread_constraints(new.metadata.labels, constraints)
        if old is not None and new is not None:
            if old_matching != new_matching:
                return QueueingHint.Queue
            if new_matching and (
                _topology_values_changed(old.metadata.labels, new.metadata.labels, constraints)
                or old.spec.taints != new.spec.taints
            ):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if new is not None:
            return QueueingHint.Queue if new_matching else QueueingHint.QueueSkip
        return QueueingHint.Queue if old_matching else QueueingHint.QueueSkip

    def __repr__(self) -> str:
        n = len(self.default_constraints)
        return f"<PodTopologySpread defaultingType={self.args.defaulting_type} defaults={n}>"


def _involved(changed: Pod, target: Pod) -> bool:
    """Upstream ``involvedInTopologySpreading``: the target itself, or an assigned pod of its
    namespace."""
    return changed.metadata.uid == target.metadata.uid or (
        bool(changed.spec.node_name) and changed.metadata.namespace == target.metadata.namespace
    )


def _topology_values_changed(before: Mapping[str, str], after: Mapping[str, str], cs: list[Constraint]) -> bool:
    return any(before.get(c.topology_key, "") != after.get(c.topology_key, "") for c in cs)
