"""``NodeState.advance`` sets the whole slots a step spans in one slice each (they are still
zero, so ``0.0 + width`` is ``width``): its arrays must be exactly those of the plain
slot-by-slot loop (``advance_reference``, the code before), on random histories of a node
(its shares, existence and pods changing at random times, the width doubling as it does)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from emulator.app.scenario.observe_nodes import MAX_BUCKETS, NodeBuckets, NodeState


def advance_reference(self: NodeState, t: float, width: float) -> None:
    """``NodeState.advance`` before the whole slots were set by slices: one by one."""
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
    if exists:
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


def _history(seed: int, advance: Callable[[NodeState, float, float], None]) -> NodeState:
    rng = random.Random(seed)
    node, buckets = NodeState("n"), NodeBuckets()
    node.allocatable = (4000, 2**35, 0)
    t = 0.0
    for _ in range(300):
        t += rng.choice([0.0, 0.02, 0.5, 1.0, 3.0, float(rng.randrange(1, 40)), rng.uniform(0, 90)])
        if t > MAX_BUCKETS * buckets.width:
            buckets.reach(t, [node])
        advance(node, t, buckets.width)
        node.exists = rng.random() < 0.9
        node.pods = rng.randrange(0, 110)
        node.allocated = [rng.randrange(0, 5000), rng.randrange(0, 2**35), 0]
        node.reshare()
    return node


@pytest.mark.parametrize("seed", range(30))
def test_advance_equals_the_slot_loop(seed: int) -> None:
    fast = _history(seed, NodeState.advance)
    loop = _history(seed, advance_reference)
    assert fast.since == loop.since
    assert list(fast.alive) == list(loop.alive)
    assert [list(s) for s in fast.sums] == [list(s) for s in loop.sums]
    assert list(fast.pods_at_end) == list(loop.pods_at_end)


def merge_pairs_reference(self: NodeState) -> None:
    """``NodeState.merge_pairs`` before numpy: element by element."""
    from array import array

    half = MAX_BUCKETS // 2
    for values in (*self.sums, self.alive):
        merged = [values[2 * i] + values[2 * i + 1] for i in range(half)]
        values[:half] = array("d", merged)
        values[half:] = array("d", bytes(8 * (MAX_BUCKETS - half)))
    ends = self.pods_at_end
    ends[:half] = array("l", [ends[2 * i + 1] for i in range(half)])
    ends[half:] = array("l", bytes(ends.itemsize * (MAX_BUCKETS - half)))


@pytest.mark.parametrize("seed", range(10))
def test_merge_pairs_equals_the_element_loop(seed: int) -> None:
    rng = random.Random(seed)
    fast, loop = NodeState("a"), NodeState("b")
    for node in (fast, loop):
        r = random.Random(seed)
        for values in (*node.sums, node.alive):
            for k in range(MAX_BUCKETS):
                values[k] = r.choice([0.0, r.uniform(0, 1e3), 0.1, 1 / 3])
        for k in range(MAX_BUCKETS):
            node.pods_at_end[k] = r.randrange(0, 2**40)
    for _ in range(rng.randrange(1, 4)):
        fast.merge_pairs()
        merge_pairs_reference(loop)
    assert list(fast.alive) == list(loop.alive)
    assert [list(s) for s in fast.sums] == [list(s) for s in loop.sums]
    assert list(fast.pods_at_end) == list(loop.pods_at_end)
