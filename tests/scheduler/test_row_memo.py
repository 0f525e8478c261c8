"""``NodeTable``'s row caches answering a changed row from another row in the same state.

A row cache recomputes the rows changed since its last use with ``one``; rows in the same
state (the same amounts, and for a score total over image states the same images) share
``one``'s answer (``RowCaches._refresh``'s memo). These tests compare the memoised answers with
the reference on clusters built to make states collide: every node of one or two capacities,
pods with and without requests and with requests of 0 (so that two rows can differ only in
their pod count, or only in their non-zero requests), images of several sizes on some nodes
(rows differing only in images), few rows changed between two uses (the ``one`` path).

``test_memoised_rows_match_reference`` (property): after every step, NodeResourcesFit's Filter
codes and scores, NodeResourcesBalancedAllocation's scores and the four default plugins'
cached totals must say what the per-node reference says of every row. It fails with the memo
keyed on part of a row's columns (the non-zero requests or the pod count left out), or on the
columns alone for the totals (images left out).
The unit tests pin what the memo serves and what it must not: a value read from the Node
object (``reads_node``, the default) is never shared between rows.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.scheduler.framework.node_table import NodeTable
from agents.scheduler.framework.score_totals import cached_totals
from agents.scheduler.framework.types import SUCCESS, CycleState, NodeInfo
from agents.scheduler.plugins.imagelocality import MB, ImageLocality
from agents.scheduler.plugins.noderesources_balanced_allocation import NodeResourcesBalancedAllocation
from agents.scheduler.plugins.tainttoleration import TaintToleration
from tests.scheduler.test_row_cache import _fit, _pod
from tests.scheduler.test_score_totals import _Handle, _ImageWorld, _pre_scored, _reference

CAPACITIES = [
    {"cpu": "4", "memory": "8Gi", "pods": "3"},
    {"cpu": "2", "memory": "8Gi", "pods": "2", "ephemeral-storage": "10Gi"},
]
SHAPES = [
    [{"cpu": "1", "memory": "1Gi"}],
    [{}],  # no requests: the pod count and the non-zero requests move, the requests do not
    [{"cpu": "0", "memory": "0"}],  # requests of 0: the pod count moves, the non-zero requests do not
    [{"cpu": "100m"}, {"memory": "2Gi", "ephemeral-storage": "1Gi"}],
]
IMAGE_SETS: list[dict[str, int]] = [{}, {"x": 300 * MB}, {"x": 900 * MB}, {"x": 300 * MB, "y": 50 * MB}]


def _plugins(world: _ImageWorld, strategy: str) -> tuple[Any, Any, list[Any]]:
    fit = _fit(strategy, None)
    balanced = NodeResourcesBalancedAllocation()
    totals = [TaintToleration(), _fit(strategy, None), NodeResourcesBalancedAllocation()]
    totals.append(ImageLocality(handle=_Handle(world.snapshot)))  # type: ignore[arg-type]
    return fit, balanced, totals


def _check(world: _ImageWorld, fit: Any, balanced: Any, totals: list[Any], weights: dict[str, int]) -> None:
    table = world.snapshot.table
    infos = world.snapshot.node_info_list
    rows = np.arange(len(infos), dtype=np.int64)
    for shape in world.shapes:
        pod = _pod("incoming", shape)
        for _ in range(2):  # the first use builds nothing, the second the columns
            state = CycleState()
            assert fit.pre_filter(state, pod, infos)[1].is_success()
            verdict = fit.filter_all(state, pod, table, rows)
            assert verdict is not None
            want = [fit.filter(state, pod, info) for info in infos]
            if verdict.codes is None:
                assert all(s.is_success() for s in want)
            else:
                statuses = [SUCCESS, *verdict.statuses[1:]]
                got = [(statuses[c].code, statuses[c].reasons) for c in verdict.codes.tolist()]
                assert got == [(s.code, s.reasons) for s in want]
            assert fit.pre_score(state, pod, infos).is_success()
            scores = fit.score_all(state, pod, table, rows)
            assert scores is not None
            assert scores.tolist() == [fit.score(state, pod, info)[0] for info in infos]
            b_state = CycleState()
            if not balanced.pre_score(b_state, pod, infos).is_skip():
                b = balanced.score_all(b_state, pod, table, rows)
                assert b is not None
                assert b.tolist() == [balanced.score(b_state, pod, info)[0] for info in infos]
            t_state, kept = _pre_scored(totals, pod, infos)
            got_totals = cached_totals(kept, weights, t_state, pod, table, rows)
            assert got_totals is not None
            assert got_totals.tolist() == _reference(kept, weights, t_state, pod, list(infos))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    count=st.integers(2, 12),
    kinds=st.lists(st.integers(0, 1), min_size=1, max_size=2),
    strategy=st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
    steps=st.lists(st.sampled_from(["assume"] * 5 + ["confirm", "remove_pod", "forget", "images"] * 2), max_size=20),
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_memoised_rows_match_reference(
    count: int, kinds: list[int], strategy: str, steps: list[str], seed: int, data: st.DataObject
) -> None:
    rng = random.Random(seed)
    world = _ImageWorld([CAPACITIES[kinds[i % len(kinds)]] for i in range(count)], SHAPES)
    for name in rng.sample(list(world.nodes), rng.randint(0, count)):
        world.restyle(name, rng.choice(IMAGE_SETS), tainted=False)
    world.cache.update_snapshot(world.snapshot)
    fit, balanced, totals = _plugins(world, strategy)
    weights = {pl.name: rng.randint(0, 3) for pl in totals}
    _check(world, fit, balanced, totals, weights)
    for kind in steps:
        if kind == "images":
            world.restyle(rng.choice(list(world.nodes)), rng.choice(IMAGE_SETS), tainted=False)
        elif not world.step(kind, data, rng):
            continue
        world.cache.update_snapshot(world.snapshot)
        _check(world, fit, balanced, totals, weights)


# --- unit tests ----------------------------------------------------------------------------------


def _world(n: int) -> _ImageWorld:
    world = _ImageWorld([CAPACITIES[0]] * n, SHAPES)
    world.cache.update_snapshot(world.snapshot)
    return world


class _Counting:
    """A ``one`` over the amounts (free cpu), counting its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def one(self, info: NodeInfo) -> int:
        self.calls.append(info.name)
        return info.allocatable.milli_cpu - info.requested.milli_cpu

    def compute(self, table: NodeTable, at: Any) -> Any:
        return table.free_cpu[at].copy()


