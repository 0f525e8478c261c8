"""``NodeTable.rows_cached`` and the resource plugins that use it, against the per-node reference.

``test_cached_rows_match_reference`` (property): a random cluster in a scheduler ``Cache`` and a
``Snapshot``, then random steps, each mostly followed by ``update_snapshot``: assume a pod of one
of 2–3 shapes on a node; confirm, forget or remove a pod; resize or touch a node, or give or take
its extended resource; add (or re-add) or remove a node (a new table); a burst of assumptions on
more than ``FEW_ROWS`` nodes; a churn of 600 row updates (two overflow the table's log of updated
rows). After every step, for every shape and plugin instance (NodeResourcesFit under each scoring
strategy, NodeResourcesBalancedAllocation, default or wider resource lists), ``filter_all`` /
``score_all`` on a random row subset, on all rows and on another subset must say what ``filter``
/ ``score`` say of each row's NodeInfo; a ``None`` (the vectorised path declining) is skipped.
The shapes recur and differ in one request (so they share cache keys where a key leaves a
request out): a column is built on a key's second use, then kept by the ``one`` path (few rows
changed) or the vectorised one (many), and rebuilt after a log overflow or a new table.

Unit tests drive ``rows_cached`` with a toy value (a row's free cpu) and count the calls of
``compute`` and ``one``. ``test_an_inconsistent_one_is_caught`` checks the property's checker
fails when ``_fit_code`` (the Filter's ``one``) ignores ephemeral storage;
``test_a_request_left_out_of_the_key_is_not_read_by_one`` is a case the property found: a cached
column's ``one`` reading the requests of the pod that built it, including an extended-resource
request the key leaves out, and serving a pod without it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.scheduler.cache.cache import Cache
from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.node_table import NodeTable
from agents.scheduler.framework.row_cache import FEW_ROWS, MAX_ROW_CACHES, MAX_ROW_KEYS_SEEN, IntArray
from agents.scheduler.framework.types import SUCCESS, CycleState, NodeInfo, PodInfo
from agents.scheduler.plugins import noderesources_fit
from agents.scheduler.plugins.noderesources_balanced_allocation import NodeResourcesBalancedAllocation
from agents.scheduler.plugins.noderesources_fit import NodeResourcesFit
from emulator.base.api.core import Node, Pod
from tests import builders

GPU = "example.com/gpu"
CPUS = ["0", "500m", "1", "2", "4", "3500m"]
MEMS = ["0", "1Gi", "2Gi", "4Gi", "1500Mi"]
EPHS = [None, "0", "1Gi", "10Gi"]
REQUESTS = {
    "cpu": [None, "0", "100m", "700m", "1", "3"],
    "memory": [None, "0", "100Mi", "700Mi", "2Gi"],
    "ephemeral-storage": [None, None, "1Gi", "20Gi"],
}
RATIO_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 40, "score": 7}, {"utilization": 100, "score": 3}]
FIT_RESOURCES: dict[str, list[dict[str, Any]] | None] = {
    "default": None,
    "wide": [
        {"name": "cpu", "weight": 1},
        {"name": "memory", "weight": 2},
        {"name": "ephemeral-storage", "weight": 1},
        {"name": GPU, "weight": 3},
    ],
}
BALANCED_RESOURCES: dict[str, list[dict[str, Any]] | None] = {
    "default": None,
    "wide": [{"name": n, "weight": 1} for n in ("cpu", "memory", "ephemeral-storage", GPU)],
}


def _node(name: str, capacity: dict[str, str]) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, extra=capacity, capacity_only=True)


def _pod(name: str, containers: list[dict[str, str]], node_name: str = "") -> Pod:
    """A pod (uid = name) whose containers ``c0``... request these amounts."""
    ctrs = [builders.container(f"c{i}", image="x", requests=req) for i, req in enumerate(containers)]
    return builders.pod(name, uid=name, node=node_name, containers=ctrs)


def _fit(strategy: str, resources: list[dict[str, Any]] | None) -> NodeResourcesFit:
    scoring: dict[str, Any] = {"type": strategy}
    if resources is not None:
        scoring["resources"] = resources
    if strategy == "RequestedToCapacityRatio":
        scoring["requestedToCapacityRatio"] = {"shape": RATIO_SHAPE}
    return NodeResourcesFit({"scoringStrategy": scoring})


def _balanced(resources: list[dict[str, Any]] | None) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(None if resources is None else {"resources": resources})


# --- strategies ------------------------------------------------------------------------------------


@st.composite
def capacities(draw: st.DrawFn, gpus: bool = True, zeros: bool = True) -> dict[str, str]:
    """A node's capacity; without ``zeros``, cpu, memory and ephemeral storage are all > 0 (the
    vectorised Balanced declines as soon as one queried row has a counted allocatable of 0)."""

    def pick(choices: list[str | None]) -> str | None:
        return draw(st.sampled_from(choices if zeros else [c for c in choices if c not in (None, "0")]))

    capacity = {"cpu": pick([*CPUS]), "memory": pick([*MEMS]), "pods": str(draw(st.integers(0, 6)))}
    capacity["ephemeral-storage"] = pick(EPHS)
    if gpus and draw(st.integers(0, 4)) == 0:
        capacity[GPU] = str(draw(st.integers(0, 2)))
    return {k: v for k, v in capacity.items() if v is not None}


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, str]]:
    """Node capacities: up to 8 nodes, or more than ``FEW_ROWS``; in half the clusters no node
    has the extended resource at first (a resize may add it), in half no node has a zero amount
    at first (a resize may bring one)."""
    count = draw(st.integers(1, 8) | st.integers(FEW_ROWS + 1, 40))
    gpus, zeros = draw(st.booleans()), draw(st.booleans())
    return [draw(capacities(gpus, zeros)) for _ in range(count)]


def _container(draw: st.DrawFn) -> dict[str, str]:
    return {name: v for name, choices in REQUESTS.items() if (v := draw(st.sampled_from(choices))) is not None}


@st.composite
def shapes(draw: st.DrawFn) -> list[list[dict[str, str]]]:
    """2–3 pod shapes (per-container requests): a random one, then variants of it with one
    request changed or the extended resource asked for or not, so that shapes often share some
    requests (and so cache keys, where a key leaves the others out)."""
    gpu = draw(st.sampled_from(["1", None]))
    base = [_container(draw) for _ in range(draw(st.integers(1, 2)))]
    if gpu is not None:
        base[0][GPU] = gpu
    out = [base]
    for _ in range(draw(st.integers(1, 2))):
        variant = [dict(c) for c in base]
        change = draw(st.sampled_from(["gpu", "request", "new"]))
        if change == "new":
            variant = [_container(draw) for _ in range(draw(st.integers(1, 2)))]
            if gpu is not None:
                variant[0][GPU] = gpu
        elif change == "gpu":  # asked for or not
            if variant[0].pop(GPU, None) is None:
                variant[0][GPU] = "1"
        else:
            container = variant[draw(st.integers(0, len(variant) - 1))]
            name = draw(st.sampled_from(list(REQUESTS)))
            if (v := draw(st.sampled_from(REQUESTS[name]))) is not None:
                container[name] = v
            else:
                container.pop(name, None)
        out.append(variant)
    return out


# --- the checker -----------------------------------------------------------------------------------


Plugins = tuple[list[NodeResourcesFit], list[NodeResourcesBalancedAllocation]]


def _subsets(n: int, rng: random.Random, least: int = 0) -> list[IntArray]:
    """A random subset (random order), all rows, another subset (possibly with repeats); at
    least ``least`` rows each when there are that many."""
    least = min(least, n)
    first = rng.sample(range(n), rng.randint(least, n))
    again = [rng.randrange(n) for _ in range(rng.randint(least, n))] if n else []
    return [np.array(r, dtype=np.int64) for r in (first, list(range(n)), again)]


def _check(snapshot: Snapshot, pods: list[Pod], plugins: Plugins, rng: random.Random) -> None:
    """Every plugin's ``filter_all`` / ``score_all`` against ``filter`` / ``score`` per row."""
    table = snapshot.table
    infos = snapshot.node_info_list
    assert table.infos is infos
    assert len(table) == len(infos)
    fits, balanced = plugins
    for pod in pods:
        for fit in fits:
            state = CycleState()
            assert fit.pre_filter(state, pod, infos)[1].is_success()
            want_f = [(s.code, s.reasons) for s in (fit.filter(state, pod, info) for info in infos)]
            for rows in _subsets(len(infos), rng):
                verdict = fit.filter_all(state, pod, table, rows)
                if verdict is None:
                    continue
                if verdict.codes is None:
                    got_f = [(SUCCESS.code, ())] * len(rows)
                else:
                    statuses = [SUCCESS, *verdict.statuses[1:]]
                    got_f = [(statuses[c].code, statuses[c].reasons) for c in verdict.codes.tolist()]
                assert got_f == [want_f[r] for r in rows.tolist()], (fit, pod.metadata.name, rows.tolist())
            assert fit.pre_score(state, pod, infos).is_success()
            _check_scores(fit, state, pod, snapshot, rng)
        for bal in balanced:
            state = CycleState()
            if bal.pre_score(state, pod, infos).is_skip():
                continue
            _check_scores(bal, state, pod, snapshot, rng)


