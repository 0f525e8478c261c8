"""``SchedulingSimulator``: the scheduler's PreFilter/Filter plugins on a forkable snapshot, as
Cluster Autoscaler's ``PredicateSnapshot`` (``simulator/clustersnapshot``, 1.34) uses
kube-scheduler's: ``CheckPredicates`` reasons, ``SchedulePodOnAnyNodeMatching`` from the last
hit, ``Fork``/``Revert``/``Commit`` nesting, and pods added in place updating what the
PreFilter plugins read (the anti-affinity lists)."""

from __future__ import annotations

from agents.scheduler import SchedulingSimulator
from tests.builders import affinity, label_selector, node, pod, pod_term

HOST = "kubernetes.io/hostname"


def _node(name: str, cpu: str = "2"):  # type: ignore[no-untyped-def]
    return node(name, cpu=cpu, labels={HOST: name})


def _anti(name: str):  # type: ignore[no-untyped-def]
    return pod(
        name,
        uid=name,
        labels={"app": "x"},
        affinity=affinity(required_anti=[pod_term(HOST, label_selector({"app": "x"}))]),
    )


def test_check_gives_the_failing_plugins_reasons() -> None:
    sim = SchedulingSimulator()
    sim.reset([_node("a")], [])
    assert sim.check(pod("big", uid="big", cpu="3"), "a") == ["Insufficient cpu"]
    assert sim.check(pod("small", uid="small", cpu="1"), "a") == []


def test_fork_revert_commit_nest() -> None:
    sim = SchedulingSimulator()
    sim.reset([_node("a")], [])
    sim.fork()
    sim.add_node(_node("b"))
    assert sim.schedule_anywhere(pod("p", uid="p", cpu="1500m")) in ("a", "b")
    sim.fork()
    sim.remove_node("a")
    assert sim.node_names() == ["b"]
    sim.revert()
    assert sim.node_names() == ["a", "b"]
    sim.fork()
    sim.add_pod(pod("q", uid="q", cpu="1"), "b")
    sim.commit()
    assert len(sim.node_info("b").pods) >= 1  # type: ignore[union-attr]
    sim.revert()
    assert sim.node_names() == ["a"]
    assert sim.node_info("a").pods == []  # type: ignore[union-attr]


def test_schedule_anywhere_matches_and_fills() -> None:
    sim = SchedulingSimulator()
    sim.reset([_node("a"), _node("b")], [])
    placed = [sim.schedule_anywhere(pod(f"p{i}", uid=f"p{i}", cpu="1")) for i in range(5)]
    assert sorted(n for n in placed if n) == ["a", "a", "b", "b"]
    assert placed[-1] is None
    assert sim.schedule_anywhere(pod("x", uid="x"), lambda n: n == "c") is None


def test_pods_added_in_place_reach_the_prefilters() -> None:
    sim = SchedulingSimulator()
    sim.reset([_node("a"), _node("b")], [])
    sim.fork()
    sim.add_pod(_anti("first"), "a")
    second = _anti("second")
    assert sim.check(second, "a") != []  # the anti-affinity of the pod added in place
    assert sim.check(second, "b") == []
    sim.revert()
    assert sim.check(second, "a") == []


def test_bound_pods_of_reset_count() -> None:
    sim = SchedulingSimulator()
    sim.reset([_node("a")], [pod("old", uid="old", cpu="1500m", node="a")])
    assert sim.check(pod("new", uid="new", cpu="1"), "a") == ["Insufficient cpu"]
