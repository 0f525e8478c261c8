"""Preemption, the generic part: upstream ``pkg/scheduler/framework/preemption/preemption.go``
(v1.34) ``Evaluator``, plus the helpers it uses from ``pkg/scheduler/util``.

What this module owns: deciding *where* a pod may preempt and *whom*, on the cycle's snapshot,
synchronously and without the API. ``Evaluator.preempt(state, pod, node_to_status)`` is
upstream's ``Preempt``:

====  ============================================================  ===============================
step  what                                                          result if it stops here
====  ============================================================  ===============================
0     the pod's latest copy (``handle.get_pod`` when provided)      (None, Error "pods … not found")
1     ``plugin.pod_eligible_to_preempt_others``                     (None, Unschedulable <reason>)
2     potential nodes = filter status code exactly Unschedulable    no candidate: (result "",
      (absent nodes carry the absent status); dry run on copies,    Unschedulable "0/N nodes are
      from a random offset, until enough candidates                 available: …" histogram)
3     extenders: the emulator has none                              —
4     ``select_candidate``: ``pick_one_node_for_preemption``        —
5     prepare the chosen node: ``Executor`` (API calls, async)      —
6     (PostFilterResult(node), Success)
====  ============================================================  ===============================

Dry run (``dry_run_preemption``): upstream checks nodes with 16 workers and cancels once at
least one non-PDB-violating candidate exists and the candidates number ``num_candidates``; each
candidate list keeps at most ``num_candidates`` entries. Here one worker scans sequentially from
``offset`` (wrapping), which is upstream with parallelism 1 — the deterministic equivalent.
Non-violating candidates come first, then violating ones, each in scan order. A plugin may offer
``victim_search(state, pod, pdbs)``, returning for this dry run a ``VictimSearchFunc`` that gives
exactly ``select_victims_on_node``'s result for a node without copying it (or None for a node,
when the reference must run on copies); DefaultPreemption's is ``defaultpreemption/fastpath.py``.
Before that, a plugin may offer ``uniform_victims_status(pod)``: the non-success status its
``select_victims_on_node`` would give on *every* node of the snapshot, known without visiting
them (DefaultPreemption: no pod anywhere has a lower priority than the preemptor, from the
snapshot's ``lowest_pod_priority``); the dry run then sets that status for each potential node in
scan order and finds no candidate, as the full scan would; ``preempt`` then does not even list
the potential nodes: the "no candidate" message needs only their number (``_uniform_message``).
Under a Cluster Autoscaler burst every pending pod of one priority fails this way on every
attempt, against every node.
``Evaluator.fast_dry_run = False`` turns both off (the tests compare both).

Choosing (``pick_one_node_for_preemption``), each criterion applied only to the ties of the
previous one: fewest PDB violations; lowest highest-victim priority; smallest
Σ(priority + 2^31); fewest victims; latest earliest-start-time among the highest-priority
victims; then the first remaining. Upstream iterates a Go map there (arbitrary order); here the
candidates' order, so ties resolve deterministically.

PodDisruptionBudgets: ``pdb_lister`` (given, or the handle's ``pdb_lister`` hook, which the
scheduler fills from its PDB informer; none without either) lists them for each preemption.
``filter_pods_with_pdb_violation`` keeps upstream's rules.

It does not own: the default plugin's victim selection and eligibility
(``plugins/defaultpreemption``), the API calls (``executor.py``), the framework runners, the
shared ``Candidate``/``Victims`` types (``candidate.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from agents.scheduler.framework.diagnosis import CountedStatuses, Diagnosis, FitError, count_for_status_code
from agents.scheduler.framework.interface import Handle, NodeToStatus, PostFilterResult
from agents.scheduler.framework.types import SUCCESS, Code, CycleState, NodeInfo, PodInfo, Status
from emulator.base.api.core import LabelSelector, Pod
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.runtime.clock import parse_timestamp

from .candidate import Candidate, Victims, pod_priority
from .executor import Executor

__all__ = [
    "MAX_INT32",
    "PREEMPTION_NOT_HELPFUL",
    "Candidate",
    "Evaluator",
    "PodDisruptionBudget",
    "PreemptionPlugin",
    "ScoreFunc",
    "VictimSearchFunc",
    "Victims",
    "earliest_pod_start_time",
    "filter_pods_with_pdb_violation",
    "importance_key",
    "pick_one_node_for_preemption",
    "pod_priority",
    "pod_start_time",
]

MAX_INT32: Final = 2**31 - 1
MIN_INT64: Final = -(2**63)
PREEMPTION_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
NO_CANDIDATE_NODE: Final = "no candidate node for preemption"

ScoreFunc = Callable[[str], int]
"""``score(node name) -> int``: the higher, the better the node (``OrderedScoreFuncs``)."""

VictimSearchFunc = Callable[[NodeInfo], tuple[list[Pod], int, Status] | None]
"""``search(node_info)``: ``select_victims_on_node``'s result for that node without copying
or modifying it, or None when the plugin's reference must run on copies instead."""


