"""``SchedulingSimulator``: this scheduler's own PreFilter and Filter plugins run on a mutable,
forkable snapshot, for a component that asks "would this pod fit there?" without scheduling it.

It is what Cluster Autoscaler's ``simulator/clustersnapshot`` (``PredicateSnapshot``: the
``SchedulerBasedPredicateChecker`` over a forkable ``ClusterSnapshot``) is upstream, where the
autoscaler imports kube-scheduler's framework: here the autoscaler agent imports this module's
class through ``agents.scheduler``'s surface, so its plugins and the scheduler's are the same
code. That does not make the reported disagreements impossible: kubernetes/autoscaler#9287 and
#8162 come from how the scale-down simulation treats the node being removed (the autoscaler's
``removalSimulation`` option emulates each release), not from the plugins, and both reproduce
here (``scenarios/regressions/``).

The volume plugins read the storage objects among ``workloads``, or, given ``volumes_client``,
live informers of the storage kinds (``volumes``: Karpenter's provisioner, which reads the
cluster's claims as upstream's ``VolumeTopology`` does).

One profile's ``Framework`` (default: upstream's default profile) is built once over the
simulator's ``Snapshot``; ``reset`` replaces the nodes and pods, ``add_node``/``add_pod``/
``remove_node``/``remove_pod`` change them, ``fork``/``revert``/``commit`` nest as upstream's
``Fork``/``Revert``/``Commit`` (an undo log). A pod added or removed patches its node's row
in place (``Snapshot._replace``); a node added or removed is listed or unlisted in place
(``Snapshot._insert``/``_delete``: the lists a rebuild would give, without a pass over every
node); a ``reset`` rebuilds them before the next check.

A check (``check``) is upstream's ``CheckPredicates``: a fresh ``CycleState``, PreFilter (a
rejection, or a PreFilterResult without the node, fails), then every Filter plugin in profile
order until one fails (no nominated pods: the autoscaler does not see the scheduler's
nominator). It returns the failing status's reasons (``[]``: the pod fits).
``schedule_anywhere`` is ``SchedulePodOnAnyNodeMatching``: nodes in snapshot order from the
last hit (upstream's round-robin ``lastIndex``), the first that passes gets the pod; the nodes a
vectorised Filter plugin rejects are left out of the walk (``simulator_rows.SimRows``, a table
of the nodes kept current through the edits and forks: the same node gets the pod).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from agents.scheduler.cache import Snapshot
from agents.scheduler.config import load_config
from agents.scheduler.explain_static import static_framework
from agents.scheduler.framework.interface import ExtensionPoint
from agents.scheduler.framework.types import CycleState, NodeInfo, PodInfo
from agents.scheduler.registry import build_registry
from agents.scheduler.simulator_rows import ROW_LOCAL, SimRows
from agents.scheduler.volume_listers import VolumeListers, static_volume_listers
from agents.scheduler.workload_listers import workload_client
from emulator.base.api.core import Node, Pod
from emulator.base.client.client import Client

__all__ = ["SchedulingSimulator"]

PREFILTER_FAILED = "pod rejected by PreFilter"
MAX_POD_INFOS: Final = 20_000


class _Namespaces:
    def __init__(self, namespaces: Callable[[], Sequence[Any]]) -> None:
        self._namespaces = namespaces

    def get(self, name: str) -> Any:
        return next((ns for ns in self._namespaces() if ns.metadata.name == name), None)

    def list(self) -> list[Any]:
        return list(self._namespaces())


class _NoNominator:
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return []


class SchedulingSimulator:
    """Filter plugins on a mutable snapshot (module docstring)."""

    def __init__(
        self,
        *,
        scheduler_name: str = "default-scheduler",
        namespaces: Callable[[], Sequence[Any]] = list,
        workloads: Iterable[Any] = (),
        volumes_client: Client | None = None,
    ) -> None:
        registry = build_registry(entry_point_group=None)
        config = load_config(None, registry)
        profile = config.profile(scheduler_name) or config.profiles[0]
        self.snapshot = Snapshot()
        self._order: list[str] = []
        self._dirty = False
        self._twice = False
        """A node name was added while listed: node edits rebuild until the next ``reset``."""
        self._log: list[tuple[str, Any, str]] = []
        self._marks: list[int] = []
        self._last = 0
        self._rows: SimRows | None = None
        self._stale: dict[int, tuple[NodeInfo, int]] = {}
        """id(info) -> (a NodeInfo changed since ``_rows`` last saw it, the log index of that
        change; -1: kept through reverts): ``_rows`` learns of it when next read (``_view``)."""
        self._seen = 0
        """The log's length when ``_rows`` last saw every NodeInfo (``_view``, built), or the
        mark of a revert since (``revert``)."""
        self._spare: SimRows | None = None
        """The last reset's view, clean, for the next one to rebase (``SimRows.rebase``)."""
        self.checks = 0
        """Predicate checks run (for profiles)."""
        self._pod_infos: dict[int, PodInfo] = {}
        """id(pod) -> its PodInfo (``_pod_info``; the PodInfo holds the pod, so the id stays its)."""
        workloads = list(workloads)
        self.volumes = (
            VolumeListers(workload_client(volumes_client, "volumes"))
            if volumes_client is not None
            else static_volume_listers(workloads)
        )
        """What the volume plugins read: with ``volumes_client``, informers of the storage kinds
        the caller runs (``volumes.start(tg, prefix)``, ``await volumes.synced()``); else the
        storage objects among ``workloads``."""
        self.framework = static_framework(
            profile,
            registry,
            config.parallelism,
            self.snapshot,
            random.Random(0),
            _NoNominator(),
            _Namespaces(namespaces),
            workloads,
            volume_listers=self.volumes,
        )

    # --- the snapshot ---------------------------------------------------------------------

    def reset(self, nodes: Iterable[Node], pods: Iterable[Pod]) -> None:
        """Exactly these nodes and the pods bound to them; forks are dropped."""
        rows = self._rows
        if rows is not None:
            self._flush(rows)
            self._spare = rows if rows.clean() else None
        self._drop_rows()
        self._log.clear()
        self._marks.clear()
        self._twice = False
        self.snapshot.node_info_map = {}
        self._order = []
        for node in nodes:
            self.snapshot.node_info_map[node.metadata.name] = NodeInfo(node)
            self._order.append(node.metadata.name)
        for pod in pods:
            info = self.snapshot.node_info_map.get(pod.spec.node_name) if pod.spec.node_name else None
            if info is not None:
                info.add_pod(self._pod_info(pod))
        self._dirty = True

    def _pod_info(self, pod: Pod) -> PodInfo:
        """``pod``'s PodInfo, one per Pod object (pods are immutable, so it holds the same values
        as a fresh one; ``PodInfo`` is not changed once built here): the simulations add and
        revert the same pods over and over."""
        pi = self._pod_infos.get(id(pod))
        if pi is None or pi.pod is not pod:
            if len(self._pod_infos) >= MAX_POD_INFOS:
                self._pod_infos.clear()
            pi = self._pod_infos[id(pod)] = PodInfo(pod)
        return pi

    def node_names(self) -> list[str]:
        return list(self._order)

    def node_info(self, name: str) -> NodeInfo | None:
        return self.snapshot.node_info_map.get(name)

    def add_node(self, node: Node) -> None:
        self._rows_before_node_edit()
        name = node.metadata.name
        if name in self.snapshot.node_info_map:
            self._twice = True
        info = self.snapshot.node_info_map[name] = NodeInfo(node)
        self._order.append(name)
        self._log.append(("node+", node, ""))
        self._listed(len(self._order) - 1, info)
        if self._rows is not None and not self._rows.added(name):
            self._drop_rows()

    def remove_node(self, name: str) -> None:
        self._rows_before_node_edit()
        info = self.snapshot.node_info_map.pop(name)
        i = self._order.index(name)
        del self._order[i]
        self._log.append(("node-", info, str(i)))
        self._unlisted(i)
        if self._rows is not None and not self._rows.dropped(info):
            self._drop_rows()

    def add_pod(self, pod: Pod, node_name: str) -> None:
        info = self.snapshot.node_info_map[node_name]
        info.add_pod(self._pod_info(pod))
        self._log.append(("pod+", pod, node_name))
        self._changed(info, len(self._log) - 1)

    def remove_pod(self, pod: Pod, node_name: str) -> None:
        info = self.snapshot.node_info_map[node_name]
        if info.remove_pod(pod):
            self._log.append(("pod-", pod, node_name))
            self._changed(info, len(self._log) - 1)

    def _changed(self, info: NodeInfo, at: int | None) -> None:
        """A listed NodeInfo changed in place (by the log entry at ``at``; None: a revert that
        leaves the rows as they were): patch the snapshot's affinity lists and columnar table
        for it (``Snapshot._replace``, as the cache's update does), no rebuild; the rows view
        learns of it when next read (``_stale``)."""
        if not self._dirty and not self.snapshot._replace([info]):
            self._dirty = True
        if self._rows is not None:
            if at is not None and id(info) not in self._stale:
                self._stale[id(info)] = (info, at)
        elif self._spare is not None:
            self._spare.changed(info)  # still the row of that NodeInfo if it is rebased

    def _flush(self, rows: SimRows) -> None:
        """The rows view told of every NodeInfo changed since it last looked."""
        for info, _ in self._stale.values():
            rows.changed(info)
        self._stale.clear()
        self._seen = len(self._log)

    def _view(self, listed: list[NodeInfo]) -> SimRows:
        """The rows view, current (built if missing)."""
        rows = self._rows
        if rows is None:
            rows = self._rows = self._new_rows(listed)
            self._stale.clear()
            self._seen = len(self._log)
        elif self._stale:
            self._flush(rows)
        return rows

    def _drop_rows(self) -> None:
        self._rows = None
        self._stale.clear()

    def fork(self) -> None:
        self._marks.append(len(self._log))

    def _rows_before_node_edit(self) -> None:
        """Inside a fork, the rows table is built (when missing) before the first node edit, so
        that a revert re-inserting the node keeps it; a fork that edits no node (a scale-down
        pass finding every node busy) builds none."""
        if self._rows is None and self._marks:
            self._refresh()
            self._view(self.snapshot.node_info_list)

    def _new_rows(self, listed: list[NodeInfo]) -> SimRows:
        """The view of ``listed``: the last reset's rebased when it fits, else a new table."""
        spare, self._spare = self._spare, None
        if spare is not None and spare.rebase(listed):
            return spare
        return SimRows(listed)

    def commit(self) -> None:
        self._marks.pop()

    def revert(self) -> None:
        """Undo the log down to the last mark. The rows view was last current at ``_seen``: if
        that is not past the mark, a NodeInfo changed since the mark only is as the view has it
        once undone, and leaves ``_stale``; otherwise every NodeInfo undone stays there, kept
        (the view saw some of them past the mark)."""
        mark = self._marks.pop()
        infos = self.snapshot.node_info_map
        kept = self._seen > mark
        at = -1 if kept else None
        while len(self._log) > mark:
            op, obj, where = self._log.pop()
            rows = self._rows
            if op == "node+":
                gone = infos.pop(obj.metadata.name)
                i = self._order.index(obj.metadata.name)
                del self._order[i]
                self._unlisted(i)
                if rows is not None and not rows.dropped(gone):
                    self._drop_rows()
            elif op == "node-":
                infos[obj.name] = obj
                self._order.insert(int(where), obj.name)
                self._listed(int(where), obj)
                if rows is not None and not rows.restored(obj, int(where)):
                    self._drop_rows()
            elif op == "pod+":
                infos[where].remove_pod(obj)
                self._changed(infos[where], at)
            else:
                infos[where].add_pod(self._pod_info(obj))
                self._changed(infos[where], at)
        stale = self._stale
        if kept:
            for key, (info, when) in stale.items():
                if when >= mark:
                    stale[key] = (info, -1)
            self._seen = mark
        else:
            for key in [key for key, (_, when) in stale.items() if when >= mark]:
                del stale[key]

    def _listed(self, i: int, info: NodeInfo) -> None:
        """A node entered ``_order`` at ``i``: list it in place (``Snapshot._insert``, the same
        lists a rebuild gives) unless a rebuild is pending anyway or a name was added twice
        (then the order and the listing no longer match position for position)."""
        if self._dirty or self._twice:
            self._dirty = True
        else:
            self.snapshot._insert(i, info)

    def _unlisted(self, i: int) -> None:
        """The node at ``_order``'s position ``i`` left it (``Snapshot._delete``)."""
        if self._dirty or self._twice:
            self._dirty = True
        else:
            self.snapshot._delete(i)

    def _refresh(self) -> None:
        if self._dirty:
            self.snapshot._rebuild(self._order)
            self._dirty = False

    # --- predicates -----------------------------------------------------------------------

    def check(self, pod: Pod, node_name: str) -> list[str]:
        """The reasons ``pod`` does not fit ``node_name`` (``[]``: it fits)."""
        self._refresh()
        info = self.snapshot.node_info_map[node_name]
        state = CycleState(self._pod_info(pod))
        return self._filters(state, pod, info, self._pre_filter(state, pod))

    def _pre_filter(self, state: CycleState, pod: Pod) -> tuple[list[str], frozenset[str] | None]:
        self.checks += 1
        result, status, _ = self.framework.run_pre_filter_plugins(state, pod, self.snapshot.node_info_list)
        if not status.is_success() and not status.is_skip():
            return list(status.reasons) or [PREFILTER_FAILED], None
        return [], None if result is None else result.node_names

    def _filters(
        self, state: CycleState, pod: Pod, info: NodeInfo, pre: tuple[list[str], frozenset[str] | None]
    ) -> list[str]:
        reasons, allowed = pre
        if reasons:
            return reasons
        if allowed is not None and info.name not in allowed:
            return [PREFILTER_FAILED]
        status = self.framework.run_filter_plugins(state, pod, info)
        return [] if status.is_success() else list(status.reasons) or [status.message()]

    def row_local(self, pod: Pod) -> CycleState | None:
        """``pod``'s PreFilter on the listed nodes, when it passes without narrowing them and leaves
        only row-local Filter plugins to run (``simulator_rows.ROW_LOCAL``: a node's verdict
        then reads that node and the pod alone, so it changes only with that node): its cycle
        state, for ``row_local_fits`` and ``passes``; None otherwise. Counts no check."""
        self._refresh()
        state = CycleState(self._pod_info(pod))
        result, status, _ = self.framework.run_pre_filter_plugins(state, pod, self.snapshot.node_info_list)
        if not status.is_success() or (result is not None and result.node_names is not None):
            return None
        running = self.framework._minus(ExtensionPoint.Filter, state.skip_filter_plugins)
        return state if all(pl.name in ROW_LOCAL for pl in running) else None

    def row_local_fits(self, state: CycleState, pod: Pod) -> list[int]:
        """The listed positions where ``pod`` fits, ascending (``state``: ``row_local``'s)."""
        listed = self.snapshot.node_info_list
        if not listed:
            return []
        order = self._view(listed).candidates(self.framework, state, pod, 0, len(listed))
        pre: tuple[list[str], frozenset[str] | None] = ([], None)
        walk = range(len(listed)) if order is None else order
        return [i for i in walk if not self._filters(state, pod, listed[i], pre)]

    def passes(self, state: CycleState, pod: Pod, node_name: str) -> bool:
        """Whether ``pod`` passes the Filter on ``node_name`` (``state``: ``row_local``'s, or a
        PreFilter that passed). Counts no check."""
        return not self._filters(state, pod, self.snapshot.node_info_map[node_name], ([], None))

    def first_fit(self, pod: Pod, names: Iterable[str]) -> str | None:
        """The first of ``names`` (listed nodes) where ``pod`` fits: ``check`` of each in turn,
        one PreFilter for all (counted as one check)."""
        self._refresh()
        state = CycleState(self._pod_info(pod))
        pre = self._pre_filter(state, pod)
        infos = self.snapshot.node_info_map
        return next((name for name in names if not self._filters(state, pod, infos[name], pre)), None)

    def schedule_on(self, pod: Pod, node_name: str) -> list[str]:
        """``SchedulePod``: check, and on success add the pod there."""
        reasons = self.check(pod, node_name)
        if not reasons:
            self.add_pod(pod, node_name)
        return reasons

    def schedule_anywhere(self, pod: Pod, match: Callable[[str], bool] | None = None) -> str | None:
        """``SchedulePodOnAnyNodeMatching``: the first node (from the last hit on) where the pod
        fits gets it; None when none does."""
        self._refresh()
        listed = self.snapshot.node_info_list
        if not listed:
            return None
        state = CycleState(self._pod_info(pod))
        pre = self._pre_filter(state, pod)
        if pre[0]:
            return None
        n = len(listed)
        order = self._view(listed).candidates(self.framework, state, pod, self._last % n, n)
        for i in order if order is not None else ((self._last + k) % n for k in range(n)):
            info = listed[i]
            if match is not None and not match(info.name):
                continue
            if not self._filters(state, pod, info, pre):
                self._last = i
                self.add_pod(pod, info.name)
                return info.name
        return None
