"""Quiet heartbeats (``NodeReporter.memo``): skipping the status build on an unchanged node
object gives exactly the writes of the reference (``memo = False``, every heartbeat builds
and compares the status), on random timelines: other writers changing the node's labels,
conditions or addresses, pods whose image pulls change ``status.images``, and report
frequencies from every heartbeat to upstream's 5 minutes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet import KubeletSettings
from agents.kubelet.heartbeat import NodeReporter
from emulator.base.api.core import Node, NodeAddress
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.loop import new_virtual_loop
from tests.builders import node, pod
from tests.cluster import open_cluster

NODE = "node-a"
Mi = 2**20

ACTIONS = st.sampled_from(["label", "unready", "drop-condition", "address", "pod", "nothing"])


def _apply(server: ApiServer, action: str, i: int) -> None:
    node: Node = server.get("Node", NODE)
    if action == "label":
        server.update(replace(node, metadata=replace(node.metadata, labels={**node.metadata.labels, "step": str(i)})))
    elif action == "unready":
        ready = [replace(c, status="Unknown") if c.type == "Ready" else c for c in node.status.conditions]
        server.update_status(replace(node, status=replace(node.status, conditions=ready)))
    elif action == "drop-condition":
        server.update_status(replace(node, status=replace(node.status, conditions=node.status.conditions[1:])))
    elif action == "address":
        addresses = [NodeAddress(type="InternalIP", address=f"10.9.0.{i % 250 + 1}")]
        server.update_status(replace(node, status=replace(node.status, addresses=addresses)))
    elif action == "pod":
        server.create(pod(f"p{i}", node=NODE, image=f"img:{i % 3}"))


async def _writes(frequency: float, timeline: list[tuple[float, str]]) -> list[Any]:
    settings = KubeletSettings(
        heartbeat_interval=10.0, node_status_report_frequency=frequency, image_pull_bandwidth=10 * Mi
    )
    async with open_cluster(namespaces=("default", "kube-node-lease")) as c:
        c.server.create(node(NODE, cpu=None, memory=None, pods=None))
        c.writes.clear()  # the log starts with the kubelet
        await c.start_kubelet(NODE, settings)
        for i, (at, action) in enumerate(timeline):
            await c.at(at)
            _apply(c.server, action, i)
        await c.at(timeline[-1][0] + 400.0 if timeline else 400.0)
    return [(w.time, w.verb, w.kind, w.new) for w in c.writes if w.kind in ("Node", "Lease")]


def _run(memo: bool, frequency: float, timeline: list[tuple[float, str]]) -> list[Any]:
    NodeReporter.memo = memo
    loop = new_virtual_loop()
    try:
        return loop.run_until_complete(_writes(frequency, timeline))
    finally:
        NodeReporter.memo = True
        loop.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    frequency=st.sampled_from([0.0, 10.0, 25.0, 60.0, 300.0]),
    steps=st.lists(st.tuples(st.floats(0.0, 120.0, allow_nan=False), ACTIONS), max_size=6),
)
def test_quiet_heartbeats_write_exactly_what_the_reference_writes(
    frequency: float, steps: list[tuple[float, str]]
) -> None:
    timeline, at = [], 0.5
    for gap, action in steps:
        at += round(gap, 1)
        timeline.append((at, action))
    assert _run(True, frequency, timeline) == _run(False, frequency, timeline)


@pytest.mark.parametrize("memo", [pytest.param(True, id="memo"), pytest.param(False, id="reference")])
def test_an_unready_node_is_reposted_on_the_next_heartbeat(memo: bool) -> None:
    writes = _run(memo, 300.0, [(25.0, "unready")])
    assert [t for t, verb, kind, _ in writes if kind == "Node" and verb == "updateStatus"] == [0.0, 25.0, 30.0, 330.0]
