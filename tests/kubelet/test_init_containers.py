"""Init containers and sidecars through the API, on virtual time: one after another with
``emulator.k8s.io/init-duration``, the ``Initialized`` condition, sidecars running beside
the containers until the pod's run ends, a failing init container by ``restartPolicy``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import pytest
from msgspec.structs import replace

from agents.kubelet import Kubelet, KubeletSettings
from agents.kubelet.lifecycle import INIT_DURATION_ANNOTATION, INIT_EXIT_CODE_ANNOTATION, RUN_DURATION_ANNOTATION
from emulator.base.api.core import ContainerStatus, Pod
from tests.builders import container, node, pod
from tests.cluster import Cluster, open_cluster

NODE = "node-1"
INITS = [container("migrate"), container("proxy", restart_policy="Always"), container("warm")]


def t(seconds: int) -> str:
    return f"2026-01-01T00:00:{seconds:02d}Z"


def make_pod(name: str, *, policy: str, annotations: Mapping[str, str]) -> Pod:
    p = pod(name, node=NODE, containers=[container("web")], init_containers=INITS, annotations=annotations)
    return replace(p, spec=replace(p.spec, restart_policy=policy))


@asynccontextmanager
async def kubelet() -> AsyncIterator[tuple[Cluster, Kubelet]]:
    async with open_cluster(namespaces=("default", "kube-node-lease")) as c:
        c.server.create(node(NODE, cpu="4", memory="8Gi"))
        k = await c.start_kubelet(NODE, KubeletSettings(heartbeat_interval=0))
        yield c, k


def shape(cs: ContainerStatus) -> tuple[str, str, bool, bool | None]:
    """(name, state kind and reason, ready, started)."""
    s = cs.state
    kind = (
        f"waiting:{s.waiting.reason}"
        if s.waiting
        else f"terminated:{s.terminated.exit_code}:{s.terminated.reason}"
        if s.terminated
        else "running"
    )
    return cs.name, kind, cs.ready, cs.started


def initialized(p: Pod) -> tuple[str, str, str, str | None]:
    c = next(c for c in p.status.conditions if c.type == "Initialized")
    return c.status, c.reason, c.message, c.last_transition_time


@pytest.mark.asyncio
async def test_init_containers_run_one_after_another() -> None:
    async with kubelet() as (c, _):
        c.server.create(make_pod("web-0", policy="Always", annotations={INIT_DURATION_ANNOTATION: "5s"}))
        await c.at(2)
        p = c.pod("web-0")
        assert p.status.phase == "Pending"
        assert [shape(cs) for cs in p.status.init_container_statuses] == [
            ("migrate", "running", False, True),
            ("proxy", "waiting:PodInitializing", False, False),
            ("warm", "waiting:PodInitializing", False, False),
        ]
        assert [shape(cs) for cs in p.status.container_statuses] == [("web", "waiting:PodInitializing", False, False)]
        message = "containers with incomplete status: [migrate proxy warm]"
        assert initialized(p) == ("False", "ContainersNotInitialized", message, t(0))
        await c.at(7)
        p = c.pod("web-0")
        assert [shape(cs) for cs in p.status.init_container_statuses] == [
            ("migrate", "terminated:0:Completed", True, False),
            ("proxy", "running", True, True),  # a sidecar starts and the next one runs
            ("warm", "running", False, True),
        ]
        assert initialized(p)[2] == "containers with incomplete status: [warm]"
        await c.at(12)
        p = c.pod("web-0")
        assert p.status.phase == "Running"
        assert initialized(p) == ("True", "", "", t(10))
        [web] = p.status.container_statuses
        assert web.state.running is not None
        assert (web.state.running.started_at, web.ready) == (t(10), True)
        assert p.status.init_container_statuses[1].state.running is not None  # the sidecar keeps running
        assert [w.time for w in c.of("Pod", "web-0", "updateStatus")] == [0, 0, 5, 10]


@pytest.mark.asyncio
async def test_a_job_pod_with_a_sidecar_completes() -> None:
    async with kubelet() as (c, k):
        c.server.create(make_pod("job-0", policy="OnFailure", annotations={RUN_DURATION_ANNOTATION: "5s"}))
        await c.at(6)
        p = c.pod("job-0")
        assert p.status.phase == "Succeeded"
        assert [shape(cs) for cs in p.status.init_container_statuses] == [
            ("migrate", "terminated:0:Completed", True, False),
            ("proxy", "terminated:0:Completed", False, False),
            ("warm", "terminated:0:Completed", True, False),
        ]
        assert k.statistics()["succeeded"] == 1


@pytest.mark.asyncio
async def test_a_failing_init_container_fails_a_never_pod() -> None:
    notes = {INIT_DURATION_ANNOTATION: "5s", INIT_EXIT_CODE_ANNOTATION: "3"}
    async with kubelet() as (c, k):
        c.server.create(make_pod("job-0", policy="Never", annotations=notes))
        await c.at(6)
        p = c.pod("job-0")
        assert p.status.phase == "Failed"
        assert [shape(cs) for cs in p.status.init_container_statuses] == [
            ("migrate", "terminated:3:Error", False, False),
            ("proxy", "waiting:PodInitializing", False, False),
            ("warm", "waiting:PodInitializing", False, False),
        ]
        assert initialized(p)[:3] == (
            "False",
            "ContainersNotInitialized",
            "containers with incomplete status: [migrate proxy warm]",
        )
        ready = next(x for x in p.status.conditions if x.type == "Ready")
        assert (ready.status, ready.reason) == ("False", "PodFailed")
        assert (k.statistics()["failed"], k.statistics()["active"]) == (1, 0)


@pytest.mark.asyncio
async def test_a_failing_init_container_backs_off_and_the_pod_stays_pending() -> None:
    notes = {INIT_DURATION_ANNOTATION: "5s", INIT_EXIT_CODE_ANNOTATION: "1"}
    async with kubelet() as (c, _):
        created = c.server.create(make_pod("web-0", policy="Always", annotations=notes))
        await c.at(12)
        p = c.pod("web-0")
        assert p.status.phase == "Pending"
        migrate = p.status.init_container_statuses[0]
        assert migrate.state.waiting is not None
        assert (migrate.state.waiting.reason, migrate.state.waiting.message, migrate.restart_count) == (
            "CrashLoopBackOff",
            f"back-off 10s restarting failed container=migrate pod=web-0_default({created.metadata.uid})",
            1,
        )
        assert [w.new.reason for w in c.of("Event") if w.new.reason == "BackOff"] == ["BackOff"]
