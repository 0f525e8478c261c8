"""A disruption simulation's searches for existing nodes answered from each pod shape's fitting
nodes (issue 28's Karpenter day: single-node consolidation simulates every candidate, and each
simulation searched the existing nodes again for the same pending pods and the candidate's own).

What this module owns: ``BaseFits``, for one base snapshot (``simulation._base``): per pod shape
(pods alike for every Filter, ``pods_alike``: the same namespace, labels, annotations, spec and
requests by status), the base positions of the nodes where such a pod fits, found once
(``SchedulingSimulator.row_local`` and ``row_local_fits``: only when PreFilter passes without
narrowing the nodes and only row-local Filter plugins are left to run); and ``FitSearch``, the
stand-in ``Scheduler.solve`` asks instead of ``SchedulingSimulator.schedule_anywhere`` in one
simulation, which removes some base nodes (the candidates) and then places pods.

Why the answer is the search's. ``schedule_anywhere`` walks the listed nodes from the
round-robin position and gives the pod to the first existing node where it passes the Filter.
Under row-local plugins a node's verdict for a pod reads only that node and the pod (its
PreFilter state comes from the pod alone), and pods alike get the same verdicts. In a
simulation the listing is the base's without the removed nodes (positions shift down past
each), then the new NodeClaims, which the walk skips (``Scheduler.solve`` matches existing nodes
only); a node's content differs from the base's only where the simulation placed a pod. So the
fitting positions of a shape are the base's, mapped, with every node the simulation placed a
pod on checked again (``SchedulingSimulator.passes``, after each placement, for every shape in
use); the answer is the first of them from the round-robin position, wrapping. A shape's
PreFilter runs once per simulation, on the simulation's own state, and must give the base's
verdict (passing, not narrowing, the same plugins skipped): else its pods are searched. The
only state a PreFilter of such a pod reads beyond the pod is the pods with required
anti-affinity (inter-pod affinity's), which a simulation can only lose (the removed nodes'),
not gain, when none of its pods has pod (anti-)affinity terms (``no_pod_affinity``, required
here: a pod placed on a new NodeClaim is not seen by the stand-in).

What an answered search leaves is what the search would: the pod added on the node, the
round-robin position on it. ``SchedulingSimulator.checks`` counts the searches run and one check
per shape and simulation.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from emulator.base.api.core import Pod
from emulator.base.api.resources import pods_alike

__all__ = ["MAX_SHAPES", "BaseFits", "FitSearch", "no_pod_affinity"]

MAX_SHAPES: Final = 64
"""Shapes kept per base snapshot; the pods of any other are searched."""


def no_pod_affinity(pod: Pod) -> bool:
    a = pod.spec.affinity
    return a is None or (a.pod_affinity is None and a.pod_anti_affinity is None)


@dataclass(slots=True, eq=False)
class _Shape:
    pod: Pod
    """The first pod of the shape seen."""
    skip: frozenset[str] | None
    """The Filter plugins its PreFilter skipped on the base (None: not answered)."""
    fits: list[int] = field(default_factory=list)
    """The base positions where it fits, ascending."""


class BaseFits:
    """Each pod shape's fitting nodes on one base snapshot (module docstring). ``sim`` holds the
    base whenever ``search`` is called."""

    def __init__(self, sim: Any, base: Any) -> None:
        self.sim = sim
        self.base = base
        names = sim.node_names()
        self.positions = {name: i for i, name in enumerate(names)}
        self.unique = len(self.positions) == len(names)
        """No name listed twice (a NodeClaim not yet registered whose Node exists is listed as
        both: one NodeInfo at two positions; its simulations are searched)."""
        self.shapes: list[_Shape] = []

    def _shape(self, pod: Pod) -> _Shape | None:
        shapes = self.shapes
        for i, s in enumerate(shapes):
            if pods_alike(s.pod, pod):
                if i:
                    shapes.insert(0, shapes.pop(i))
                return s
        if len(shapes) >= MAX_SHAPES:
            return None
        sim = self.sim
        state = sim.row_local(pod)
        shape = _Shape(pod, None)
        if state is not None:
            shape.skip = frozenset(state.skip_filter_plugins)
            shape.fits = sim.row_local_fits(state, pod)
        shapes.insert(0, shape)
        return shape

    def search(self, pods: Sequence[Pod], removed: Sequence[str]) -> FitSearch | None:
        """The stand-in for a simulation solving ``pods`` after removing the nodes ``removed``
        (those listed); None when a pod has pod (anti-)affinity terms or a name is listed twice."""
        if not self.unique or self.sim._twice or not all(no_pod_affinity(p) for p in pods):
            return None
        of: dict[int, _Shape] = {}
        for pod in pods:
            shape = self._shape(pod)
            if shape is not None and shape.skip is not None:
                of[id(pod)] = shape
        gone = sorted(self.positions[n] for n in removed if n in self.positions)
        return FitSearch(self, of, gone)


@dataclass(slots=True, eq=False)
class _Live:
    """A shape in one simulation: its PreFilter there and its fitting listed positions."""

    pod: Pod
    state: Any
    fits: list[int]


class FitSearch:
    """The search stand-in of one simulation (module docstring)."""

    def __init__(self, base: BaseFits, of: dict[int, _Shape], removed: list[int]) -> None:
        self.sim = base.sim
        self.base = base
        self.of = of
        """id(pod) -> its shape, for the pods being solved (alive while the solve runs)."""
        self.removed = removed
        """The base positions removed, ascending."""
        self.live: dict[_Shape, _Live | None] = {}
        """The shapes met here (None: their pods are searched)."""
        self.placed: list[tuple[int, str]] = []
        """The listed positions and names of the existing nodes given a pod so far."""
        self.answered = 0

    def _position(self, name: str) -> int | None:
        """``name``'s listed position if it is a base node still listed."""
        q = self.base.positions.get(name)
        if q is None:
            return None
        k = bisect_left(self.removed, q)
        if k < len(self.removed) and self.removed[k] == q:
            return None
        return q - k

    def _live(self, shape: _Shape) -> _Live | None:
        if shape in self.live:
            return self.live[shape]
        sim = self.sim
        sim.checks += 1
        state = sim.row_local(shape.pod)
        live = None
        if state is not None and frozenset(state.skip_filter_plugins) == shape.skip:
            removed = self.removed
            if removed:
                fits = []
                k = 0
                for q in shape.fits:
                    while k < len(removed) and removed[k] < q:
                        k += 1
                    if k < len(removed) and removed[k] == q:
                        continue
                    fits.append(q - k)
            else:
                fits = list(shape.fits)
            live = _Live(shape.pod, state, fits)
            for i, name in self.placed:
                self._verdict(live, i, name)
        self.live[shape] = live
        return live

    def _verdict(self, live: _Live, i: int, name: str) -> None:
        """The verdict on the node at listed position ``i`` again."""
        fits = live.fits
        k = bisect_left(fits, i)
        there = k < len(fits) and fits[k] == i
        if self.sim.passes(live.state, live.pod, name):
            if not there:
                fits.insert(k, i)
        elif there:
            del fits[k]

    def _placed(self, i: int | None, name: str) -> None:
        """A pod was placed on ``name`` (listed at ``i``; None: not a base node still listed)."""
        if i is None:
            return
        self.placed.append((i, name))
        for live in self.live.values():
            if live is not None:
                self._verdict(live, i, name)

    def schedule_anywhere(self, pod: Pod, match: Callable[[str], bool] | None = None) -> str | None:
        sim = self.sim
        shape = self.of.get(id(pod))
        live = self._live(shape) if shape is not None else None
        if live is None:
            found: str | None = sim.schedule_anywhere(pod, match)
            if found is not None:
                self._placed(self._position(found), found)
            return found
        fits = live.fits
        if not fits:
            return None
        k = bisect_left(fits, sim._last % len(sim._order))
        i = fits[k] if k < len(fits) else fits[0]
        name: str = sim._order[i]
        if match is not None and not match(name):
            raise AssertionError(f"a fitting base node {name} is not an existing node of the simulation")
        self.answered += 1
        sim.add_pod(pod, name)
        sim._last = i
        self._placed(i, name)
        return name
