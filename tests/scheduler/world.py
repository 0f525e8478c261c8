"""A small world for scheduler tests: API server, virtual clock, one scheduler, no kubelets."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from agents.scheduler.config import load_config
from agents.scheduler.registry import in_tree_registry
from agents.scheduler.scheduler import Scheduler, SchedulerOptions
from emulator.api.codec import convert
from emulator.api.core import Namespace, Node, Pod
from emulator.api.meta import ObjectMeta
from emulator.apiserver.server import ApiServer
from emulator.client.client import Client, Latency
from emulator.runtime.clock import LoopClock


def node(name: str, cpu: str = "4", memory: str = "32Gi", pods: str = "110", **labels: str) -> Node:
    return convert(
        {
            "metadata": {"name": name, "labels": labels},
            "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": pods}},
        },
        Node,
    )


def pod(name: str, cpu: str = "100m", memory: str = "100Mi", **extra: Any) -> Pod:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]
    }
    spec.update(extra.pop("spec", {}))
    doc: dict[str, Any] = {"metadata": {"name": name, **extra.pop("metadata", {})}, "spec": spec}
    return convert(doc, Pod)


class World:
    def __init__(self, server: ApiServer, clock: LoopClock, scheduler: Scheduler, client: Client) -> None:
        self.server = server
        self.clock = clock
        self.scheduler = scheduler
        self.client = client

    def pods(self) -> list[Pod]:
        return self.server.list("Pod")[0]

    def pod(self, name: str) -> Pod:
        return self.server.get("Pod", name, "default")

    async def until(self, cond: Callable[[], bool], within: float = 600.0, step: float = 0.01) -> float:
        deadline = self.clock.now() + within
        while not cond():
            if self.clock.now() >= deadline:
                raise AssertionError(f"condition not met by t={self.clock.now():g}")
            await self.clock.sleep(step)
        return self.clock.now()


@asynccontextmanager
async def world(
    *,
    config: Mapping[str, Any] | None = None,
    options: SchedulerOptions | None = None,
    seed: int = 0,
    api_latency: float = 0.0,
    registry: Mapping[str, Any] | None = None,
    setup: Callable[[ApiServer], Awaitable[None]] | None = None,
) -> Any:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    server = ApiServer(clock, random.Random(seed))
    for ns in ("default", "kube-system"):
        server.create(Namespace(metadata=ObjectMeta(name=ns)))
    reg = dict(in_tree_registry())
    reg.update(registry or {})
    cfg = load_config(config, reg)
    client = Client(server, clock, random.Random(seed + 1), name="scheduler", api_latency=Latency(api_latency))
    sched = Scheduler(
        client=client,
        clock=clock,
        rng=random.Random(seed + 2),
        profiles=[p.to_spec() for p in cfg.profiles],
        registry=reg,
        options=options or SchedulerOptions(),
    )
    if setup is not None:
        await setup(server)
    task = asyncio.get_running_loop().create_task(sched.run(), name="test:scheduler")
    await sched.ready.wait()
    try:
        yield World(server, clock, sched, client)
    finally:
        task.cancel()
        await asyncio.wait([task])
