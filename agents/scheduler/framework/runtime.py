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

Where the runners live: this module holds PreEnqueue and QueueSort (the queue's points), the
plugins' lists per point and per skipped set (``_minus``), the introspection and the ``Handle``
(the Framework is the plugins' Handle). The rest are mixed in: PreFilter, Filter (per node, with
nominated pods, and the vectorised ``find_feasible_rows``) and PostFilter from
``runtime_filtering.py`` (``FilterRunners``); PreScore, Score and the vectorised ``score_rows``
from ``runtime_scoring.py`` (``ScoringRunners``); Reserve on (the table's last six rows) and the
waiting pods from ``runtime_binding.py`` (``BindingRunners``).

A plugin raising inside any point gives an ``Error`` status (upstream's ``AsStatus``) with that
point's message, as if it had returned the error; the vectorised ``filter_all``/``score_all``
fall back to the per-node methods when they raise, so the same node and message come out.
Plugin statuses are stamped with the plugin's name. Everything is synchronous except
``wait_on_permit``, ``run_pre_bind_plugins`` and ``run_bind_plugins``. It does not own the order
of the scheduling cycle, node sampling, host selection or the failure handling (the scheduler's
cycles do), nor the queue or the cache.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock

from .events import ClusterEventWithHint
from .interface import (
    ExtensionPoint,
    FilterPlugin,
    Plugin,
    PluginFactory,
    PodNominator,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ProfileSpec,
    QueuedPod,
    QueueSortPlugin,
    ScorePlugin,
    SharedLister,
)
from .plugin_set import build_plugins, enqueue_events
from .pod_info import PodInfo
from .runtime_binding import BindingRunners
from .runtime_filtering import FilterRunners
from .runtime_scoring import ScoringRunners
from .status import SUCCESS, Code, Status, as_status
from .waiting_pods import WaitingPodsMap

if TYPE_CHECKING:
    from emulator.base.client.client import Client

__all__ = ["Framework"]


_OK: Final = Code.Success
"""``status.code is _OK``: ``Status.is_success`` without the method call (the per-cycle runners)."""


class Framework(FilterRunners, ScoringRunners, BindingRunners):
    """The plugins of one profile and the runners of its extension points (those of PreFilter
    to PostFilter, PreScore and Score, Reserve on: mixed in)."""

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
