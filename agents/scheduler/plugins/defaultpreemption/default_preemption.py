"""``DefaultPreemption`` (upstream ``plugins/defaultpreemption/default_preemption.go``, v1.34):
PostFilter and PreEnqueue.

What this module owns: the default policy plugged into the generic ``Evaluator``
(``agents/scheduler/preemption``):

* eligibility (``pod_eligible_to_preempt_others``): not with ``preemptionPolicy: Never``
  ("not eligible due to preemptionPolicy=Never."); not while the pod's nominated node — unless
  the filters found it UnschedulableAndUnresolvable — holds a lower-priority pod terminating
  because the scheduler preempted it (deletionTimestamp set and ``DisruptionTarget`` True with
  reason ``PreemptionByScheduler``): "not eligible due to a terminating pod on the nominated node.";
* how many candidates to dry-run for: ``clamp(N·minCandidateNodesPercentage // 100,
  minCandidateNodesAbsolute, N)`` (defaults 10 %, 100) from an offset drawn from ``handle.rng``;
* victims on one node (``select_victims_on_node``, on copies of the NodeInfo and CycleState):
  every pod of strictly lower priority is removed (with PreFilter ``RemovePod`` extensions) —
  none: UnschedulableAndUnresolvable "No preemption victims found for incoming pod"; if the pod
  still does not fit (filters with nominated pods), that status; else the candidates are sorted
  most important first (priority, then earlier start) and reprieved in that order — the
  PDB-violating ones first — each added back and kept if the pod still fits;
* the dry run's fast paths: ``uniform_victims_status`` (no pod in the snapshot has a lower
  priority: "No preemption victims found for incoming pod" on every node, without visiting them)
  and ``victim_search`` (``fastpath.py``): the same victims and statuses without copying nodes,
  when the cycle's Filter plugins read nothing but resources from pods;
* PostFilter: ``Evaluator.preempt``; a non-empty message is prefixed "preemption: ";
* PreEnqueue (async preemption, on in v1.34): UnschedulableAndUnresolvable "waiting for the
  preemption for this pod to be finished" while the pod's preemption API calls run; events:
  AssignedPod/Delete with a hint that always says QueueSkip (the plugins whose failure the
  preemption resolves decide the requeueing).

It does not own the dry run, node choice or API calls (the ``preemption`` package).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from agents.scheduler.args import DefaultPreemptionArgs, decode_args
from agents.scheduler.framework.interface import Handle, NodeToStatus, PostFilterResult
from agents.scheduler.framework.types import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
    Status,
)
from agents.scheduler.preemption import (
    DISRUPTION_TARGET,
    PREEMPTION_BY_SCHEDULER,
    Evaluator,
    PodDisruptionBudget,
    ScoreFunc,
    Victims,
    VictimSearchFunc,
    filter_pods_with_pdb_violation,
    importance_key,
    pod_priority,
)
from emulator.base.api.core import Pod

from .fastpath import NO_VICTIMS, VictimSearch

__all__ = [
    "NAME",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NO_VICTIMS",
    "WAITING_FOR_PREEMPTION",
    "DefaultPreemption",
    "pod_terminating_by_preemption",
]

NAME: Final = "DefaultPreemption"
NOT_ELIGIBLE_NEVER: Final = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING: Final = "not eligible due to a terminating pod on the nominated node."
WAITING_FOR_PREEMPTION: Final = "waiting for the preemption for this pod to be finished"


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Upstream ``podTerminatingByPreemption``: terminating, and the scheduler preempted it."""
    if pod.metadata.deletion_timestamp is None:
        return False
    for c in pod.status.conditions:
        if c.type == DISRUPTION_TARGET:
            return c.status == "True" and c.reason == PREEMPTION_BY_SCHEDULER
    return False