# --- pure helpers (upstream pkg/scheduler/util) ------------------------------------------


def pod_start_time(pod: Pod, now: float) -> float:
    """``GetPodStartTime``: ``status.startTime`` as clock seconds; ``now`` if not started."""
    start = pod.status.start_time
    return parse_timestamp(start) if start else now


def importance_key(pod: Pod, now: float) -> tuple[int, float]:
    """Sort key of ``MoreImportantPod``: higher priority first, then the earlier start."""
    return (-pod_priority(pod), pod_start_time(pod, now))


def earliest_pod_start_time(pods: Sequence[Pod], now: float) -> float | None:
    """``GetEarliestPodStartTime``: the earliest start among the highest-priority pods."""
    if not pods:
        return None
    top = max(pod_priority(p) for p in pods)
    return min(pod_start_time(p, now) for p in pods if pod_priority(p) == top)


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """The fields of a policy/v1 PodDisruptionBudget that preemption reads."""

    namespace: str
    selector: LabelSelector | None = None
    disruptions_allowed: int = 0
    disrupted_pods: frozenset[str] = frozenset()
    """Names of pods whose eviction the API server already processed (``status.disruptedPods``)."""


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Upstream ``filterPodsWithPDBViolation``: (violating, non-violating), order kept.

    Each matching budget (same namespace, non-empty valid selector matching the pod's labels,
    the pod not in ``disrupted_pods``) is decremented; a pod that takes one below 0 violates.
    A nil or empty selector matches nothing; a pod without labels matches no budget.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pi in pod_infos:
        pod = pi.pod
        violated = False
        labels = pod.metadata.labels
        if labels:
            for i, pdb in enumerate(pdbs):
                sel = pdb.selector
                if pdb.namespace != pod.metadata.namespace or sel is None:
                    continue
                if not sel.match_labels and not sel.match_expressions:
                    continue
                try:
                    if not label_selector_matches(sel, labels):
                        continue
                except ValueError:  # an invalid selector matches nothing
                    continue
                if pod.metadata.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


# --- candidates ---------------------------------------------------------------------------


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, Victims], now: float, score_funcs: Sequence[ScoreFunc] | None = None
) -> str:
    """Upstream ``pickOneNodeForPreemption`` (default criteria when ``score_funcs`` is empty)."""
    if not nodes_to_victims:
        return ""
    remaining = list(nodes_to_victims)
    if not score_funcs:

        def min_pdb_violations(node: str) -> int:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -pod_priority(nodes_to_victims[node].pods[0])

        def min_sum_priorities(node: str) -> int:
            return -sum(pod_priority(p) + MAX_INT32 + 1 for p in nodes_to_victims[node].pods)

        def min_num_pods(node: str) -> int:
            return -len(nodes_to_victims[node].pods)

        def latest_start_time(node: str) -> int:
            t = earliest_pod_start_time(nodes_to_victims[node].pods, now)
            return MIN_INT64 if t is None else round(t * 1_000_000_000)  # UnixNano

        score_funcs = [min_pdb_violations, min_highest_priority, min_sum_priorities, min_num_pods, latest_start_time]
    for f in score_funcs:
        scores = [(node, f(node)) for node in remaining]
        best = max(s for _, s in scores)
        remaining = [node for node, s in scores if s == best]
        if len(remaining) == 1:
            break
    return remaining[0]


