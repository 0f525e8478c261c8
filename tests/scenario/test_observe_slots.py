"""``NodeState.advance`` adds the whole slots a long step spans through numpy views beyond
``_WHOLE_SLOTS_LOOP`` of them (a pod ending a minute after its node last changed): the
arrays must be exactly those of the slot-by-slot loop, on random histories of a node (its
shares, existence and pods changing at random times, the width doubling as it does)."""

from __future__ import annotations

import random

import pytest

from emulator.app.scenario import observe_nodes
from emulator.app.scenario.observe_nodes import MAX_BUCKETS, NodeBuckets, NodeState


def _history(seed: int, vectorised: bool, monkeypatch: pytest.MonkeyPatch) -> NodeState:
    limit = observe_nodes._WHOLE_SLOTS_LOOP if vectorised else MAX_BUCKETS + 1
    monkeypatch.setattr(observe_nodes, "_WHOLE_SLOTS_LOOP", limit)
    rng = random.Random(seed)
    node, buckets = NodeState("n"), NodeBuckets()
    node.allocatable = (4000, 2**35, 0)
    t = 0.0
    for _ in range(200):
        t += rng.choice([0.0, 0.02, 0.5, 1.0, 3.0, rng.uniform(0, 90)])
        if t > MAX_BUCKETS * buckets.width:
            buckets.reach(t, [node])
        node.advance(t, buckets.width)
        node.exists = rng.random() < 0.9
        node.pods = rng.randrange(0, 110)
        node.allocated = [rng.randrange(0, 5000), rng.randrange(0, 2**35), 0]
        node.reshare()
    return node


@pytest.mark.parametrize("seed", range(20))
def test_vectorised_whole_slots_equal_the_loop(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    loop = _history(seed, False, monkeypatch)
    fast = _history(seed, True, monkeypatch)
    assert fast.since == loop.since
    assert list(fast.alive) == list(loop.alive)
    assert [list(s) for s in fast.sums] == [list(s) for s in loop.sums]
    assert list(fast.pods_at_end) == list(loop.pods_at_end)
