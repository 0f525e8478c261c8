"""``score_totals.cached_totals`` (weighted Score totals kept per row) against the reference.

``test_cached_totals_match_reference`` (property): the random clusters and steps of
``test_row_cache`` (pods of 2–3 shapes assumed, confirmed, forgotten, removed; nodes resized,
touched, added, removed; bursts and churns of row updates), plus steps that give a node new
images (``x``, the image every pod runs, and ``y``) or a ``PreferNoSchedule`` taint. After every
step, for every shape, random weights and random sets of rows: NodeResourcesFit (each scoring
strategy), NodeResourcesBalancedAllocation and ImageLocality and TaintToleration, PreScored,
must get from ``cached_totals`` what the reference gives (each plugin's ``score`` per node, its
``normalize_score`` over those nodes, weighted and summed); it may decline (None) only when a
node is tainted or has an extended resource.

The unit tests pin the cases one by one: the column is built on a key's second use, an image
pulled on another node changes a row's total once that row is re-cloned (a new clone with the
same amounts, new image counts: the ``node_and_images`` log), a plugin without ``score_row`` or a tainted node or a
negative weight declines, and an out-of-range normalized score declines.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.interface import RowScore
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.score_totals import cached_totals
from agents.scheduler.framework.types import SUCCESS, CycleState, NodeInfo, NodeScore, Status
from agents.scheduler.plugins.imagelocality import MB, ImageLocality
from agents.scheduler.plugins.noderesources_balanced_allocation import NodeResourcesBalancedAllocation
from agents.scheduler.plugins.noderesources_fit import NodeResourcesFit
from agents.scheduler.plugins.tainttoleration import TaintToleration
from emulator.base.api.core import Pod, Taint
from tests import builders
from tests.scheduler.test_row_cache import STEPS, _fit, _pod, _World, clusters, shapes

IMAGES = [None, 10 * MB, 30 * MB, 400 * MB, 1500 * MB]


class _Lister:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    @property
    def node_info_list(self) -> list[NodeInfo]:
        return self.snapshot.node_info_list


class _Handle:
    """The one thing ImageLocality asks its handle: the snapshot's node list."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.lister = _Lister(snapshot)

    def snapshot_shared_lister(self) -> _Lister:
        return self.lister


def _reference(
    plugins: list[Any], weights: dict[str, int], state: CycleState, pod: Pod, nodes: list[NodeInfo]
) -> list[int]:
    """``run_score_plugins``' totals: score per node, normalize over ``nodes``, weight, sum."""
    totals = [0] * len(nodes)
    for pl in plugins:
        scores = []
        for info in nodes:
            score, status = pl.score(state, pod, info)
            assert status.is_success()
            scores.append(score)
        ext = pl.score_extensions()
        if ext is not None:
            lst = [NodeScore(info.name, s) for info, s in zip(nodes, scores, strict=True)]
            assert ext.normalize_score(state, pod, lst).is_success()
            scores = [ns.score for ns in lst]
        totals = [t + weights[pl.name] * s for t, s in zip(totals, scores, strict=True)]
    return totals


def _pre_scored(plugins: list[Any], pod: Pod, nodes: list[NodeInfo]) -> tuple[CycleState, list[Any]]:
    """A CycleState after PreScore, and the plugins it did not skip."""
    state = CycleState()
    kept = []
    for pl in plugins:
        pre = getattr(pl, "pre_score", None)
        if pre is not None and pre(state, pod, nodes).is_skip():
            continue
        kept.append(pl)
    return state, kept


class _ImageWorld(_World):
    """``test_row_cache``'s world, whose nodes may also get images or a soft taint."""

    def restyle(self, name: str, images: dict[str, int], tainted: bool) -> None:
        old = self.nodes[name]
        capacity = {k: str(q) for k, q in old.status.capacity.items()}
        taints = [Taint(key="soft", value="", effect="PreferNoSchedule")] if tainted else []
        new = builders.node(
            name, cpu=None, memory=None, pods=None, extra=capacity, capacity_only=True, images=images, taints=taints
        )
        self.nodes[name] = new
        self.cache.update_node(old, new)


