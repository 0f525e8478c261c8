"""Quiet heartbeats (``NodeReporter.memo``): skipping the status build on an unchanged node
object gives exactly the writes of the reference (``memo = False``, every heartbeat builds
and compares the status), on random timelines: other writers changing the node's labels,
conditions or addresses, pods whose image pulls change ``status.images``, and report
frequencies from every heartbeat to upstream's 5 minutes."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet import Kubelet, KubeletSettings
from agents.kubelet.heartbeat import NodeReporter
from emulator.api.codec import convert
from emulator.api.core import Namespace, Node, NodeAddress, Pod
from emulator.api.meta import ObjectMeta
from emulator.apiserver.server import ApiServer, WriteRecord
from emulator.client.client import Client
from emulator.runtime.clock import LoopClock
from emulator.runtime.loop import new_virtual_loop

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
        pod = {
            "metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {"nodeName": NODE, "containers": [{"name": "c", "image": f"img:{i % 3}"}]},
        }
        server.create(convert(pod, Pod))


async def _writes(frequency: float, timeline: list[tuple[float, str]]) -> list[Any]:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    server = ApiServer(clock, random.Random(0))
    for ns in ("default", "kube-node-lease"):
        server.create(Namespace(metadata=ObjectMeta(name=ns)))
    server.create(Node(metadata=ObjectMeta(name=NODE)))
    writes: list[WriteRecord] = []
    server.add_write_listener(writes.append)
    settings = KubeletSettings(
        heartbeat_interval=10.0, node_status_report_frequency=frequency, image_pull_bandwidth=10 * Mi
    )
    client = Client(server, clock, random.Random(1), name=f"kubelet:{NODE}")
    kubelet = Kubelet(client, NODE, clock, random.Random(2), settings)
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(kubelet.run())
        await kubelet.ready.wait()
        for i, (at, action) in enumerate(timeline):
            await clock.sleep_until(at)
            _apply(server, action, i)
        await clock.sleep_until(timeline[-1][0] + 400.0 if timeline else 400.0)
        task.cancel()
    return [(w.time, w.verb, w.kind, w.new) for w in writes if w.kind in ("Node", "Lease")]


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
