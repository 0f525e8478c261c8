"""One-candidate consolidation simulations answered from a reference solve (issue 28's Karpenter
day: single-node consolidation simulates every candidate, and each simulation places the same
pending pods again before and after the candidate's own 1-2 pods).

What this module owns: ``Reference``, the log of one solve of the pods every simulation of a
pass shares (the pending pods and those of deleting nodes) on the base snapshot, nothing
removed; and ``Replay``, the stand-in ``Scheduler.solve`` asks instead of
``SchedulingSimulator.schedule_anywhere`` in a simulation that removes one node ``c``, which
answers a shared pod's search from the log when the log's answer is provably the one the
search would give, and otherwise runs the search.

Why an answer carries over. The log's step for pod ``p`` was taken in the state *base + the
reference's first j placements* from the walk start ``s``. The simulation, when it reaches
``p``, is in the state *base − c + the same j placements + extra pods on some nodes* (the
candidate's own pods placed on existing nodes: ``dirty``, with ``c`` itself). If every Filter
plugin the search runs is row-local (``simulator_rows.ROW_LOCAL``: a node's verdict reads only
that node and the pod; they are monotone, a pod added to a node can only make it fail), a node
not dirty has the same verdict in both, and a dirty node can only fail where it passed. So if the
walk starts at the same node and the log's answer is not dirty, every node before it in the
walk failed in the reference and fails here, and the answer passes here: the same node; a log
answer of "none" stays none. The other Filter plugins (inter-pod affinity, topology spread,
volumes, DRA) must have been skipped in the reference's PreFilter, which reads the pod alone or,
for inter-pod affinity, the pods with required anti-affinity: those can only be fewer in the
simulation when the candidate's pods have none (``Replay.usable``). Positions: the simulation
lists the base nodes but ``c`` in the same order, so a base position ``q`` is ``q − (q > r)``
there (``r``: ``c``'s base position), and the new NodeClaims come after the base nodes in both
(the walk skips them: ``Scheduler.solve`` matches existing nodes only).

The simulation's state follows the log only while its placements of shared pods are the log's,
in order (``matched``); once one differs (a shared pod placed elsewhere, or not placed), no step
with a later index is answered. What a replayed step leaves is what the search would: the pod
added on the node, the round-robin position on it; ``SchedulingSimulator.checks`` counts only
the searches run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import is_
from typing import Any, Final

from emulator.base.api.core import Pod

__all__ = ["MAX_REFERENCES", "Reference", "References", "Replay", "base_start", "no_pod_affinity"]

MAX_REFERENCES: Final = 8


@dataclass(slots=True, frozen=True)
class _Step:
    j: int
    """The reference's placements before this step."""
    start: int
    """The base position the walk started from (a position past the base nodes: 0)."""
    node: str | None
    end: int
    """The base position of ``node`` (the round-robin position after)."""
    usable: bool
    """PreFilter passed without narrowing the nodes, and every Filter plugin left is row-local."""


def no_pod_affinity(pod: Pod) -> bool:
    a = pod.spec.affinity
    return a is None or (a.pod_affinity is None and a.pod_anti_affinity is None)


def base_start(last: int, total: int, listed: int, position: int | None) -> int:
    """Where a walk from round-robin position ``last`` starts, as a base position, in a listing of
    ``total`` nodes: the ``listed`` base nodes but the one at ``position`` (None: all of them),
    then new NodeClaims. A start among the new NodeClaims is the first base node's (the walk
    skips them and wraps)."""
    s = last % total if total else 0
    if s >= listed - (position is not None):
        return 0
    return s + 1 if position is not None and s >= position else s


