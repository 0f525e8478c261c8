"""The shared test cluster (``tests/cluster.py``) and builders (``tests/builders.py``):
they build what the codec would decode, and the cluster starts, supervises and stops agents."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Node, NodeAddress, Pod
from emulator.base.api.scheduling import PriorityClass
from tests.builders import (
    affinity,
    container,
    label_selector,
    namespace,
    node,
    node_term,
    pod,
    pod_term,
    priority_class,
    spread,
    taint,
    toleration,
)
from tests.cluster import Cluster, open_cluster

ADDRESS = NodeAddress(type="InternalIP", address="10.0.0.1")
POD_DOC: dict[str, Any] = {
    "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}},
                "ports": [{"containerPort": 80, "hostPort": 80}],
            }
        ],
        "nodeName": "n1",
        "priority": 7,
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                }
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 5,
                        "podAffinityTerm": {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": "web"}},
                        },
                    }
                ]
            },
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
            }
        ],
    },
}


@pytest.mark.parametrize(
    ("built", "doc", "kind"),
    [
        pytest.param(
            pod(
                "p",
                labels={"app": "web"},
                containers=[container(cpu="100m", memory="1Gi", host_ports=[80])],
                node="n1",
                priority=7,
                tolerations=[toleration("k", effect="NoSchedule")],
                affinity=affinity(
                    required_nodes=[node_term(("zone", "In", ["a"]))],
                    preferred_anti=[(5, pod_term("kubernetes.io/hostname", label_selector({"app": "web"})))],
                ),
                spread=[spread("zone", label_selector(None, ("app", "Exists", [])))],
            ),
            POD_DOC,
            Pod,
            id="pod",
        ),
        pytest.param(
            node("n1", cpu="2", pods=None, labels={"zone": "a"}, taints=[taint("dedicated", "db")]),
            {
                "metadata": {"name": "n1", "labels": {"zone": "a"}},
                "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]},
                "status": {"capacity": {"cpu": "2", "memory": "32Gi"}, "allocatable": {"cpu": "2", "memory": "32Gi"}},
            },
            Node,
            id="node",
        ),
        pytest.param(
            node("n1", allocatable_only=True, images={"nginx:1": 100}),
            {
                "metadata": {"name": "n1"},
                "status": {
                    "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                    "images": [{"names": ["nginx:1"], "sizeBytes": 100}],
                },
            },
            Node,
            id="node-allocatable-only",
        ),
        pytest.param(
            node("n1", cpu=None, memory=None, pods=None, pod_cidr="10.0.1.0/24", addresses=[ADDRESS]),
            {
                "metadata": {"name": "n1"},
                "spec": {"podCIDR": "10.0.1.0/24"},
                "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]},
            },
            Node,
            id="node-addresses-and-pod-cidr",
        ),
        pytest.param(
            pod("p", namespace="", containers=[], phase="Failed", reason="Evicted", message="low on memory"),
            {"metadata": {"name": "p"}, "status": {"phase": "Failed", "reason": "Evicted", "message": "low on memory"}},
            Pod,
            id="pod-status-reason",
        ),
        pytest.param(
            namespace("team-a", labels={"team": "a"}),
            {"metadata": {"name": "team-a", "labels": {"team": "a"}}},
            Namespace,
            id="namespace",
        ),
        pytest.param(
            priority_class("high", 1000, preemption_policy="Never"),
            {"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"},
            PriorityClass,
            id="priority-class",
        ),
    ],
)
def test_builders_build_what_the_codec_decodes(built: Any, doc: dict[str, Any], kind: type) -> None:
    assert built == convert(doc, kind)


@pytest.mark.parametrize(
    ("built", "operator", "value"),
    [
        pytest.param(toleration("k"), "Exists", "", id="exists"),
        pytest.param(toleration("k", "v"), "Equal", "v", id="equal"),
        pytest.param(toleration("k", "", operator="Equal"), "Equal", "", id="equal-empty"),
        pytest.param(toleration("k", "v", operator=""), "", "v", id="empty-operator-kept"),
    ],
)
def test_toleration_operator_follows_the_value(built: Any, operator: str, value: str) -> None:
    assert (built.operator, built.value) == (operator, value)


@pytest.mark.parametrize(
    ("built", "requests"),
    [
        pytest.param(
            container(requests={"cpu": "1", "example.com/gpu": "2"}),
            {"cpu": "1", "example.com/gpu": "2"},
            id="requests-kept",
        ),
        pytest.param(container(cpu="2", requests={"cpu": "1"}), {"cpu": "2"}, id="cpu-wins"),
        pytest.param(container(memory="1Gi"), {"memory": "1Gi"}, id="memory-only"),
    ],
)
def test_container_requests(built: Any, requests: dict[str, str]) -> None:
    assert {k: str(v) for k, v in built.resources.requests.items()} == requests


def test_pod_refuses_requests_and_containers_together() -> None:
    with pytest.raises(TypeError, match="give requests on the containers"):
        pod("p", cpu="1", containers=[container()])


@pytest.mark.asyncio
async def test_the_fixture_runs_a_scheduler_and_a_kubelet(cluster: Cluster) -> None:
    cluster.server.create(node("n1"))
    await cluster.start_scheduler()
    await cluster.start_kubelet("n1")
    cluster.server.create(pod("p", cpu="100m"))
    at = await cluster.until(lambda: cluster.pod("p").status.phase == "Running")
    assert cluster.pod("p").spec.node_name == "n1"
    assert 0 < at < 10
    assert [w.verb for w in cluster.of("Pod", "p")][:2] == ["create", "bind"]


@pytest.mark.asyncio
async def test_streams_follow_the_seed() -> None:
    async with open_cluster(seed=5) as c:
        assert [c.rng().random(), c.rng().random()] == [random.Random(6).random(), random.Random(7).random()]


class Crashing:
    def __init__(self) -> None:
        self.ready = asyncio.Event()

    async def run(self) -> None:
        self.ready.set()
        await asyncio.sleep(1.0)
        raise RuntimeError("boom")


class NeverReady:
    def __init__(self) -> None:
        self.ready = asyncio.Event()

    async def run(self) -> None:
        raise RuntimeError("no start")


@pytest.mark.asyncio
async def test_an_agent_that_fails_fails_the_next_wait_and_the_close() -> None:
    async def crash() -> None:
        async with open_cluster() as c:
            await c.start(Crashing(), "crashing")
            await c.at(5.0)

    with pytest.raises(ExceptionGroup) as err:
        await crash()
    assert err.group_contains(RuntimeError, match="boom")


@pytest.mark.asyncio
async def test_an_agent_that_ends_before_ready_is_reported() -> None:
    async def never() -> None:
        async with open_cluster() as c:
            await c.start(NeverReady(), "never")

    with pytest.raises(ExceptionGroup) as err:
        await never()
    assert err.group_contains(RuntimeError, match="no start")


@pytest.mark.asyncio
async def test_close_cancels_the_agents() -> None:
    async with open_cluster() as c:
        task = await c.start(Crashing(), "crashing")
    assert task.cancelled()
