"""One scheduling cycle's view of the cluster: upstream ``backend/cache/snapshot.go``.

What this module owns: ``Snapshot``, the read-only NodeInfos a cycle filters and scores
(``node_info_list`` in node-tree order, ``node_info_map`` by name, and the two sub-lists of
nodes that hold pods with (anti-)affinity terms), plus ``normalized_image_name``.

How a snapshot changes: ``Cache.update_snapshot`` (``cache.py``) re-clones only the NodeInfos
whose ``generation`` is newer than ``snapshot.generation`` and rebuilds the lists only when nodes
were added or removed; a node that started or stopped holding pods with (anti-)affinity is
inserted into or removed from those sub-lists in node order (upstream rebuilds them whole). Upstream
overwrites the changed NodeInfo struct in place (so its list pointers stay valid); here the new
clone *replaces* the old object in the map and, by position, in the lists. The result is the same
for the cycle, and a NodeInfo handed out by an earlier snapshot never changes under its holder;
an untouched node keeps the very same object across cycles.

Only nodes with a Node object appear (a "ghost" NodeInfo, whose node was deleted while pods
remained, never does). ``Snapshot.from_objects(pods, nodes)`` builds one directly (``explain``,
tests): node-tree order (upstream's ``NewSnapshot`` iterates a Go map, i.e. random order), pods
on nodes not in ``nodes`` are dropped (upstream keeps them in an unreachable NodeInfo).

Image states: a NodeInfo's ``image_states`` maps the *normalized* name of every image in
``node.status.images`` to ``ImageStateSummary(size, num_nodes)``, ``num_nodes`` being how many
nodes hold that image when the NodeInfo was cloned (upstream ``ImageStateSummary.Snapshot``;
an untouched node keeps its count until it changes, as upstream). Upstream keys by the name the
runtime reported and normalizes only the pod's image; normalizing both sides is the same for the
tagged or digested names real runtimes report and lets ImageLocality find ``nginx`` as
``nginx:latest``.

The columnar view (``table``, a ``framework.node_table.NodeTable`` for the vectorised Filter
and Score) is built on first use after a rebuild and then kept row by row: ``_replace`` updates
the rows of the NodeInfos it puts in place, ``_rebuild`` drops the table.

Pod priorities (``lowest_pod_priority``, for DefaultPreemption's dry run): a count of the pods
on listed nodes per priority, made on first use after a rebuild and then kept by ``_replace``
(the replaced NodeInfo's pods out, the new one's in; a NodeInfo changed in place, as the
autoscalers' ``SchedulingSimulator`` does, drops the count), so the lowest priority in the cluster is
one ``min`` over the distinct priorities, not a pass over every pod.

What it does not own: the cache's book-keeping (``cache.py``, ``pod_states.py``), the node order (``node_tree.py``),
NodeInfo arithmetic (``framework/node_info.py``).
"""

from __future__ import annotations

import builtins
from bisect import bisect_left
from collections.abc import Iterable
from itertools import compress
from operator import attrgetter

from agents.scheduler.framework.node_table import NodeTable
from agents.scheduler.framework.types import ImageStateSummary, NodeInfo, PodInfo
from emulator.base.api.core import Node, Pod

from .node_tree import NodeTree

__all__ = ["Snapshot", "normalized_image_name"]

_WITH_AFFINITY = attrgetter("pods_with_affinity")
_WITH_ANTI_AFFINITY = attrgetter("pods_with_required_anti_affinity")


def normalized_image_name(name: str) -> str:
    """Upstream ImageLocality ``normalizedImageName``: append ":latest" when there is no tag.

    A tag is a ':' after the last '/', so ``localhost:5000/app`` becomes
    ``localhost:5000/app:latest`` while ``app@sha256:<hex>`` (a digest) is left as it is.
    """
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def node_image_names(node: Node) -> list[tuple[str, int]]:
    """(normalized name, sizeBytes) for every name of every image in ``node.status.images``."""
    return [(normalized_image_name(raw), image.size_bytes) for image in node.status.images for raw in image.names]