def test_rows_in_the_same_state_share_ones_answer() -> None:
    world = _world(6)
    toy = _Counting()
    table = world.snapshot.table
    rows = np.arange(6, dtype=np.int64)
    for _ in range(2):
        table.rows_cached("k", toy.compute, rows, toy.one)
    world.assume(0, "node-1")
    world.cache.update_snapshot(world.snapshot)
    assert table.rows_cached("k", toy.compute, rows, toy.one).tolist() == [4000, 3000, 4000, 4000, 4000, 4000]
    assert toy.calls == ["node-1"]
    world.assume(0, "node-4")  # the state node-1 is in: answered without ``one``
    world.assume(1, "node-2")  # no requests: a new state (one more pod), the same free cpu
    world.cache.update_snapshot(world.snapshot)
    assert table.rows_cached("k", toy.compute, rows, toy.one).tolist() == [4000, 3000, 4000, 4000, 3000, 4000]
    assert toy.calls == ["node-1", "node-2"]


@pytest.mark.parametrize("reads_node", [True, False])
def test_a_value_read_from_the_node_is_never_shared(reads_node: bool) -> None:
    """A total that reads the Node object (here its name) is memoised only when it says it
    does not (``reads_node=False``): then, wrongly, node-4 gets node-1's answer."""
    world = _world(6)
    table = world.snapshot.table
    rows = np.arange(6, dtype=np.int64)

    def one(info: NodeInfo) -> int:
        return int(info.name.split("-")[1]) + len(info.pods)

    def compute(t: NodeTable, at: Any) -> Any:
        return np.array([one(t.infos[i]) for i in at.tolist()], dtype=np.int64)

    for _ in range(2):
        table.rows_cached("k", compute, rows, one, node_and_images=True, reads_node=reads_node)
    for node in ("node-1", "node-4"):
        world.assume(0, node)
        world.cache.update_snapshot(world.snapshot)
        got = table.rows_cached("k", compute, rows, one, node_and_images=True, reads_node=reads_node)
    truth = [one(info) for info in world.snapshot.node_info_list]
    assert (got.tolist() == truth) is reads_node
    assert got[4] == (5 if reads_node else 2)