def _check(world: _ImageWorld, plugins: list[Any], rng: random.Random) -> None:
    snapshot = world.snapshot
    table = snapshot.table
    infos = snapshot.node_info_list
    for shape in world.shapes:
        pod = _pod("incoming", shape)
        for _ in range(2):  # the second time through, the columns exist
            weights = {pl.name: rng.randint(0, 3) for pl in plugins}
            rows = np.array(rng.sample(range(len(infos)), rng.randint(1, len(infos))), dtype=np.int64)
            nodes = [infos[r] for r in rows.tolist()]
            state, kept = _pre_scored(plugins, pod, nodes)
            got = cached_totals(kept, weights, state, pod, table, rows)
            if got is None:
                assert table.any_taints or table.any_scalars, "declined without a tainted node or scalars"
                continue
            assert got.tolist() == _reference(kept, weights, state, pod, nodes), (rows.tolist(), weights)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    node_caps=clusters(),
    shape_list=shapes(),
    strategy=st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
    steps=st.lists(st.sampled_from([*STEPS, *["images"] * 4, "taint"]), min_size=1, max_size=14),
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_cached_totals_match_reference(
    node_caps: list[dict[str, str]],
    shape_list: list[list[dict[str, str]]],
    strategy: str,
    steps: list[str],
    seed: int,
    data: st.DataObject,
) -> None:
    rng = random.Random(seed)
    world = _ImageWorld(node_caps, shape_list)
    plugins = [
        TaintToleration(),
        _fit(strategy, None),
        NodeResourcesBalancedAllocation(),
        ImageLocality(handle=_Handle(world.snapshot)),  # type: ignore[arg-type]
    ]
    _check(world, plugins, rng)
    for kind in steps:
        if kind in ("images", "taint") and world.nodes:
            name = rng.choice(list(world.nodes))
            images = {n: size for n in ("x", "y") if (size := rng.choice(IMAGES)) is not None}
            world.restyle(name, images, tainted=kind == "taint")
        elif not world.step(kind, data, rng):
            continue
        if rng.random() < 0.9:
            world.cache.update_snapshot(world.snapshot)
            _check(world, plugins, rng)


# --- unit tests ----------------------------------------------------------------------------------


