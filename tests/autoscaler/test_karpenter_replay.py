"""One-candidate simulations answered from a reference solve (``karpenter/replay.py``): the same
outcome as searching every pod.

Two simulators hold the same random cluster (nodes of several sizes, some tainted, some full;
pods bound on them). A sequence of one-candidate simulations runs on each, as
``simulation.simulate`` does (fork, the candidate's node removed, the shared pods and the
candidate's pods solved, revert), the round-robin position carried from one to the next: one
searching every pod, the other through ``Replay`` over a ``Reference`` of the shared pods.
After every simulation, the same placements, NodeClaims (names, pods, options), errors, node
contents before the revert, and round-robin position."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter.replay import References, Replay, base_start, no_pod_affinity
from agents.autoscaler.karpenter.scheduling import Scheduler
from agents.scheduler import SchedulingSimulator
from emulator.base.api.codec import object_from_dict
from emulator.base.api.core import (
    Affinity,
    ContainerPort,
    LabelSelector,
    Pod,
    PodAffinityTerm,
    PodAntiAffinity,
    Toleration,
)
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


def _random_pod(name: str, r: random.Random) -> Pod:
    cpu = r.choice(["500m", "900m", "900m", "900m", "1", "1500m"])
    spec: dict[str, Any] = {}
    roll = r.random()
    if roll < 0.15:
        spec["tolerations"] = [Toleration(key="t", operator="Exists")]
    elif roll < 0.25:
        spec["node_selector"] = {"zone": r.choice("ab")}
    elif roll < 0.3:
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
    sim: SchedulingSimulator, pools: list[Any], types: list[Any], shared: list[Pod], moving: list[Pod], cand: str,
    names: Any, refs: References | None,
) -> tuple[tuple[Any, ...], Replay | None]:  # fmt: skip
    """One simulation as ``simulation.simulate`` runs it (with ``refs``: as ``simulation._replay``
    sets it up)."""
    scheduler = Scheduler(sim, pools, types, {}, lambda pool: f"{pool}-sim-{next(names)}")
    replay = None
    if refs is not None and all(no_pod_affinity(p) for p in moving):
        position = sim._order.index(cand) if sim.node_info(cand) is not None else None
        start = base_start(sim._last, len(sim._order) - (position is not None), len(refs.names), position)
        count = itertools.count()
        ref = refs.get(start, lambda: Scheduler(sim, pools, types, {}, lambda p: f"{p}-ref-{next(count)}"), shared)
        if ref is not None:
            replay = Replay(refs, ref, cand if position is not None else None, position)
            scheduler.searcher = replay
    sim.fork()
    try:
        if sim.node_info(cand) is not None:
            sim.remove_node(cand)
        claims = scheduler.solve([*shared, *moving])
        out = _outcome(sim, scheduler, claims)
    finally:
        sim.revert()
    return (*out, sim._last), replay


@pytest.mark.parametrize("seed", range(40))
def test_replayed_simulations_are_the_searched_ones(tmp_path: Path, seed: int) -> None:
    r = random.Random(seed)
    types = _types(tmp_path)
    pools = [_pool("p")]
    nodes, bound, on = _cluster(r)
    shared = [_random_pod(f"s{i:02d}", r) for i in range(r.randint(0, 24))]
    if r.random() < 0.5:  # many pods alike (the diurnal day's): the shape shortcut takes part
        shared += [_pod(f"w{i:02d}", "900m") for i in range(r.randint(5, 20))]
    plain, replaying = SchedulingSimulator(), SchedulingSimulator()
    for sim in (plain, replaying):
        sim.reset(nodes, bound)
        sim._last = r.randrange(len(nodes) + 3) if seed % 2 else 0
        replaying._last = plain._last
    refs = References(replaying, "base", shared)
    plain_names, replay_names = itertools.count(), itertools.count()
    answered = 0
    for _ in range(25):
        cand = r.choice([*(n.metadata.name for n in nodes), "gone"])
        moving = [replace(p, spec=replace(p.spec, node_name="")) for p in on.get(cand, [])]
        plain_checks = plain.checks
        want, _ = _simulate(plain, pools, types, shared, moving, cand, plain_names, None)
        checks = replaying.checks
        got, replay = _simulate(replaying, pools, types, shared, moving, cand, replay_names, refs)
        assert got == want
        if replay is None:  # no reference, or one just taken: every search runs, the reference's uncounted
            assert replaying.checks - checks == plain.checks - plain_checks
        answered += replay.answered if replay is not None else 0
    if seed == 0:
        assert answered > 0  # the replay takes part


def test_the_replay_answers_most_searches_of_a_full_cluster(tmp_path: Path) -> None:
    """Full 2-CPU nodes with two 900m pods and three empty 4-CPU ones, the pending pods all alike
    and ordered before the candidates' pods: each simulation searches only for the candidate's
    own pods."""
    types, pools = _types(tmp_path), [_pool("p")]
    nodes = [_node(f"n{i:02d}a", 2, False) for i in range(20)] + [_node(f"f{i}a", 4, False) for i in range(3)]
    bound = [
        replace(p, spec=replace(p.spec, node_name=f"n{i:02d}a"))
        for i in range(20)
        for p in (_pod(f"b{i:02d}-{k}", "900m") for k in range(2))
    ]
    shared = [_pod(f"a{i:02d}", "900m") for i in range(8)]  # before the candidates' pods ("b…")
    plain, replaying = SchedulingSimulator(), SchedulingSimulator()
    plain.reset(nodes, bound)
    replaying.reset(nodes, bound)
    refs = References(replaying, "base", shared)
    plain_names, replay_names = itertools.count(), itertools.count()
    answered = searched = 0
    for i in range(20):
        cand = f"n{i:02d}a"
        moving = [replace(p, spec=replace(p.spec, node_name="")) for p in bound if p.spec.node_name == cand]
        want, _ = _simulate(plain, pools, types, shared, moving, cand, plain_names, None)
        before = replaying.checks
        got, replay = _simulate(replaying, pools, types, shared, moving, cand, replay_names, refs)
        assert got == want
        if replay is None:
            continue
        answered += replay.answered
        searched += replaying.checks - before
    assert answered > searched