def test_rows_with_other_images_do_not_share_the_total() -> None:
    """Same amounts, other images: each row's ImageLocality score is its own."""
    world = _world(4)
    world.restyle("node-0", {"x": 900 * MB}, tainted=False)
    world.cache.update_snapshot(world.snapshot)
    _, _, totals = _plugins(world, "LeastAllocated")
    weights = {pl.name: 1 for pl in totals}
    infos = world.snapshot.node_info_list
    rows = np.arange(4, dtype=np.int64)
    pod = _pod("incoming", [{"cpu": "1"}])
    for _ in range(2):
        state, kept = _pre_scored(totals, pod, infos)
        cached_totals(kept, weights, state, pod, world.snapshot.table, rows)
    for node in ("node-0", "node-1"):  # node-1 reaches node-0's amounts, not its images
        world.assume(0, node)
        world.cache.update_snapshot(world.snapshot)
    infos = world.snapshot.node_info_list
    state, kept = _pre_scored(totals, pod, infos)
    got = cached_totals(kept, weights, state, pod, world.snapshot.table, rows)
    assert got is not None
    assert got.tolist() == _reference(kept, weights, state, pod, list(infos))
    assert got[0] != got[1]


def test_a_row_edited_in_place_is_not_filed_under_its_logged_state() -> None:
    """A NodeInfo changed in place after its ``update_row`` and read before the next one (the
    table's contract asks for ``update_row`` after every edit; this pins what happens if it is
    broken): its answer must not be memoised under the state the log still holds, where another
    row reaching that state later would read it."""
    from tests import builders

    infos = [NodeInfo(builders.node(f"n{i}", cpu="4", memory="8Gi", pods="10")) for i in range(3)]
    table = NodeTable(list(infos))
    rows = np.arange(3)

    def one(info: NodeInfo) -> int:
        return int(info.allocatable.milli_cpu - info.requested.milli_cpu)

    def compute(tb: NodeTable, at: Any) -> Any:
        return tb.free_cpu[at].copy()

    def cached() -> list[int]:
        return [int(v) for v in table.rows_cached("free", compute, rows, one)]

    cached()
    cached()  # (a cache is made the second time its key is asked)
    infos[0].add_pod(_info(_pod("a", [{"cpu": "1"}], "n0")))
    table.update_row(0, infos[0])  # row 0 logged with one 1-CPU pod
    infos[0].add_pod(_info(_pod("b", [{"cpu": "1"}], "n0")))  # edited in place, not told
    cached()  # row 0 recomputed from its info, two pods on it
    table.update_row(0, infos[0])
    infos[1].add_pod(_info(_pod("c", [{"cpu": "1"}], "n1")))
    table.update_row(1, infos[1])  # row 1 reaches row 0's logged state for real
    assert cached() == [one(info) for info in infos] == [2000, 3000, 4000]


def _info(pod: Any) -> Any:
    from agents.scheduler.framework.types import PodInfo

    return PodInfo(pod)
