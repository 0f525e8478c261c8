"""The plugin interfaces of the scheduling framework, named as upstream's ``framework/interface.go``.

What this module owns: the contract between plugins and the runtime.

* ``Plugin``: any object with a ``name`` (the upstream ``Name`` constant, e.g. "NodeResourcesFit").
* One ``runtime_checkable`` Protocol per extension point (``PreEnqueuePlugin``, ``QueueSortPlugin``,
  ``PreFilterPlugin``, ``FilterPlugin``, ``PostFilterPlugin``, ``PreScorePlugin``, ``ScorePlugin``,
  ``ReservePlugin``, ``PermitPlugin``, ``PreBindPlugin``, ``BindPlugin``, ``PostBindPlugin``) and
  ``EnqueueExtensions``. A plugin is a plain class: it does NOT inherit from these Protocols (it may,
  for documentation); it implements any subset of them by defining the methods.
* ``PreFilterResult`` / ``PostFilterResult`` / ``NodeToStatus`` (``node_to_status.py``, re-exported
  here) / ``PluginScore`` / ``NodePluginScores``: the values those points take and return.
* ``ExtensionPoint`` / ``ProfileSpec``: the profile the runtime is built from (final per-point
  ``(name, weight)`` lists, ``multiPoint`` already expanded by the configuration loader).
* ``Handle``: what a plugin factory receives (the profile's ``Framework`` implements it).
* ``PluginFactory``: ``factory(args, handle) -> Plugin``; a registry maps plugin names to factories.

How the runtime discovers extension points (``plugin_set.py``): the profile says which plugin is
enabled at which extension point; for each such (point, plugin) the runtime checks
``isinstance(plugin, <Protocol of that point>)`` — i.e. that every method of the Protocol is
present — and refuses to build the profile otherwise
(``ValueError('plugin "X" does not extend FilterPlugin plugin')``).
So a Score plugin must define both ``score`` and ``score_extensions`` (return ``None`` when it has
no NormalizeScore), a PreFilter plugin both ``pre_filter`` and ``pre_filter_extensions``, a Reserve
plugin both ``reserve`` and ``unreserve``. ``EnqueueExtensions`` is discovered by ``isinstance``
alone; a plugin without it is registered for every cluster event (the wildcard), as upstream.

Sync vs async: everything runs synchronously in the scheduling cycle except ``pre_bind`` and
``bind`` (the binding cycle talks to the API server); ``post_bind`` is synchronous and informational.

Vectorised companions (optional, beside the per-node reference methods; ``vectorized.py`` runs
them): ``VectorFilterPlugin.filter_all`` gives ``FilterCodes`` for many table rows at once,
``VectorScorePlugin.score_all`` the raw scores, ``VectorScoreExtensions.normalize_score_all`` the
normalized ones. Either may return ``None`` for a pod or table it cannot handle exactly (the
runtime then calls the per-node method for that plugin). They must agree with the per-node
methods on every row: same statuses (code and reasons), same integers. ``RowScorePlugin.score_row``
says that, this cycle, the plugin's normalized score of a node depends on that node alone
(``RowScore``), which lets the runtime keep weighted totals per row across cycles
(``score_totals.py``).

Statuses: an expected "no" is a ``Status`` (never a raise). Plugins need not set ``Status.plugin``;
the runtime stamps it. A plugin raising an exception is a bug; the runners turn it into an
``Error`` status (upstream's ``AsStatus``).

The vectorised companions live in ``vector_interface.py`` and are re-exported here. It does not
own: the shared data types (``types.py`` re-exports them from ``status.py``, ``pod_info.py``,
``node_info.py`` ...), running the plugins (``runtime.py`` and its mixins),
the waiting-pods map (``waiting_pods.py``), the failure diagnosis (``diagnosis.py``).
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock

from .cycle_state import CycleState
from .events import ClusterEventWithHint
from .node_info import NodeInfo
from .node_to_status import NodeToStatus
from .pod_info import PodInfo
from .status import NodeScore, Status
from .vector_interface import (
    ALL_PASS,
    FilterCodes,
    RowScore,
    RowScorePlugin,
    VectorFilterPlugin,
    VectorScoreExtensions,
    VectorScorePlugin,
)
from .waiting_pods import WaitingPod

if TYPE_CHECKING:
    from emulator.base.client.client import Client

__all__ = [
    "ALL_PASS",
    "MAX_TIMEOUT_SECONDS",
    "BindPlugin",
    "EnqueueExtensions",
    "ExtensionPoint",
    "FilterCodes",
    "FilterPlugin",
    "Handle",
    "NodePluginScores",
    "NodeToStatus",
    "NominatingMode",
    "PermitPlugin",
    "Plugin",
    "PluginFactory",
    "PluginScore",
    "PodNominator",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "ProfileSpec",
    "QueueSortPlugin",
    "QueuedPod",
    "ReservePlugin",
    "RowScore",
    "RowScorePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "SharedLister",
    "VectorFilterPlugin",
    "VectorScoreExtensions",
    "VectorScorePlugin",
]

MAX_TIMEOUT_SECONDS = 15 * 60
"""Permit timeouts are capped at 15 minutes (upstream ``maxTimeout``)."""


# --- the profile the runtime is built from -------------------------------------------------


class ExtensionPoint(enum.Enum):
    """Extension points, valued as their ``KubeSchedulerConfiguration`` ``plugins`` keys."""

    PreEnqueue = "preEnqueue"
    QueueSort = "queueSort"
    PreFilter = "preFilter"
    Filter = "filter"
    PostFilter = "postFilter"
    PreScore = "preScore"
    Score = "score"
    Reserve = "reserve"
    Permit = "permit"
    PreBind = "preBind"
    Bind = "bind"
    PostBind = "postBind"


@dataclass(frozen=True, slots=True)
class ProfileSpec:
    """One profile, already merged with the defaults and with ``multiPoint`` expanded.

    ``plugins[point]`` is the ordered list of ``(plugin name, weight)`` enabled at ``point``;
    the weight matters only for ``ExtensionPoint.Score`` (0 means 1). ``plugin_args[name]`` is the
    decoded ``pluginConfig`` args handed to that plugin's factory (absent: ``None``).
    """

    scheduler_name: str = "default-scheduler"
    plugins: Mapping[ExtensionPoint, Sequence[tuple[str, int]]] = field(default_factory=dict)
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    needed: Sequence[str] = ()
    """Plugins enabled in the configuration but at none of ``plugins``' points (e.g. under
    multiPoint while implementing no extension point) are still constructed (upstream
    ``NewFramework`` builds every plugin of ``pluginsNeeded``); names already in ``plugins`` may
    repeat here."""


# --- what plugins are handed ---------------------------------------------------------------


class QueuedPod(Protocol):
    """What ``QueueSortPlugin.less`` compares (the queue's ``QueuedPodInfo``)."""

    @property
    def pod(self) -> Pod: ...

    @property
    def timestamp(self) -> float:
        """Clock time the pod was added to the queue (or last re-queued)."""
        ...


class SharedLister(Protocol):
    """The current cycle's snapshot of the cache (``agents/scheduler/cache/snapshot.py``)."""

    @property
    def node_info_list(self) -> list[NodeInfo]: ...

    @property
    def node_info_map(self) -> dict[str, NodeInfo]: ...

    @property
    def have_pods_with_affinity_node_info_list(self) -> list[NodeInfo]: ...

    @property
    def have_pods_with_required_anti_affinity_node_info_list(self) -> list[NodeInfo]: ...

    def get(self, node_name: str) -> NodeInfo:
        """The node's NodeInfo; ``KeyError`` if absent from the snapshot."""
        ...


class PodNominator(Protocol):
    """The queue's nominator, as far as the framework reads it."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...


# --- results -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin restricts the pod to; ``None`` means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """Upstream ``Merge``: the intersection; ``None``/all-nodes is the identity."""
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True, slots=True)
class PluginScore:
    """One score plugin's verdict on one node, kept whole for ``explain``."""

    name: str
    raw_score: int
    """What ``score`` returned."""
    normalized_score: int
    """After ``normalize_score`` (equal to ``raw_score`` without ScoreExtensions)."""
    weight: int
    score: int
    """``normalized_score * weight``: what counts in the total (upstream ``PluginScore.Score``)."""


@dataclass(slots=True)
class NodePluginScores:
    """Upstream ``NodePluginScores``: a node's per-plugin scores and their sum."""

    name: str
    scores: list[PluginScore] = field(default_factory=list)
    total_score: int = 0


class NominatingMode(enum.Enum):
    Noop = 0
    """Keep the pod's current nomination."""
    Override = 1
    """Replace it with ``nominated_node_name`` (may be "" to clear)."""


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """A PostFilter plugin's outcome: the node the pod is nominated to (preemption)."""

    nominated_node_name: str = ""
    nominating_mode: NominatingMode = NominatingMode.Override


# --- the extension points --------------------------------------------------------------


@runtime_checkable
class Plugin(Protocol):
    name: str
    """Upstream's plugin name (the ``Name`` constant)."""


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status:
        """Success lets the pod into activeQ; anything else gates it (it waits for an event)."""
        ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPod, b: QueuedPod) -> bool:
        """True if ``a`` should be popped before ``b``. Exactly one per profile.

        A plugin may also offer ``sort_key(a)``: a key with ``sort_key(a) < sort_key(b)``
        exactly when ``less(a, b)`` (PrioritySort's is ``(-priority, timestamp)``); activeQ
        then compares the keys instead of calling ``less`` (same order, faster)."""
        ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Incremental updates of a PreFilter plugin's CycleState for a simulated pod add/remove."""

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status: ...

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Skip: the plugin's Filter (and extensions) are skipped this cycle."""
        ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Success, Unschedulable, UnschedulableAndUnresolvable (or Error)."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """Runs only when no node fits. Success with a nominated node ends the PostFilter chain."""
        ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Skip: the plugin's Score is skipped this cycle."""
        ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        """Rewrite ``scores[i].score`` in place into [MIN_NODE_SCORE, MAX_NODE_SCORE]."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undo ``reserve``; must be idempotent (may run without a prior reserve)."""
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """(Success | Wait | rejection, timeout in seconds — used only with Wait, capped at 15 min)."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    """May also define ``pre_bind_pre_flight(state, pod, node_name) -> Status`` (upstream's
    ``PreBindPreFlight``, v1.34): Skip when its PreBind would do nothing for this pod, so the
    framework does not run it; Success or Error otherwise. Without it, PreBind always runs."""

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Skip: not mine, let the next bind plugin try."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Events that may make a pod this plugin rejected schedulable, with optional hints."""
        ...


# --- the handle and factories ----------------------------------------------------------------


class Handle(Protocol):
    """What a plugin factory receives; the profile's ``runtime.Framework`` implements it.

    Plugins keep the handle and read the snapshot through it during a cycle
    (``handle.snapshot_shared_lister().get(name)``); they never reach into the cache.
    """

    @property
    def scheduler_name(self) -> str: ...

    @property
    def client(self) -> Client | None:
        """For API calls (DefaultBinder's Binding); ``None`` in pure unit tests."""
        ...

    @property
    def clock(self) -> Clock: ...

    @property
    def rng(self) -> random.Random: ...

    @property
    def parallelism(self) -> int: ...

    def snapshot_shared_lister(self) -> SharedLister: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None: ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a pod waiting at Permit; False if no such waiting pod."""
        ...

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status: ...


PluginFactory = Callable[[Mapping[str, Any] | None, Handle], Plugin]
"""``factory(args, handle) -> plugin``: ``args`` is the decoded pluginConfig entry, or None."""
