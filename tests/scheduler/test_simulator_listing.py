"""``SchedulingSimulator``'s node edits list and unlist the node in place
(``Snapshot._insert``/``_delete``) instead of rebuilding every list before the next check: after
every edit the snapshot must hold exactly what ``Snapshot._rebuild`` over the simulator's order
gives (the same NodeInfo objects in the same positions, the same index, the same (anti-)affinity
sub-lists), over random edit sequences and a table of edge cases (first, middle, last position,
nodes holding pods with affinity terms); a name added twice turns it off."""

from __future__ import annotations

import random

import pytest
from msgspec.structs import replace

from agents.scheduler import SchedulingSimulator
from agents.scheduler.cache.snapshot import Snapshot
from tests.builders import affinity, label_selector, node, pod, pod_term

HOST = "kubernetes.io/hostname"


def _rebuilt(sim: SchedulingSimulator) -> Snapshot:
    ref = Snapshot()
    ref.node_info_map = dict(sim.snapshot.node_info_map)
    ref._rebuild(sim._order)
    return ref


def _assert_listing(sim: SchedulingSimulator) -> None:
    """The simulator's snapshot is what a rebuild gives (or a rebuild is pending)."""
    if sim._dirty:
        return
    got, ref = sim.snapshot, _rebuilt(sim)
    assert [id(i) for i in got.node_info_list] == [id(i) for i in ref.node_info_list]
    assert got._index == ref._index
    assert got._affinity_rows == ref._affinity_rows
    assert got._anti_affinity_rows == ref._anti_affinity_rows
    assert [id(i) for i in got.have_pods_with_affinity_node_info_list] == [
        id(i) for i in ref.have_pods_with_affinity_node_info_list
    ]
    assert [id(i) for i in got.have_pods_with_required_anti_affinity_node_info_list] == [
        id(i) for i in ref.have_pods_with_required_anti_affinity_node_info_list
    ]


def _pod(name: str, kind: str):  # type: ignore[no-untyped-def]
    term = pod_term(HOST, label_selector({"app": "x"}))
    if kind == "anti":
        return pod(name, uid=name, cpu="100m", labels={"app": "x"}, affinity=affinity(required_anti=[term]))
    if kind == "affinity":
        return pod(name, uid=name, cpu="100m", labels={"app": "y"}, affinity=affinity(preferred_pods=[(1, term)]))
    return pod(name, uid=name, cpu="100m")


def _bound(p, where: str):  # type: ignore[no-untyped-def]
    return replace(p, spec=replace(p.spec, node_name=where))


def _node(name: str):  # type: ignore[no-untyped-def]
    return node(name, cpu="4", labels={HOST: name})


@pytest.mark.parametrize("seed", range(16))
def test_node_edits_list_what_a_rebuild_lists(seed: int) -> None:
    rng = random.Random(seed)
    sim = SchedulingSimulator()
    made = 0

    def fresh() -> str:
        nonlocal made
        made += 1
        return f"n{made}"

    def reset() -> list[tuple[object, str]]:
        names = [fresh() for _ in range(rng.randint(0, 8))]
        pods = [
            _bound(_pod(f"b{made}-{i}", rng.choice(["plain", "anti", "affinity"])), rng.choice(names))
            for i in range(rng.randint(0, 6))
            if names
        ]
        sim.reset([_node(n) for n in names], pods)
        return [(p, p.spec.node_name) for p in pods]

    placed = reset()
    depth = 0
    for step in range(400):
        op = rng.random()
        names = [n for n in sim.node_names() if sim.node_info(n) is not None]
        if op < 0.2 and names:
            p = _pod(f"p{step}", rng.choice(["plain", "plain", "anti", "affinity"]))
            where = rng.choice(names)
            sim.add_pod(p, where)
            placed.append((p, where))
        elif op < 0.3:
            sim.check(_pod(f"c{step}", "plain"), names[0]) if names else None
        elif op < 0.45:
            sim.add_node(_node(fresh()))
        elif op < 0.62 and names:
            sim.remove_node(rng.choice(names))
        elif op < 0.7 and placed:
            p, where = placed.pop(rng.randrange(len(placed)))
            if sim.node_info(where) is not None:
                sim.remove_pod(p, where)  # type: ignore[arg-type]
        elif op < 0.82:
            sim.fork()
            depth += 1
        elif op < 0.97 and depth:
            depth -= 1
            sim.revert() if rng.random() < 0.7 else sim.commit()
            placed = [(p, w) for p, w in placed if sim.node_info(w) is not None]
        elif op >= 0.98:
            placed, depth = reset(), 0
        _assert_listing(sim)
        if rng.random() < 0.2:
            sim._refresh()
            _assert_listing(sim)


def _affinity_sim() -> SchedulingSimulator:
    sim = SchedulingSimulator()
    pods = [_bound(_pod("a0", "anti"), "n0"), _bound(_pod("a2", "affinity"), "n2"), _bound(_pod("a3", "anti"), "n3")]
    sim.reset([_node(f"n{i}") for i in range(5)], pods)
    sim._refresh()
    return sim


@pytest.mark.parametrize(
    "edits",
    [
        pytest.param([("remove", "n0")], id="first, holding an anti-affinity pod"),
        pytest.param([("remove", "n2")], id="middle, holding an affinity pod"),
        pytest.param([("remove", "n4")], id="last, holding none"),
        pytest.param([("remove", "n1"), ("add", "x"), ("remove", "n3")], id="remove, add, remove"),
        pytest.param([("fork",), ("remove", "n0"), ("add", "x"), ("revert",)], id="reverted back in place"),
        pytest.param([("fork",), ("remove", "n3"), ("remove", "n0"), ("revert",)], id="two reverted, reverse order"),
        pytest.param([("add", "x"), ("pod", "x", "anti"), ("remove", "n1")], id="an added node gains anti-affinity"),
    ],
)
def test_edge_cases(edits: list[tuple[str, ...]]) -> None:
    sim = _affinity_sim()
    for i, e in enumerate(edits):
        if e[0] == "remove":
            sim.remove_node(e[1])
        elif e[0] == "add":
            sim.add_node(_node(e[1]))
        elif e[0] == "pod":
            sim.add_pod(_pod(f"e{i}", e[2]), e[1])
        elif e[0] == "fork":
            sim.fork()
        else:
            sim.revert()
        _assert_listing(sim)
    sim._refresh()
    _assert_listing(sim)


def test_a_name_added_twice_turns_in_place_listing_off_until_reset() -> None:
    """With a name in the order twice (no autoscaler adds one twice), positions in the order
    and the listing differ: every node edit must leave the lists to a rebuild."""
    sim = _affinity_sim()
    sim.add_node(_node("n1"))
    assert sim._twice
    assert sim._dirty
    sim._refresh()
    sim.remove_node("n1")
    assert sim._dirty
    sim.reset([_node("a")], [])
    assert not sim._twice