class DefaultPreemption:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle, *, async_preemption: bool = True) -> None:
        """``async_preemption``: the ``SchedulerAsyncPreemption`` gate (beta, on in v1.33+)."""
        self.args = decode_args(DefaultPreemptionArgs, args)
        assert self.args.min_candidate_nodes_percentage is not None  # defaulted
        assert self.args.min_candidate_nodes_absolute is not None
        self._percentage: int = self.args.min_candidate_nodes_percentage
        self._absolute: int = self.args.min_candidate_nodes_absolute
        self._handle = handle
        self.enable_async_preemption = async_preemption
        self.evaluator = Evaluator(NAME, handle, self, enable_async_preemption=async_preemption)
        self.attempts = 0
        """Upstream ``PreemptionAttempts``."""

    def __repr__(self) -> str:
        return f"<DefaultPreemption {self._percentage}%/{self._absolute} attempts={self.attempts}>"

    # --- PostFilter / PreEnqueue ----------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        self.attempts += 1
        result, status = self.evaluator.preempt(state, pod, filtered_node_status)
        msg = status.message()
        if msg:
            return result, Status(status.code, "preemption: " + msg)
        return result, status

    def pre_enqueue(self, pod: Pod) -> Status:
        if self.enable_async_preemption and self.evaluator.is_pod_running_preemption(pod.metadata.uid):
            return Status(Code.UnschedulableAndUnresolvable, WAITING_FOR_PREEMPTION)
        return SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enable_async_preemption:
            return []  # PreEnqueue never rejects then
        event = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
        return [ClusterEventWithHint(event, self.is_schedulable_after_assigned_pod_deletion)]

    @staticmethod
    def is_schedulable_after_assigned_pod_deletion(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Always QueueSkip: the plugins that rejected the pod decide when it may retry."""
        return QueueingHint.QueueSkip

    # --- the evaluator's PreemptionPlugin -------------------------------------------------

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """Upstream ``calculateNumCandidates``: clamp(N·pct // 100, absolute, N)."""
        n = num_nodes * self._percentage // 100
        n = max(n, self._absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self._handle.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc] | None:
        return None  # the default criteria of pick_one_node_for_preemption

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        if pod.spec.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.status.nominated_node_name
        if nominated:
            if nominated_node_status is not None and nominated_node_status.code is Code.UnschedulableAndUnresolvable:
                return True, ""
            node_info = self._handle.snapshot_shared_lister().node_info_map.get(nominated)
            if node_info is not None:
                priority = pod_priority(pod)
                for pi in node_info.pods:
                    if pod_priority(pi.pod) < priority and pod_terminating_by_preemption(pi.pod):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def uniform_victims_status(self, pod: Pod) -> Status | None:
        """The evaluator's shortcut: when no pod on any node of the snapshot has a lower priority
        than ``pod``, ``select_victims_on_node`` finds no potential victim on every node and says
        UnschedulableAndUnresolvable "No preemption victims found for incoming pod" (before any
        filter or PreFilter extension runs); None otherwise, or when that method is overridden or
        the snapshot does not count priorities."""
        if type(self).select_victims_on_node is not DefaultPreemption.select_victims_on_node:
            return None
        lowest: Callable[[], int | None] | None = getattr(
            self._handle.snapshot_shared_lister(), "lowest_pod_priority", None
        )
        if lowest is None:
            return None
        low = lowest()
        if low is not None and low < pod_priority(pod):
            return None
        return Status(Code.UnschedulableAndUnresolvable, NO_VICTIMS)

    def victim_search(
        self, state: CycleState, pod: Pod, pdbs: Sequence[PodDisruptionBudget]
    ) -> VictimSearchFunc | None:
        """The exact fast path of ``select_victims_on_node`` for one dry run (``fastpath.py``);
        None when this class's method is overridden or the profile's plugins do not allow it."""
        if type(self).select_victims_on_node is not DefaultPreemption.select_victims_on_node:
            return None
        search = VictimSearch.prepare(self._handle, state, pod, pdbs)
        return None if search is None else search.select_victims

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status]:
        """Upstream ``SelectVictimsOnNode``; ``state`` and ``node_info`` are the caller's copies."""
        handle = self._handle
        priority = pod_priority(pod)
        potential = [pi for pi in node_info.pods if pod_priority(pi.pod) < priority]

        def remove(pi: PodInfo) -> Status:
            node_info.remove_pod(pi.pod)
            s = handle.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)
            return SUCCESS if s.is_success() else Status(Code.Error, s.message())

        for pi in potential:
            s = remove(pi)
            if not s.is_success():
                return [], 0, s
        if not potential:
            return [], 0, Status(Code.UnschedulableAndUnresolvable, NO_VICTIMS)
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not status.is_success():
            return [], 0, status
        now = handle.clock.now()
        potential.sort(key=lambda pi: importance_key(pi.pod, now))
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0
        for group, is_violating in ((violating, True), (non_violating, False)):
            for pi in group:
                node_info.add_pod(pi)
                s = handle.run_pre_filter_extension_add_pod(state, pod, pi, node_info)
                if not s.is_success():
                    return [], 0, Status(Code.Error, s.message())
                if handle.run_filter_plugins_with_nominated_pods(state, pod, node_info).is_success():
                    continue  # reprieved
                s = remove(pi)
                if not s.is_success():
                    return [], 0, s
                victims.append(pi)
                num_violating += is_violating
        if violating and non_violating:
            victims.sort(key=lambda pi: importance_key(pi.pod, now))
        return [pi.pod for pi in victims], num_violating, SUCCESS
