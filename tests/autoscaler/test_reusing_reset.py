"""``ReusingReset``: after loops whose simulations remove pods and put them back, add pods and
take them away, remove nodes and revert (the scale-down planner's), the snapshot it leaves is
what a fresh ``reset`` builds, node for node (pods and their order, the affinity lists, the
amounts, the host ports), and the NodeInfos put back as built were kept, not rebuilt."""

from __future__ import annotations

import random

import pytest
from msgspec.structs import replace

from agents.autoscaler.snapshot import ReusingReset
from agents.scheduler import SchedulingSimulator
from agents.scheduler.framework.types import NodeInfo
from emulator.base.api.core import Affinity, PodAffinity, PodAffinityTerm
from emulator.base.api.meta import LabelSelector
from tests.builders import node, pod

HOST = "kubernetes.io/hostname"


def _facts(info: NodeInfo) -> tuple[object, ...]:
    return (
        info.node,
        [pi.pod for pi in info.pods],
        [pi.pod for pi in info.pods_with_affinity],
        [pi.pod for pi in info.pods_with_required_anti_affinity],
        repr(info.non_zero_requested),
        repr(info.requested),
        info.used_ports._ports,
    )


def _pod(i: int, where: str, rng: random.Random):  # type: ignore[no-untyped-def]
    kind = rng.random()
    affinity = None
    if kind < 0.2:
        term = PodAffinityTerm(topology_key=HOST, label_selector=LabelSelector(match_labels={"app": "x"}))
        affinity = Affinity(pod_affinity=PodAffinity(required_during_scheduling_ignored_during_execution=[term]))
    requests = {"example.com/dongle": "1"} if kind > 0.9 else None
    return pod(f"p{i}", uid=f"p{i}", cpu=rng.choice(["100m", "300m"]), labels={"app": "x"}, node=where,
               affinity=affinity, requests=requests)  # fmt: skip


@pytest.mark.parametrize("seed", range(8))
def test_the_kept_snapshot_is_a_fresh_one(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [node(f"n{i}", labels={HOST: f"n{i}"}, extra={"example.com/dongle": "4"}) for i in range(8)]
    pods = [_pod(i, f"n{rng.randrange(8)}", rng) for i in range(rng.randint(4, 14))]
    sim = SchedulingSimulator()
    keeper = ReusingReset()
    made = len(pods)
    for _loop in range(25):
        if rng.random() < 0.3:  # the cluster changed between loops: a pod gone, one new
            if pods:
                pods.pop(rng.randrange(len(pods)))
            made += 1
            pods.append(_pod(made, f"n{rng.randrange(8)}", rng))
        keeper.reset(sim, nodes, sorted(pods, key=lambda p: p.metadata.name))
        fresh = SchedulingSimulator()
        fresh.reset(nodes, sorted(pods, key=lambda p: p.metadata.name))
        for n in nodes:
            kept, built = sim.node_info(n.metadata.name), fresh.node_info(n.metadata.name)
            assert kept is not None
            assert built is not None
            assert _facts(kept) == _facts(built), (seed, _loop, n.metadata.name)
        # the planner's simulations, all reverted at the end
        sim.fork()
        for _ in range(rng.randint(1, 4)):
            name = f"n{rng.randrange(8)}"
            info = sim.node_info(name)
            if info is None:
                continue
            sim.fork()
            moved = [pi.pod for pi in info.pods]
            for p in moved:
                sim.remove_pod(p, name)
            sim.remove_node(name)
            for p in moved:
                sim.schedule_anywhere(replace(p, spec=replace(p.spec, node_name="")), lambda n, name=name: n != name)
            if rng.random() < 0.5:
                sim.revert()
            else:
                sim.commit()
        sim.revert()
    assert keeper.restored > 0
