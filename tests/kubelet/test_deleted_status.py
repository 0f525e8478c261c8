"""A deleted pod ends in a terminal phase before it is gone (since 1.27: upstream
``pkg/kubelet/status/status_manager.go`` ``TerminatePod`` and ``kubelet_pods.go``
``generateAPIPodStatus``/``getPhase`` with ``podIsTerminal``), whether its containers ran
or not, on virtual time."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.kubelet import KubeletSettings
from emulator.base.api.core import Container, ContainerStatus
from emulator.base.client.client import Latency
from tests.kubelet.test_kubelet import NGINX, Mi, _deleted_at, make_pod, world


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


def _unknown(cs: ContainerStatus) -> bool:
    t = cs.state.terminated
    return t is not None and (t.exit_code, t.reason, t.message) == (
        137,
        "ContainerStatusUnknown",
        "The container could not be located when the pod was terminated",
    )


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "settings",
    [
        pytest.param(
            KubeletSettings(image_pull_bandwidth=Mi, image_sizes={NGINX: 100 * Mi}, heartbeat_interval=0),
            id="image-still-pulling",
        ),
        pytest.param(KubeletSettings(container_start=Latency(10.0), heartbeat_interval=0), id="in-start-delay"),
        pytest.param(
            KubeletSettings(container_start=Latency(10.0), heartbeat_interval=0, report_pending_status=False),
            id="pending-status-not-reported",
        ),
    ],
)
async def test_a_pod_deleted_before_it_started_ends_failed(settings: KubeletSettings) -> None:
    """Upstream ``status_manager.go`` ``TerminatePod``: a pod still Pending when its deletion
    ends is made ``Failed``, its waiting containers terminated ``ContainerStatusUnknown``
    (exit 137), written before the final delete (``syncPod``/``canBeDeleted``)."""
    async with world(settings) as w:
        w.server.create(make_pod("web"))
        await w.at(2)
        w.server.delete("Pod", "web", "default")
        await w.at(5)
        writes = [r for r in w.of("Pod", "web") if r.verb == "updateStatus"]
        last = writes[-1]
        assert last.time == _deleted_at(w, "web") == 2.0
        status = last.new.status
        assert status.phase == "Failed"
        [cs] = status.container_statuses
        assert _unknown(cs)
        assert (cs.ready, cs.started) == (False, False)
        ready = next(c for c in status.conditions if c.type == "Ready")
        assert (ready.status, ready.reason) == ("False", "ContainersNotReady")  # a Pending pod's, kept
        assert status.start_time
        assert status.host_ip


@pytest.mark.asyncio
async def test_init_containers_that_never_started_stay_waiting_but_the_first() -> None:
    """``hasPodInitialized`` false (init containers, none done): the regular containers keep
    waiting; ``initializedContainers`` marks only the first init container."""
    settings = KubeletSettings(container_start=Latency(10.0), heartbeat_interval=0)
    async with world(settings) as w:
        p = make_pod("web")
        inits = [Container(name=n, image=NGINX) for n in ("init-a", "init-b")]
        w.server.create(replace(p, spec=replace(p.spec, init_containers=inits)))
        await w.at(2)
        w.server.delete("Pod", "web", "default")
        await w.at(5)
        status = [r for r in w.of("Pod", "web") if r.verb == "updateStatus"][-1].new.status
        assert status.phase == "Failed"
        [cs] = status.container_statuses
        assert cs.state.waiting is not None
        assert cs.state.waiting.reason == "PodInitializing"
        first, second = status.init_container_statuses
        assert _unknown(first)
        assert second.state.waiting is not None


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("settings", "delete_at", "phase"),
    [
        pytest.param(KubeletSettings(heartbeat_interval=0), 5.0, "Succeeded", id="deleted-while-running"),
        pytest.param(
            KubeletSettings(container_start=Latency(30.0), heartbeat_interval=0), 2.0, "Failed", id="deleted-unstarted"
        ),
    ],
)
async def test_the_terminal_status_is_observed_at_the_generation_the_delete_set(
    settings: KubeletSettings, delete_at: float, phase: str
) -> None:
    """Graceful deletion bumps ``metadata.generation``; the kubelet's last status, like every
    other it writes (upstream ``generateAPIPodStatus`` with PodObservedGenerationTracking, on
    in 1.34), reports it as ``status.observedGeneration`` and on its own conditions."""
    async with world(settings) as w:
        w.server.create(make_pod("web"))
        await w.at(delete_at)
        w.server.delete("Pod", "web", "default", grace_period_seconds=1)
        await w.at(60)
        last = [r for r in w.of("Pod", "web") if r.verb == "updateStatus"][-1]
        status = last.new.status
        assert status.phase == phase
        generation = last.new.metadata.generation
        assert generation == 2
        assert status.observed_generation == generation
        owned = {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"}
        assert {c.type: c.observed_generation for c in status.conditions if c.type in owned} == dict.fromkeys(
            owned, generation
        )
