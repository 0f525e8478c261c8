"""A small world for scheduler tests: the shared cluster (``tests/cluster.py``) with one
scheduler and no kubelets, and this directory's pod defaults (100m, 100Mi).

Owns only what scheduler tests add to the cluster: the ``world`` context (config, options,
a setup hook that runs before the scheduler starts) and ``pod`` with requests by default.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from agents.scheduler.scheduler import Scheduler, SchedulerOptions
from emulator.base.api.core import Pod
from emulator.base.apiserver.server import ApiServer
from emulator.base.client.client import Client
from tests import builders
from tests.builders import node
from tests.cluster import Cluster, OnCluster, open_cluster

__all__ = ["World", "node", "pod", "world"]


def pod(name: str, cpu: str = "100m", memory: str = "100Mi", **kw: Any) -> Pod:
    """``tests.builders.pod`` asking 100m and 100Mi unless told otherwise."""
    return builders.pod(name, cpu=cpu, memory=memory, **kw)


class World(OnCluster):
    """The cluster and its scheduler (whose client is ``client``)."""

    def __init__(self, cluster: Cluster, scheduler: Scheduler) -> None:
        self.cluster = cluster
        self.scheduler = scheduler

    @property
    def client(self) -> Client:
        return self.scheduler.client

    def pods(self) -> list[Pod]:
        return self.cluster.pods()

    def pod(self, name: str) -> Pod:
        return self.cluster.pod(name)

    async def until(self, cond: Callable[[], bool], within: float = 600.0, step: float = 0.01) -> float:
        return await self.cluster.until(cond, within, step)


@asynccontextmanager
async def world(
    *,
    config: Mapping[str, Any] | None = None,
    options: SchedulerOptions | None = None,
    seed: int = 0,
    api_latency: float = 0.0,
    registry: Mapping[str, Any] | None = None,
    setup: Callable[[ApiServer], Awaitable[None]] | None = None,
) -> AsyncIterator[World]:
    async with open_cluster(seed=seed, namespaces=("default", "kube-system")) as c:
        if setup is not None:
            await setup(c.server)
        sched = await c.start_scheduler(config=config, options=options, registry=registry, api_latency=api_latency)
        yield World(c, sched)
