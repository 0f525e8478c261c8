"""A test world for the ReplicaSet and Deployment controllers: a cluster on virtual time,
the named workload controllers started as the scenario runner starts them, builders for
ReplicaSets and Deployments, and a fake kubelet that makes pods Ready.

Owns: what the replicaset and deployment tests share. Pods are never bound (no scheduler),
so a deleted pod is gone at once; ``Readiness`` stands in for the kubelet, writing
``Running`` and ``Ready=True`` through ``update_status`` once a pod is ``delay`` seconds old
(polling on the virtual clock).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from agents.controllers.manager import WorkloadController, start_workload_controllers
from emulator.base.api.apps import (
    Deployment,
    DeploymentSpec,
    DeploymentStrategy,
    ReplicaSet,
    ReplicaSetSpec,
    RollingUpdateDeployment,
)
from emulator.base.api.core import Container, LabelSelector, Pod, PodCondition, PodSpec, PodStatus
from emulator.base.api.intstr import IntOrString
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.runtime.clock import parse_timestamp
from tests.cluster import Cluster, open_cluster

__all__ = ["AppsWorld", "Readiness", "apps_world", "deployment", "replicaset", "template"]


def template(labels: Mapping[str, str], *, image: str = "nginx:1.27") -> PodTemplateSpec:
    return PodTemplateSpec(
        metadata=ObjectMeta(labels=dict(labels)),
        spec=PodSpec(containers=[Container(name="c", image=image)]),
    )


def replicaset(
    name: str,
    replicas: int | None,
    *,
    labels: Mapping[str, str] | None = None,
    min_ready_seconds: int = 0,
    namespace: str = "default",
) -> ReplicaSet:
    labels = dict(labels or {"app": name})
    return ReplicaSet(
        metadata=ObjectMeta(name=name, namespace=namespace, labels=labels),
        spec=ReplicaSetSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=labels),
            template=template(labels),
            min_ready_seconds=min_ready_seconds,
        ),
    )


def deployment(
    name: str,
    replicas: int,
    *,
    labels: Mapping[str, str] | None = None,
    image: str = "nginx:1.27",
    strategy: str = "RollingUpdate",
    max_surge: IntOrString | None = None,
    max_unavailable: IntOrString | None = None,
    min_ready_seconds: int = 0,
    revision_history_limit: int | None = None,
    progress_deadline_seconds: int | None = None,
    paused: bool = False,
) -> Deployment:
    labels = dict(labels or {"app": name})
    rolling = (
        RollingUpdateDeployment(max_surge=max_surge, max_unavailable=max_unavailable)
        if strategy == "RollingUpdate"
        else None
    )
    return Deployment(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=DeploymentSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=labels),
            template=template(labels, image=image),
            strategy=DeploymentStrategy(type=strategy, rolling_update=rolling),
            min_ready_seconds=min_ready_seconds,
            revision_history_limit=revision_history_limit,
            progress_deadline_seconds=progress_deadline_seconds,
            paused=paused,
        ),
    )


def ready_status(pod: Pod, now: str) -> PodStatus:
    cond = PodCondition(type="Ready", status="True", last_transition_time=now)
    return replace(
        pod.status,
        phase="Running",
        conditions=[*(c for c in pod.status.conditions if c.type != "Ready"), cond],
    )


@dataclass
class Readiness:
    """The fake kubelet: pods older than ``delay`` seconds become Running and Ready;
    ``hold`` names pods (by prefix) that never do."""

    cluster: Cluster
    delay: float = 1.0
    period: float = 0.5
    hold: set[str] = field(default_factory=set)

    async def run(self) -> None:
        c = self.cluster
        while True:
            now = c.clock.now()
            for p in c.pods():
                meta = p.metadata
                if meta.deletion_timestamp is not None or any(meta.name.startswith(h) for h in self.hold):
                    continue
                if any(x.type == "Ready" and x.status == "True" for x in p.status.conditions):
                    continue
                if meta.creation_timestamp and parse_timestamp(meta.creation_timestamp) + self.delay <= now:
                    c.server.update_status(replace(p, status=ready_status(p, c.clock.timestamp())))
            await c.clock.sleep(self.period)


@dataclass
class AppsWorld:
    cluster: Cluster
    controllers: list[WorkloadController]

    def controller(self, name: str) -> Any:
        return next(c for c in self.controllers if c.client.name == f"controller:{name}")

    def get(self, kind: str, name: str) -> Any:
        return self.cluster.server.get(kind, name, "default")

    def pods(self, prefix: str = "") -> list[Pod]:
        return [p for p in self.cluster.pods() if p.metadata.name.startswith(prefix)]

    def events(self, reason: str | None = None) -> list[tuple[str, str]]:
        """(reason, message) of the Events written, in order."""
        return [
            (w.obj.reason, w.obj.message)
            for w in self.cluster.of("Event", verb="create")
            if reason is None or w.obj.reason == reason
        ]

    async def readiness(self, delay: float = 1.0, *, hold: set[str] | None = None) -> Readiness:
        r = Readiness(self.cluster, delay, hold=hold or set())
        self.cluster.spawn(r.run(), "readiness")
        return r


@asynccontextmanager
async def apps_world(
    *names: str, seed: int = 0, api_latency: float = 0.0, watch_latency: float = 0.0
) -> AsyncIterator[AppsWorld]:
    """A cluster with the named workload controllers (default: replicaset, deployment)."""
    async with open_cluster(seed=seed, namespaces=("default",)) as c:
        controllers: list[WorkloadController] = []
        started = asyncio.Event()

        async def run() -> None:
            async with asyncio.TaskGroup() as tg:
                controllers.extend(
                    start_workload_controllers(
                        tg,
                        c.clock,
                        lambda n: c.client(n, api_latency=api_latency, watch_latency=watch_latency),
                        list(names or ("replicaset", "deployment")),
                    )
                )
                started.set()

        c.spawn(run(), "controllers")
        await started.wait()
        yield AppsWorld(c, controllers)