def _aggregate(messages: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or "[a, b]" de-duplicated."""
    if len(messages) == 1:
        return messages[0]
    distinct = list(dict.fromkeys(messages))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


# --- the evaluator -----------------------------------------------------------------------


class PreemptionPlugin(Protocol):
    """What a preemption plugin gives the evaluator (upstream ``preemption.Interface``)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random offset in [0, num_nodes) and how many candidates to dry-run for."""
        ...

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status]:
        """(victims most important first, #PDB violations, status) on copies of state/node."""
        ...

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc] | None: ...


class Evaluator:
    """Upstream ``preemption.Evaluator`` for one plugin of one profile."""

    def __init__(
        self,
        plugin_name: str,
        handle: Handle,
        plugin: PreemptionPlugin,
        *,
        enable_async_preemption: bool = True,
        pdb_lister: Callable[[], Sequence[PodDisruptionBudget]] | None = None,
    ) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.plugin = plugin
        self.pdb_lister: Callable[[], Sequence[PodDisruptionBudget]] = pdb_lister or self._handle_pdbs
        self.executor: Executor = Executor(plugin_name, handle, enable_async_preemption=enable_async_preemption)
        self.fast_dry_run = True
        """Use the plugin's ``victim_search`` when it offers one (False: the reference only)."""

    def _handle_pdbs(self) -> Sequence[PodDisruptionBudget]:
        """The scheduler's budgets (its ``handle.pdb_lister`` hook), none without one."""
        lister: Callable[[], Sequence[PodDisruptionBudget]] | None = getattr(self.handle, "pdb_lister", None)
        return lister() if lister is not None else []

    def __repr__(self) -> str:
        return f"<Evaluator {self.plugin_name} {self.executor!r}>"

    def is_pod_running_preemption(self, uid: str) -> bool:
        return self.executor.is_pod_running_preemption(uid)

    def preempt(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """Upstream ``Preempt``; see the module table for the outcomes."""
        latest = self._latest(pod)
        if latest is None:
            return None, Status(Code.Error, f'pods "{pod.metadata.name}" not found')
        pod = latest
        nominated_status = node_to_status.get(pod.status.nominated_node_name)
        eligible, reason = self.plugin.pod_eligible_to_preempt_others(pod, nominated_status)
        if not eligible:
            return None, Status(Code.Unschedulable, reason)
        lister = self.handle.snapshot_shared_lister()
        all_nodes = lister.node_info_list
        uniform = self._uniform_message(pod, lister, node_to_status)
        if uniform is not None:
            return PostFilterResult(""), Status(Code.Unschedulable, uniform)
        candidates, statuses, errors = self.find_candidates(state, all_nodes, pod, node_to_status)
        if errors and not candidates:
            return None, Status(Code.Error, _aggregate(errors))
        if not candidates:
            statuses.set_absent_nodes_status(Status(Code.UnschedulableAndUnresolvable, PREEMPTION_NOT_HELPFUL))
            fit = FitError(pod, len(all_nodes), Diagnosis(node_to_status=statuses))
            return PostFilterResult(""), Status(Code.Unschedulable, fit.message())
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.Unschedulable, NO_CANDIDATE_NODE)
        self.executor.prepare_candidate(best, pod)
        return PostFilterResult(best.name), SUCCESS

    def _uniform_message(self, pod: Pod, lister: Any, node_to_status: NodeToStatus) -> str | None:
        """Steps 2 to the end when the plugin's ``uniform_victims_status`` holds (no candidate
        anywhere, module docstring): the "no candidate" message from the number of potential
        nodes alone, without listing them (the offset is still drawn, as the dry run draws it);
        None when the shortcut does not apply."""
        all_nodes, node_map = lister.node_info_list, getattr(lister, "node_info_map", None)
        if not all_nodes or node_map is None or len(node_map) != len(all_nodes):
            return None
        uniform = self._uniform_status(pod)
        if uniform is None or uniform.code is Code.Error:
            return None
        count = count_for_status_code(node_to_status, node_map, Code.Unschedulable)
        if count is None:
            return None
        if count:
            self.plugin.get_offset_and_num_candidates(count)
        statuses = CountedStatuses(uniform, count, Status(Code.UnschedulableAndUnresolvable, PREEMPTION_NOT_HELPFUL))
        return FitError(pod, len(all_nodes), Diagnosis(node_to_status=statuses)).message()

    def _latest(self, pod: Pod) -> Pod | None:
        """Step 0: the informer's copy when the scheduler offers ``get_pod``, else ``pod``."""
        get_pod: Callable[[str, str], Pod | None] | None = getattr(self.handle, "get_pod", None)
        if get_pod is None:
            return pod
        return get_pod(pod.metadata.namespace, pod.metadata.name)

    def find_candidates(
        self, state: CycleState, all_nodes: list[NodeInfo], pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """Upstream ``findCandidates``: (candidates, dry-run statuses, error messages)."""
        if not all_nodes:
            return [], NodeToStatus(), ["no nodes available"]
        potential = node_to_status.nodes_for_status_code(all_nodes, Code.Unschedulable)
        if not potential:
            return [], NodeToStatus(), []
        offset, num_candidates = self.plugin.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, self.pdb_lister(), offset, num_candidates)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """Upstream ``DryRunPreemption`` with one worker (see the module docstring)."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses = NodeToStatus()
        errors: list[str] = []
        n = len(potential_nodes)
        uniform = self._uniform_status(pod)
        if uniform is not None:  # every node would give this status: no candidate anywhere
            failed = [potential_nodes[(offset + i) % n].name for i in range(n)]
            if uniform.code is Code.Error:
                errors = [uniform.message()] * n
            return [], NodeToStatus(dict.fromkeys(failed, uniform)), errors
        fast = self._victim_search(state, pod, pdbs)
        for i in range(n):
            node_info = potential_nodes[(offset + i) % n]
            result = fast(node_info) if fast is not None else None
            if result is None:
                result = self.plugin.select_victims_on_node(state.clone(), pod, node_info.clone(), pdbs)
            victims, num_violations, status = result
            if status.is_success() and victims:
                into = non_violating if num_violations == 0 else violating
                if len(into) < num_candidates:
                    into.append(Candidate(node_info.name, Victims(victims, num_violations)))
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status.is_success():
                status = Status(Code.Error, f'expected at least one victim pod on node "{node_info.name}"')
            if status.code is Code.Error:
                errors.append(status.message())
            statuses.set(node_info.name, status)
        return non_violating + violating, statuses, errors

    def _victim_search(
        self, state: CycleState, pod: Pod, pdbs: Sequence[PodDisruptionBudget]
    ) -> VictimSearchFunc | None:
        """The plugin's optional exact fast path for this dry run (see the module docstring)."""
        if not self.fast_dry_run:
            return None
        prepare: Callable[..., VictimSearchFunc | None] | None = getattr(self.plugin, "victim_search", None)
        return prepare(state, pod, pdbs) if prepare is not None else None

    def _uniform_status(self, pod: Pod) -> Status | None:
        """The plugin's optional shortcut (see the module docstring): the one non-success status
        ``select_victims_on_node`` would give on every node of the snapshot, or None."""
        if not self.fast_dry_run:
            return None
        uniform: Callable[[Pod], Status | None] | None = getattr(self.plugin, "uniform_victims_status", None)
        return uniform(pod) if uniform is not None else None

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """Upstream ``SelectCandidate``."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims_map = {c.name: c.victims for c in candidates}
        funcs = self.plugin.ordered_score_funcs(victims_map)
        name = pick_one_node_for_preemption(victims_map, self.handle.clock.now(), funcs)
        if name in victims_map:
            return Candidate(name, victims_map[name])
        return candidates[0]  # unreachable with the default criteria, as upstream
