"""Scale-down planning: which nodes are unneeded, and which of them to delete now
(``core/scaledown/eligibility/eligibility.go``, ``simulator/utilization/info.go``,
``core/scaledown/planner/planner.go``, ``simulator/cluster.go`` ``SimulateNodeRemoval``,
``core/scaledown/unneeded/nodes.go``, ``core/scaledown/budgets/budgets.go``, 1.34).

Every loop (``Planner.update``), for each Ready node of a node group not already being deleted:

1. eligibility: ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"`` makes it
   ``ScaleDownDisabledAnnotation``; utilization = max(cpu, memory) of the requests of its pods
   (DaemonSet pods included, as upstream's default ``--ignore-daemonsets-utilization=false``;
   long-terminating pods left out) over its allocatable; above the threshold it is
   ``NotUnderutilized``;
2. removal simulation on the snapshot, candidates previously unneeded first then by name: the
   drainability rules (``drain``: a blocking pod makes it ``BlockedByPod``), then every pod to
   move is placed on another real node (not one already planned away, not the candidate) with
   the scheduler's filters; one that fits nowhere makes it ``NoPlaceToMovePods``. A removable
   node's moves stay in the snapshot for the next candidates, and its pods' PDBs are charged.
   While its pods are placed the candidate is, by ``removalSimulation`` (the release emulated):
   ``taintedGhostNode`` (1.34.4 on, kubernetes/autoscaler#9288): a pod-less copy tainted
   ``ToBeDeletedByClusterAutoscaler:NoSchedule``, as the drain leaves it: a topology domain
   still for spread constraints with ``nodeTaintsPolicy: Ignore`` (the default), none with
   ``Honor``; ``removeNode`` (1.32.3 to 1.34.3, #8164): gone, no domain at all, so the
   simulation approves moves the scheduler refuses while the node drains (#9287);
   ``keepNode`` (up to 1.32.2): there, untainted and empty, a domain for every policy (#8162).
   On success the node leaves the snapshot (``keepNode``: it stays).
3. unneeded since: the first loop it was removable (kept while it stays so).

As upstream: a node found unremovable by the simulation (``BlockedByPod``,
``NoPlaceToMovePods``) is not simulated again for ``unremovableNodeRecheckTimeout`` (5 min;
``RecentlyUnremovable`` meanwhile), and a loop stops looking once it found
``unneededNodesLimit`` nodes (the unneeded ones so far plus twice ``maxScaleDownParallelism``,
at most ``maxScaleDownParallelism`` per loop of ``scaleDownUnneededTime`` plus one batch).

``Planner.nodes_to_delete`` (outside cooldown): unneeded nodes past ``scaleDownUnneededTime``
(``NotUnneededLongEnough`` before), whose group stays at or above ``minSize``
(``NodeGroupMinSizeReached``); empty ones (nothing to move) first, up to
``maxEmptyBulkDelete`` (10) with the deletions in progress, then ones to drain up to
``maxDrainParallelism`` (1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from msgspec.structs import replace

from agents.autoscaler.clusterautoscaler.drain import RemainingPdbs, pods_to_move
from agents.autoscaler.clusterautoscaler.options import TO_BE_DELETED_TAINT, AutoscalingOptions
from emulator.base.api.core import Node, Pod, Taint
from emulator.base.api.policy import PodDisruptionBudget
from emulator.base.api.resources import node_allocatable, pod_requests
from emulator.base.runtime.clock import calendar_epoch

__all__ = ["SCALE_DOWN_DISABLED_ANNOTATION", "Planner", "Removal", "utilization"]

SCALE_DOWN_DISABLED_ANNOTATION: Final = "cluster-autoscaler.kubernetes.io/scale-down-disabled"


@dataclass(slots=True)
class Removal:
    """Upstream ``NodeToBeRemoved``."""

    node: Node
    group: str
    pods: list[Pod] = field(default_factory=list)
    """Pods to move (evicted at the drain)."""
    daemons: list[Pod] = field(default_factory=list)
    utilization: float = 0.0
    cpu_util: float = 0.0
    mem_util: float = 0.0

    @property
    def name(self) -> str:
        return self.node.metadata.name

    def util_info(self) -> str:
        """``utilization.Info`` as Go's ``%v`` prints it (``{CpuUtil MemUtil GpuUtil
        DynamicResourceUtil ResourceName Utilization}``), as the ScaleDown event shows it."""
        name = "cpu" if self.cpu_util > self.mem_util else "memory"
        return f"{{{_go_float(self.cpu_util)} {_go_float(self.mem_util)} 0 0 {name} {_go_float(self.utilization)}}}"


def _go_float(x: float) -> str:
    """Go's ``%v`` of a float64 (the shortest form; no ``.0`` on whole numbers)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def utilization_parts(node: Node, pods: Sequence[Pod]) -> tuple[float, float]:
    """``utilization.Calculate``'s cpu and memory ratios of requests to allocatable."""
    alloc = node_allocatable(node)
    used = {"cpu": 0, "memory": 0}
    for p in pods:
        req = pod_requests(p)
        for r in used:
            used[r] += req.get(r, 0)
    cpu, mem = ((used[r] / alloc[r] if alloc.get(r, 0) > 0 else 0.0) for r in used)
    return cpu, mem


