"""``SchedulingSimulator.schedule_anywhere`` with its table of rows (``simulator_rows.SimRows``):
the node it picks is the one the per-node walk from the last hit picks (upstream
``SchedulePodOnAnyNodeMatching``), through random sequences of the edits the autoscalers make
(pods added and removed, nodes added and removed, forks reverted and committed, resets). The
rows learn of pods added and removed when next read (``SchedulingSimulator._stale``): pods are
also added without a search, and forks reverted with no search since."""

from __future__ import annotations

import random
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.snapshot import ReusingReset
from agents.scheduler import SchedulingSimulator
from emulator.base.api.core import ContainerStatus, ResourceRequirements, Taint
from emulator.base.api.quantity import parse_quantity
from tests.builders import node, pod

HOST = "kubernetes.io/hostname"


def _node(name: str, rng: random.Random):  # type: ignore[no-untyped-def]
    taints = [Taint(key="dedicated", value="x", effect="NoSchedule")] if rng.random() < 0.15 else []
    return node(name, cpu=rng.choice(["1", "2", "4"]), pods=rng.choice(["3", "110"]), labels={HOST: name},
                taints=taints)  # fmt: skip


def _reference(sim: SchedulingSimulator, p, match) -> str | None:  # type: ignore[no-untyped-def]
    """The per-node walk: from the last hit, the first matching node the Filter passes."""
    names = sim.node_names()
    n = len(names)
    for k in range(n):
        name = names[(sim._last + k) % n]
        if (match is None or match(name)) and not sim.check(p, name):
            return name
    return None


