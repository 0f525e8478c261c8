"""The node lifecycle controller: its pure pieces (``nodehealth``) as tables, then the
agent in a small virtual-time world of real kubelets whose heartbeats a fault stops."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from msgspec.structs import replace

from agents.controllers import NodeLifecycleController, NodeLifecycleSettings
from agents.controllers.nodehealth import (
    FULL_DISRUPTION,
    NORMAL,
    PARTIAL_DISRUPTION,
    Probes,
    TokenBucket,
    ZoneTainter,
    compute_zone_state,
    no_schedule_diff,
    unknown_conditions,
    zone_key,
)
from agents.kubelet import Kubelet, KubeletSettings
from emulator.app.scenario.faults import FaultPlan
from emulator.app.scenario.schema import NodeHeartbeatStop
from emulator.base.api.core import Node, NodeCondition, Taint
from emulator.base.runtime.rng import Seeds
from tests.builders import node as build_node
from tests.cluster import Cluster, OnCluster, open_cluster

UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"


def node(
    conditions: Sequence[tuple[str, str]] = (),
    taints: Sequence[tuple[str, str]] = (),
    *,
    unschedulable: bool = False,
    labels: dict[str, str] | None = None,
) -> Node:
    """Node ``n`` as its kubelet left it: created at 0 s, conditions (type, status) posted at
    10 s and last changed at 1 s, no room; ``taints`` as (key, effect)."""
    return build_node(
        "n",
        cpu=None,
        memory=None,
        pods=None,
        labels=labels,
        creation_timestamp="2026-01-01T00:00:00Z",
        taints=[Taint(key=k, effect=e) for k, e in taints],
        unschedulable=unschedulable,
        conditions=[
            NodeCondition(
                type=t,
                status=s,
                reason="Kubelet",
                last_heartbeat_time="2026-01-01T00:00:10Z",
                last_transition_time="2026-01-01T00:00:01Z",
            )
            for t, s in conditions
        ],
    )


HEALTHY = (("MemoryPressure", "False"), ("DiskPressure", "False"), ("PIDPressure", "False"), ("Ready", "True"))


# --- pure pieces ------------------------------------------------------------------------------


def test_unknown_conditions_of_a_node_that_stopped_posting() -> None:
    got = unknown_conditions(node(HEALTHY), "2026-01-01T00:01:00Z")
    assert got == [
        NodeCondition(
            type=t,
            status="Unknown",
            reason="NodeStatusUnknown",
            message="Kubelet stopped posting node status.",
            last_heartbeat_time="2026-01-01T00:00:10Z",
            last_transition_time="2026-01-01T00:01:00Z",
        )
        for t, _ in HEALTHY
    ]


def test_unknown_conditions_fill_in_conditions_never_posted_and_keep_unknown_ones() -> None:
    n = node((("MemoryPressure", "Unknown"), ("Ready", "True"), ("NetworkUnavailable", "False")))
    got = unknown_conditions(n, "2026-01-01T00:01:00Z")
    assert got is not None
    assert [(c.type, c.status, c.reason, c.last_heartbeat_time, c.last_transition_time) for c in got] == [
        ("MemoryPressure", "Unknown", "Kubelet", "2026-01-01T00:00:10Z", "2026-01-01T00:00:01Z"),
        ("Ready", "Unknown", "NodeStatusUnknown", "2026-01-01T00:00:10Z", "2026-01-01T00:01:00Z"),
        ("NetworkUnavailable", "False", "Kubelet", "2026-01-01T00:00:10Z", "2026-01-01T00:00:01Z"),
        ("DiskPressure", "Unknown", "NodeStatusNeverUpdated", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"),
        ("PIDPressure", "Unknown", "NodeStatusNeverUpdated", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"),
    ]
    assert got[3].message == "Kubelet never posted node status."


def test_no_write_when_ready_already_unknown() -> None:
    assert unknown_conditions(node((("Ready", "Unknown"), ("DiskPressure", "False"))), "t") is None


@pytest.mark.parametrize(
    ("n", "add", "remove"),
    [
        pytest.param(node(HEALTHY), [], [], id="healthy"),
        pytest.param(node((("Ready", "Unknown"),)), [UNREACHABLE], [], id="unknown"),
        pytest.param(node((("Ready", "False"),)), [NOT_READY], [], id="not-ready"),
        pytest.param(node((("Ready", "False"),), [(UNREACHABLE, "NoSchedule")]), [NOT_READY], [UNREACHABLE], id="swap"),
        pytest.param(node(HEALTHY, [(UNREACHABLE, "NoSchedule")]), [], [UNREACHABLE], id="recovered"),
        pytest.param(node(HEALTHY, [(UNREACHABLE, "NoExecute")]), [], [], id="no-execute-not-this-pass"),
        pytest.param(node(HEALTHY, [("dedicated", "NoSchedule")]), [], [], id="user-taint-untouched"),
        pytest.param(
            node((("MemoryPressure", "True"), ("PIDPressure", "True"))),
            ["node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure"],
            [],
            id="pressure",
        ),
        pytest.param(node(HEALTHY, unschedulable=True), ["node.kubernetes.io/unschedulable"], [], id="cordoned"),
        pytest.param(
            node(HEALTHY, [("node.kubernetes.io/unschedulable", "NoSchedule")]),
            [],
            ["node.kubernetes.io/unschedulable"],
            id="uncordoned",
        ),
    ],
)
def test_no_schedule_diff(n: Node, add: list[str], remove: list[str]) -> None:
    got_add, got_remove = no_schedule_diff(n)
    assert [t.key for t in got_add] == add
    assert all(t.effect == "NoSchedule" for t in got_add)
    assert [t.key for t in got_remove] == remove


@pytest.mark.parametrize(
    ("ready", "not_ready", "state"),
    [
        pytest.param(3, 0, NORMAL, id="all-ready"),
        pytest.param(0, 1, FULL_DISRUPTION, id="none-ready"),
        pytest.param(1, 2, NORMAL, id="two-not-ready-never-partial"),
        pytest.param(2, 3, PARTIAL_DISRUPTION, id="60-percent"),
        pytest.param(3, 3, NORMAL, id="50-percent"),
        pytest.param(9, 11, PARTIAL_DISRUPTION, id="55-percent"),
    ],
)
def test_compute_zone_state(ready: int, not_ready: int, state: str) -> None:
    assert compute_zone_state(ready, not_ready, 0.55) == state


@pytest.mark.parametrize(
    ("labels", "key"),
    [
        pytest.param({}, "", id="none"),
        pytest.param({"topology.kubernetes.io/zone": "a"}, ":\x00:a", id="zone"),
        pytest.param(
            {"topology.kubernetes.io/zone": "a", "topology.kubernetes.io/region": "r"}, "r:\x00:a", id="region-zone"
        ),
        pytest.param({"failure-domain.beta.kubernetes.io/zone": "b"}, ":\x00:b", id="beta-label"),
    ],
)
def test_zone_key(labels: dict[str, str], key: str) -> None:
    assert zone_key(node(labels=labels)) == key


def test_probes_stamp_at_the_pass_and_expire_strictly_after_grace_oldest_first() -> None:
    p = Probes()
    p.renewed("a")
    p.renewed("b")
    assert p.tick(5.0, 50.0) == (["a", "b"], [])
    p.renewed("a")
    assert p.tick(10.0, 50.0) == (["a"], [])
    assert (p.stamp("a"), p.stamp("b")) == (10.0, 5.0)
    assert p.tick(55.0, 50.0) == ([], [])  # 55 is not after 5 + 50
    assert p.tick(60.0, 50.0) == ([], ["b"])
    assert p.tick(61.0, 50.0) == ([], ["a"])
    assert len(p) == 0
    p.renewed("c")
    p.forget("c")
    assert p.tick(62.0, 50.0) == ([], [])


def test_token_bucket() -> None:
    b = TokenBucket(0.1, 0.0)
    assert b.try_accept(0.0)
    assert not b.try_accept(5.0)
    assert b.next_time(5.0) == pytest.approx(10.0)
    assert b.try_accept(10.0)
    never = TokenBucket(0.0, 0.0)
    assert not never.try_accept(0.0)
    assert never.next_time(100.0) is None


def test_zone_tainter_dedups_and_rate_limits() -> None:
    z = ZoneTainter(0.1, 0.0)
    assert z.add("a")
    assert z.add("b")
    assert not z.add("a")
    assert z.take(0.0) == "a"
    z.done("a")
    assert "a" in z  # remembered: not queued again until removed
    assert not z.add("a")
    assert z.take(1.0) is None
    assert z.next_time(1.0) == pytest.approx(10.0)
    assert z.take(10.0) == "b"
    z.done("b")
    assert z.remove("a")
    assert z.add("a")
    z.swap_limiter(0.0, 20.0)
    assert z.take(30.0) is None
    assert z.next_time(30.0) is None


# --- the agent --------------------------------------------------------------------------------


@dataclass
class World(OnCluster):
    """The cluster, its kubelets and the node lifecycle controller."""

    cluster: Cluster
    controller: NodeLifecycleController

    def node(self, name: str) -> Node:
        return self.cluster.node(name)

    def taints(self, name: str) -> list[tuple[str, str]]:
        return [(t.key, t.effect) for t in self.node(name).spec.taints]

    def ready(self, name: str) -> str:
        return next(c.status for c in self.node(name).status.conditions if c.type == "Ready")

    def when(self, name: str, what: str) -> list[float]:
        """Times of the writes to node ``name``: ``unknown``, ``taint`` (spec updates)."""
        out = []
        for w in self.cluster.of("Node", name):
            if what == "unknown" and w.verb == "updateStatus" and w.new.status.conditions[-1].status == "Unknown":
                out.append(round(w.time, 3))
            if what == "taint" and w.verb == "update":
                out.append(round(w.time, 3))
        return out


@asynccontextmanager
async def world(
    nodes: int,
    *faults: Any,
    zones: Sequence[str] = (),
    heartbeat: float = 10.0,
    settings: NodeLifecycleSettings | None = None,
) -> AsyncIterator[World]:
    """``nodes`` kubelets (client and own streams 10 + i, 100 + i) and the controller, whose
    first pass comes after every kubelet has started."""
    async with open_cluster(namespaces=("default", "kube-node-lease")) as c:
        plan = FaultPlan([(f"faults[{i}]", f, True) for i, f in enumerate(faults)], Seeds(0))
        kubelet_settings = KubeletSettings(heartbeat_interval=heartbeat, faults=plan)
        client = c.client("controller:nodelifecycle", api_latency=0.001)
        controller = NodeLifecycleController(client, c.clock, settings)
        for i in range(nodes):
            labels = {"topology.kubernetes.io/zone": zones[i % len(zones)]} if zones else {}
            c.server.create(build_node(f"n{i}", cpu=None, memory=None, pods=None, labels=labels))
            kubelet_client = c.client(f"kubelet:n{i}", api_latency=0.001, rng_seed=10 + i)
            kubelet = Kubelet(kubelet_client, f"n{i}", c.clock, c.rng(100 + i), kubelet_settings)
            c.spawn(kubelet.run(), f"kubelet:n{i}")
        await c.start(controller, "controller:nodelifecycle")
        yield World(c, controller)


@pytest.mark.asyncio
async def test_a_silent_node_goes_unknown_then_gets_its_unreachable_taints() -> None:
    async with world(3, NodeHeartbeatStop(node="n1", start=25.0)) as w:
        await w.clock.sleep_until(70.0)
        assert w.ready("n1") == "True"
        await w.clock.sleep_until(130.0)
        # passes at 0.002 + 5k s; the last renewal (20.003 s) is stamped by the pass at 25.002 s;
        # 75.002 s is not after 25.002 + 50 s, so the pass at 80.002 s marks it
        assert w.when("n1", "unknown") == [80.002]
        assert [w.ready(n) for n in ("n0", "n1", "n2")] == ["True", "Unknown", "True"]
        ready = next(c for c in w.node("n1").status.conditions if c.type == "Ready")
        # health comes from the Lease: the unchanged status was last posted at start-up
        # (nodeStatusReportFrequency 5m), and the Unknown condition keeps that heartbeat time
        assert (ready.reason, ready.message, ready.last_heartbeat_time) == (
            "NodeStatusUnknown",
            "Kubelet stopped posting node status.",
            "2026-01-01T00:00:00Z",
        )
        # NoSchedule once the Unknown status is seen, NoExecute at the next pass
        assert w.when("n1", "taint") == [80.003, 85.004]
        assert w.taints("n1") == [(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")]
        assert [t.time_added for t in w.node("n1").spec.taints] == ["2026-01-01T00:01:20Z", "2026-01-01T00:01:25Z"]
        assert w.taints("n0") == w.taints("n2") == []
        events = [(e.reason, e.message, e.involved_object.name) for e in w.server.list("Event")[0]]
        assert events == [("NodeNotReady", "Node n1 status is now: NodeNotReady", "n1")]
        assert w.controller.statistics()["markedUnknown"] == 1


@pytest.mark.asyncio
async def test_a_node_that_heartbeats_again_is_untainted() -> None:
    async with world(3, NodeHeartbeatStop(node="n1", start=25.0, stop=100.0)) as w:
        await w.clock.sleep_until(99.0)
        assert w.taints("n1") == [(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")]
        await w.clock.sleep_until(120.0)
        assert w.ready("n1") == "True"  # the kubelet's post at 100 s
        assert w.taints("n1") == []
        # NoSchedule lifted when Ready=True is seen, NoExecute at the next pass
        assert w.when("n1", "taint")[2:] == [100.004, 105.004]


@pytest.mark.asyncio
async def test_when_every_zone_is_fully_disrupted_no_node_gets_a_no_execute_taint() -> None:
    async with world(1, NodeHeartbeatStop(node="n0", start=25.0)) as w:
        await w.clock.sleep_until(200.0)
        assert w.ready("n0") == "Unknown"
        assert w.taints("n0") == [(UNREACHABLE, "NoSchedule")]
        assert w.controller.zone_states == {"": FULL_DISRUPTION}


@pytest.mark.asyncio
async def test_a_small_partially_disrupted_zone_stops_tainting() -> None:
    silent = [NodeHeartbeatStop(node=f"n{i}", start=25.0) for i in range(3)]
    async with world(5, *silent) as w:
        await w.clock.sleep_until(300.0)
        assert [w.ready(f"n{i}") for i in range(5)] == ["Unknown"] * 3 + ["True"] * 2
        assert all(w.taints(f"n{i}") == [(UNREACHABLE, "NoSchedule")] for i in range(3))
        assert w.controller.zone_states == {"": PARTIAL_DISRUPTION}


@pytest.mark.asyncio
async def test_no_execute_taints_are_rate_limited_per_zone() -> None:
    silent = [NodeHeartbeatStop(node=n, start=25.0) for n in ("n0", "n3", "n1")]
    async with world(6, *silent, zones=["a", "b", "c"]) as w:
        await w.clock.sleep_until(120.0)
        no_execute = {
            w.obj.metadata.name: round(w.time, 3)
            for w in w.writes
            if w.kind == "Node" and w.verb == "update" and any(t.effect == "NoExecute" for t in w.new.spec.taints)
        }
        # zone a (n0, n3) gets one node at once and the next 10 s later; zone b (n1) at once
        assert no_execute == {"n0": 85.008, "n1": 85.009, "n3": 95.008}
        assert w.controller.zone_states == {":\x00:a": FULL_DISRUPTION, ":\x00:b": NORMAL, ":\x00:c": NORMAL}


@pytest.mark.asyncio
async def test_nodes_without_a_lease_are_never_marked() -> None:
    async with world(2, heartbeat=0.0) as w:
        await w.clock.sleep_until(600.0)
        assert [w.ready("n0"), w.ready("n1")] == ["True", "True"]
        assert not [x for x in w.writes if x.verb == "update" and x.kind == "Node"]


@pytest.mark.asyncio
async def test_cordoning_taints_unschedulable_and_uncordoning_lifts_it() -> None:
    async with world(1, settings=NodeLifecycleSettings(node_monitor_grace_period=40.0)) as w:
        await w.clock.sleep_until(5.0)
        n = w.node("n0")
        w.server.update(replace(n, spec=replace(n.spec, unschedulable=True)))
        await w.clock.sleep_until(6.0)
        assert w.taints("n0") == [("node.kubernetes.io/unschedulable", "NoSchedule")]
        n = w.node("n0")
        w.server.update(
            replace(
                n,
                spec=replace(n.spec, unschedulable=False, taints=[*n.spec.taints, Taint(key="x", effect="NoSchedule")]),
            )
        )
        await w.clock.sleep_until(7.0)
        assert w.taints("n0") == [("x", "NoSchedule")]
        await w.clock.sleep_until(300.0)
        assert w.ready("n0") == "True"  # heartbeats keep it healthy
