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
from operator import is_
from typing import Any

from emulator.base.api.core import Node, Pod

__all__ = ["ReusingReset"]


class ReusingReset:
    """``reset(sim, nodes, pods)``: ``sim.reset(nodes, pods)``, keeping unchanged ``NodeInfo``\\s."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[Node, tuple[Pod, ...], Any, int]] = {}
        """Node name -> (its Node, its pods, the NodeInfo built of them, that NodeInfo's generation)."""
        self.kept = 0
        self.built = 0
        """NodeInfos kept and built over the run (for profiles)."""

    def reset(self, sim: Any, nodes: Iterable[Node], pods: Iterable[Pod]) -> None:
        names: list[str] = []
        nodes_by_name: dict[str, Node] = {}
        on: dict[str, list[Pod]] = {}
        for node in nodes:
            name = node.metadata.name
            names.append(name)
            nodes_by_name[name] = node
            on[name] = []
        for pod in pods:
            bucket = on.get(pod.spec.node_name) if pod.spec.node_name else None
            if bucket is not None:
                bucket.append(pod)
        reused: dict[str, Any] = {}
        changed: list[str] = []
        for name in names:
            previous = self._kept.get(name)
            bound = on[name]
            if (
                previous is not None
                and previous[0] is nodes_by_name[name]
                and previous[2].generation == previous[3]
                and len(previous[1]) == len(bound)
                and all(map(is_, previous[1], bound))
            ):
                reused[name] = previous[2]
            else:
                changed.append(name)
        # The changed nodes are built by the simulator's own reset, the others put back.
        sim.reset([nodes_by_name[n] for n in changed], [p for n in changed for p in on[n]])
        built = sim.snapshot.node_info_map
        infos = {name: reused[name] if name in reused else built[name] for name in names}
        self.kept += len(reused)
        self.built += len(changed)
        self._kept = {
            name: (nodes_by_name[name], tuple(on[name]), info, info.generation) for name, info in infos.items()
        }
        sim.snapshot.node_info_map = infos
        sim._order = names
