"""The test world of the job, cronjob and ttlafterfinished controller tests: a cluster on
virtual time with the named workload controllers started as the manager starts them, and a
stand-in for the kubelet (``finish``: set a pod's phase through ``update_status``, as the
kubelet would when its container exits)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from agents.controllers.manager import WorkloadController, start_workload_controllers
from emulator.base.api.batch import CronJob, CronJobSpec, Job, JobCondition, JobSpec, JobTemplateSpec
from emulator.base.api.core import ContainerState, ContainerStateTerminated, ContainerStatus, Pod, PodCondition, PodSpec
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.podtemplate import PodTemplateSpec
from tests.builders import container
from tests.cluster import Cluster, OnCluster, open_cluster

__all__ = ["World", "cronjob", "finish_job", "job", "world"]


def _template(restart_policy: str) -> PodTemplateSpec:
    return PodTemplateSpec(
        metadata=ObjectMeta(labels={"app": "batch"}),
        spec=PodSpec(containers=[container()], restart_policy=restart_policy),
    )


def job(name: str, *, restart_policy: str = "Never", **spec: Any) -> Job:
    return Job(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=JobSpec(template=_template(restart_policy), **spec),
    )


def cronjob(name: str, schedule: str, *, job_spec: dict[str, Any] | None = None, **spec: Any) -> CronJob:
    return CronJob(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=CronJobSpec(
            schedule=schedule,
            job_template=JobTemplateSpec(spec=JobSpec(template=_template("Never"), **(job_spec or {}))),
            **spec,
        ),
    )


@dataclass
class World(OnCluster):
    cluster: Cluster
    controllers: list[WorkloadController]
    max_active: dict[str, int] = field(default_factory=dict)

    def pods(self) -> list[Pod]:
        return sorted(self.cluster.pods(), key=lambda p: p.metadata.name)

    def active(self, owner: str | None = None) -> list[Pod]:
        return [
            p
            for p in self.pods()
            if p.status.phase not in ("Succeeded", "Failed")
            and p.metadata.deletion_timestamp is None
            and (owner is None or p.metadata.owner_references[0].name == owner)
        ]

    def job(self, name: str) -> Job:
        got: Job = self.server.get("Job", name, "default")
        return got

    def events(self, reason: str | None = None) -> list[tuple[str, str, str]]:
        evs = self.server.list("Event")[0]
        out = [(e.involved_object.name, e.reason, e.message) for e in evs if reason is None or e.reason == reason]
        return out

    def conditions(self, name: str) -> list[tuple[str, str, str]]:
        return [(c.type, c.status, c.reason) for c in self.job(name).status.conditions]

    async def finish(self, pod: Pod, phase: str = "Succeeded", exit_code: int | None = None) -> None:
        """Set ``pod``'s phase as a kubelet would after its container exited."""
        current: Pod = self.server.get("Pod", pod.metadata.name, pod.metadata.namespace)
        code = exit_code if exit_code is not None else (0 if phase == "Succeeded" else 1)
        terminated = ContainerStateTerminated(exit_code=code, finished_at=self.clock.timestamp())
        status = replace(
            current.status,
            phase=phase,
            container_statuses=[ContainerStatus(name="c", state=ContainerState(terminated=terminated))],
        )
        self.server.update_status(replace(current, status=status))

    async def make_ready(self, pod: Pod) -> None:
        current: Pod = self.server.get("Pod", pod.metadata.name, pod.metadata.namespace)
        ready = PodCondition(type="Ready", status="True", last_transition_time=self.clock.timestamp())
        status = replace(current.status, phase="Running", conditions=[ready])
        self.server.update_status(replace(current, status=status))

    async def finish_all(self, owner: str | None = None, phase: str = "Succeeded") -> int:
        pods = self.active(owner)
        for p in pods:
            await self.finish(p, phase)
        return len(pods)

    def track_active(self) -> None:
        """Record the most active pods of each owner seen after any write (from the log)."""
        active: dict[str, set[str]] = {}
        for w in self.writes:
            if w.kind != "Pod":
                continue
            p = w.new if w.new is not None else w.obj
            owner = p.metadata.owner_references[0].name if p.metadata.owner_references else ""
            new = w.new
            live = new is not None and new.status.phase not in ("Succeeded", "Failed")
            live = live and not new.metadata.deletion_timestamp
            names = active.setdefault(owner, set())
            if live:
                names.add(p.metadata.name)
            else:
                names.discard(p.metadata.name)
            self.max_active[owner] = max(self.max_active.get(owner, 0), len(names))


@asynccontextmanager
async def world(*objects: Any, names: Sequence[str] = ("job",)) -> AsyncIterator[World]:
    async with open_cluster(namespaces=("default",)) as c:
        for obj in objects:
            c.server.create(obj)
        started: list[WorkloadController] = []
        ready = asyncio.Event()

        async def run() -> None:
            async with asyncio.TaskGroup() as tg:
                started.extend(start_workload_controllers(tg, c.clock, c.client, names))
                ready.set()

        c.spawn(run(), "controllers")
        await ready.wait()
        yield World(c, started)


async def finish_job(w: World, name: str, kind: str = "Complete", started: float | None = None) -> None:
    """Set Job ``name`` finished (``Complete`` or ``Failed``) as the job controller would."""
    current = w.job(name)
    now = w.clock.timestamp()
    cond = JobCondition(type=kind, status="True", reason="Test", last_transition_time=now, last_probe_time=now)
    status = replace(
        current.status,
        conditions=[*current.status.conditions, cond],
        start_time=w.clock.timestamp(started) if started is not None else current.status.start_time or now,
        completion_time=now if kind == "Complete" else None,
    )
    w.server.update_status(replace(current, status=status))
