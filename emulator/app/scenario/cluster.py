"""The live cluster of one run (``Cluster``): the API server, the clock, the seeds, the
agents it starts (kubelets, controllers, schedulers through ``scenario.schedulers``; the timed
faults through ``timedfaults``) and the runner's own API calls (create, delete, scale, update,
cordon; drain through ``drain``, waitFor through ``waitfor``), each retried as a controller
would.

It does not own the order of a run, the settle rule, the report or the expectations
(``runner``), nor what the loader foresees (``loader``). The runner's retry policy is here:
an ``InternalError`` on its own calls (only a fault makes one) is retried with backoff
(``RUNNER_RETRY``: 0.5 s, 1 s, 2 s ... up to 10 s, 10 tries); so is a ``Conflict`` on
create, and a ``Conflict`` on the update of ``cordon``, ``scale`` and ``update`` re-reads the
object first (``CORDON_RETRY``). A refused write it cannot retry is a ``StepError`` naming the step.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

from msgspec.structs import replace

from agents.kubelet import DEFAULT_NODE_STATUS_REPORT_FREQUENCY, Kubelet, KubeletSettings, Ticker, default_labels
from emulator.app.scenario.drain import drain
from emulator.app.scenario.drivers import has_devices
from emulator.app.scenario.faults import FaultPlan
from emulator.app.scenario.monitor import ControllersReport, PodActivity
from emulator.app.scenario.patch import patched
from emulator.app.scenario.schema import (
    Cordon,
    Create,
    CreateNodes,
    CreatePods,
    Delete,
    Drain,
    Fault,
    NodeFile,
    NodeGroup,
    Replay,
    Scale,
    Scenario,
    Sleep,
    Step,
    Uncordon,
    Update,
    WaitFor,
    load_rules,
)
from emulator.app.scenario.timedfaults import arm_fault
from emulator.app.scenario.trace_gpus import feature_gates
from emulator.app.scenario.waitfor import wait_for
from emulator.base.api.core import Namespace, Node
from emulator.base.api.errors import AlreadyExists, ApiError, Conflict, InternalError, NotFound
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.api.load import LoadModel
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import PriorityClass
from emulator.base.apiserver.server import ApiServer, ServerSettings
from emulator.base.client.client import Client, Latency
from emulator.base.client.kubeletplugins import KubeletPlugins
from emulator.base.client.retry import Backoff, on_error
from emulator.base.inputs import InputError
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.rng import Seeds

__all__ = ["CORDON_RETRY", "RUNNER_ATTEMPTS", "RUNNER_RETRY", "Cluster", "StepError"]

RUNNER_RETRY = Backoff(duration=0.5, factor=2.0, cap=10.0, steps=10)
"""The runner's waits after a failed call: 0.5 s doubling up to 10 s. It makes
``RUNNER_ATTEMPTS`` tries; client-go's rule would stop after the first capped wait."""
RUNNER_ATTEMPTS = 10
CORDON_RETRY = Backoff(steps=10)
"""``cordon``/``uncordon``: ten read-modify-writes back to back while the update conflicts."""
T = TypeVar("T")


class StepError(InputError):
    """The API server refused one of the runner's own writes: ``<file>: <path>: <detail>``; the path is a
    step (``steps[3].cordon``), ``objects``, ``nodes[i]`` or ``autoscaling.karpenter.nodePools[i]`` and the like."""


