"""``ReusingReset``: ``SchedulingSimulator.reset`` for an agent that resets its simulator on every
loop, keeping the ``NodeInfo`` of each node that did not change since the previous loop.

Both autoscalers rebuild their snapshot from their informers on every loop (upstream's
``ClusterSnapshot.SetClusterState``), which made a fresh ``NodeInfo`` and ``PodInfo`` for every
node and bound pod: with 1,000 nodes and 2,000 pods every 10 s, most of a day's autoscaler
time. Between two loops few nodes change, so a node's ``NodeInfo`` is kept when its Node object,
the pod objects bound to it (the same objects, in the same order) and the ``NodeInfo`` itself
(its ``generation``: nothing the last loop simulated on it, even reverted, moved its pods'
order) are unchanged. What the simulator then holds is
what a fresh ``reset`` would build, entry for entry: the same lists in the same order, the same
amounts; only the generations of the kept ``NodeInfo``\\s are older.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter, is_
from typing import Any

from emulator.base.api.core import Node, Pod

__all__ = ["ReusingReset"]

_NAME = attrgetter("metadata.name")


class ReusingReset:
    """``reset(sim, nodes, pods)``: ``sim.reset(nodes, pods)``, keeping unchanged ``NodeInfo``\\s."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[Node, tuple[Pod, ...], Any, int]] = {}
        """Node name -> (its Node, its pods, the NodeInfo built of them, that NodeInfo's generation)."""
        self.kept = 0
        self.built = 0
        """NodeInfos kept and built over the run (for profiles)."""

    def reset(self, sim: Any, nodes: Iterable[Node], pods: Iterable[Pod]) -> None:
        nodes = list(nodes)
        names: list[str] = list(map(_NAME, nodes))
        on: dict[str, list[Pod]] = {name: [] for name in names}
        bucket_of = on.get
        for pod in pods:
            if pod.spec.node_name:
                bucket = bucket_of(pod.spec.node_name)
                if bucket is not None:
                    bucket.append(pod)
        before = self._kept
        kept: dict[str, tuple[Node, tuple[Pod, ...], Any, int]] = {}
        changed: list[str] = []
        changed_nodes: list[Node] = []
        for name, node in zip(names, nodes, strict=True):
            previous = before.get(name)
            bound = on[name]
            if (
                previous is not None
                and previous[0] is node
                and previous[2].generation == previous[3]
                and len(previous[1]) == len(bound)
                and all(map(is_, previous[1], bound))
            ):
                kept[name] = previous
            else:
                changed.append(name)
                changed_nodes.append(node)
        # The changed nodes are built by the simulator's own reset, the others put back.
        sim.reset(changed_nodes, [p for n in changed for p in on[n]])
        built = sim.snapshot.node_info_map
        for name, node in zip(changed, changed_nodes, strict=True):
            info = built[name]
            kept[name] = (node, tuple(on[name]), info, info.generation)
        self.kept += len(names) - len(changed)
        self.built += len(changed)
        self._kept = kept
        sim.snapshot.node_info_map = {name: kept[name][2] for name in names}
        sim._order = names
