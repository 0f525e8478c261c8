"""The binpacking estimator: the cases of upstream's ``TestBinpackingEstimate``
(``cluster-autoscaler/estimator/binpacking_estimator_test.go``, 1.34), on this project's
scheduler plugins (``SchedulingSimulator``): an old 100m node in zone-jupiter, a template of
``millicores``/``memory``/10 pods in zone-mars, pods of one equivalence group (or two)."""

from __future__ import annotations

import pytest

from agents.autoscaler.clusterautoscaler.estimator import estimate
from agents.scheduler import SchedulingSimulator
from emulator.base.api.core import Pod
from tests.builders import container, label_selector, node, pod, spread

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _pods(
    prefix: str, n: int, cpu: int, memory: int, *, host_port: int = 0, skew: tuple[int, str] | None = None
) -> list[Pod]:
    sel = label_selector({"app": "estimatee"})
    return [
        pod(
            f"{prefix}-{i}",
            namespace="universe",
            uid=f"{prefix}-{i}",
            labels={"app": "estimatee"},
            containers=[container(cpu=f"{cpu}m", memory=str(memory), host_ports=[host_port] if host_port else [])],
            spread=[spread(skew[1], sel, max_skew=skew[0])] if skew else (),
        )
        for i in range(n)
    ]


def _node(name: str, cpu: int, memory: int, zone: str):  # type: ignore[no-untyped-def]
    return node(name, cpu=f"{cpu}m", memory=str(memory), pods="10", labels={ZONE: zone, HOST: name})


HIGH = _pods("high", 10, 500, 1000)
CASES = [
    pytest.param(1000, 2000, 0, [_pods("e", 10, 350, 1000)], 5, 10, id="simple resource-based binpacking"),
    pytest.param(10000, 20000, 0, [_pods("e", 20, 10, 100)], 2, 20, id="pods-per-node bound binpacking"),
    pytest.param(
        1000, 5000, 0, [_pods("e", 8, 200, 1000, host_port=5555)], 8, 8, id="hostport conflict forces pod-per-node"
    ),
    pytest.param(1000, 5000, 5, [_pods("e", 20, 500, 1000)], 5, 10, id="limiter cuts binpacking"),
    pytest.param(
        1000, 5000, 5, [_pods("e", 10, 50, 1000), HIGH], 5, 10, id="decreasing ordered pods are processed first"
    ),
    pytest.param(
        1000,
        5000,
        0,
        [_pods("e", 8, 200, 200, skew=(2, HOST))],
        4,
        8,
        id="hostname topology spreading with maxSkew=2 forces 2 pods/node",
    ),
    pytest.param(
        1000,
        5000,
        0,
        [_pods("e", 8, 20, 100, skew=(2, ZONE))],
        1,
        2,
        id="zonal topology spreading with maxSkew=2 only allows 2 pods to schedule",
    ),
]


@pytest.mark.parametrize(("millicores", "memory", "max_nodes", "groups", "nodes", "pods"), CASES)
def test_binpacking_estimate(
    millicores: int, memory: int, max_nodes: int, groups: list[list[Pod]], nodes: int, pods: int
) -> None:
    sim = SchedulingSimulator()
    sim.reset([_node("oldnode", 100, 100, "zone-jupiter")], [])
    got_nodes, got_pods = estimate(
        sim, groups, _node("template", millicores, memory, "zone-mars"), "g", max_nodes or 1000
    )
    assert (got_nodes, len(got_pods)) == (nodes, pods)
    if groups[-1] is HIGH:
        assert got_pods == HIGH  # the bigger pods first (DecreasingPodOrderer)
    assert sim.node_names() == ["oldnode"]  # the fork was reverted
