"""A pod deleted while running ends in a terminal phase before it is gone (since 1.27:
upstream ``pkg/kubelet/status/status_manager.go`` and ``kubelet_pods.go``
``generateAPIPodStatus``/``getPhase`` with ``podIsTerminal``), on virtual time."""

from __future__ import annotations

import pytest

from agents.kubelet import KubeletSettings
from emulator.base.client.client import Latency
from tests.kubelet.test_kubelet import _deleted_at, make_pod, world


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("termination", "grace", "phase", "code", "reason", "at"),
    [
        pytest.param(5.0, 30, "Succeeded", 0, "Completed", 15.0, id="stopped-within-grace"),
        pytest.param(60.0, 3, "Failed", 137, "Error", 13.0, id="sigkill-at-grace-end"),
    ],
)
async def test_terminal_phase_before_the_final_delete(
    termination: float, grace: int, phase: str, code: int, reason: str, at: float
) -> None:
    async with world(KubeletSettings(termination=Latency(termination), heartbeat_interval=0)) as w:
        w.server.create(make_pod("web"))
        await w.at(10)
        w.server.delete("Pod", "web", "default", grace_period_seconds=grace)
        await w.at(100)
        [last] = [r for r in w.of("Pod", "web") if r.verb == "updateStatus"][-1:]
        assert last.time == at
        assert _deleted_at(w, "web") == at  # then the delete with grace 0
        status = last.new.status
        assert status.phase == phase
        [cs] = status.container_statuses
        assert cs.state.terminated is not None
        assert (cs.state.terminated.exit_code, cs.state.terminated.reason) == (code, reason)
        assert cs.state.terminated.finished_at == f"2026-01-01T00:00:{int(at):02d}Z"
        assert (cs.ready, cs.started) == (False, False)
        ready = next(c for c in status.conditions if c.type == "Ready")
        assert (ready.status, ready.reason) == ("False", "PodCompleted" if phase == "Succeeded" else "PodFailed")


@pytest.mark.asyncio
async def test_a_pod_deleted_before_it_started_gets_no_terminal_write() -> None:
    settings = KubeletSettings(container_start=Latency(10.0), heartbeat_interval=0)
    async with world(settings) as w:
        w.server.create(make_pod("web"))
        await w.at(2)
        w.server.delete("Pod", "web", "default")
        await w.at(5)
        assert all(
            r.new is None or r.new.status.phase == "Pending" for r in w.of("Pod", "web") if r.verb == "updateStatus"
        )
