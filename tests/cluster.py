"""The one test cluster: an API server on the virtual clock, seeded clients, and agents
(schedulers, kubelets, controllers) run as named tasks of one task group.

Owns: the parts every agent-level test world had in common -- the clock, the server with
its namespaces, the write log, clients with seeded RNG streams, starting an agent and
waiting for its ``ready`` handshake, stopping everything at the end, and waiting on the
virtual clock (``at``, ``until``). ``start_scheduler`` and ``start_kubelet`` build those two
agents the way the runner does (in-tree registry, ``load_config``).

Does not own: what a test puts in the cluster (``tests/builders.py``), assertions about
one agent (a test module's thin layer over this one), whole scenarios (the runner).

RNG streams: the server draws from ``Random(seed)``; each call of ``rng()`` (and so each
``client()``, then each agent's own stream) takes the next of ``Random(seed + 1)``,
``Random(seed + 2)``, ...; a test that needs a fixed stream passes ``rng_seed``.

Tasks: a supervisor task owns the task group, so a cluster can be opened in a fixture's
setup and closed in its teardown (pytest-asyncio runs those in different tasks, which a
task group entered in one and left in the other would not survive). An agent that fails
makes the next ``at``/``until`` raise, and ``close`` re-raise, its error; closing cancels
every agent and waits for it.

    async with open_cluster(seed=3) as c:
        c.server.create(node("n1"))
        kubelet = await c.start_kubelet("n1")
        await c.at(30.0)
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Protocol

from agents.kubelet import Kubelet, KubeletSettings
from agents.scheduler.config import load_config
from agents.scheduler.registry import in_tree_registry
from agents.scheduler.scheduler import Scheduler, SchedulerOptions
from emulator.base.api.core import Namespace, Node, Pod
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.server import ApiServer, ServerSettings, WriteRecord
from emulator.base.client.client import Client, Latency
from emulator.base.runtime.clock import LoopClock

__all__ = ["NAMESPACES", "Agent", "Cluster", "open_cluster"]

NAMESPACES = ("default", "kube-system", "kube-node-lease")


class Agent(Protocol):
    ready: asyncio.Event

    def run(self) -> Coroutine[Any, Any, None]: ...


class Cluster:
    """An API server, its clock and write log, and the agents started on it."""

    def __init__(
        self, *, seed: int = 0, settings: ServerSettings | None = None, namespaces: Iterable[str] = NAMESPACES
    ) -> None:
        self.seed = seed
        self.clock = LoopClock(asyncio.get_running_loop(), virtual=True)
        self.server = ApiServer(self.clock, random.Random(seed), settings)
        for ns in namespaces:
            self.server.create(Namespace(metadata=ObjectMeta(name=ns)))
        self.writes: list[WriteRecord] = []
        self.server.add_write_listener(self.writes.append)
        self._streams = 0
        self._group: asyncio.TaskGroup | None = None
        self._opened = asyncio.Event()
        self._stopped = asyncio.Event()
        self._supervisor: asyncio.Task[None] | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def __repr__(self) -> str:
        return f"<Cluster seed={self.seed} t={self.clock.now():g} writes={len(self.writes)}>"

    # --- lifecycle ----------------------------------------------------------------------------

    async def open(self) -> None:
        self._supervisor = asyncio.get_running_loop().create_task(self._supervise(), name="test:cluster")
        await self._opened.wait()

    async def _supervise(self) -> None:
        async with asyncio.TaskGroup() as tg:
            self._group = tg
            self._opened.set()
            await self._stopped.wait()
            for task in self._tasks.values():
                task.cancel()

    async def close(self) -> None:
        """Cancel every agent and wait for them; re-raise what one of them raised."""
        sup = self._supervisor
        if sup is None:
            return
        self._stopped.set()
        await asyncio.wait([sup])
        self._check()

    def _check(self) -> None:
        sup = self._supervisor
        if sup is not None and sup.done() and not sup.cancelled() and (exc := sup.exception()) is not None:
            raise exc

    # --- agents -------------------------------------------------------------------------------

    def rng(self, rng_seed: int | None = None) -> random.Random:
        """The next seeded stream (``Random(seed + 1)``, ``+ 2``...), or ``Random(rng_seed)``."""
        if rng_seed is not None:
            return random.Random(rng_seed)
        self._streams += 1
        return random.Random(self.seed + self._streams)

    def client(
        self,
        name: str,
        *,
        api_latency: Latency | float = 0.0,
        watch_latency: Latency | float = 0.0,
        rng_seed: int | None = None,
    ) -> Client:
        def latency(v: Latency | float) -> Latency:
            return v if isinstance(v, Latency) else Latency(v)

        return Client(
            self.server,
            self.clock,
            self.rng(rng_seed),
            name=name,
            api_latency=latency(api_latency),
            watch_latency=latency(watch_latency),
        )

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Run ``coro`` as task ``cluster:<name>`` of the cluster's task group."""
        if self._group is None:
            raise RuntimeError("open the cluster first (open_cluster or the cluster fixture)")
        if name in self._tasks:
            raise ValueError(f"a task named {name!r} is already running")
        task = self._tasks[name] = self._group.create_task(coro, name=f"cluster:{name}")
        return task

    def task(self, name: str) -> asyncio.Task[None]:
        """The task spawned (or started) as ``name``."""
        return self._tasks[name]

    async def start(self, agent: Agent, name: str) -> asyncio.Task[None]:
        """Spawn ``agent.run()`` and wait until it says it is ready."""
        task = self.spawn(agent.run(), name)
        ready = asyncio.get_running_loop().create_task(agent.ready.wait(), name=f"test:ready:{name}")
        await asyncio.wait([ready, task], return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            await asyncio.wait([ready])
            self._check()
            raise AssertionError(f"{name} ended before it was ready")
        return task

    async def start_scheduler(
        self,
        *,
        config: Mapping[str, Any] | None = None,
        options: SchedulerOptions | None = None,
        registry: Mapping[str, Any] | None = None,
        name: str = "scheduler",
        api_latency: Latency | float = 0.0,
    ) -> Scheduler:
        """A kube-scheduler with the in-tree plugins plus ``registry``, configured by ``config``."""
        reg = dict(in_tree_registry())
        reg.update(registry or {})
        cfg = load_config(config, reg)
        sched = Scheduler(
            client=self.client(name, api_latency=api_latency),
            clock=self.clock,
            rng=self.rng(),
            profiles=[p.to_spec() for p in cfg.profiles],
            registry=reg,
            options=options or SchedulerOptions(),
        )
        await self.start(sched, name)
        return sched

    async def start_kubelet(
        self,
        node: str,
        settings: KubeletSettings | None = None,
        *,
        api_latency: Latency | float = 0.0,
        watch_latency: Latency | float = 0.0,
        client_seed: int | None = None,
        rng_seed: int | None = None,
    ) -> Kubelet:
        """A kubelet for the (already created) node ``node``; no heartbeats unless ``settings`` say."""
        client = self.client(
            f"kubelet:{node}", api_latency=api_latency, watch_latency=watch_latency, rng_seed=client_seed
        )
        kubelet = Kubelet(
            client, node, self.clock, self.rng(rng_seed), settings or KubeletSettings(heartbeat_interval=0)
        )
        await self.start(kubelet, f"kubelet:{node}")
        return kubelet

    # --- reading and waiting ------------------------------------------------------------------

    def pod(self, name: str, namespace: str = "default") -> Pod:
        got: Pod = self.server.get("Pod", name, namespace)
        return got

    def node(self, name: str) -> Node:
        got: Node = self.server.get("Node", name)
        return got

    def pods(self) -> list[Pod]:
        return list(self.server.list("Pod")[0])

    def of(self, kind: str, name: str | None = None, verb: str | None = None) -> list[WriteRecord]:
        """The writes to objects of ``kind`` (named ``name``, by ``verb``), in order."""
        return [
            w
            for w in self.writes
            if w.kind == kind and (name is None or w.obj.metadata.name == name) and (verb is None or w.verb == verb)
        ]

    async def at(self, t: float) -> None:
        """Let the cluster run until simulated time ``t``."""
        await self.clock.sleep_until(t)
        self._check()

    async def until(self, cond: Callable[[], bool], within: float = 600.0, step: float = 0.01) -> float:
        """Poll ``cond`` every ``step`` s; the time it held, or AssertionError after ``within`` s."""
        deadline = self.clock.now() + within
        while not cond():
            self._check()
            if self.clock.now() >= deadline:
                raise AssertionError(f"condition not met by t={self.clock.now():g}")
            await self.clock.sleep(step)
        return self.clock.now()


@asynccontextmanager
async def open_cluster(
    *, seed: int = 0, settings: ServerSettings | None = None, namespaces: Iterable[str] = NAMESPACES
) -> AsyncIterator[Cluster]:
    """A ``Cluster`` open for the ``with`` block; its agents are stopped at the end."""
    cluster = Cluster(seed=seed, settings=settings, namespaces=namespaces)
    await cluster.open()
    try:
        yield cluster
    finally:
        await cluster.close()


class OnCluster:
    """Base of a test's world built on a shared ``Cluster``: its ``clock``, ``server`` and
    ``writes`` are the cluster's (the subclass sets ``cluster``)."""

    cluster: Cluster

    @property
    def clock(self) -> LoopClock:
        return self.cluster.clock

    @property
    def server(self) -> ApiServer:
        return self.cluster.server

    @property
    def writes(self) -> list[WriteRecord]:
        return self.cluster.writes