class Snapshot:
    """The NodeInfos of one scheduling cycle (the framework's ``SharedLister``)."""

    __slots__ = (
        "_affinity_rows",
        "_anti_affinity_rows",
        "_index",
        "_priorities",
        "_table",
        "generation",
        "have_pods_with_affinity_node_info_list",
        "have_pods_with_required_anti_affinity_node_info_list",
        "node_info_list",
        "node_info_map",
    )

    def __init__(self) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self.have_pods_with_affinity_node_info_list: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity_node_info_list: list[NodeInfo] = []
        self.generation = 0
        """The newest cache NodeInfo generation this snapshot reflects (0: none yet)."""
        self._index: dict[str, int] = {}
        self._affinity_rows: builtins.list[int] = []
        """``node_info_list`` positions of the affinity sub-list's NodeInfos (ascending)."""
        self._anti_affinity_rows: builtins.list[int] = []
        self._table: NodeTable | None = None
        self._priorities: dict[int, int] | None = None
        """priority -> pods on listed nodes with it (no zero counts); None: not counted yet."""

    @classmethod
    def from_objects(cls, pods: Iterable[Pod], nodes: Iterable[Node]) -> Snapshot:
        """A snapshot of exactly these nodes and the pods bound to them (upstream ``NewSnapshot``)."""
        nodes = list(nodes)
        tree = NodeTree()
        infos: dict[str, NodeInfo] = {}
        for node in nodes:
            infos[node.metadata.name] = NodeInfo(node)
            tree.add_node(node)
        for pod in pods:
            info = infos.get(pod.spec.node_name) if pod.spec.node_name else None
            if info is not None:
                info.add_pod(PodInfo(pod))
        holders: dict[str, dict[str, None]] = {}
        for node in nodes:
            for name, _ in node_image_names(node):
                holders.setdefault(name, {})[node.metadata.name] = None
        for node in nodes:
            infos[node.metadata.name].image_states = {
                name: ImageStateSummary(size, len(holders[name])) for name, size in node_image_names(node)
            }
        snapshot = cls()
        snapshot.node_info_map = infos
        snapshot._rebuild(tree.list())
        return snapshot

    # --- the SharedLister API ---------------------------------------------------------------

    def get(self, node_name: str) -> NodeInfo:
        """The node's NodeInfo; ``KeyError`` if the snapshot has no such node."""
        try:
            return self.node_info_map[node_name]
        except KeyError:
            raise KeyError(f'nodeinfo not found for node name "{node_name}"') from None

    def list(self) -> builtins.list[NodeInfo]:  # the name shadows ``list`` below: builtins.list
        return self.node_info_list

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def have_pods_with_affinity_list(self) -> builtins.list[NodeInfo]:
        return self.have_pods_with_affinity_node_info_list

    def have_pods_with_required_anti_affinity_list(self) -> builtins.list[NodeInfo]:
        return self.have_pods_with_required_anti_affinity_node_info_list

    def __len__(self) -> int:
        return len(self.node_info_list)

    @property
    def table(self) -> NodeTable:
        """The columnar view of ``node_info_list`` (built on first use, then kept current)."""
        if self._table is None:
            self._table = NodeTable(self.node_info_list)
        return self._table

    def lowest_pod_priority(self) -> int | None:
        """The lowest priority (``spec.priority``, 0 when unset: upstream ``PodPriority``) of any
        pod on a listed node, assumed pods included; None when no listed node holds a pod."""
        counts = self._priorities
        if counts is None:
            counts = self._priorities = {}
            for info in self.node_info_list:
                _count_priorities(counts, info, 1)
        return min(counts) if counts else None

    def __repr__(self) -> str:
        return (
            f"<Snapshot nodes={len(self.node_info_list)} "
            f"with_affinity={len(self.have_pods_with_affinity_node_info_list)} "
            f"with_required_anti_affinity={len(self.have_pods_with_required_anti_affinity_node_info_list)} "
            f"generation={self.generation}>"
        )

    # --- maintenance, used by Cache.update_snapshot -------------------------------------------

    def _rebuild(self, order: builtins.list[str]) -> None:
        """Rebuild every list from ``node_info_map`` in ``order`` (names absent from the map skipped)."""
        infos = self.node_info_map
        names = [name for name in order if name in infos]
        self.node_info_list = list(map(infos.__getitem__, names))
        self._index = dict(zip(names, range(len(names)), strict=True))  # a NodeInfo is keyed by its name
        self._table = None
        self._priorities = None
        self._rebuild_affinity_lists()

    def _insert(self, i: int, info: NodeInfo) -> None:
        """List ``info`` (already in ``node_info_map``) at position ``i``: what ``_rebuild``
        with its name inserted there in the order gives, without a pass over every node (the
        autoscalers' ``SchedulingSimulator`` adds and removes simulated nodes one at a time)."""
        listed = self.node_info_list
        listed.insert(i, info)
        self._reindex(i)
        self._table = None
        self._priorities = None
        for sub, rows, member in self._sub_lists(info):
            j = bisect_left(rows, i)
            for k in range(j, len(rows)):
                rows[k] += 1
            if member:
                sub.insert(j, info)
                rows.insert(j, i)

    def _delete(self, i: int) -> NodeInfo:
        """Unlist the NodeInfo at position ``i`` (``_insert``'s inverse; ``node_info_map`` is
        the caller's)."""
        listed = self.node_info_list
        info = listed.pop(i)
        del self._index[info.name]
        self._reindex(i)
        self._table = None
        self._priorities = None
        for sub, rows, _ in self._sub_lists(info):
            j = bisect_left(rows, i)
            if j < len(rows) and rows[j] == i:
                del sub[j]
                del rows[j]
            for k in range(j, len(rows)):
                rows[k] -= 1
        return info

    def _reindex(self, start: int) -> None:
        index, listed = self._index, self.node_info_list
        for k in range(start, len(listed)):
            index[listed[k].name] = k

    def _sub_lists(self, info: NodeInfo) -> builtins.list[tuple[builtins.list[NodeInfo], builtins.list[int], object]]:
        return [
            (self.have_pods_with_affinity_node_info_list, self._affinity_rows, info.pods_with_affinity),
            (
                self.have_pods_with_required_anti_affinity_node_info_list,
                self._anti_affinity_rows,
                info.pods_with_required_anti_affinity,
            ),
        ]

    def _rebuild_affinity_lists(self) -> None:
        listed = self.node_info_list
        rows = range(len(listed))
        self._affinity_rows = list(compress(rows, map(_WITH_AFFINITY, listed)))
        self._anti_affinity_rows = list(compress(rows, map(_WITH_ANTI_AFFINITY, listed)))
        self.have_pods_with_affinity_node_info_list = [listed[i] for i in self._affinity_rows]
        self.have_pods_with_required_anti_affinity_node_info_list = [listed[i] for i in self._anti_affinity_rows]

    def _replace(self, infos: Iterable[NodeInfo]) -> bool:
        """Put fresh clones where their predecessors were listed; ``False`` if one was not listed.

        The affinity sub-lists are patched too, in place and in node order: a node that started
        or stopped holding pods with (anti-)affinity is inserted or removed (upstream rebuilds
        both lists then; the result is the same, without a pass over every node)."""
        ok = True
        table, counts = self._table, self._priorities
        index, listed = self._index, self.node_info_list
        for info in infos:
            node = info.node
            i = index.get(node.metadata.name if node is not None else "")  # ``info.name``
            if i is None:
                ok = False
                continue
            if counts is not None:
                if listed[i] is info:  # changed in place (simulator.py): count afresh when asked
                    counts = self._priorities = None
                else:
                    _count_priorities(counts, listed[i], -1)
                    _count_priorities(counts, info, 1)
            listed[i] = info
            if table is not None:
                table.update_row(i, info)
            # An empty sub-list stays empty for a node without such pods (no bisect needed).
            if self._affinity_rows or info.pods_with_affinity:
                _patch(
                    self.have_pods_with_affinity_node_info_list, self._affinity_rows, i, info, info.pods_with_affinity
                )
            if self._anti_affinity_rows or info.pods_with_required_anti_affinity:
                _patch(
                    self.have_pods_with_required_anti_affinity_node_info_list,
                    self._anti_affinity_rows,
                    i,
                    info,
                    info.pods_with_required_anti_affinity,
                )
        return ok


def _count_priorities(counts: dict[int, int], info: NodeInfo, sign: int) -> None:
    """Add (``sign`` 1) or remove (-1) the priorities of ``info``'s pods to/from ``counts``."""
    for pi in info.pods:
        p = pi.pod.spec.priority or 0
        n = counts.get(p, 0) + sign
        if n:
            counts[p] = n
        else:
            del counts[p]


def _patch(sub: builtins.list[NodeInfo], rows: builtins.list[int], i: int, info: NodeInfo, member: object) -> None:
    """Make ``sub`` (with ``rows``, its NodeInfos' positions) hold ``info`` at position ``i`` iff
    ``member``."""
    j = bisect_left(rows, i)
    present = j < len(rows) and rows[j] == i
    if present:
        if member:
            sub[j] = info
        else:
            del sub[j]
            del rows[j]
    elif member:
        sub.insert(j, info)
        rows.insert(j, i)
