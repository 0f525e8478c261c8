"""Per-node state of the observer and its allocation buckets, in fixed memory per node.

Each node keeps five arrays of ``MAX_BUCKETS`` slots over ``[0, MAX_BUCKETS * width)``: per
resource (cpu, memory, nvidia.com/gpu) the integral of allocated / allocatable over the time
the node existed in the bucket, the time it existed, and the pods assigned at the bucket's
end. ``width`` is shared by every node (``NodeBuckets``): 1 s at first, doubled when a write's
time passes the last slot, adjacent slots then merged pairwise (integrals add; the pods of a
merged slot are those at its second half's end). A node's arrays are brought up to date
(``advance``) only when its state changes, and for every node at the end: a change costs the
slots it spans (usually one), a long-idle node a loop over its idle slots once.

At the end, ``rows`` cuts ``[0, end]`` into ``K = ceil(end / width) <= MAX_BUCKETS`` buckets
(edges ``0, width, 2 width, ..., end``: the last may be shorter) and encodes each node's
time-weighted mean per bucket in half-percent units 0..200 (capped; rounded half to even),
255 where the node did
not exist at any time in the bucket, base64.

Memory: 5 × ``MAX_BUCKETS`` numbers per node that ever existed (about 10 kB), whatever the
run's length or number of pods.
"""

from __future__ import annotations

import base64
import math
from array import array
from dataclasses import dataclass, field
from typing import Final

import numpy as np

__all__ = ["MAX_BUCKETS", "MISSING", "NodeBuckets", "NodeState", "share"]

MAX_BUCKETS: Final = 240
MISSING: Final = 255
"""The byte of a bucket in which the node did not exist."""
FIRST_WIDTH: Final = 1.0

Resources = tuple[int, int, int]
"""(cpu millicores, memory bytes, nvidia.com/gpu)."""


def share(allocated: int, allocatable: int) -> float:
    """allocated / allocatable, capped at 1; a resource the node has none of: 0, or 1 when
    something requests it."""
    if allocatable > 0:
        return min(allocated / allocatable, 1.0)
    return 1.0 if allocated > 0 else 0.0


def _floats() -> array[float]:
    return array("d", bytes(8 * MAX_BUCKETS))


_ENDS_DTYPE: Final = np.dtype(f"i{array('l').itemsize}")
"""numpy's view of ``pods_at_end`` (``array("l")``: C long)."""


def _ints() -> array[int]:
    return array("l", bytes(array("l").itemsize * MAX_BUCKETS))


_SLICE_FROM: Final = 8
"""``advance`` sets more whole slots than this by slices, fewer in a loop (measured: the
arrays a slice needs cost as much as about eight turns of the loop)."""


