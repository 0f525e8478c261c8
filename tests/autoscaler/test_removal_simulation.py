"""The scale-down removal simulation on topology spread constraints, on the cases of
``simulator/cluster_test.go`` ``TestSimulateNodeRemoval`` (cluster-autoscaler 1.34.4 on:
"node unremovable due to phantom zone", "node removable with nodeTaintsPolicy Honor"; 1.34.3:
"one node should be removable"), for each release ``removalSimulation`` emulates: three
nodes each with one pod spread over ``kubernetes.io/hostname`` (maxSkew 1, minDomains 2),
non-replicated blockers on the second and third (the default-policy case), the first the
candidate."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.autoscaler.clusterautoscaler.options import AutoscalingOptions
from agents.autoscaler.clusterautoscaler.scaledown import Planner
from agents.scheduler import SchedulingSimulator
from emulator.base.api.core import Node, Pod
from emulator.base.api.meta import OwnerReference
from tests.builders import label_selector, node, pod, spread

RS = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="rs", uid="rs-uid", controller=True)
HOSTNAME = "kubernetes.io/hostname"


def _node(name: str) -> Node:
    n = node(name, cpu="1000m", memory="2000000", pods="100", labels={HOSTNAME: name}, ready="True")
    return n


def _topo_pod(name: str, on: str, honor: bool) -> Pod:
    tsc = spread(HOSTNAME, label_selector({"app": "topo-app"}), max_skew=1, min_domains=2)
    if honor:
        tsc = replace(tsc, node_taints_policy="Honor")
    p = pod(name, uid=name, cpu="100m", memory="100000", labels={"app": "topo-app"}, node=on, spread=[tsc])
    return replace(p, metadata=replace(p.metadata, owner_references=[RS]))


def _unremovable(mode: str, honor: bool) -> str:
    nodes = [_node(f"topo-n{i}") for i in (1, 2, 3)]
    pods = [_topo_pod(f"tsc-pod-n{i}", f"topo-n{i}", honor) for i in (1, 2, 3)]
    if not honor:  # upstream's default-policy case blocks the other two nodes
        pods += [pod(f"blocker-n{i}", uid=f"b{i}", cpu="100m", memory="100000", node=f"topo-n{i}") for i in (2, 3)]
    sim = SchedulingSimulator()
    sim.reset(nodes, pods)
    planner = Planner(AutoscalingOptions(removal_simulation=mode))
    names = {n.metadata.name for n in nodes}
    planner.update(sim, [(n, "g") for n in nodes], names.__contains__, [], 0.0)
    if "topo-n1" in planner.unneeded:
        assert [p.metadata.name for p in planner.unneeded["topo-n1"][1].pods] == ["tsc-pod-n1"]
        return ""
    return planner.unremovable["topo-n1"]


@pytest.mark.parametrize(
    ("mode", "honor", "reason"),
    [
        pytest.param("taintedGhostNode", False, "NoPlaceToMovePods", id="1.34.4-phantom-zone"),
        pytest.param("taintedGhostNode", True, "", id="1.34.4-honor-removable"),
        pytest.param("removeNode", False, "", id="1.34.3-one-node-removable"),
        pytest.param("removeNode", True, "", id="1.34.3-honor-removable"),
        pytest.param("keepNode", False, "NoPlaceToMovePods", id="1.32.2-unremovable"),
        pytest.param("keepNode", True, "NoPlaceToMovePods", id="1.32.2-honor-unremovable"),
    ],
)
def test_topology_spread_removal_by_release(mode: str, honor: bool, reason: str) -> None:
    assert _unremovable(mode, honor) == reason
