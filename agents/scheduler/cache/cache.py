"""The scheduler's cache: upstream ``backend/cache/cache.go``.

What this module owns: the scheduler's own picture of which pods use which node, including
the pods it has *assumed* onto a node before the API server confirmed the binding; the NodeInfo
of every node (and of "ghost" nodes, see below); the cluster-wide image table; and turning all
of that into a ``Snapshot`` at the start of each scheduling cycle (``update_snapshot``). The
pods' state machine (assume / confirm / forget / expire, PodInfo reuse, the in-place swap)
lives in its base ``PodStates`` (``pod_states.py``); this module builds the state both share
(``Cache.__init__``) and owns the nodes, the image table, the snapshot update and the
observation (``dump``, ``statistics``).

Nodes: ``add_node`` / ``update_node`` set the Node object and the node's image states;
``remove_node`` drops the node from the node tree. If pods are still on it (their deletions
come through another watch and may arrive later) its NodeInfo stays as a *ghost* without a
Node: counted in ``node_count``, never in a snapshot, dropped with its last pod. A pod added for
a node the cache has not seen yet creates such a NodeInfo too; ``add_node`` fills it in.

Incremental snapshots: every NodeInfo change bumps its ``generation`` (a global counter) and
moves it to the end of ``_nodes`` (an ordered dict: upstream's MRU list, most recent last), so
``update_snapshot`` walks back from the end and stops at the first generation the snapshot has
already seen. See ``snapshot.py`` for what it rebuilds.

Image states in snapshots: a re-cloned node's image counts are frozen once per *image epoch*
(bumped whenever a count or a node's images change) and the frozen dict is shared by its later
clones while the epoch lasts (``_frozen_images``); a node update that keeps the node's images
leaves the image table alone (removing and adding the same images changes no count).

What it does not own: the pod state machine (``pod_states.py``), NodeInfo arithmetic
(``framework/node_info.py``), the node order (``node_tree.py``), informers (the scheduler agent
calls in here from its event handlers).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from agents.scheduler.framework.types import (
    ImageStateSummary,
    NodeInfo,
    Resource,
    next_generation,
)
from emulator.base.api.core import Node
from emulator.base.runtime.clock import Clock

from .node_tree import NodeTree
from .pod_states import CacheError, PodStates
from .snapshot import Snapshot, node_image_names

__all__ = ["Cache", "CacheDump", "CacheStatistics", "NodeDump"]


@dataclass(frozen=True, slots=True)
class NodeDump:
    """One NodeInfo as the cache holds it; amounts as ``pod_requests`` gives them, zeros omitted."""

    name: str
    has_node: bool
    """False for a ghost (node deleted while pods remained)."""
    requested: dict[str, int]
    non_zero_requested: dict[str, int]
    pod_uids: tuple[str, ...]
    """Sorted."""
    generation: int


@dataclass(frozen=True, slots=True)
class CacheDump:
    """The whole cache (upstream ``Dump``), for tests and the invariant checker."""

    nodes: dict[str, NodeDump]
    """By node name, sorted."""
    assumed_pods: tuple[str, ...]
    """UIDs, sorted."""


@dataclass(frozen=True, slots=True)
class CacheStatistics:
    nodes: int
    """NodeInfos, ghosts included (upstream cache_size{type="nodes"})."""
    ghost_nodes: int
    pods: int
    assumed_pods: int
    images: int


@dataclass(slots=True)
class _ImageState:
    summary: ImageStateSummary
    """Shared by the NodeInfos of every node holding the image; ``num_nodes == len(nodes)``."""
    nodes: dict[str, None] = field(default_factory=dict)


def _same_images(old: Node, new: Node) -> bool:
    """Whether the two versions of a node report the same images (``node_image_names`` equal)."""
    a, b = old.status.images, new.status.images
    return a is b or a == b


def _amounts(r: Resource) -> dict[str, int]:
    out = {"cpu": r.milli_cpu, "memory": r.memory, "ephemeral-storage": r.ephemeral_storage}
    out.update(r.scalar_resources)
    if r.allowed_pod_number:
        out["pods"] = r.allowed_pod_number
    return {k: v for k, v in out.items() if v}


class Cache(PodStates):
    """The scheduler cache. Synchronous; the scheduler agent calls it from one task."""

    def __init__(self, clock: Clock | None = None, *, assumed_ttl: float = 0.0) -> None:
        if assumed_ttl and clock is None:
            raise ValueError("an assumed-pod TTL needs a clock")
        self._clock = clock
        self.assumed_ttl = assumed_ttl
        self._pods = {}
        self._assumed = {}
        self._nodes = OrderedDict()
        self._tree = NodeTree()
        self._images: dict[str, _ImageState] = {}
        self._image_epoch = 0
        """Bumped whenever an image count or a node's images change (``_add_image_states``,
        ``_remove_image_states``): image states frozen at an epoch hold while it lasts."""
        self._frozen_images: dict[str, tuple[int, dict[str, ImageStateSummary]]] = {}
        """Node name -> (epoch, its image states frozen then): what ``update_snapshot`` hands a
        re-cloned node while the epoch lasts (the counts are the same), one dict shared by its
        clones (read-only, as every snapshot's image states)."""
        self.hold_swaps = False
        """Set while a scheduling cycle holds its snapshot across a wait (``schedulerOptions.
        cycleCost``: ``Scheduler._cycle_cost``) until the next ``update_snapshot``: no ``_swap``
        then, so the pods the cycle reads keep the versions it started with (the explain
        hook's victims are the preemption's)."""

    # --- nodes ------------------------------------------------------------------------------

    def add_node(self, node: Node) -> NodeInfo:
        """Add (or replace) a node; returns a clone of its NodeInfo."""
        return self._set_node(node)

    def update_node(self, old: Node, new: Node) -> NodeInfo:
        """Replace the node object (labels, allocatable, taints, images ...); returns a clone."""
        return self._set_node(new)

    def remove_node(self, node: Node) -> None:
        name = node.metadata.name
        info = self._nodes.get(name)
        if info is None or info.node is None:
            raise CacheError(f"node {name} is not found")
        self._tree.remove_node(info.node)
        self._remove_image_states(name, info)
        self._frozen_images.pop(name, None)
        info.node = None
        info.generation = next_generation()
        if info.pods:
            self._nodes.move_to_end(name)  # a ghost until its pods' deletions arrive
        else:
            del self._nodes[name]

    def _set_node(self, node: Node) -> NodeInfo:
        name = node.metadata.name
        info = self._nodes.get(name)
        if info is None:
            info = self._nodes[name] = NodeInfo()
        if info.node is None:
            self._tree.add_node(node)
        else:
            self._tree.update_node(info.node, node)
        self._nodes.move_to_end(name)
        old = info.node
        if old is None or not _same_images(old, node):  # (else removing and adding them changes nothing)
            self._remove_image_states(name, info)
            self._add_image_states(node, info)
        info.set_node(node)
        return self._clone(info)

    def _add_image_states(self, node: Node, info: NodeInfo) -> None:
        self._image_epoch += 1
        name = node.metadata.name
        states: dict[str, ImageStateSummary] = {}
        for image, size in node_image_names(node):
            state = self._images.get(image)
            if state is None:
                state = self._images[image] = _ImageState(ImageStateSummary(size, 0))
            state.nodes[name] = None
            state.summary.num_nodes = len(state.nodes)
            states.setdefault(image, state.summary)
        info.image_states = states

    def _remove_image_states(self, name: str, info: NodeInfo) -> None:
        self._image_epoch += 1
        for image in info.image_states:
            state = self._images.get(image)
            if state is None:
                continue
            state.nodes.pop(name, None)
            state.summary.num_nodes = len(state.nodes)
            if not state.nodes:
                del self._images[image]
        info.image_states = {}

    @staticmethod
    def _clone(info: NodeInfo) -> NodeInfo:
        """A snapshot copy: image counts frozen at this moment (upstream ``ImageStateSummary.Snapshot``)."""
        clone = info.clone()
        clone.image_states = {k: ImageStateSummary(s.size, s.num_nodes) for k, s in info.image_states.items()}
        return clone

    # --- snapshots ----------------------------------------------------------------------------

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring ``snapshot`` up to date, re-cloning only the NodeInfos changed since it was taken."""
        seen = snapshot.generation
        infos = snapshot.node_info_map
        update_all = False
        changed: list[NodeInfo] = []
        epoch, frozen = self._image_epoch, self._frozen_images
        for info in reversed(self._nodes.values()):
            if info.generation <= seen:
                break  # everything older was already in the snapshot
            node = info.node
            if node is None:
                continue
            name = node.metadata.name  # ``clone.name`` (the node is set)
            # ``_clone(info)``, its image counts frozen once per epoch and node
            got = frozen.get(name)
            if got is not None and got[0] == epoch:
                states = got[1]
            else:
                states = {k: ImageStateSummary(s.size, s.num_nodes) for k, s in info.image_states.items()}
                frozen[name] = (epoch, states)
            clone = info.clone(states)
            existing = infos.get(name)
            if existing is None:
                update_all = True
            infos[name] = clone
            changed.append(clone)
        if self._nodes:
            snapshot.generation = next(reversed(self._nodes.values())).generation

        num_nodes = self._tree.num_nodes
        if len(infos) > num_nodes:
            # Nodes deleted since the last snapshot (gone, or ghosts now).
            for name in [n for n in infos if (i := self._nodes.get(n)) is None or i.node is None]:
                del infos[name]
            update_all = True

        if update_all or not snapshot._replace(changed):  # (it patches the affinity sub-lists)
            snapshot._rebuild(self._tree.list())

        if len(snapshot.node_info_list) != num_nodes:  # (the tree did not change since)
            snapshot._rebuild(self._tree.list())
            raise CacheError(
                f"snapshot state is not consistent, length of NodeInfoList={len(snapshot.node_info_list)} not equal "
                f"to length of nodes in tree={self._tree.num_nodes}, length of NodeInfoMap={len(infos)}, "
                f"length of nodes in cache={len(self._nodes)}, trying to recover"
            )

    # --- observation --------------------------------------------------------------------------

    def node_count(self) -> int:
        """NodeInfos in the cache, ghosts included (upstream ``NodeCount``)."""
        return len(self._nodes)

    def pod_count(self) -> int:
        """Pods on all NodeInfos, assumed and on ghosts included (upstream ``PodCount``)."""
        return sum(len(info.pods) for info in self._nodes.values())

    def dump(self) -> CacheDump:
        nodes = {
            name: NodeDump(
                name=name,
                has_node=info.node is not None,
                requested=_amounts(info.requested),
                non_zero_requested=_amounts(info.non_zero_requested),
                pod_uids=tuple(sorted(p.uid for p in info.pods)),
                generation=info.generation,
            )
            for name, info in sorted(self._nodes.items())
        }
        return CacheDump(nodes=nodes, assumed_pods=tuple(sorted(self._assumed)))

    def statistics(self) -> CacheStatistics:
        return CacheStatistics(
            nodes=len(self._nodes),
            ghost_nodes=len(self._nodes) - self._tree.num_nodes,
            pods=len(self._pods),
            assumed_pods=len(self._assumed),
            images=len(self._images),
        )

    def __repr__(self) -> str:
        return (
            f"<Cache nodes={self._tree.num_nodes} ghosts={len(self._nodes) - self._tree.num_nodes} "
            f"pods={len(self._pods)} assumed={len(self._assumed)} images={len(self._images)}>"
        )