def utilization(node: Node, pods: Sequence[Pod]) -> float:
    """``utilization.Calculate`` for cpu and memory: the higher ratio of requests to allocatable."""
    return max(utilization_parts(node, pods))


class Planner:
    """The unneeded nodes across loops (module docstring)."""

    def __init__(self, options: AutoscalingOptions) -> None:
        self.options = options
        self.unneeded: dict[str, tuple[float, Removal]] = {}
        self.unremovable: dict[str, str] = {}
        """Node -> upstream's ``UnremovableReason`` of the last loop."""
        self.recheck: dict[str, float] = {}
        """Node -> when to simulate its removal again (``unremovable.Nodes`` TTLs:
        ``--unremovable-node-recheck-timeout``, 5 min, after BlockedByPod or NoPlaceToMovePods)."""
        self._utilization: dict[str, tuple[Node, Any, int, tuple[float, float]]] = {}
        """Node -> (its Node, its NodeInfo, that NodeInfo's generation, their utilization): a
        node whose NodeInfo the simulator kept since the last loop is not summed again."""

    def update(
        self,
        sim: Any,
        candidates: Sequence[tuple[Node, str]],
        real: Callable[[str], bool],
        pdbs: Sequence[PodDisruptionBudget],
        now: float,
    ) -> None:
        """One loop's eligibility and removal simulation over ``candidates`` ((node, group))."""
        o = self.options
        self.unremovable = {}
        removable: dict[str, Removal] = {}
        remaining = RemainingPdbs(pdbs)
        unneeded = self.unneeded
        by_name = sorted(candidates, key=lambda c: c[0].metadata.name)  # already so: a pass, no moves
        order = [c for c in by_name if c[0].metadata.name in unneeded]
        order += [c for c in by_name if c[0].metadata.name not in unneeded]
        names = {c[0].metadata.name for c in candidates}
        self.recheck = {n: until for n, until in self.recheck.items() if n in names and until > now}
        self._utilization = {n: c for n, c in self._utilization.items() if n in names}
        limit = self._limit()
        away: set[str] = set()
        sim.fork()
        try:
            for node, group in order:
                name = node.metadata.name
                if name in self.recheck:
                    self.unremovable[name] = "RecentlyUnremovable"
                    continue
                if len(removable) >= limit:
                    break  # enough unneeded nodes: no point in looking for more
                if node.metadata.annotations.get(SCALE_DOWN_DISABLED_ANNOTATION) == "true":
                    self.unremovable[name] = "ScaleDownDisabledAnnotation"
                    continue
                info = sim.node_info(name)
                cpu_util, mem_util = self._utilization_of(node, info)
                util = max(cpu_util, mem_util)
                if util > o.scale_down_utilization_threshold:
                    self.unremovable[name] = "NotUnderutilized"
                    continue
                pods = [pi.pod for pi in info.pods] if info is not None else []
                move, daemons, blocking = pods_to_move(
                    pods,
                    remaining,
                    now,
                    system=o.skip_nodes_with_system_pods,
                    local=o.skip_nodes_with_local_storage,
                )
                if blocking is not None:
                    self.unremovable[name] = "BlockedByPod"
                    self.recheck[name] = now + o.unremovable_node_recheck_timeout
                    continue

                def destination(n: str, name: str = name) -> bool:
                    return real(n) and n != name and n not in away

                if not self._simulate(sim, name, move, destination, now):
                    self.unremovable[name] = "NoPlaceToMovePods"
                    self.recheck[name] = now + o.unremovable_node_recheck_timeout
                    continue
                away.add(name)
                remaining.take(move)
                removable[name] = Removal(node, group, move, daemons, util, cpu_util, mem_util)
        finally:
            sim.revert()
        self.unneeded = {
            name: (self.unneeded[name][0] if name in self.unneeded else now, r) for name, r in removable.items()
        }

    def _utilization_of(self, node: Node, info: Any) -> tuple[float, float]:
        """``utilization_parts`` of the node's pods in the snapshot, kept per node while its
        Node and NodeInfo are unchanged."""
        name = node.metadata.name
        cached = self._utilization.get(name)
        if cached is not None and cached[0] is node and cached[1] is info and cached[2] == info.generation:
            return cached[3]
        parts = utilization_parts(node, [pi.pod for pi in info.pods] if info is not None else [])
        if info is not None:
            self._utilization[name] = (node, info, info.generation, parts)
        return parts

    def _limit(self) -> int:
        """``unneededNodesLimit``: the unneeded nodes worth finding in one loop."""
        n = self.options.max_scale_down_parallelism
        loops = max(self.options.scale_down_unneeded_time, self.options.scan_interval) / self.options.scan_interval
        return min(len(self.unneeded) + 2 * n, n * int(loops) + n)

    def _simulate(
        self, sim: Any, name: str, move: Sequence[Pod], destination: Callable[[str], bool], now: float
    ) -> bool:
        """``findPlaceFor``: the pods off the node, the node as ``removalSimulation`` says
        (module docstring), each pod placed elsewhere; on success the node leaves the snapshot
        (but with ``keepNode``) and the moves stay."""
        mode = self.options.removal_simulation
        sim.fork()
        for p in move:
            sim.remove_pod(p, name)
        if mode != "keepNode":
            info = sim.node_info(name)
            sim.remove_node(name)
            if mode == "taintedGhostNode" and info is not None and info.node is not None:
                node: Node = info.node
                stamp = str(int(calendar_epoch().timestamp() + now))
                taint = Taint(key=TO_BE_DELETED_TAINT, value=stamp, effect="NoSchedule")
                sim.add_node(replace(node, spec=replace(node.spec, taints=[*node.spec.taints, taint])))
        for p in move:  # as a new pod: upstream clears spec.nodeName before the simulation
            if sim.schedule_anywhere(replace(p, spec=replace(p.spec, node_name="")), destination) is None:
                sim.revert()
                return False
        if mode == "taintedGhostNode":
            sim.remove_node(name)
        sim.commit()
        return True

    def nodes_to_delete(
        self,
        now: float,
        sizes: Mapping[str, int],
        min_sizes: Mapping[str, int],
        deleting: Mapping[str, bool],
    ) -> tuple[list[Removal], list[Removal]]:
        """(empty nodes, nodes to drain) to delete now; ``sizes``: each group's target size
        minus its deletions in progress; ``deleting``: node -> drained, of those in progress."""
        o = self.options
        empty: list[Removal] = []
        drain: list[Removal] = []
        left = dict(sizes)
        for name, (since, r) in self.unneeded.items():
            if now - since < o.scale_down_unneeded_time:
                self.unremovable[name] = "NotUnneededLongEnough"
                continue
            if left.get(r.group, 0) - 1 < min_sizes.get(r.group, 0):
                self.unremovable[name] = "NodeGroupMinSizeReached"
                continue
            (drain if r.pods else empty).append(r)
            left[r.group] = left.get(r.group, 0) - 1
        in_progress = len(deleting)
        drains = sum(1 for drained in deleting.values() if drained)
        empty = empty[: max(0, o.max_empty_bulk_delete - in_progress)]
        drain = drain[: max(0, o.max_drain_parallelism - drains)]
        return empty, drain