class Cluster:
    """The live cluster of one run: server, clock, seeds, agents."""

    def __init__(self, scenario: Scenario, seed: int, clock: LoopClock) -> None:
        self.explain: Callable[..., None] | None = None
        self.scenario = scenario
        self.clock = clock
        self.seeds = Seeds(seed)
        gates = tuple(feature_gates(scenario).items())  # gpuSharing: dra's alpha gate
        settings = ServerSettings(event_ttl=scenario.api_server.event_ttl, feature_gates=gates)
        self.server = ApiServer(clock, self.seeds.stream("apiserver"), settings)
        self.server.metrics.model = LoadModel(load_rules(scenario.load))
        lat = scenario.latency
        self.api_latency = Latency(lat.api.mean, lat.api.jitter)
        self.watch_latency = Latency(lat.watch.mean, lat.watch.jitter)
        self.faults = FaultPlan.from_scenario(scenario, self.seeds)
        self.client = self.new_client("runner")
        self._new_uids: dict[str, str] = {}
        """Manifest UID (from a dump) → the UID the API server gave the object."""
        k = scenario.kubelet
        self.dra_plugins = KubeletPlugins() if has_devices(scenario) else None
        """The DRA drivers' kubelet plugins per node (``dra``); None without ``devices``."""
        self.kubelet_settings = KubeletSettings(
            image_pull_bandwidth=k.image_pull_bandwidth,
            container_start=Latency(k.container_start.mean, k.container_start.jitter),
            termination=Latency(k.termination.mean, k.termination.jitter),
            heartbeat_interval=k.heartbeat_interval,
            node_status_report_frequency=(
                DEFAULT_NODE_STATUS_REPORT_FREQUENCY
                if k.node_status_report_frequency is None
                else k.node_status_report_frequency
            ),
            default_image_size=k.default_image_size,
            container_events=k.container_events,
            image_sizes=dict(scenario.images),
            faults=self.faults if self.faults is not None and self.faults.has_kubelet_faults else None,
            dra_plugins=self.dra_plugins,
        )
        self.kubelets: dict[str, asyncio.Task[None]] = {}
        self._ticker: Ticker | None = None
        self.agents: list[Any] = []
        self.autoscaler_cloud: Any = None  # the Cluster Autoscaler's ``autoscaling.SimulatedCloud``
        self._tg: asyncio.TaskGroup | None = None
        self.on_step: Callable[[int, Step], None] | None = None
        """Called as each step plays (after its ``at``): the observer's markers."""

    @property
    def standing_renewals_apply(self) -> bool:
        """Whether the kubelets may leave their Lease renewals to the API server
        (``ApiServer.stand_lease``): heartbeats on, no faults (their interceptors and kubelet
        hooks act on each call), no API or watch latency (each renewal would be a call in
        flight)."""
        lat, watch = self.api_latency, self.watch_latency
        return (
            self.kubelet_settings.heartbeat_interval > 0
            and self.faults is None
            and lat.mean <= 0
            and lat.jitter <= 0
            and watch.mean <= 0
            and watch.jitter <= 0
        )

    def new_client(self, name: str) -> Client:
        client = Client(
            self.server,
            self.clock,
            self.seeds.stream(f"client/{name}"),
            name=name,
            api_latency=self.api_latency,
            watch_latency=self.watch_latency,
        )
        if self.faults is not None:
            self.faults.attach(client)
        return client

    # --- agents -------------------------------------------------------------------------

    def start_kubelet(self, node: str) -> None:
        assert self._tg is not None
        if node in self.kubelets:
            return
        if self._ticker is None:  # one heap and task for every kubelet's heartbeats
            self._ticker = Ticker(self.clock, "kubelet:heartbeats")
            self._tg.create_task(self._ticker.run(), name="kubelet:heartbeats")
        kubelet = Kubelet(
            self.new_client(f"kubelet:{node}"),
            node,
            self.clock,
            self.seeds.stream(f"kubelet/{node}"),
            self.kubelet_settings,
            ticker=self._ticker,
        )
        self.kubelets[node] = self._tg.create_task(kubelet.run(), name=f"kubelet:{node}")

    def stop_kubelet(self, node: str) -> None:
        task = self.kubelets.pop(node, None)
        if task is not None:
            task.cancel()

    def start_schedulers(self) -> None:
        """Start the scheduler instance(s) if the scheduler agent is installed."""
        assert self._tg is not None
        if importlib.util.find_spec("agents.scheduler") is None:
            return
        from agents.scheduler import start_schedulers
        from emulator.app.scenario.schedulers import scheduler_settings

        group = start_schedulers(
            scheduler_settings(self.scenario),
            self._tg,
            new_client=self.new_client,
            clock=self.clock,
            seeds=self.seeds,
            explain=self.explain,
        )
        self.agents.append(group)

    def start_controllers(self) -> None:
        """Start the controllers (the node lifecycle controller only with heartbeats)."""
        assert self._tg is not None
        if importlib.util.find_spec("agents.controllers") is None:
            return
        from agents.controllers import (
            NodeLifecycleController,
            PodGCController,
            PodGCSettings,
            TaintEvictionController,
            start_workload_controllers,
        )

        controllers: list[Any] = []
        if self.scenario.kubelet.heartbeat_interval > 0:
            controllers.append(NodeLifecycleController(self.new_client("controller:nodelifecycle"), self.clock))
        controllers.append(TaintEvictionController(self.new_client("controller:tainteviction"), self.clock))
        gc = PodGCSettings(terminated_pod_gc_threshold=self.scenario.controllers.pod_gc.terminated_pod_gc_threshold)
        controllers.append(PodGCController(self.new_client("controller:podgc"), self.clock, gc))
        for c in controllers:
            self._tg.create_task(c.run(), name=c.client.name)
        controllers.extend(start_workload_controllers(self._tg, self.clock, self.new_client))
        self.agents.append(ControllersReport(controllers))

    # --- creating things ----------------------------------------------------------------

    async def retrying(self, call: Callable[[], Awaitable[T]], *errors: type[ApiError]) -> T:
        """``call()``, again after an InternalError (or one of ``errors``) with backoff: only
        a fault makes those on the runner's calls; after the last try the error stands."""
        retried: tuple[type[ApiError], ...] = (InternalError, *errors)
        return await on_error(
            RUNNER_RETRY, lambda err: isinstance(err, retried), call, clock=self.clock, attempts=RUNNER_ATTEMPTS
        )

    async def _retry_after(self, first: ApiError, call: Callable[[], Awaitable[T]], *errors: type[ApiError]) -> T:
        """``retrying(call, *errors)`` whose first try was made already and failed with the
        retriable ``first``: the loop's first wait, then its other tries (the same waits, the
        same tries, the same last error)."""
        wait, backoff = RUNNER_RETRY.step()
        if RUNNER_ATTEMPTS <= 1:
            raise first
        if wait > 0:
            await self.clock.sleep(wait)
        retried: tuple[type[ApiError], ...] = (InternalError, *errors)
        return await on_error(
            backoff, lambda err: isinstance(err, retried), call, clock=self.clock, attempts=RUNNER_ATTEMPTS - 1
        )

    async def create(self, obj: Any) -> Any:
        """Create ``obj`` (an InternalError or Conflict is retried, other errors raise). A
        Node is created as its kubelet registers it, with the default labels it lacks.

        With a client whose calls cannot suspend (``Client.instant``) the first try is made
        at once, without the retry loop's frames (one create a pod); a retriable failure is
        taken up as the loop would have taken it up (``_retry_after``);
        ``tests/scenario/test_create_fastpath.py`` compares it with the loop alone."""
        if isinstance(obj, Node):
            obj = default_labels(obj)
        client = self.client
        if client.instant(getattr(obj, "kind", "")):
            first: ApiError | None = None
            try:
                created = client.create_now(obj)
            except (InternalError, Conflict) as err:
                first = err  # retried below, outside the handler (a later error has no context)
            if first is not None:
                created = await self._retry_after(first, lambda: client.create(obj), Conflict)
        else:
            created = await self.retrying(lambda: self.client.create(obj), Conflict)
        if isinstance(created, Node):
            self.start_kubelet(created.metadata.name)
        return created

    async def create_manifest(self, obj: Any) -> Any:
        """Create a manifest of ``objects`` or a ``create`` step as a new object."""
        meta = obj.metadata
        old_uid = meta.uid
        if any(r.uid in self._new_uids for r in meta.owner_references):
            refs = [replace(r, uid=self._new_uids.get(r.uid, r.uid)) for r in meta.owner_references]
            meta = replace(meta, owner_references=refs)
        if meta.resource_version or meta.uid or meta.creation_timestamp or meta.deletion_timestamp:
            meta = replace(
                meta,
                resource_version="",
                uid="",
                creation_timestamp=None,
                deletion_timestamp=None,
                deletion_grace_period_seconds=None,
            )
        if meta is not obj.metadata:
            obj = replace(obj, metadata=meta)
        created = await self.create(obj)
        if old_uid:
            # A manifest from a dump keeps its owner links: its dependents' ownerReferences
            # name this old UID, and the garbage collector would delete them as orphans.
            self._new_uids[old_uid] = created.metadata.uid
        return created

    async def ensure_namespace(self, name: str) -> None:
        if ("", name) not in {("", n.metadata.name) for n in self.server.list("Namespace")[0]}:
            await self.create(Namespace(metadata=ObjectMeta(name=name)))

    async def create_nodes(self, group: NodeGroup | NodeFile) -> None:
        for node in group.nodes():
            await self.create(node)

    async def create_pods(self, step: CreatePods) -> None:
        interval = 1.0 / step.rate_per_second if step.rate_per_second else 0.0
        start = self.clock.now()
        pod = step.pods()
        for i in range(step.count):
            if interval and i:
                await self.clock.sleep_until(start + i * interval)
            await self.create(pod(i))

    async def replay(self, step: Replay) -> None:
        """A trace's pods, each at its time after the step starts, after the PriorityClasses
        its integer priorities name and the DRA objects its pods use (those that do not exist yet)."""
        existing = {c.metadata.name for c in self.server.list("PriorityClass")[0]}
        for name, value in step.priority_classes.items():
            if name not in existing:
                await self.create(PriorityClass(metadata=ObjectMeta(name=name), value=value))
        for obj in step.objects:  # gpuSharing: dra's DeviceClass and claim templates
            with contextlib.suppress(AlreadyExists):
                await self.create(obj)
        start = self.clock.now()
        for timed in step.pods:
            if timed.at:
                await self.clock.sleep_until(start + timed.at)
            await self.create(timed.pod)

    async def delete(self, step: Delete) -> None:
        """Delete by name (a missing object raises NotFound), or every object the selector
        matches (one that is gone by the time it is deleted is skipped, as kubectl does)."""
        kind = step.kind
        if step.name:
            targets = [(step.namespace, step.name)]
        else:
            items, _ = self.server.list(kind, namespace=step.namespace or None)
            targets = [
                (o.metadata.namespace, o.metadata.name)
                for o in items
                if step.selector is not None and label_selector_matches(step.selector, o.metadata.labels)
            ]
        for ns, name in targets:
            try:
                # kubectl's default (--cascade=background), not the API's per-kind one (Jobs: Orphan)
                policy = step.propagation_policy or "Background"
                delete = partial(
                    self.client.delete,
                    kind,
                    name,
                    ns,
                    propagation_policy=policy,
                    grace_period_seconds=step.grace_period_seconds,
                )
                await self.retrying(delete)
            except NotFound:
                if step.name:
                    raise
                continue
            if kind == "Node":
                self.stop_kubelet(name)

    async def read_modify_write(self, kind: str, name: str, namespace: str, change: Callable[[Any], Any]) -> None:
        """Get, ``change``, update; a Conflict on the update reads again (one on the read is
        an error)."""
        updating = False

        async def attempt() -> None:
            nonlocal updating
            updating = False
            current = await self.retrying(lambda: self.client.get(kind, name, namespace))
            changed = change(current)
            updating = True
            await self.retrying(partial(self.client.update, changed))

        await on_error(CORDON_RETRY, lambda err: updating and isinstance(err, Conflict), attempt, clock=self.clock)

    async def set_unschedulable(self, node: str, value: bool) -> None:
        """Cordon or uncordon: set ``spec.unschedulable``."""

        def cordon(current: Node) -> Node:
            return replace(current, spec=replace(current.spec, unschedulable=value))

        await self.read_modify_write("Node", node, "", cordon)

    async def scale(self, step: Scale) -> None:
        """``kubectl scale``: set ``spec.replicas``."""
        await self.read_modify_write(
            step.kind, step.name, step.namespace, lambda o: replace(o, spec=replace(o.spec, replicas=step.replicas))
        )

    async def update(self, step: Update) -> None:
        """``kubectl patch --type merge``: the patch on the current object, then an update."""
        await self.read_modify_write(step.kind, step.name, step.namespace, lambda o: patched(o, step.patch))

    async def play(self, step: Step, activity: PodActivity, timeouts: list[str], index: int = -1) -> None:
        if step.at is not None and step.at > self.clock.now():
            await self.clock.sleep_until(step.at)
        if self.on_step is not None:
            self.on_step(index, step)
        match step:
            case Create():
                for obj in step.objects:
                    await self.create_manifest(obj)
            case CreatePods():
                await self.create_pods(step)
            case CreateNodes():
                await self.create_nodes(step.nodes)
            case Replay():
                await self.replay(step)
            case Delete():
                await self.delete(step)
            case Scale():
                await self.scale(step)
            case Update():
                await self.update(step)
            case Drain():
                failed = await drain(self, step)
                if failed is not None:
                    timeouts.append(failed)
            case Cordon():
                await self.set_unschedulable(step.node, True)
            case Uncordon():
                await self.set_unschedulable(step.node, False)
            case Sleep():
                await self.clock.sleep(step.duration)
            case WaitFor():
                if not await wait_for(self, step, activity):
                    timeouts.append(f"waitFor {step.condition} timed out after {step.timeout:g}s")
            case Fault():
                arm_fault(self, f"steps[{index}].fault")