@dataclass(slots=True)
class NodeState:
    name: str
    exists: bool = False
    existed: bool = False
    allocatable: Resources = (0, 0, 0)
    allocated: list[int] = field(default_factory=lambda: [0, 0, 0])
    pods: int = 0
    ready: bool = False
    not_ready_since: float | None = None
    not_ready: list[list[float]] = field(default_factory=list)
    """Closed not-Ready intervals: grows with the node's Ready transitions only."""
    shares: tuple[float, float, float] = (0.0, 0.0, 0.0)
    since: float = 0.0
    """The arrays are up to date until this time."""
    sums: list[array[float]] = field(default_factory=lambda: [_floats() for _ in range(3)])
    alive: array[float] = field(default_factory=_floats)
    pods_at_end: array[int] = field(default_factory=_ints)

    def reshare(self) -> None:
        a, c = self.allocated, self.allocatable
        self.shares = (share(a[0], c[0]), share(a[1], c[1]), share(a[2], c[2]))

    def advance(self, t: float, width: float) -> None:
        """Account for ``[since, t)`` in the current state.
        Mirrored in ``bookkeeping.RunBook``: change both (``test_bookkeeping``)."""
        a = self.since
        if t <= a:
            return
        exists = self.exists
        s0, s1, s2 = self.shares
        sums, alive, ends = self.sums, self.alive, self.pods_at_end
        ka = int(a // width)
        if ka == int(t // width) and ka * width != a:  # the usual case: inside one slot
            if exists:
                d = t - a
                alive[ka] += d
                sums[0][ka] += d * s0
                sums[1][ka] += d * s1
                sums[2][ka] += d * s2
            self.since = t
            return
        pods = self.pods if exists else 0
        if ka * width == a and ka > 0:  # the slot ending at ``a`` ends in this state
            ends[ka - 1] = pods
        kt = min(int(t // width), MAX_BUCKETS - 1)
        # the first slot from ``a`` to its end (or ``t``), then whole slots, then the last
        hi = (ka + 1) * width
        if exists:
            d = min(t, hi) - a
            alive[ka] += d
            sums[0][ka] += d * s0
            sums[1][ka] += d * s1
            sums[2][ka] += d * s2
        if hi < t:
            ends[ka] = pods
        n = kt - ka - 1  # the whole slots between
        if n > _SLICE_FROM:
            # Untouched until now (every slot after the one holding ``since`` is still zero:
            # times only grow, and ``merge_pairs`` zeroes the upper half), so each gets
            # exactly ``0.0 + width`` (resp. ``width * share``): set by one slice each, a
            # zero share's left as it is. A pod's end a minute after its node's last change
            # spans ~60 slots; the loop was most of the observer's time.
            if exists:
                alive[ka + 1 : kt] = array("d", (width,)) * n
                for values, sh in zip(sums, (s0, s1, s2), strict=True):
                    if sh:
                        values[ka + 1 : kt] = array("d", (width * sh,)) * n
            ends[ka + 1 : kt] = array(ends.typecode, (pods,)) * n
        elif exists:
            f0, f1, f2 = width * s0, width * s1, width * s2
            a0, a1, a2 = sums
            for k in range(ka + 1, kt):
                alive[k] += width
                a0[k] += f0
                a1[k] += f1
                a2[k] += f2
                ends[k] = pods
        else:
            for k in range(ka + 1, kt):
                ends[k] = pods
        if kt > ka:
            lo = kt * width
            if exists and t > lo:
                d = min(t, lo + width) - lo
                alive[kt] += d
                sums[0][kt] += d * s0
                sums[1][kt] += d * s1
                sums[2][kt] += d * s2
            if lo + width < t:
                ends[kt] = pods
        self.since = t

    def merge_pairs(self) -> None:
        """Halve the slots: slot ``i`` becomes slots ``2i`` and ``2i + 1`` (integrals added,
        the pods at the second's end), the upper half zero. In place, through numpy views of
        the arrays: one float addition per merged slot, as the element loop it replaced
        (``tests/scenario/test_observe_slots.py`` compares them); 1,000 nodes merge at every
        doubling of the width, which the loop made ~1 % of a 10-minute churn run."""
        half = MAX_BUCKETS // 2
        for values in (*self.sums, self.alive):
            v = np.frombuffer(values, dtype=np.float64)
            v[:half] = v[0::2] + v[1::2]
            v[half:] = 0.0
        ends = self.pods_at_end
        e = np.frombuffer(ends, dtype=_ENDS_DTYPE)
        e[:half] = e[1::2].copy()
        e[half:] = 0


class NodeBuckets:
    """The shared slot width of every node's arrays."""

    def __init__(self) -> None:
        self.width = FIRST_WIDTH

    def reach(self, t: float, nodes: list[NodeState]) -> None:
        """Widen the slots until ``t`` fits in them (every node's arrays merged)."""
        while t > MAX_BUCKETS * self.width:
            for node in nodes:
                node.merge_pairs()
            self.width *= 2

    def edges(self, end: float) -> list[float]:
        """K + 1 edges over [0, end] (K = 0 for a run of no length)."""
        if end <= 0:
            return [0.0]
        k = max(1, min(MAX_BUCKETS, math.ceil(end / self.width)))
        return [i * self.width for i in range(k)] + [end]

    def finish(self, nodes: list[NodeState], end: float) -> None:
        """Bring every node up to ``end`` (call ``reach(end)`` first)."""
        k = len(self.edges(end)) - 1
        for node in nodes:
            node.advance(end, self.width)
            if k:
                node.pods_at_end[k - 1] = node.pods if node.exists else 0

    def rows(self, nodes: list[NodeState], k: int, resources: int) -> list[list[str]]:
        """Per resource (the first ``resources`` of cpu, memory, gpu), each node's base64 row
        of ``k`` bytes (numpy over every node at once)."""
        if not nodes:
            return [[] for _ in range(resources)]
        alive = np.stack([np.frombuffer(n.alive, dtype=np.float64)[:k] for n in nodes])
        present = alive > 1e-9 * self.width
        safe = np.where(present, alive, 1.0)
        out: list[list[str]] = []
        for r in range(resources):
            sums = np.stack([np.frombuffer(n.sums[r], dtype=np.float64)[:k] for n in nodes])
            units = np.minimum(200, np.rint(200 * sums / safe))
            matrix = np.where(present, units, MISSING).astype(np.uint8)
            out.append([base64.b64encode(row.tobytes()).decode("ascii") for row in matrix])
        return out