def _check_scores(
    plugin: NodeResourcesFit | NodeResourcesBalancedAllocation,
    state: CycleState,
    pod: Pod,
    snapshot: Snapshot,
    rng: random.Random,
) -> None:
    infos = snapshot.node_info_list
    want = []
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status.is_success()
        want.append(score)
    for rows in _subsets(len(infos), rng, least=1):  # Score runs on one feasible node or more
        got = plugin.score_all(state, pod, snapshot.table, rows)
        if got is not None:
            assert got.tolist() == [want[r] for r in rows.tolist()], (plugin, pod.metadata.name, rows.tolist())


# --- the cluster and its steps ---------------------------------------------------------------------


class _World:
    """A scheduler cache, a snapshot of it, and what the test put in them."""

    def __init__(self, node_caps: list[dict[str, str]], shape_list: list[list[dict[str, str]]]) -> None:
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.nodes: dict[str, Node] = {}
        self.removed: list[str] = []
        self.pods: dict[str, Pod] = {}
        self.assumed: dict[str, None] = {}
        self.shapes = shape_list
        self.serial = 0
        for i, cap in enumerate(node_caps):
            self.add_node(f"node-{i}", cap)
        self.cache.update_snapshot(self.snapshot)

    def add_node(self, name: str, capacity: dict[str, str]) -> None:
        node = self.nodes[name] = _node(name, capacity)
        self.cache.add_node(node)

    def assume(self, shape: int, node_name: str) -> None:
        """Assume a pod of that shape on that node, resources or not, except that a pod asking
        for the extended resource goes only to a node that has it (as the scheduler would have
        it): otherwise any such pod would flag the whole table as holding scalar resources."""
        if any(GPU in c for c in self.shapes[shape]) and GPU not in self.nodes[node_name].status.capacity:
            return
        self.serial += 1
        pod = _pod(f"p{self.serial}", self.shapes[shape], node_name)
        self.cache.assume_pod(pod)
        self.pods[pod.metadata.uid] = pod
        self.assumed[pod.metadata.uid] = None

    def step(self, kind: str, data: st.DataObject, rng: random.Random) -> bool:
        """Apply one step; True if it changed the cache."""
        names = list(self.nodes)
        uids = list(self.pods)
        if kind == "assume" and names:
            self.assume(data.draw(st.integers(0, len(self.shapes) - 1)), rng.choice(names))
        elif kind in ("forget", "confirm") and self.assumed:
            uid = rng.choice(list(self.assumed))
            del self.assumed[uid]
            if kind == "forget":
                self.cache.forget_pod(self.pods.pop(uid))
            else:
                self.cache.add_pod(self.pods[uid])
        elif kind == "remove_pod" and uids:
            uid = rng.choice(uids)
            self.assumed.pop(uid, None)
            self.cache.remove_pod(self.pods.pop(uid))
        elif kind in ("resize", "touch") and names:
            name = rng.choice(names)
            old = self.nodes[name]
            new = self.nodes[name] = _node(name, data.draw(capacities())) if kind == "resize" else old
            self.cache.update_node(old, new)
        elif kind == "gpus" and names:  # the extended resource comes or goes, nothing else changes
            name = rng.choice(names)
            old = self.nodes[name]
            capacity = {k: str(q) for k, q in old.status.capacity.items()}
            if capacity.pop(GPU, None) is None:
                capacity[GPU] = "2"
            new = self.nodes[name] = _node(name, capacity)
            self.cache.update_node(old, new)
        elif kind == "add_node":
            if self.removed and rng.random() < 0.5:
                name = self.removed.pop(rng.randrange(len(self.removed)))  # may still hold pods (a ghost)
            else:
                name = f"node-{len(self.nodes) + len(self.removed)}"
            self.add_node(name, data.draw(capacities()))
        elif kind == "remove_node" and len(names) > 1:
            name = rng.choice(names)
            self.cache.remove_node(self.nodes.pop(name))
            self.removed.append(name)
        elif kind == "burst" and names:
            # More than FEW_ROWS rows change between two queries when the table is big enough.
            for name in rng.sample(names, min(len(names), rng.randint(FEW_ROWS + 1, FEW_ROWS + 8))):
                self.assume(rng.randrange(len(self.shapes)), name)
            self.cache.update_snapshot(self.snapshot)
        elif kind == "churn" and names:
            # Touch every node, snapshot, again: 600-odd updated rows, so that a second churn
            # overflows the log (1024 rows) while the columns have read far into it; then real
            # changes, which the columns must not miss.
            for _ in range(600 // len(names) + 1):
                for node in self.nodes.values():
                    self.cache.update_node(node, node)
                self.cache.update_snapshot(self.snapshot)
            for name in rng.sample(names, rng.randint(1, min(len(names), FEW_ROWS))):
                self.assume(rng.randrange(len(self.shapes)), name)
            self.cache.update_snapshot(self.snapshot)
        else:
            return False
        return True


STEPS = [
    *["assume"] * 6,
    *["forget", "confirm", "remove_pod"] * 2,
    *["resize", "touch", "gpus"] * 2,
    "add_node",
    "remove_node",
    *["burst"] * 2,
    *["churn"] * 3,
]


def _plugins(data: st.DataObject) -> Plugins:
    """Fit under each strategy (Filter and Score) and Balanced with each resource list: at most
    3 × 3 shapes × 2 + 2 × 3 shapes = 24 keys, within ``MAX_ROW_CACHES`` (beyond it, queries
    going round the keys would always miss)."""
    fits = [
        _fit(strategy, FIT_RESOURCES[data.draw(st.sampled_from(sorted(FIT_RESOURCES)))])
        for strategy in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
    ]
    return fits, [_balanced(resources) for resources in BALANCED_RESOURCES.values()]


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    node_caps=clusters(),
    shape_list=shapes(),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_cached_rows_match_reference(
    node_caps: list[dict[str, str]], shape_list: list[list[dict[str, str]]], data: st.DataObject, seed: int
) -> None:
    rng = random.Random(seed)
    world = _World(node_caps, shape_list)
    for name in rng.sample(list(world.nodes), rng.randint(0, len(world.nodes))):
        world.assume(rng.randrange(len(shape_list)), name)  # some pods already running
    world.cache.update_snapshot(world.snapshot)
    incoming = [_pod(f"new-{k}", containers) for k, containers in enumerate(shape_list)]
    plugins = _plugins(data)
    _check(world.snapshot, incoming, plugins, rng)
    for _ in range(data.draw(st.integers(1, 14))):
        kind = data.draw(st.sampled_from(STEPS))
        if world.step(kind, data, rng) and rng.random() < 0.75:
            world.cache.update_snapshot(world.snapshot)
        _check(world.snapshot, incoming, plugins, rng)


def test_an_inconsistent_one_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_fit_code`` ignoring ephemeral storage: the cached column goes wrong on the first row
    recomputed one by one, and ``_check`` says so."""
    right = noderesources_fit.fit._fit_code

    def wrong(wants: tuple[int, int, int]) -> Callable[[NodeInfo], int]:
        return right((wants[0], wants[1], 0))

    monkeypatch.setattr(noderesources_fit.fit, "_fit_code", wrong)
    world = _World([{"cpu": "4", "memory": "4Gi", "pods": "9", "ephemeral-storage": "1Gi"}] * 3, [[{"cpu": "1"}]])
    incoming = [_pod("new", [{"cpu": "1", "ephemeral-storage": "2Gi"}])]
    plugins: Plugins = ([_fit("LeastAllocated", None)], [])
    rng = random.Random(0)
    _check(world.snapshot, incoming, plugins, rng)  # first use, then the column: both from compute
    world.assume(0, "node-1")
    world.cache.update_snapshot(world.snapshot)
    with pytest.raises(AssertionError):
        _check(world.snapshot, incoming, plugins, rng)


@pytest.mark.parametrize(
    "plugin",
    [
        pytest.param(_fit("LeastAllocated", FIT_RESOURCES["wide"]), id="fit"),
        pytest.param(_balanced(BALANCED_RESOURCES["wide"]), id="balanced"),
    ],
)
def test_a_request_left_out_of_the_key_is_not_read_by_one(
    plugin: NodeResourcesFit | NodeResourcesBalancedAllocation,
) -> None:
    """Pod ``a`` asks for 1 GPU while no node has GPUs: ``score_all`` leaves the GPU out (as the
    reference does there) and caches under a key without it, with ``a``'s ``one``. A node gains
    GPUs (one row updated); ``a`` now declines, but pod ``b`` (same cpu/memory, no GPU) has the
    same key, and its row must be recomputed without ``a``'s GPU request (it once was not)."""
    world = _World([{"cpu": "4", "memory": "4Gi", "pods": "9", "ephemeral-storage": "8Gi"}] * 2, [])
    a = _pod("a", [{"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi", GPU: "1"}])
    b = _pod("b", [{"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"}])
    rng = random.Random(0)
    fits, balanced = ([plugin], []) if isinstance(plugin, NodeResourcesFit) else ([], [plugin])
    _check(world.snapshot, [a], (fits, balanced), rng)  # builds the column under a's `one`
    old = world.nodes["node-0"]
    gpus = {"cpu": "4", "memory": "4Gi", "pods": "9", "ephemeral-storage": "8Gi", GPU: "2"}
    world.nodes["node-0"] = new = _node("node-0", gpus)
    world.cache.update_node(old, new)
    world.cache.update_snapshot(world.snapshot)
    _check(world.snapshot, [b], (fits, balanced), rng)


# --- rows_cached itself ----------------------------------------------------------------------------


def _info(name: str, cpu: int, used: int = 0) -> NodeInfo:
    info = NodeInfo(_node(name, {"cpu": f"{cpu}m", "memory": "1Gi", "pods": "10"}))
    if used:
        info.add_pod(PodInfo(_pod(f"{name}-u", [{"cpu": f"{used}m"}], name)))
    return info


class _Toy:
    """``compute`` / ``one`` for a row's free cpu, recording their calls."""

    def __init__(self) -> None:
        self.computed: list[list[int]] = []
        self.ones: list[str] = []

    def compute(self, table: NodeTable, at: IntArray) -> IntArray:
        self.computed.append(at.tolist())
        return table.free_cpu[at].copy()

    def one(self, info: NodeInfo) -> int:
        self.ones.append(info.name)
        return info.allocatable.milli_cpu - info.requested.milli_cpu

    def truth(self, table: NodeTable, rows: list[int]) -> list[int]:
        return [table.infos[r].allocatable.milli_cpu - table.infos[r].requested.milli_cpu for r in rows]


def _table(size: int) -> tuple[NodeTable, list[NodeInfo]]:
    infos = [_info(f"n{i}", 1000 + i) for i in range(size)]
    return NodeTable(infos), infos


def _update(table: NodeTable, infos: list[NodeInfo], i: int, used: int) -> None:
    infos[i] = _info(infos[i].name, infos[i].allocatable.milli_cpu, used)
    table.update_row(i, infos[i])


def _rows(*rows: int) -> IntArray:
    return np.array(rows, dtype=np.int64)


def test_first_use_computes_the_rows_asked_then_the_column() -> None:
    table, _ = _table(6)
    toy = _Toy()
    assert table.rows_cached("k", toy.compute, _rows(4, 1), toy.one).tolist() == [1004, 1001]
    assert toy.computed == [[4, 1]]  # first use: just those rows, nothing kept
    assert table.rows_cached("k", toy.compute, _rows(2), toy.one).tolist() == [1002]
    assert toy.computed == [[4, 1], [0, 1, 2, 3, 4, 5]]  # second use: the whole column
    got = table.rows_cached("k", toy.compute, _rows(5, 0, 5), toy.one)
    assert got.tolist() == [1005, 1000, 1005]
    assert len(toy.computed) == 2
    assert toy.ones == []
    got[:] = -7  # a fresh array: the column is untouched
    assert table.rows_cached("k", toy.compute, _rows(5, 0), toy.one).tolist() == [1005, 1000]


def test_updates_are_applied_on_the_next_use() -> None:
    table, infos = _table(6)
    toy = _Toy()
    for _ in range(2):
        table.rows_cached("k", toy.compute, _rows(0), toy.one)
    _update(table, infos, 3, 300)
    _update(table, infos, 1, 100)
    _update(table, infos, 3, 350)  # the same row again: recomputed once
    assert (len(toy.computed), toy.ones) == (2, [])  # nothing until asked
    assert table.rows_cached("k", toy.compute, _rows(0, 1, 2, 3), toy.one).tolist() == [1000, 901, 1002, 653]
    assert toy.ones == ["n3", "n1"]
    assert len(toy.computed) == 2
    table.rows_cached("k", toy.compute, _rows(3), toy.one)
    assert toy.ones == ["n3", "n1"]  # the log was read


@pytest.mark.parametrize(
    ("updated", "by_one", "computed"),
    [
        pytest.param([7], ["n7"], [], id="one-row"),
        pytest.param(list(range(FEW_ROWS)), [f"n{i}" for i in range(FEW_ROWS)], [], id="few-rows"),
        pytest.param(list(range(FEW_ROWS + 1)), [], [list(range(FEW_ROWS + 1))], id="many-rows"),
        pytest.param([20, 3] * 9, [], [[3, 20]], id="many-updates-of-two-rows"),
        pytest.param(list(range(39, -1, -1)), [], [list(range(40))], id="every-row-backwards"),
    ],
)
def test_few_updates_use_one_many_use_compute(updated: list[int], by_one: list[str], computed: list[list[int]]) -> None:
    table, infos = _table(40)
    toy = _Toy()
    for _ in range(2):
        table.rows_cached("k", toy.compute, _rows(0), toy.one)
    toy.computed.clear()
    for k, i in enumerate(updated):
        _update(table, infos, i, 10 + k)
    rows = list(range(40))
    assert table.rows_cached("k", toy.compute, _rows(*rows), toy.one).tolist() == toy.truth(table, rows)
    assert toy.ones == by_one
    assert toy.computed == computed


def test_without_one_every_update_is_computed() -> None:
    table, infos = _table(5)
    toy = _Toy()
    for _ in range(2):
        table.rows_cached("k", toy.compute, _rows(0), None)
    _update(table, infos, 2, 500)
    assert table.rows_cached("k", toy.compute, _rows(2, 4), None).tolist() == [502, 1004]
    assert toy.computed[-1] == [2]
    assert toy.ones == []


def test_keys_are_separate_columns() -> None:
    table, infos = _table(4)
    toy = _Toy()

    def doubled(t: NodeTable, at: IntArray) -> IntArray:
        return 2 * t.free_cpu[at]

    for _ in range(2):
        table.rows_cached("free", toy.compute, _rows(1), toy.one)
        table.rows_cached("doubled", doubled, _rows(1), lambda info: 2 * toy.one(info))
    _update(table, infos, 1, 1)
    assert table.rows_cached("free", toy.compute, _rows(1), toy.one).tolist() == [1000]
    assert table.rows_cached("doubled", doubled, _rows(1), lambda info: 2 * toy.one(info)).tolist() == [2000]


def test_least_recently_used_column_is_dropped() -> None:
    table, infos = _table(3)
    toy = _Toy()
    for key in range(MAX_ROW_CACHES):
        for _ in range(2):
            table.rows_cached(key, toy.compute, _rows(0), toy.one)
    table.rows_cached(0, toy.compute, _rows(0), toy.one)  # key 0 used last: key 1 is now the oldest
    for _ in range(2):
        table.rows_cached("new", toy.compute, _rows(0), toy.one)  # one column too many
    _update(table, infos, 2, 2)
    toy.computed.clear()
    for kept in (0, 2, MAX_ROW_CACHES - 1, "new"):
        assert table.rows_cached(kept, toy.compute, _rows(2), toy.one).tolist() == [1000]
    assert toy.computed == []  # all kept
    assert table.rows_cached(1, toy.compute, _rows(2), toy.one).tolist() == [1000]
    assert toy.computed == [[0, 1, 2]]  # dropped; its key was seen, so rebuilt at once


def test_a_key_seen_long_ago_counts_as_new() -> None:
    table, _ = _table(3)
    toy = _Toy()
    table.rows_cached("old", toy.compute, _rows(1), toy.one)
    for key in range(MAX_ROW_KEYS_SEEN):
        table.rows_cached(key, toy.compute, _rows(1), toy.one)
    toy.computed.clear()
    assert table.rows_cached("old", toy.compute, _rows(1), toy.one).tolist() == [1001]
    assert toy.computed == [[1]]  # a first use again: just the rows asked


def test_an_update_with_the_same_amounts_is_not_recomputed() -> None:
    """A new clone whose columns are unchanged (a confirmed binding, a node status post) leaves
    the cached column as it is: ``one`` is not called for it."""
    table, infos = _table(3)
    toy = _Toy()
    for _ in range(2):
        table.rows_cached("k", toy.compute, _rows(0, 1, 2), toy.one)
    _update(table, infos, 1, 0)  # a fresh NodeInfo, the same amounts
    toy.computed.clear()
    assert table.rows_cached("k", toy.compute, _rows(0, 1, 2), toy.one).tolist() == toy.truth(table, [0, 1, 2])
    assert (toy.computed, toy.ones) == ([], [])
    _update(table, infos, 1, 7)  # now the amounts change
    assert table.rows_cached("k", toy.compute, _rows(0, 1, 2), toy.one).tolist() == toy.truth(table, [0, 1, 2])
    assert toy.ones == ["n1"]


@pytest.mark.parametrize(
    ("size", "keep"),
    [
        pytest.param(3, 1024, id="small-table-log-of-1024"),
        pytest.param(1100, 1100, id="big-table-log-of-its-size"),
    ],
)
def test_log_overflow_drops_the_columns(size: int, keep: int) -> None:
    table, infos = _table(size)
    toy = _Toy()
    for _ in range(2):
        table.rows_cached("k", toy.compute, _rows(0), toy.one)
    for k in range(keep):  # the log is full, not overflowing (every update changes the amounts)
        _update(table, infos, k % size, k % 50 + 1)
    toy.computed.clear()
    rows = list(range(size))
    assert table.rows_cached("k", toy.compute, _rows(*rows), toy.one).tolist() == toy.truth(table, rows)
    assert toy.computed == [sorted({k % size for k in range(keep)})]  # brought up to date
    _update(table, infos, 1, 1)  # the log is not emptied by reading it: this entry overflows it
    toy.computed.clear()
    toy.ones.clear()
    assert table.rows_cached("k", toy.compute, _rows(*rows), toy.one).tolist() == toy.truth(table, rows)
    assert (toy.computed, toy.ones) == ([rows], [])  # the column was dropped and rebuilt whole
    _update(table, infos, 0, 999)
    assert table.rows_cached("k", toy.compute, _rows(0, 1), toy.one).tolist() == toy.truth(table, [0, 1])
    assert toy.ones == ["n0"]  # kept current again afterwards


@pytest.mark.parametrize(
    ("updates", "rows", "expected"),
    [
        pytest.param([], [0, 1, 2], [1000, 1001, 1002], id="never-negative"),
        pytest.param([(1, 1500)], [0, 2], [1000, 1002], id="negative-row-not-asked"),
        pytest.param([(1, 1500)], [0, 1], None, id="negative-by-one"),
        pytest.param([(i, 1500) for i in range(FEW_ROWS + 1)], [2], None, id="negative-by-compute"),
        pytest.param([(1, 1500), (1, 0)], [0, 1], [1000, 1001], id="negative-then-mended"),
    ],
)
def test_rows_cached_nonnegative(updates: list[tuple[int, int]], rows: list[int], expected: list[int] | None) -> None:
    """None exactly when a returned row is negative, whether the column got it from ``compute``
    or ``one``; a column that once held a negative value keeps checking."""
    table, infos = _table(FEW_ROWS + 4)
    toy = _Toy()
    for _ in range(2):  # the column is built on the second use
        assert table.rows_cached_nonnegative("k", toy.compute, _rows(0), toy.one) is not None
    for i, used in updates:
        _update(table, infos, i, used)
    got = table.rows_cached_nonnegative("k", toy.compute, _rows(*rows), toy.one)
    assert (got.tolist() if got is not None else None) == expected


def test_rows_cached_nonnegative_checks_a_first_use() -> None:
    table, infos = _table(3)
    _update(table, infos, 2, 5000)
    toy = _Toy()
    assert table.rows_cached_nonnegative("k", toy.compute, _rows(0, 2), toy.one) is None  # not kept yet
    assert table.rows_cached_nonnegative("k", toy.compute, _rows(0, 1), toy.one) is not None
    assert table.rows_cached_nonnegative("k", toy.compute, _rows(2), toy.one) is None  # the column's first build


def _busy(table: NodeTable, at: IntArray) -> IntArray:
    """A toy Filter code: 1 where a row's requested cpu is over 500m."""
    return (table.req_cpu[at] > 500).astype(np.int64)


def _busy_one(info: NodeInfo) -> int:
    return int(info.requested.milli_cpu > 500)


@pytest.mark.parametrize("seed", range(8))
def test_rows_cached_codes_matches_rows_cached(seed: int) -> None:
    """``rows_cached_codes`` is ``rows_cached`` with None for an all-zero answer, through random
    updates applied by ``one`` (few rows) and by ``compute`` (many), whichever rows are asked;
    its count of non-zero values stays the column's."""
    rnd = random.Random(seed)
    size = FEW_ROWS * 3
    table, infos = _table(size)
    plain, plain_infos = _table(size)  # the same rows under ``rows_cached``
    for _ in range(40):
        for _ in range(rnd.choice([0, 1, 2, FEW_ROWS + 1, size])):
            i, used = rnd.randrange(size), rnd.choice([0, 100, 501, 900])
            _update(table, infos, i, used)
            plain_infos[i] = infos[i]
            plain.update_row(i, infos[i])
        rows = _rows(*rnd.sample(range(size), rnd.randint(1, size)))
        want = plain.rows_cached("plain", _busy, rows, _busy_one)
        got = table.rows_cached_codes("codes", _busy, rows, _busy_one)
        assert (got.tolist() if got is not None else None) == (want.tolist() if want.any() else None)
        cache = table._row_caches.get("codes")
        if cache is not None:
            assert cache.nonzero == int(np.count_nonzero(cache.values))


def test_rows_cached_codes_all_zero_column_skips_the_rows() -> None:
    """A kept column of zeros answers None whatever rows are asked (out of range included: it
    does not look at them); one busy row makes the answer the codes of the rows asked."""
    table, infos = _table(4)
    for _ in range(2):
        assert table.rows_cached_codes("k", _busy, _rows(0, 1), _busy_one) is None
    assert table.rows_cached_codes("k", _busy, _rows(99), _busy_one) is None
    _update(table, infos, 2, 600)
    assert table.rows_cached_codes("k", _busy, _rows(0, 1), _busy_one) is None
    got = table.rows_cached_codes("k", _busy, _rows(2, 0), _busy_one)
    assert got is not None
    assert got.tolist() == [1, 0]
    _update(table, infos, 2, 0)
    assert table.rows_cached_codes("k", _busy, _rows(2), _busy_one) is None


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
@pytest.mark.parametrize("resources", ["default", "wide"])
@pytest.mark.parametrize(
    "reads", [(0, 0, 0, 0), (100, 200 * 2**20, 0, 0), (3000, 2**30, 2**30, 0), (700, 0, 5 * 2**30, 0)]
)
def test_fit_one_row_matches_score_node(strategy: str, resources: str, reads: tuple[int, ...]) -> None:
    """NodeResourcesFit's ``one`` for the row caches (a direct weighted mean for the two
    mean strategies) says what ``_score_node`` says, on nodes with and without each amount,
    empty, busy and over-committed."""
    fit = _fit(strategy, FIT_RESOURCES[resources])
    want = reads[: len(fit.strategy.resources)]
    one = fit._one_row(want)
    capacities = [
        {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "10Gi", "pods": "10"},
        {"cpu": "0", "memory": "8Gi", "pods": "10"},
        {"memory": "1Gi", "pods": "10"},
        {"cpu": "500m", "pods": "10"},
        {"pods": "10"},
    ]
    for k, capacity in enumerate(capacities):
        for used in ([], [{"cpu": "250m"}], [{"cpu": "3", "memory": "7Gi", "ephemeral-storage": "12Gi"}]):
            info = NodeInfo(_node(f"n{k}", capacity))
            if used:
                info.add_pod(PodInfo(_pod(f"p{k}", used, f"n{k}")))
            assert one(info) == fit._score_node(info, want), (capacity, used)


def test_row_ids_are_every_row_read_only() -> None:
    """``NodeTable.row_ids``: the rows in order twice (a window from any start, wrapping, is
    one slice), one array per table, and neither it nor a window of it (what ``find_feasible``
    hands the plugins) can be written."""
    table, _ = _table(5)
    ids = table.row_ids
    assert ids.tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
    assert table.row_ids is ids
    assert ids[3:7].tolist() == [3, 4, 0, 1]
    window = ids[1:4]
    with pytest.raises(ValueError, match="read-only"):
        window[0] = 7
    assert NodeTable([]).row_ids.tolist() == []