@pytest.mark.parametrize("seed", range(30))
def test_schedule_anywhere_picks_the_per_node_walks_node(seed: int) -> None:
    rng = random.Random(seed)
    sim = SchedulingSimulator()
    made = 0

    def fresh() -> str:
        nonlocal made
        made += 1
        return f"n{made}"

    sim.reset([_node(fresh(), rng) for _ in range(rng.randint(0, 12))], [])
    placed: list[tuple[Any, str]] = []
    depth = 0
    keeper = ReusingReset()
    for step in range(300):
        op = rng.random()
        names = sim.node_names()
        if op < 0.45:
            p = pod(f"p{step}", uid=f"p{step}", cpu=rng.choice(["100m", "500m", "900m", "1500m"]))
            match = None
            if names and rng.random() < 0.3:
                allowed = set(rng.sample(names, max(1, len(names) // 2)))
                match = allowed.__contains__
            want = _reference(sim, p, match)
            got = sim.schedule_anywhere(p, match)
            assert got == want, (seed, step)
            if got is not None:
                placed.append((replace(p, spec=replace(p.spec, node_name=got)), got))
        elif op < 0.5 and names:  # a pod placed without a search (a NodeClaim's first pod)
            where = rng.choice(names)
            p = pod(f"p{step}", uid=f"p{step}", cpu=rng.choice(["100m", "500m", "900m"]), node=where)
            sim.add_pod(p, where)
            placed.append((p, where))
        elif op < 0.55:
            sim.add_node(_node(fresh(), rng))
        elif op < 0.62 and names:
            sim.remove_node(rng.choice(names))
        elif op < 0.67 and names:
            _ghost(sim, rng.choice(names))
        elif op < 0.72 and placed:
            p, where = placed.pop(rng.randrange(len(placed)))
            if sim.node_info(where) is not None:
                sim.remove_pod(p, where)  # type: ignore[arg-type]
        elif op < 0.82:
            sim.fork()
            depth += 1
        elif op < 0.95 and depth:
            depth -= 1
            if rng.random() < 0.7:
                sim.revert()
            else:
                sim.commit()
            placed = [(p, w) for p, w in placed if sim.node_info(w) is not None]
        elif op >= 0.98:
            sim.reset([_node(fresh(), rng) for _ in range(rng.randint(0, 12))], [])
            placed, depth = [], 0
        elif op >= 0.95 or (op >= 0.82 and not depth):
            # The autoscalers' reset of the same cluster: unchanged NodeInfos kept, the rows
            # table rebased (SimRows.rebase) rather than built.
            listed = [sim.node_info(n) for n in names]
            placed = [(p, w) for p, w in placed if sim.node_info(w) is not None]
            if placed and rng.random() < 0.5:  # a pod deleted meanwhile: its node's row changes
                placed.pop(rng.randrange(len(placed)))
            keeper.reset(sim, [i.node for i in listed if i is not None and i.node is not None], [p for p, _ in placed])
            depth = 0


def _ghost(sim: SchedulingSimulator, name: str) -> None:
    """The Cluster Autoscaler's ``taintedGhostNode``: the node replaced by a tainted copy."""
    info = sim.node_info(name)
    assert info is not None
    assert info.node is not None
    n = info.node
    sim.remove_node(name)
    taint = Taint(key="ToBeDeletedByClusterAutoscaler", value="1", effect="NoSchedule")
    sim.add_node(replace(n, spec=replace(n.spec, taints=[*n.spec.taints, taint])))


def test_a_ghost_under_a_removed_nodes_name_keeps_the_rows() -> None:
    """A node added under a removed node's name (the ghost) is appended to the kept table, and
    both reverts (the ghost's, then the node's) keep it too: one table per fork, not per
    simulated removal."""
    rng = random.Random(1)
    sim = SchedulingSimulator()
    sim.reset([_node(f"n{i}", rng) for i in range(5)], [])
    sim.fork()
    for name in ("n1", "n3"):
        sim.fork()
        _ghost(sim, name)
        rows = sim._rows
        assert rows is not None
        p = pod(f"p{name}", uid=f"p{name}", cpu="100m")
        want = _reference(sim, p, None)
        assert sim.schedule_anywhere(p) == want
        assert sim._rows is rows
        sim.remove_node(name)  # the ghost leaves too (a removable node)
        sim.commit()
        assert sim._rows is rows
    assert sim.node_names() == ["n0", "n2", "n4"]
    sim.revert()
    assert sim._rows is rows
    assert sim.node_names() == ["n0", "n1", "n2", "n3", "n4"]


def test_rows_built_before_a_forks_first_node_edit_and_kept_by_its_revert() -> None:
    """A fork editing no node builds no table; one removing a node builds it first, so the
    revert that re-inserts the node keeps it (no rebuild per simulation)."""
    rng = random.Random(0)
    sim = SchedulingSimulator()
    sim.reset([_node(f"n{i}", rng) for i in range(4)], [])
    sim.fork()
    sim.revert()
    assert sim._rows is None
    sim.fork()
    sim.remove_node("n1")
    rows = sim._rows
    assert rows is not None
    assert sim.schedule_anywhere(pod("p", uid="p", cpu="100m")) is not None
    sim.revert()
    assert sim._rows is rows
    assert sim.node_names() == ["n0", "n1", "n2", "n3"]


def test_a_node_the_rows_saw_inside_a_reverted_fork_stays_to_be_told() -> None:
    """The rows learn of a pod in a fork (a search reads them), the fork is reverted: the node
    stays to be told through the next fork's revert, which undoes nothing the rows saw."""
    sim = SchedulingSimulator()
    sim.reset([node("a", cpu="1", labels={HOST: "a"}), node("b", cpu="1", labels={HOST: "b"})], [])
    sim.schedule_anywhere(pod("warm", uid="warm", cpu="100m"), lambda name: False)  # the rows built
    sim.fork()
    sim.add_pod(pod("x", uid="x", cpu="900m", node="a"), "a")
    assert sim.schedule_anywhere(pod("y", uid="y", cpu="900m"), "b".__eq__) == "b"  # the rows see x on a
    sim.add_pod(pod("x2", uid="x2", cpu="100m", node="a"), "a")
    sim.revert()
    sim.fork()
    sim.add_pod(pod("z", uid="z", cpu="100m", node="b"), "b")
    sim.revert()
    assert sim.schedule_anywhere(pod("w", uid="w", cpu="900m"), "a".__eq__) == "a"


def test_a_pod_resized_in_place_does_not_lend_its_verdicts_to_one_with_the_same_spec() -> None:
    """Two pods with one spec (500m), the first running with 1 CPU after an in-place resize
    (its reported resources count): it fits nowhere, and the second, which fits n0's 500m
    free, still finds n0 (kept verdicts are per ``pods_alike``, requests by status included)."""
    sim = SchedulingSimulator()
    sim.reset([node("n0", cpu="2")], [pod("b0", cpu="1500m", node="n0")])
    big = pod("big", cpu="500m")
    reported = ResourceRequirements(requests={"cpu": parse_quantity("1")})
    big = replace(big, status=replace(big.status, container_statuses=[ContainerStatus(name="c", resources=reported)]))
    assert sim.schedule_anywhere(big) is None
    assert sim.schedule_anywhere(pod("small", cpu="500m")) == "n0"