def _world(n: int, images: dict[str, int] | None = None) -> _ImageWorld:
    world = _ImageWorld([{"cpu": "4", "memory": "8Gi", "pods": "10"}] * n, [[{"cpu": "100m", "memory": "100Mi"}]])
    for name in list(world.nodes)[: n // 2] if images else []:
        world.restyle(name, images or {}, tainted=False)
    world.cache.update_snapshot(world.snapshot)
    return world


def _plugins(world: _ImageWorld) -> list[Any]:
    handle = _Handle(world.snapshot)
    return [TaintToleration(), NodeResourcesFit(), NodeResourcesBalancedAllocation(), ImageLocality(handle=handle)]  # type: ignore[arg-type]


def _totals(world: _ImageWorld, plugins: list[Any], weights: dict[str, int] | None = None) -> list[int] | None:
    infos = world.snapshot.node_info_list
    rows = np.arange(len(infos), dtype=np.int64)
    pod = _pod("incoming", world.shapes[0])
    state, kept = _pre_scored(plugins, pod, infos)
    got = cached_totals(kept, weights or {pl.name: 1 for pl in kept}, state, pod, world.snapshot.table, rows)
    if got is not None:
        assert got.tolist() == _reference(kept, weights or {pl.name: 1 for pl in kept}, state, pod, list(infos))
    return None if got is None else got.tolist()


def test_the_column_is_built_on_the_second_use_and_kept() -> None:
    world = _world(6)
    plugins = _plugins(world)
    table = world.snapshot.table
    assert _totals(world, plugins) is not None
    assert repr(table).endswith("row_caches=0>")  # first use: the rows asked, no column
    first = _totals(world, plugins)
    assert repr(table).endswith("row_caches=1>")
    world.assume(0, "node-2")
    world.cache.update_snapshot(world.snapshot)
    assert world.snapshot.table is table
    after = _totals(world, plugins)
    assert after is not None
    assert first is not None
    assert after[2] != first[2]
    assert [a for i, a in enumerate(after) if i != 2] == [f for i, f in enumerate(first) if i != 2]


def test_an_image_pulled_elsewhere_changes_a_row_once_it_is_recloned() -> None:
    """Node 0 holds ``x`` alone (so its scaled score counts 1 node of 4); when node 1 pulls it
    too, node 0's count changes only when node 0 is cloned again, as upstream's snapshot."""
    world = _world(4)
    plugins = _plugins(world)
    world.restyle("node-0", {"x": 900 * MB}, tainted=False)
    world.cache.update_snapshot(world.snapshot)
    _totals(world, plugins)
    before = _totals(world, plugins)
    world.restyle("node-1", {"x": 900 * MB}, tainted=False)
    world.cache.update_snapshot(world.snapshot)
    mid = _totals(world, plugins)
    node0 = world.nodes["node-0"]
    world.cache.update_node(node0, node0)  # same amounts, new image counts
    world.cache.update_snapshot(world.snapshot)
    after = _totals(world, plugins)
    assert before is not None
    assert mid is not None
    assert after is not None
    assert mid[0] == before[0]
    assert after[0] > before[0]
    assert after[1] == mid[1]


class _NoRowScore:
    name = "Plain"

    def score(self, state: CycleState, pod: Pod, info: NodeInfo) -> tuple[int, Status]:
        return 1, SUCCESS

    def score_extensions(self) -> None:
        return None


class _OutOfRange:
    name = "OutOfRange"

    def score_row(self, state: CycleState, pod: Pod, table: NodeTable) -> RowScore:
        return RowScore(self.name, lambda info: 101, lambda t, at: np.full(len(at), 101, dtype=np.int64))


@pytest.mark.parametrize(
    ("change", "declined"),
    [
        pytest.param("nothing", False, id="row-wise"),
        pytest.param("plain-plugin", True, id="a-plugin-without-score-row"),
        pytest.param("taint", True, id="a-tainted-node"),
        pytest.param("negative-weight", True, id="a-negative-weight"),
        pytest.param("out-of-range", True, id="a-score-out-of-range"),
    ],
)
def test_when_it_declines(change: str, declined: bool) -> None:
    world = _world(4, images={"x": 300 * MB})
    plugins = _plugins(world)
    weights = {pl.name: 1 for pl in plugins}
    if change == "plain-plugin":
        plugins.append(_NoRowScore())
        weights["Plain"] = 1
    elif change == "taint":
        world.restyle("node-3", {}, tainted=True)
        world.cache.update_snapshot(world.snapshot)
    elif change == "negative-weight":
        weights["ImageLocality"] = -1
    elif change == "out-of-range":
        plugins.append(_OutOfRange())
        weights["OutOfRange"] = 1
    for _ in range(2):  # first use and column
        infos = world.snapshot.node_info_list
        rows = np.arange(len(infos), dtype=np.int64)
        pod = _pod("incoming", world.shapes[0])
        state, kept = _pre_scored(plugins, pod, infos)
        got: IntArray | None = cached_totals(kept, weights, state, pod, world.snapshot.table, rows)
        assert (got is None) == declined


def test_a_new_table_starts_afresh() -> None:
    world = _world(3)
    plugins = _plugins(world)
    _totals(world, plugins)
    _totals(world, plugins)
    table = world.snapshot.table
    world.add_node("node-9", {"cpu": "1", "memory": "1Gi", "pods": "3"})
    world.cache.update_snapshot(world.snapshot)
    assert world.snapshot.table is not table
    got = _totals(world, plugins)  # (checked against the reference inside)
    assert got is not None
    assert len(got) == 4


def test_assembled_once_per_weights_and_row_scores() -> None:
    """The row cache's key, ``compute`` and ``one`` are built once per (weights, RowScore
    objects) and are those ``cached_totals`` built every cycle before: the same key for equal
    parts, a different one when a weight differs."""
    from agents.scheduler.framework import score_totals

    a = RowScore(("A", 1), lambda info: 1, lambda t, at: np.ones(len(at), dtype=np.int64))
    b = RowScore(("B", 2), lambda info: 2, lambda t, at: np.full(len(at), 2, dtype=np.int64))
    table = NodeTable([NodeInfo(builders.node("n0")), NodeInfo(builders.node("n1"))])
    first = score_totals._assembled(table, [(1, a), (3, b)])
    assert first[0] == ("ScoreTotals", ((1, ("A", 1)), (3, ("B", 2))))
    again = score_totals._assembled(table, [(1, a), (3, b)])
    assert again[0] is first[0]
    assert again[1] is first[1]
    assert again[2] is first[2]
    other = score_totals._assembled(table, [(2, a), (3, b)])
    assert other[0] == ("ScoreTotals", ((2, ("A", 1)), (3, ("B", 2))))
    fresh = NodeTable(table.infos)
    assert score_totals._assembled(fresh, [(1, a), (3, b)])[1] is not first[1]  # kept per table
    at = np.array([1, 0], dtype=np.int64)
    assert first[1](table, at).tolist() == [7, 7]
    assert other[1](table, at).tolist() == [8, 8]
    assert first[2](table.infos[0]) == 7
    assert other[2](table.infos[0]) == 8
