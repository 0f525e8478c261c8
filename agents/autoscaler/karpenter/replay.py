"""One-candidate consolidation simulations answered from a reference solve (issue 28's Karpenter
day: single-node consolidation simulates every candidate, and each simulation searches the
existing nodes again for the same pending pods, before and after the candidate's own 1-2 pods).

What this module owns: ``Reference``, the log of one solve of the pods every simulation of a
pass shares (the pending pods and those of deleting nodes) on the base snapshot, nothing
removed, from one round-robin position: for each search, the base positions of the nodes the pod
fitted then (``SchedulingSimulator.row_local_fits``); ``References``, those of one base and one
list of shared pods; and ``Replay``, the stand-in ``Scheduler.solve`` asks instead of
``SchedulingSimulator.schedule_anywhere`` in a simulation that removes one node ``c``: it answers
a shared pod's search from the log, running the Filter only on the nodes whose content differs
from the reference's at that step, and runs the search for the other pods.

Why the answer is the search's. The log's step for pod ``p`` was taken in the state *base + the
reference's first j placements*. The simulation, when it reaches ``p``, is in the state *base −
c + its own placements so far*. Every Filter plugin the search runs is row-local (else the step
is not used): a node's verdict reads only that node and the pod. So a node whose pods are the
same in both states (``delta`` empty: the placements on it so far are the reference's first j
there) has the logged verdict; the others (``differing``) are checked here (``check``: PreFilter
and Filter on that node); ``c`` is not listed. The first node that fits, walking from the
simulation's start in listing order, is then the search's answer. The plugins that are not
row-local (inter-pod affinity, topology spread, the volume plugins, DRA) must have been skipped
by the reference's PreFilter, which reads the pod alone or, for inter-pod affinity, the pods with
required anti-affinity: the simulation has no other such pods when the candidate's pods have
no pod (anti-)affinity terms (``no_pod_affinity``, checked by the caller) and its shared pods are
the reference's. Positions: the simulation lists the base nodes but ``c`` in the same order, so a
base position ``q`` is ``q − (q > r)`` there (``r``: ``c``'s base position), and the new
NodeClaims come after the base nodes in both (the walk skips them: ``Scheduler.solve`` matches
existing nodes only).

What a replayed step leaves is what the search would: the pod added on the node, the
round-robin position on it; ``SchedulingSimulator.checks`` counts the searches and checks run.
When more than ``MAX_DIFFERING`` nodes differ, the search runs (it would cost less).
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import is_
from typing import Any, Final

from emulator.base.api.core import Pod

__all__ = ["MAX_DIFFERING", "MAX_REFERENCES", "Reference", "References", "Replay", "base_start", "no_pod_affinity"]

MAX_REFERENCES: Final = 8
MAX_DIFFERING: Final = 64


@dataclass(slots=True, frozen=True)
class _Step:
    j: int
    """The reference's placements before this step."""
    fits: list[int] | None
    """The base positions where the pod fitted, ascending (None: a plugin that is not row-local
    ran, or PreFilter failed or narrowed the nodes: not answered)."""


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

    def __init__(self, sim: Any, uids: set[str], names: list[str]) -> None:
        self.sim = sim
        self.uids = uids
        self.names = names
        """The base nodes, listed."""
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
        fits = sim.row_local_fits(pod)
        listed = len(self.names)
        if fits is not None:
            fits = [i for i in fits if i < listed]
        node: str | None = sim.schedule_anywhere(pod, match)
        self.steps[pod.metadata.uid] = _Step(len(self.placements), fits)
        if node is not None:
            self.placements.append((pod.metadata.uid, node))
        return node