class Reference:
    """The log of one solve of the shared pods on the base from one round-robin position
    (module docstring)."""

    def __init__(self, sim: Any, uids: set[str], listed: int) -> None:
        self.sim = sim
        self.uids = uids
        self.listed = listed
        """Base nodes listed."""
        self.steps: dict[str, _Step] = {}
        self.placements: list[tuple[str, str]] = []

    def record(self, scheduler: Any, pods: Sequence[Pod], start: int) -> None:
        """Solve ``pods`` with ``scheduler`` (a ``Scheduler`` over this simulator) on the base from
        round-robin position ``start``, keeping its searches, and leave no trace: the simulator
        reverted, its round-robin position and check count restored (the caller names the new
        NodeClaims apart)."""
        sim = self.sim
        last, checks = sim._last, sim.checks
        scheduler.searcher = self
        sim.fork()
        sim._last = start
        try:
            scheduler.solve(pods)
        finally:
            sim.revert()
            sim._last, sim.checks = last, checks

    def schedule_anywhere(self, pod: Pod, match: Callable[[str], bool] | None = None) -> str | None:
        sim = self.sim
        start = base_start(sim._last, len(sim._order), self.listed, None)
        usable = bool(sim.row_local(pod))
        node: str | None = sim.schedule_anywhere(pod, match)
        end = sim._last if node is not None else -1
        self.steps[pod.metadata.uid] = _Step(len(self.placements), start, node, end, usable)
        if node is not None:
            self.placements.append((pod.metadata.uid, node))
        return node


class References:
    """The reference solves of one base snapshot and one list of shared pods, one per start
    (a simulation's round-robin position when it begins, as a base position); one is taken
    when a start is seen the second time (a reference costs about one simulation), at most
    ``MAX_REFERENCES``."""

    def __init__(self, sim: Any, base: Any, pods: Sequence[Pod]) -> None:
        self.sim = sim
        self.base = base
        self.pods = list(pods)
        self.uids = {p.metadata.uid for p in pods}
        self.listed = len(sim.node_names())
        self.by_start: dict[int, Reference] = {}
        self.seen: set[int] = set()

    def same(self, base: Any, pods: Sequence[Pod]) -> bool:
        mine = self.pods
        return base is self.base and len(mine) == len(pods) and all(map(is_, mine, pods))

    def get(self, start: int, scheduler: Callable[[], Any], pods: Sequence[Pod]) -> Reference | None:
        """The reference from ``start``, taken now if due (``scheduler()``: a ``Scheduler`` for it;
        ``pods``: the shared pods as the simulations solve them)."""
        ref = self.by_start.get(start)
        if ref is not None:
            return ref
        if start not in self.seen or len(self.by_start) >= MAX_REFERENCES:
            self.seen.add(start)
            return None
        ref = self.by_start[start] = Reference(self.sim, self.uids, self.listed)
        ref.record(scheduler(), pods, start)
        return ref


class Replay:
    """The search stand-in of one simulation removing the base node at position ``removed``
    (None: it removes none listed) (module docstring)."""

    def __init__(self, ref: Reference, removed: str | None, position: int | None) -> None:
        self.ref = ref
        self.sim = ref.sim
        self.r = position
        self.dirty: set[str] = {removed} if removed is not None else set()
        self.matched = 0
        self.answered = 0

    def schedule_anywhere(self, pod: Pod, match: Callable[[str], bool] | None = None) -> str | None:
        sim, ref = self.sim, self.ref
        uid = pod.metadata.uid
        step = ref.steps.get(uid)
        if (
            step is not None
            and step.usable
            and step.j == self.matched
            and sim._order
            and base_start(sim._last, len(sim._order), ref.listed, self.r) == step.start
            and (step.node is None or step.node not in self.dirty)
        ):
            self.answered += 1
            if step.node is None:
                return None
            sim.add_pod(pod, step.node)
            sim._last = step.end - 1 if self.r is not None and step.end > self.r else step.end
            self.matched += 1
            return step.node
        node: str | None = sim.schedule_anywhere(pod, match)
        if node is not None:
            placements = ref.placements
            if 0 <= self.matched < len(placements) and placements[self.matched] == (uid, node):
                self.matched += 1
            elif uid in ref.uids:
                self.matched = -1  # the state left the log's: nothing more is answered
            else:
                self.dirty.add(node)
        return node
