"""One profile's framework: its plugins, and running them per extension point (upstream
``framework/runtime/framework.go``).

What this module owns: ``Framework``, built from a ``ProfileSpec`` and a registry (instantiation
and validation in ``plugin_set.py``), and its ``run_*`` methods with upstream's semantics and
messages:

| point        | runs                                   | stops at / result                                     |
| ------------ | -------------------------------------- | ----------------------------------------------------- |
| PreEnqueue   | gating plugin first, then in order     | first non-Success → (status, gating plugin)           |
| PreFilter    | all, in order                          | Skip → skip coupled Filter; UnschedAndUnresolvable or |
|              |                                        | Error aborts; Unschedulable remembered, go on;        |
|              |                                        | PreFilterResults intersected, empty → UU               |
| Filter       | in order, minus skipped                | first non-Success; non-rejections become Error        |
| PostFilter   | in order                               | Success / UnschedulableAndUnresolvable / Error        |
| PreScore     | all                                    | Skip → skip coupled Score; other non-Success → Error  |
| Score        | per node, then NormalizeScore, weights | any error; normalized score outside [0, 100] → Error  |
| Reserve      | in order; Unreserve in reverse         | first non-Success                                     |
| Permit       | all                                    | rejection/Error at once; any Wait → waiting pod       |
| PreBind      | PreBindPreFlight, then in order (async)| all pre-flights Skip → not run; else first non-Success|
| Bind         | in order (async)                       | first non-Skip; none / all Skip → Skip                |
| PostBind     | all                                    | informational                                         |

Vectorised runners (``vectorized.py``, over the snapshot's ``NodeTable``): ``find_feasible_rows``
and ``score_rows`` give the Filter and Score results of the per-node runners for many nodes at
once, using plugins' ``filter_all`` / ``score_all`` where offered and their per-node methods
elsewhere; nodes with nominated pods take ``run_filter_plugins_with_nominated_pods``.
``score_rows`` first asks ``score_totals.cached_totals``: when every Score plugin's normalized
score is row-wise this cycle, the weighted totals come from a per-row column the table keeps.

The runners from Reserve on (the table's last six rows) and the waiting pods live in ``runtime_binding.py``, mixed in as
``BindingRunners``. A plugin raising inside any point gives an ``Error`` status (upstream's ``AsStatus``) with that
point's message, as if it had returned the error; the vectorised ``filter_all``/``score_all`` fall back to the per-
node methods when they raise, so the same node and message come out. Plugin statuses are stamped with the plugin's
name. The Framework is also the plugins' ``Handle``. Everything is synchronous except ``wait_on_permit``,
``run_pre_bind_plugins`` and ``run_bind_plugins``. It does not own the order of the scheduling cycle, node sampling,
host selection or the failure handling (the scheduler's cycles do), nor the queue or the cache.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock

from . import score_totals, vectorized
from .cycle_state import CycleState
from .diagnosis import Diagnosis
from .events import ClusterEventWithHint
from .interface import (
    ExtensionPoint,
    FilterPlugin,
    NodePluginScores,
    NodeToStatus,
    NominatingMode,
    Plugin,
    PluginFactory,
    PluginScore,
    PodNominator,
    PostFilterPlugin,
    PostFilterResult,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ProfileSpec,
    QueuedPod,
    QueueSortPlugin,
    ScorePlugin,
    SharedLister,
)
from .node_info import NodeInfo
from .node_table import IntArray, NodeTable
from .plugin_set import build_plugins, enqueue_events
from .pod_info import PodInfo
from .runtime_binding import BindingRunners
from .status import MAX_NODE_SCORE, MIN_NODE_SCORE, SUCCESS, Code, NodeScore, Status, as_status
from .waiting_pods import WaitingPodsMap

if TYPE_CHECKING:
    from emulator.base.client.client import Client

__all__ = ["Framework"]


_OK: Final = Code.Success
"""``status.code is _OK``: ``Status.is_success`` without the method call (the per-cycle runners)."""


def _error(msg: str, plugin: str) -> Status:
    return Status(Code.Error, msg, plugin=plugin)


def _pod_priority(pod: Pod) -> int:
    return pod.spec.priority if pod.spec.priority is not None else 0


class Framework(BindingRunners):
    """The plugins of one profile and the runners of its extension points."""

    def __init__(
        self,
        spec: ProfileSpec,
        registry: Mapping[str, PluginFactory],
        *,
        clock: Clock,
        rng: random.Random,
        client: Client | None = None,
        snapshot: SharedLister | None = None,
        nominator: PodNominator | None = None,
        waiting_pods: WaitingPodsMap | None = None,
        parallelism: int = 16,
        namespaces: Any = None,
        run_async: Callable[[Coroutine[Any, Any, Any], str], None] | None = None,
        activate: Callable[[Iterable[Pod]], None] | None = None,
        get_pod: Callable[[str, str], Pod | None] | None = None,
        pdb_lister: Callable[[], Sequence[Any]] | None = None,
        default_selector: Callable[[Pod], Any] | None = None,
        volume_listers: Any = None,
        dra_manager: Any = None,
    ) -> None:
        """Instantiate the profile's plugins; ``ValueError`` with upstream's message if invalid.
        Every handle dependency comes in here (upstream's ``WithPodNominator``,
        ``WithPodActivator``...), none later; one left out (None) is absent, as in explain.
        ``namespaces``: a Namespace lister (``get(name)``, ``list()``: namespaceSelectors)."""
        self.scheduler_name: str = spec.scheduler_name
        self.percentage_of_nodes_to_score: int | None = spec.percentage_of_nodes_to_score
        self.client = client
        self.clock = clock
        self.rng = rng
        self.parallelism = parallelism
        self._snapshot = snapshot
        self._set_lister()
        self._nominator = nominator
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPodsMap()
        self._namespaces = namespaces
        self.run_async = run_async
        """Run a coroutine as a named task of the scheduler's task group (preemption's API calls)."""
        self.activate = activate
        """Move pods to activeQ (upstream ``Handle.Activate``, ``WithPodActivator``)."""
        self.get_pod = get_pod
        """The informer's current copy of a pod (namespace, name)."""
        self.pdb_lister = pdb_lister
        """The PodDisruptionBudgets preemption honours (``agents.scheduler.workload_listers``)."""
        self.default_selector = default_selector
        """PodTopologySpread's system-default selector for a pod (``helper.DefaultSelector``)."""
        self.volume_listers = volume_listers
        """The storage informers the volume plugins read (``agents.scheduler.volume_listers``)."""
        self.dra_manager = dra_manager
        """Claims, slices, classes and devices in use for DynamicResources (``agents.scheduler.dra_manager``)."""
        enabled = build_plugins(spec, registry, self)
        self._plugins: dict[str, Plugin] = enabled.plugins
        self._points: dict[ExtensionPoint, list[Any]] = enabled.points
        self.score_plugin_weight: dict[str, int] = enabled.score_weights
        self._active: dict[tuple[ExtensionPoint, frozenset[str]], list[Any]] = {}  # see _minus
        # The per-cycle points' lists by attribute (an ``ExtensionPoint`` key hashes in Python).
        self._pre_filter: list[PreFilterPlugin] = self._points[ExtensionPoint.PreFilter]
        self._filter: list[FilterPlugin] = self._points[ExtensionPoint.Filter]
        self._pre_score: list[PreScorePlugin] = self._points[ExtensionPoint.PreScore]
        self._score: list[ScorePlugin] = self._points[ExtensionPoint.Score]
        self._pre_enqueue: list[PreEnqueuePlugin] = self._points[ExtensionPoint.PreEnqueue]
        self._reserve: list[Any] = self._points[ExtensionPoint.Reserve]
        self._permit: list[Any] = self._points[ExtensionPoint.Permit]
        self._bind: list[Any] = self._points[ExtensionPoint.Bind]
        self._post_bind: list[Any] = self._points[ExtensionPoint.PostBind]
        self._filter_minus: dict[frozenset[str], tuple[list[Any], list[Any]]] = {}
        """Per skipped set: the Filter plugins left and their ``filter_all`` (None: none)."""
        self._score_minus: dict[frozenset[str], list[Any]] = {}

    def _minus(self, point: ExtensionPoint, skip: set[str]) -> list[Any]:
        """``point``'s plugins minus ``skip``, built once per skipped set (shared: never mutate)."""
        if point is ExtensionPoint.Filter:
            return self._filters_minus(skip)[0]
        if point is ExtensionPoint.Score:
            return self._scores_minus(skip)
        key = (point, frozenset(skip))
        plugins = self._active.get(key)
        if plugins is None:
            plugins = self._active[key] = [p for p in self._points[point] if p.name not in skip]
        return plugins

    def _filters_minus(self, skip: set[str]) -> tuple[list[Any], list[Any]]:
        """The Filter plugins minus ``skip`` and their ``filter_all`` methods (shared: never mutate)."""
        key = frozenset(skip)
        found = self._filter_minus.get(key)
        if found is None:
            plugins = [p for p in self._filter if p.name not in skip]
            found = self._filter_minus[key] = (plugins, [getattr(p, "filter_all", None) for p in plugins])
        return found

    def _scores_minus(self, skip: set[str]) -> list[Any]:
        """The Score plugins minus ``skip`` (shared: never mutate)."""
        key = frozenset(skip)
        plugins = self._score_minus.get(key)
        if plugins is None:
            plugins = self._score_minus[key] = [p for p in self._score if p.name not in skip]
        return plugins

    # --- introspection ----------------------------------------------------------------------

    @property
    def profile_name(self) -> str:
        return self.scheduler_name

    def plugin(self, name: str) -> Plugin | None:
        return self._plugins.get(name)

    def plugins(self) -> dict[str, Plugin]:
        """Every instantiated plugin by name, in instantiation order."""
        return dict(self._plugins)

    def list_plugins(self) -> dict[ExtensionPoint, list[str]]:
        """The enabled plugin names per extension point, in run order (empty points left out)."""
        return {p: [pl.name for pl in pls] for p, pls in self._points.items() if pls}

    def has_filter_plugins(self) -> bool:
        return bool(self._filter)

    def has_score_plugins(self) -> bool:
        return bool(self._score)

    def has_post_filter_plugins(self) -> bool:
        return bool(self._points[ExtensionPoint.PostFilter])

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Per plugin that can reject a pod: its registered events (default: the wildcard)."""
        return enqueue_events(self._plugins)

    def __repr__(self) -> str:
        return f"<Framework {self.scheduler_name} plugins={list(self._plugins)}>"

    # --- Handle ---------------------------------------------------------------------------

    def snapshot_shared_lister(self) -> SharedLister:
        """The snapshot; ``RuntimeError`` when none is set. Once one is, an instance attribute
        answers instead (``_set_lister``)."""
        if self._snapshot is None:
            raise RuntimeError(f"profile {self.scheduler_name}: no snapshot set")
        return self._snapshot

    def set_snapshot(self, snapshot: SharedLister) -> None:
        self._snapshot = snapshot
        self._set_lister()

    def _set_lister(self) -> None:
        """``snapshot_shared_lister`` as ``repeat(snapshot).__next__``: a C callable returning
        the snapshot on every call (plugins ask four times a cycle; a Python method cost a
        frame each). No snapshot: the method (which raises)."""
        if self._snapshot is None:
            self.__dict__.pop("snapshot_shared_lister", None)
        else:
            self.__dict__["snapshot_shared_lister"] = itertools.repeat(self._snapshot).__next__

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self._nominator.nominated_pods_for_node(node_name) if self._nominator is not None else []

    def namespace_lister(self) -> Any:
        """The Namespace lister (``get(name)``, ``list()``), or None when there is none."""
        return self._namespaces

    # --- queue ------------------------------------------------------------------------------

    def run_pre_enqueue_plugins(self, pod: Pod, gating_plugin: str = "") -> tuple[Status, str]:
        """(Success, "") if every PreEnqueue plugin admits the pod, else (status, gating plugin)."""
        plugins: list[PreEnqueuePlugin] = self._pre_enqueue
        ordered = plugins
        if gating_plugin:  # the plugin that gated the pod last time runs first
            ordered = [p for p in plugins if p.name == gating_plugin] + [p for p in plugins if p.name != gating_plugin]
        for pl in ordered:
            try:
                s = pl.pre_enqueue(pod)
            except Exception as err:  # a misbehaving plugin: Error, as upstream's AsStatus
                s = as_status(err)
            if s.code is not _OK:
                return s.with_plugin(pl.name), pl.name
        return SUCCESS, ""

    def queue_sort_less(self, a: QueuedPod, b: QueuedPod) -> bool:
        pl: QueueSortPlugin = self._points[ExtensionPoint.QueueSort][0]
        return pl.less(a, b)

    def queue_sort_key(self) -> Callable[[QueuedPod], Any] | None:
        """The QueueSort plugin's optional ``sort_key(pod)`` (a key ordering pods exactly as its
        ``less``), or None."""
        key: Callable[[QueuedPod], Any] | None = getattr(self._points[ExtensionPoint.QueueSort][0], "sort_key", None)
        return key

    # --- filtering --------------------------------------------------------------------------

    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """(merged result, status, plugins whose result restricted the nodes)."""
        skip: set[str] = set()
        try:
            result: PreFilterResult | None = None
            with_nodes: set[str] = set()
            returned = SUCCESS
            pl: PreFilterPlugin
            for pl in self._pre_filter:
                try:
                    r, s = pl.pre_filter(state, pod, nodes)
                except Exception as err:
                    r, s = None, as_status(err)
                code = s.code  # the hot loop: attribute compares, not method calls
                if code is Code.Skip:
                    skip.add(pl.name)
                    continue
                if code is not Code.Success:
                    s = s.with_plugin(pl.name)
                    if s.code is Code.UnschedulableAndUnresolvable:
                        return None, s, set()
                    if s.code is Code.Unschedulable:
                        returned = s
                        continue
                    return None, _error(f'running PreFilter plugin "{pl.name}": {s.message()}', pl.name), set()
                if r is not None and not r.all_nodes():
                    with_nodes.add(pl.name)
                result = r if result is None else result.merge(r)
                if result is not None and result.node_names is not None and not result.node_names:
                    names = sorted(with_nodes)
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    return result, Status(Code.UnschedulableAndUnresolvable, msg), with_nodes
            return result, returned, with_nodes
        finally:
            state.skip_filter_plugins = skip

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._run_extension(state, "AddPod", pod_to_schedule, pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._run_extension(state, "RemovePod", pod_to_schedule, pod_info_to_remove, node_info)

    def _run_extension(self, state: CycleState, op: str, pod: Pod, pi: PodInfo, node_info: NodeInfo) -> Status:
        pl: PreFilterPlugin
        for pl in self._points[ExtensionPoint.PreFilter]:
            ext = pl.pre_filter_extensions()
            if ext is None or pl.name in state.skip_filter_plugins:
                continue
            try:
                s = (
                    ext.add_pod(state, pod, pi, node_info)
                    if op == "AddPod"
                    else ext.remove_pod(state, pod, pi, node_info)
                )
            except Exception as err:
                s = as_status(err)
            if not s.is_success():
                return _error(f'running {op} on PreFilter plugin "{pl.name}": {s.message()}', pl.name)
        return SUCCESS

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        pl: FilterPlugin
        for pl in self._filter:
            if pl.name in state.skip_filter_plugins:
                continue
            try:
                s = pl.filter(state, pod, node_info)
            except Exception as err:
                s = as_status(err)
            if not s.is_success():
                if not s.is_rejected():
                    return _error(f'running "{pl.name}" filter plugin: {s.message()}', pl.name)
                return s.with_plugin(pl.name)
        return SUCCESS

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Filters with the ≥-priority pods nominated to the node, then (if any) without them."""
        priority = _pod_priority(pod)
        nominated = [
            pi
            for pi in self.nominated_pods_for_node(node_info.name)
            if _pod_priority(pi.pod) >= priority and pi.uid != pod.metadata.uid
        ]
        if not nominated:
            return self.run_filter_plugins(state, pod, node_info)
        state_with, node_with = state.clone(), node_info.clone()
        for pi in nominated:
            node_with.add_pod(pi)
            s = self.run_pre_filter_extension_add_pod(state_with, pod, pi, node_with)
            if not s.is_success():
                return Status(Code.Error, *s.reasons, plugin=s.plugin)
        status = self.run_filter_plugins(state_with, pod, node_with)
        if not status.is_success():
            return status
        return self.run_filter_plugins(state, pod, node_info)

    def find_feasible_rows(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        candidates: IntArray | None,
        start: int,
        to_find: int,
        diagnosis: Diagnosis,
    ) -> tuple[IntArray, int, Status | None]:
        """Upstream's sampled search over ``candidates`` (table rows; None: all) from position
        ``start``: (feasible rows, nodes processed, an Error status or None); failures go into
        ``diagnosis`` as the per-node search would put them."""
        plugins, filter_alls = self._filters_minus(state.skip_filter_plugins)
        return vectorized.find_feasible(
            plugins,
            state,
            pod,
            table,
            candidates,
            start,
            to_find,
            diagnosis,
            self._nominated_rows(table),
            self.run_filter_plugins_with_nominated_pods,
            filter_alls,
        )

    def _nominated_rows(self, table: NodeTable) -> np.ndarray[Any, np.dtype[np.bool_]] | None:
        """Rows of nodes with nominated pods (None: there are none)."""
        nominator = self._nominator
        if nominator is None:
            return None
        names_of = getattr(nominator, "nominated_node_names", None)
        if names_of is not None:
            names: list[str] = names_of()
        else:
            names = [info.name for info in table.infos if nominator.nominated_pods_for_node(info.name)]
        rows = [i for i in (table.index.get(n) for n in names) if i is not None]
        if not rows:
            return None
        mask = np.zeros(table.size, dtype=bool)
        mask[rows] = True
        return mask

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        pl: PostFilterPlugin
        for pl in self._points[ExtensionPoint.PostFilter]:
            try:
                r, s = pl.post_filter(state, pod, filtered_node_status)
            except Exception as err:
                r, s = None, as_status(err)
            if s.is_success():
                return r, s
            if s.code is Code.UnschedulableAndUnresolvable:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected():
                return None, Status(Code.Error, *s.reasons, plugin=pl.name)
            if r is not None and r.nominating_mode is not NominatingMode.Noop:
                result = r
            reasons.extend(s.reasons)
            rejector = rejector or pl.name
        return result, Status(Code.Unschedulable, *reasons, plugin=rejector)

    # --- scoring ----------------------------------------------------------------------------

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        skip: set[str] = set()
        try:
            pl: PreScorePlugin
            for pl in self._pre_score:
                try:
                    s = pl.pre_score(state, pod, nodes)
                except Exception as err:
                    s = as_status(err)
                code = s.code
                if code is Code.Skip:
                    skip.add(pl.name)
                elif code is not Code.Success:
                    return _error(f'running PreScore plugin "{pl.name}": {s.message()}', pl.name)
            return SUCCESS
        finally:
            state.skip_score_plugins = skip

    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[list[NodePluginScores], Status]:
        """Per node: each plugin's raw, normalized and weighted score, and the total."""
        plugins: list[ScorePlugin] = self._scores_minus(state.skip_score_plugins)
        lists: dict[str, list[NodeScore]] = {pl.name: [] for pl in plugins}
        for ni in nodes:
            for pl in plugins:
                try:
                    score, s = pl.score(state, pod, ni)
                except Exception as err:
                    score, s = 0, as_status(err)
                if not s.is_success():
                    msg = f'running Score plugins: plugin "{pl.name}" failed with: {s.message()}'
                    return [], _error(msg, pl.name)
                lists[pl.name].append(NodeScore(ni.name, score))
        raw = {name: [ns.score for ns in lst] for name, lst in lists.items()}
        for pl in plugins:
            ext = pl.score_extensions()
            if ext is None:
                continue
            try:
                s = ext.normalize_score(state, pod, lists[pl.name])
            except Exception as err:
                s = as_status(err)
            if not s.is_success():
                msg = f'running Normalize on Score plugins: plugin "{pl.name}" failed with: {s.message()}'
                return [], _error(msg, pl.name)
        out: list[NodePluginScores] = []
        for i, ni in enumerate(nodes):
            nps = NodePluginScores(ni.name)
            for pl in plugins:
                normalized = lists[pl.name][i].score
                if not MIN_NODE_SCORE <= normalized <= MAX_NODE_SCORE:
                    msg = (
                        f'applying score defaultWeights on Score plugins: plugin "{pl.name}" returns an invalid '
                        f"score {normalized}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                        "after normalizing"
                    )
                    return [], _error(msg, pl.name)
                weight = self.score_plugin_weight[pl.name]
                nps.scores.append(PluginScore(pl.name, raw[pl.name][i], normalized, weight, normalized * weight))
                nps.total_score += normalized * weight
            out.append(nps)
        return out, SUCCESS

    def score_rows(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray, nodes: list[NodeInfo]
    ) -> tuple[IntArray, Status]:
        """The totals ``run_score_plugins`` gives ``nodes`` (= ``table`` rows ``rows``), or its Error."""
        plugins = self._scores_minus(state.skip_score_plugins)
        totals = score_totals.cached_totals(plugins, self.score_plugin_weight, state, pod, table, rows)
        if totals is not None:
            return totals, SUCCESS
        try:
            return vectorized.score(plugins, self.score_plugin_weight, state, pod, table, rows, nodes), SUCCESS
        except vectorized.ScoreError as err:
            return np.zeros(0, dtype=np.int64), err.status