class References:
    """The reference solves of one base snapshot and one list of shared pods, one per start
    (a simulation's round-robin position when it begins, as a base position; any of them
    answers, the one from the same start with the fewest differing nodes): one is taken when
    a start is seen the second time (it costs about one simulation), at most
    ``MAX_REFERENCES``."""

    def __init__(self, sim: Any, base: Any, pods: Sequence[Pod]) -> None:
        self.sim = sim
        self.base = base
        self.pods = list(pods)
        self.uids = {p.metadata.uid for p in pods}
        self.names: list[str] = sim.node_names()
        self.positions = {name: i for i, name in enumerate(self.names)}
        self.by_start: dict[int, Reference] = {}
        self.seen: set[int] = set()
        self.last: Reference | None = None

    def same(self, base: Any, pods: Sequence[Pod]) -> bool:
        mine = self.pods
        return base is self.base and len(mine) == len(pods) and all(map(is_, mine, pods))

    def get(self, start: int, scheduler: Callable[[], Any], pods: Sequence[Pod]) -> Reference | None:
        """A reference for a simulation from ``start`` (taken now if due: ``scheduler()``, a
        ``Scheduler`` for it; ``pods``, the shared pods as the simulations solve them)."""
        ref = self.by_start.get(start)
        if ref is None and start in self.seen and len(self.by_start) < MAX_REFERENCES:
            ref = self.by_start[start] = Reference(self.sim, self.uids, self.names)
            ref.record(scheduler(), pods, start)
        self.seen.add(start)
        if ref is not None:
            self.last = ref
        return ref or self.last


class Replay:
    """The search stand-in of one simulation removing the base node ``removed`` at base position
    ``position`` (None: it removes none listed) (module docstring)."""

    def __init__(self, refs: References, ref: Reference, removed: str | None, position: int | None) -> None:
        self.refs = refs
        self.ref = ref
        self.sim = ref.sim
        self.removed = removed
        self.r = position
        self.delta: dict[str, set[str]] = {}
        """Node -> the pods on it in one state and not the other (the reference's at ``applied``,
        the simulation's)."""
        self.applied = 0
        """The reference's placements counted in ``delta``."""
        self.answered = 0

    def _toggle(self, node: str, uid: str) -> None:
        d = self.delta.setdefault(node, set())
        d ^= {uid}
        if not d:
            del self.delta[node]

    def schedule_anywhere(self, pod: Pod, match: Callable[[str], bool] | None = None) -> str | None:
        sim, ref = self.sim, self.ref
        uid = pod.metadata.uid
        step = ref.steps.get(uid)
        if step is not None and step.fits is not None and self.applied <= step.j and sim._order:
            while self.applied < step.j:
                self._toggle(*reversed(ref.placements[self.applied]))
                self.applied += 1
            if len(self.delta) <= MAX_DIFFERING:
                self.answered += 1
                node = self._answer(pod, step.fits)
                if node is not None:
                    q = self.refs.positions[node]
                    sim.add_pod(pod, node)
                    sim._last = q - 1 if self.r is not None and q > self.r else q
                    self._toggle(node, uid)
                return node
        found: str | None = sim.schedule_anywhere(pod, match)
        if found is not None:
            self._toggle(found, uid)
        return found

    def _answer(self, pod: Pod, fits: list[int]) -> str | None:
        """The first node, walking from the simulation's start, where ``pod`` fits: the logged
        verdicts for the nodes alike in both states, a check for the others."""
        refs, sim = self.refs, self.sim
        listed = len(refs.names)
        start = base_start(sim._last, len(sim._order), listed, self.r)
        differing = {refs.positions[n] for n in self.delta}
        if self.r is not None:
            differing.add(self.r)
        first = bisect_left(fits, start)
        best = None
        for q in itertools.chain(fits[first:], fits[:first]):
            if q not in differing:
                best = q
                break
        reach = (best - start) % listed if best is not None else listed
        before = [(q - start) % listed for q in differing if q != self.r]
        walk = [refs.names[(start + k) % listed] for k in sorted(k for k in before if k < reach)]
        found: str | None = sim.first_fit(pod, walk) if walk else None
        if found is not None:
            return found
        return refs.names[best] if best is not None else None
