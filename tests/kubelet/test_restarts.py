"""The kubelet's container lifecycle through the API, on virtual time: exit codes,
restartPolicy, CrashLoopBackOff, ready-after, as a controller watching pods sees them.

Each test runs one kubelet (``node-1``) on an open cluster, creates pods bound to it and
asserts on the stored pod and the write log at exact simulated times.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import pytest
from msgspec.structs import replace

from agents.kubelet import Kubelet, KubeletSettings
from agents.kubelet.lifecycle import EXIT_CODE_ANNOTATION, READY_AFTER_ANNOTATION, RUN_DURATION_ANNOTATION
from emulator.base.api.core import ContainerStatus, Event, Pod, PodCondition
from emulator.base.api.meta import OwnerReference
from tests.builders import container, node, pod
from tests.cluster import Cluster, open_cluster

NODE = "node-1"
RS = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="web", uid="rs-1", controller=True)


def t(seconds: int) -> str:
    return f"2026-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def make_pod(
    name: str,
    *,
    policy: str = "Always",
    annotations: Mapping[str, str] | None = None,
    owned: bool = True,
    containers: tuple[str, ...] = ("web",),
) -> Pod:
    p = pod(name, node=NODE, containers=[container(c) for c in containers], annotations=annotations)
    meta = replace(p.metadata, owner_references=[RS] if owned else [])
    return replace(p, metadata=meta, spec=replace(p.spec, restart_policy=policy))


@asynccontextmanager
async def kubelet() -> AsyncIterator[tuple[Cluster, Kubelet]]:
    async with open_cluster(namespaces=("default", "kube-node-lease")) as c:
        c.server.create(node(NODE, cpu="4", memory="8Gi"))
        k = await c.start_kubelet(NODE, KubeletSettings(heartbeat_interval=0))
        yield c, k


def cond(p: Pod, type_: str) -> tuple[str, str, str, str | None]:
    c: PodCondition = next(c for c in p.status.conditions if c.type == type_)
    return c.status, c.reason, c.message, c.last_transition_time


def web(p: Pod) -> ContainerStatus:
    return next(cs for cs in p.status.container_statuses if cs.name == "web")


def phases(c: Cluster, name: str) -> list[tuple[float, str, Any]]:
    """(time, phase, web's state kind) of every status write of pod ``name``."""
    out: list[tuple[float, str, Any]] = []
    for w in c.of("Pod", name, "updateStatus"):
        cs = next((s for s in w.new.status.container_statuses if s.name == "web"), None)
        state = None if cs is None else next(k for k in ("waiting", "running", "terminated") if getattr(cs.state, k))
        out.append((w.time, w.new.status.phase, state))
    return out


# --- restartPolicy x exit code --------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("policy", "code", "phase", "restarts", "reason"),
    [
        pytest.param("Never", "0", "Succeeded", 0, "Completed", id="never-0"),
        pytest.param("Never", "2", "Failed", 0, "Error", id="never-2"),
        pytest.param("OnFailure", "0", "Succeeded", 0, "Completed", id="onfailure-0"),
        pytest.param("OnFailure", "1", "Running", 1, "Error", id="onfailure-1"),
        pytest.param("Always", "0", "Running", 1, "Completed", id="always-0"),
        pytest.param("Always", "1", "Running", 1, "Error", id="always-1"),
    ],
)
async def test_exit_code_and_restart_policy(policy: str, code: str, phase: str, restarts: int, reason: str) -> None:
    async with kubelet() as (c, k):
        c.server.create(
            make_pod("web-0", policy=policy, annotations={RUN_DURATION_ANNOTATION: "5s", EXIT_CODE_ANNOTATION: code})
        )
        await c.at(7)
        p = c.pod("web-0")
        cs = web(p)
        assert (p.status.phase, cs.restart_count) == (phase, restarts)
        term = cs.state.terminated if restarts == 0 else cs.last_state.terminated
        assert term is not None
        assert (term.exit_code, term.reason, term.started_at, term.finished_at) == (int(code), reason, t(0), t(5))
        stats = k.statistics()
        assert (stats["succeeded"], stats["failed"]) == (int(phase == "Succeeded"), int(phase == "Failed"))
        if phase == "Failed":
            assert cond(p, "Ready")[:2] == ("False", "PodFailed")
            assert stats["active"] == 0


@pytest.mark.asyncio
async def test_bare_pod_with_the_default_policy_still_succeeds() -> None:
    async with kubelet() as (c, _):
        c.server.create(make_pod("job-like", owned=False, annotations={RUN_DURATION_ANNOTATION: "5s"}))
        await c.at(7)
        assert c.pod("job-like").spec.restart_policy == "Always"
        assert phases(c, "job-like") == [
            (0, "Pending", "waiting"),
            (0, "Running", "running"),
            (5, "Succeeded", "terminated"),
        ]


