"""Simulations whose searches are answered from each pod shape's fitting nodes
(``karpenter/fits.py``): the same outcome as searching every pod.

Two simulators hold the same random cluster (nodes of several sizes, some tainted, some full;
pods bound on them). A sequence of simulations runs on each, as ``simulation.simulate`` does
(fork, the candidates' nodes removed, the shared pods and the candidates' pods solved, revert),
the round-robin position carried from one to the next: one searching every pod, the other
through a ``FitSearch`` of one ``BaseFits``. After every simulation, the same placements,
NodeClaims (names, pods, options), errors, node contents before the revert, and round-robin
position."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter.fits import BaseFits, FitSearch
from agents.autoscaler.karpenter.scheduling import Scheduler
from agents.scheduler import SchedulingSimulator
from emulator.base.api.codec import object_from_dict
from emulator.base.api.core import (
    Affinity,
    ContainerPort,
    ContainerStatus,
    LabelSelector,
    Pod,
    PodAffinityTerm,
    PodAntiAffinity,
    ResourceRequirements,
    Toleration,
)
from emulator.base.api.quantity import parse_quantity
from tests.autoscaler.test_karpenter_runs import _pod, _pool, _types


def _node(name: str, cpu: int, tainted: bool) -> Any:
    doc = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": name[-1]}},
        "spec": {"taints": [{"key": "t", "value": "v", "effect": "NoSchedule"}] if tainted else []},
        "status": {"capacity": {"cpu": str(cpu), "memory": "16Gi", "pods": "110"},
                   "allocatable": {"cpu": str(cpu), "memory": "16Gi", "pods": "110"}},
    }  # fmt: skip
    return object_from_dict(doc, source="t")


def _random_pod(name: str, r: random.Random, anti: bool = True) -> Pod:
    cpu = r.choice(["500m", "900m", "900m", "900m", "1", "1500m"])
    spec: dict[str, Any] = {}
    roll = r.random()
    if roll < 0.15:
        spec["tolerations"] = [Toleration(key="t", operator="Exists")]
    elif roll < 0.25:
        spec["node_selector"] = {"zone": r.choice("ab")}
    elif roll < 0.3 and anti:
        term = PodAffinityTerm(label_selector=LabelSelector(match_labels={"app": "x"}), topology_key="zone")
        spec["affinity"] = Affinity(
            pod_anti_affinity=PodAntiAffinity(required_during_scheduling_ignored_during_execution=[term])
        )
    pod = _pod(name, cpu, **spec)
    if roll > 0.95:
        c = replace(pod.spec.containers[0], ports=[ContainerPort(container_port=80, host_port=8080)])
        pod = replace(pod, spec=replace(pod.spec, containers=[c]))
    labels = {"app": r.choice(["web", "x"])} if r.random() < 0.5 else {"app": "web"}
    return replace(pod, metadata=replace(pod.metadata, labels=labels))


def _cluster(r: random.Random) -> tuple[list[Any], list[Pod], dict[str, list[Pod]]]:
    nodes = [_node(f"n{i:02d}{r.choice('ab')}", r.choice([1, 2, 2, 2, 4]), r.random() < 0.15) for i in range(18)]
    bound: list[Pod] = []
    on: dict[str, list[Pod]] = {}
    for node in nodes:
        name = node.metadata.name
        for k in range(r.choice([0, 1, 2, 2, 2])):
            pod = _random_pod(f"b-{name}-{k}", r)
            pod = replace(pod, spec=replace(pod.spec, node_name=name))
            bound.append(pod)
            on.setdefault(name, []).append(pod)
    return nodes, bound, on


def _outcome(sim: SchedulingSimulator, scheduler: Scheduler, claims: list[Any]) -> tuple[Any, ...]:
    contents = {
        name: sorted(p.pod.metadata.uid for p in info.pods) for name, info in sorted(sim.snapshot.node_info_map.items())
    }
    return (
        dict(scheduler.placed),
        dict(scheduler.errors),
        [(c.name, [p.metadata.uid for p in c.pods], [o.instance_type.name for o in c.options]) for c in claims],
        contents,
        list(sim._order),
    )


def _simulate(
    sim: SchedulingSimulator, pools: list[Any], types: list[Any], pods: list[Pod], cands: list[str], names: Any,
    fits: BaseFits | None,
) -> tuple[tuple[Any, ...], FitSearch | None]:  # fmt: skip
    """One simulation as ``simulation.simulate`` runs it (with ``fits``: through its stand-in)."""
    scheduler = Scheduler(sim, pools, types, {}, lambda pool: f"{pool}-sim-{next(names)}")
    search = fits.search(pods, cands) if fits is not None else None
    if search is not None:
        scheduler.searcher = search
    sim.fork()
    try:
        for cand in sorted(cands):
            if sim.node_info(cand) is not None:
                sim.remove_node(cand)
        claims = scheduler.solve(pods)
        out = _outcome(sim, scheduler, claims)
    finally:
        sim.revert()
    return (*out, sim._last), search


@pytest.mark.parametrize("seed", range(60))
def test_answered_simulations_are_the_searched_ones(tmp_path: Path, seed: int) -> None:
    r = random.Random(seed)
    types = _types(tmp_path)
    pools = [_pool("p")]
    nodes, bound, on = _cluster(r)
    anti = seed % 4 == 3  # else no pod (anti-)affinity terms: the stand-in answers
    shared = [_random_pod(f"s{i:02d}", r, anti) for i in range(r.randint(0, 24))]
    if r.random() < 0.5:  # many pods alike (the diurnal day's)
        shared += [_pod(f"w{i:02d}", "900m") for i in range(r.randint(5, 20))]
    plain, answering = SchedulingSimulator(), SchedulingSimulator()
    for sim in (plain, answering):
        sim.reset(nodes, bound)
        sim._last = r.randrange(len(nodes) + 3) if seed % 2 else 0
        answering._last = plain._last
    fits = BaseFits(answering, "base")
    plain_names, fit_names = itertools.count(), itertools.count()
    answered = 0
    for _ in range(25):
        k = r.choice([1, 1, 1, 2, 3])
        cands = r.sample([*(n.metadata.name for n in nodes), "gone"], k)
        moving = [replace(p, spec=replace(p.spec, node_name="")) for c in cands for p in on.get(c, [])]
        pods = [*shared, *moving]
        plain_checks = plain.checks
        want, _ = _simulate(plain, pools, types, pods, cands, plain_names, None)
        checks = answering.checks
        got, search = _simulate(answering, pools, types, pods, cands, fit_names, fits)
        assert got == want
        if search is None:  # a pod with pod (anti-)affinity terms: every search runs
            assert answering.checks - checks == plain.checks - plain_checks
        answered += search.answered if search is not None else 0
    if seed == 0:
        assert answered > 0  # the stand-in takes part


def test_a_full_cluster_is_answered_without_searches(tmp_path: Path) -> None:
    """Full 2-CPU nodes with two 900m pods and three empty 4-CPU ones, the pending pods all
    alike: every search of every simulation is answered, one check per simulation (the shape's
    PreFilter) instead of one per pod."""
    types, pools = _types(tmp_path), [_pool("p")]
    nodes = [_node(f"n{i:02d}a", 2, False) for i in range(20)] + [_node(f"f{i}a", 4, False) for i in range(3)]
    bound = [
        replace(p, spec=replace(p.spec, node_name=f"n{i:02d}a"))
        for i in range(20)
        for p in (_pod(f"b{i:02d}-{k}", "900m") for k in range(2))
    ]
    shared = [_pod(f"a{i:02d}", "900m") for i in range(8)]
    plain, answering = SchedulingSimulator(), SchedulingSimulator()
    plain.reset(nodes, bound)
    answering.reset(nodes, bound)
    fits = BaseFits(answering, "base")
    plain_names, fit_names = itertools.count(), itertools.count()
    for i in range(20):
        cand = f"n{i:02d}a"
        moving = [replace(p, spec=replace(p.spec, node_name="")) for p in bound if p.spec.node_name == cand]
        pods = [*shared, *moving]
        want, _ = _simulate(plain, pools, types, pods, [cand], plain_names, None)
        before = answering.checks
        got, search = _simulate(answering, pools, types, pods, [cand], fit_names, fits)
        assert got == want
        assert search is not None
        assert search.answered == len(pods)  # the three 4-CPU nodes hold them all
        assert answering.checks - before == 1


def test_a_name_listed_twice_is_searched(tmp_path: Path) -> None:
    """A NodeClaim not yet registered whose Node exists is listed twice (one NodeInfo at two
    positions): a placement there changes both, so its simulations search every pod."""
    nodes = [_node("n00a", 2, False), _node("n01a", 2, False), _node("n00a", 2, False)]
    sim = SchedulingSimulator()
    sim.reset(nodes, [])
    fits = BaseFits(sim, "base")
    assert fits.search([_pod("a", "900m")], ["n01a"]) is None
    sim.reset(nodes[:2], [])
    assert BaseFits(sim, "base").search([_pod("a", "900m")], ["n01a"]) is not None


def _resized(p: Any, cpu: str) -> Any:
    """``p`` running with ``cpu`` after an in-place resize its spec does not say (the kubelet's
    reported resources are what count: ``pod_requests`` reads them)."""
    reported = ResourceRequirements(requests={"cpu": parse_quantity(cpu), "memory": parse_quantity("1Gi")})
    return replace(p, status=replace(p.status, container_statuses=[ContainerStatus(name="c", resources=reported)]))


def test_pods_with_equal_specs_and_other_requests_by_status_are_not_one_shape(tmp_path: Path) -> None:
    """A pending pod and a moved one with the same spec, the moved one running with twice its
    spec's cpu after a resize: the answers are the search's, which puts the moved pod on a new
    NodeClaim (n00a's 500m free fit the pending pod, not it)."""
    types, pools = _types(tmp_path), [_pool("p")]
    nodes = [_node("n00a", 2, False), _node("n01a", 2, False), _node("n02a", 4, False)]
    bound = [
        replace(p, spec=replace(p.spec, node_name=n))
        for p, n in ((_pod("b0", "1500m"), "n00a"), (_pod("b1", "1500m"), "n01a"))
    ]
    pods = [_pod("pend", "500m"), _resized(_pod("moved", "500m"), "1")]
    plain, answering = SchedulingSimulator(), SchedulingSimulator()
    for s in (plain, answering):
        s.reset(nodes, bound)
    want, _ = _simulate(plain, pools, types, pods, ["n02a"], itertools.count(), None)
    got, _ = _simulate(answering, pools, types, pods, ["n02a"], itertools.count(), BaseFits(answering, "base"))
    assert got == want
    assert want[0] == {"pend": "n00a"}
    assert [c[1] for c in want[2]] == [["moved"]]
