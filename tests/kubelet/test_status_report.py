"""The node status report frequency (upstream ``nodeStatusReportFrequency``): on a heartbeat
the kubelet posts its node's status only when it changed or the frequency has passed."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.kubelet import KubeletSettings
from agents.kubelet.heartbeat import status_changed
from emulator.base.api.core import NodeAddress, NodeCondition, NodeStatus
from tests.builders import node
from tests.cluster import open_cluster

NODE = "node-a"
READY = NodeCondition(
    type="Ready",
    status="True",
    reason="KubeletReady",
    last_heartbeat_time="2026-01-01T00:00:00Z",
    last_transition_time="2026-01-01T00:00:00Z",
)


@pytest.mark.parametrize(
    ("new", "changed"),
    [
        pytest.param(NodeStatus(conditions=[READY]), False, id="same"),
        pytest.param(
            NodeStatus(conditions=[replace(READY, last_heartbeat_time="2026-01-01T00:00:10Z")]),
            False,
            id="heartbeat-only",
        ),
        pytest.param(NodeStatus(conditions=[replace(READY, status="Unknown")]), True, id="condition-status"),
        pytest.param(
            NodeStatus(conditions=[replace(READY, last_transition_time="2026-01-01T00:00:10Z")]), True, id="transition"
        ),
        pytest.param(NodeStatus(conditions=[]), True, id="condition-gone"),
        pytest.param(
            NodeStatus(conditions=[READY], addresses=[NodeAddress(type="Hostname", address=NODE)]),
            True,
            id="other-field",
        ),
    ],
)
def test_status_changed_ignores_only_heartbeat_times(new: NodeStatus, changed: bool) -> None:
    assert status_changed(NodeStatus(conditions=[READY]), new) is changed


@pytest.mark.parametrize("value", [pytest.param(-1.0, id="negative"), pytest.param(float("inf"), id="infinite")])
def test_report_frequency_is_validated(value: float) -> None:
    with pytest.raises(ValueError, match="node_status_report_frequency"):
        KubeletSettings(node_status_report_frequency=value)


async def _node_writes(settings: KubeletSettings, until: float, *, cordon_at: float | None = None) -> list[float]:
    async with open_cluster(namespaces=("default", "kube-node-lease")) as c:
        c.server.create(node(NODE, cpu=None, memory=None, pods=None))
        c.writes.clear()  # the log starts with the kubelet
        await c.start_kubelet(NODE, settings)
        if cordon_at is not None:
            await c.at(cordon_at)
            n = c.node(NODE)
            ready = [replace(cond, status="Unknown") if cond.type == "Ready" else cond for cond in n.status.conditions]
            c.server.update_status(replace(n, status=replace(n.status, conditions=ready)))
        await c.at(until)
    return [w.time for w in c.of("Node") if w.time > 0 and (cordon_at is None or w.time != cordon_at)]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("frequency", "expected"),
    [
        pytest.param(0.0, [10.0 * i for i in range(1, 13)], id="every-heartbeat"),
        pytest.param(60.0, [60.0, 120.0], id="every-minute"),
        pytest.param(300.0, [], id="upstream-5min"),
    ],
)
async def test_heartbeat_posts_status_only_when_due(frequency: float, expected: list[float]) -> None:
    settings = KubeletSettings(heartbeat_interval=10.0, node_status_report_frequency=frequency)
    assert await _node_writes(settings, 125.0) == expected


@pytest.mark.asyncio
async def test_a_changed_status_is_posted_on_the_next_heartbeat() -> None:
    settings = KubeletSettings(heartbeat_interval=10.0, node_status_report_frequency=300.0)
    assert await _node_writes(settings, 45.0, cordon_at=25.0) == [30.0]