# --- CrashLoopBackOff -----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_crash_loop_back_off_on_the_api() -> None:
    async with kubelet() as (c, k):
        created = c.server.create(
            make_pod("web-0", annotations={RUN_DURATION_ANNOTATION: "1s", EXIT_CODE_ANNOTATION: "1"})
        )
        uid = created.metadata.uid
        await c.at(2.5)
        p = c.pod("web-0")
        cs = web(p)
        assert cs.state.waiting is not None
        assert (cs.state.waiting.reason, cs.state.waiting.message) == (
            "CrashLoopBackOff",
            f"back-off 10s restarting failed container=web pod=web-0_default({uid})",
        )
        assert (cs.restart_count, cs.ready, cs.started) == (1, False, False)
        assert cs.last_state.terminated is not None
        assert (cs.last_state.terminated.exit_code, cs.last_state.terminated.finished_at) == (1, t(2))
        assert p.status.phase == "Running"
        assert cond(p, "Ready") == ("False", "ContainersNotReady", "containers with unready status: [web]", t(2))
        [event] = [w.new for w in c.of("Event") if w.new.reason == "BackOff"]
        assert isinstance(event, Event)
        assert (event.type, event.reason, event.message) == (
            "Warning",
            "BackOff",
            f"Back-off restarting failed container web in pod web-0_default({uid})",
        )
        await c.at(12.5)
        p = c.pod("web-0")
        assert (web(p).restart_count, web(p).ready) == (2, True)
        assert cond(p, "Ready") == ("True", "", "", t(12))
        # the status writes: running, exit (terminated), restart 1 at once, exit into back-off, restart 2
        assert phases(c, "web-0") == [
            (0, "Pending", "waiting"),
            (0, "Running", "running"),
            (1, "Running", "terminated"),
            (1, "Running", "running"),
            (2, "Running", "waiting"),
            (12, "Running", "running"),
        ]
        await c.at(1000)
        # each run lasts 1 s; the waits before restarts are 0, 10, 20, 40, 80, 160, 300, 300 s
        starts = [time for time, _, state in phases(c, "web-0") if state == "running"]
        assert starts == [0, 1, 12, 33, 74, 155, 316, 617, 918]
        assert (web(c.pod("web-0")).restart_count, k.statistics()["backoffs"]) == (8, 8)  # the 8th wait began at 919


@pytest.mark.asyncio
async def test_back_off_message_shows_go_durations() -> None:
    async with kubelet() as (c, _):
        c.server.create(make_pod("web-0", annotations={RUN_DURATION_ANNOTATION: "1s", EXIT_CODE_ANNOTATION: "1"}))
        messages: list[str] = []
        await c.at(1200)
        for w in c.of("Pod", "web-0", "updateStatus"):
            waiting = web(w.new).state.waiting
            if waiting is not None and waiting.reason == "CrashLoopBackOff":
                messages.append(waiting.message.split(" restarting")[0])
        assert messages[:7] == [f"back-off {d}" for d in ("10s", "20s", "40s", "1m20s", "2m40s", "5m0s", "5m0s")]


# --- ready-after ----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_ready_after_delays_the_ready_condition() -> None:
    async with kubelet() as (c, _):
        c.server.create(make_pod("web-0", annotations={READY_AFTER_ANNOTATION: "10s"}, containers=("web", "log")))
        await c.at(5)
        p = c.pod("web-0")
        assert p.status.phase == "Running"
        message = "containers with unready status: [web log]"
        assert cond(p, "Ready") == ("False", "ContainersNotReady", message, t(0))
        assert cond(p, "ContainersReady") == ("False", "ContainersNotReady", message, t(0))
        assert cond(p, "Initialized")[0] == "True"
        assert [(cs.name, cs.ready, cs.started) for cs in p.status.container_statuses] == [
            ("log", False, True),
            ("web", False, True),
        ]
        await c.at(15)
        p = c.pod("web-0")
        assert cond(p, "Ready") == ("True", "", "", t(10))
        assert [(cs.ready, cs.started) for cs in p.status.container_statuses] == [(True, True), (True, True)]
        assert [w.time for w in c.of("Pod", "web-0", "updateStatus")] == [0, 0, 10]


@pytest.mark.asyncio
async def test_back_off_resets_after_ten_minutes_of_running() -> None:
    async with kubelet() as (c, k):
        c.server.create(make_pod("web-0", annotations={RUN_DURATION_ANNOTATION: "601s", EXIT_CODE_ANNOTATION: "1"}))
        await c.at(1900)
        starts = [time for time, _, state in phases(c, "web-0") if state == "running"]
        assert starts == [0, 601, 1202, 1803]  # every run was stable: every restart at once
        assert (web(c.pod("web-0")).restart_count, k.statistics()["backoffs"]) == (3, 0)


@pytest.mark.asyncio
async def test_deleting_a_crash_looping_pod_stops_its_timer() -> None:
    async with kubelet() as (c, k):
        c.server.create(make_pod("web-0", annotations={RUN_DURATION_ANNOTATION: "1s", EXIT_CODE_ANNOTATION: "1"}))
        await c.at(5)  # waiting in CrashLoopBackOff until 12
        c.server.delete("Pod", "web-0", "default")
        await c.at(60)
        assert c.pods() == []
        assert [w.time for w in c.of("Pod", "web-0", "updateStatus") if w.time > 5] == []
        stats = k.statistics()
        assert (stats["active"], stats["terminated"], stats["running"]) == (0, 1, 0)


@pytest.mark.asyncio
async def test_a_restarted_kubelet_restarts_a_crash_looping_container_at_once() -> None:
    async with kubelet() as (c, _):
        c.server.create(make_pod("web-0", annotations={RUN_DURATION_ANNOTATION: "1s", EXIT_CODE_ANNOTATION: "1"}))
        await c.at(5)  # waiting in CrashLoopBackOff until 12, restartCount 1
        c.task(f"kubelet:{NODE}").cancel()
        await c.at(8)
        again = Kubelet(
            c.client(f"kubelet:{NODE}:again"), NODE, c.clock, c.rng(9), KubeletSettings(heartbeat_interval=0)
        )
        await c.start(again, f"kubelet:{NODE}:again")
        await c.at(8.5)
        cs = web(c.pod("web-0"))
        assert cs.state.running is not None  # the back-off was forgotten with the old kubelet
        assert (cs.restart_count, cs.state.running.started_at) == (2, t(8))
        assert cs.last_state.terminated is not None
        assert (cs.last_state.terminated.exit_code, cs.last_state.terminated.finished_at) == (1, t(2))
        assert again.statistics()["admitted"] == 1
