"""The kube-scheduler agent (upstream ``scheduler.go``): informers, the queue, the loop.

One ``Scheduler`` is one kube-scheduler instance with its own informers, cache and queue
(``schedulerOptions.instances: N`` runs N of them against the same API server, each
believing it is alone — as two schedulers with the same name would). ``start_schedulers``
is the one place a run builds and starts them; ``SchedulerGroup`` reports on them together.

What this module owns: building an instance (frameworks per profile, the queue wired to the
profiles' queueing hints, informer handlers), running it (informers synced before the loop,
then ``schedule_one`` until the queue closes, all in one named task group) and reporting.
It does not own one pod's scheduling and binding cycles (``schedule_one.py``, mixed in as
``SchedulingCycle`` over ``BindingCycle`` in ``binding_cycle.py`` and ``FailureHandler`` in
``failure_handler.py``), the informer handlers (``eventhandlers.py``), nor turning a scenario
into settings (``setup.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any

from agents.scheduler.cache import Cache, Snapshot
from agents.scheduler.dra_manager import DraManager
from agents.scheduler.eventhandlers import EventHandlers, NodeEvents, node_update_events
from agents.scheduler.framework.interface import PluginFactory, ProfileSpec
from agents.scheduler.framework.node_table import IntArray
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import ClusterEventWithHint, Code, Status
from agents.scheduler.framework.waiting_pods import WaitingPodsMap
from agents.scheduler.metrics import MetricsRecorder, SchedulingMetrics
from agents.scheduler.options import ExplainHook, SchedulerOptions
from agents.scheduler.queue import Nominator, QueueClosed, SchedulingQueue
from agents.scheduler.sampling import num_feasible_nodes_to_find, select_host
from agents.scheduler.schedule_one import SchedulingCycle
from agents.scheduler.setup import SchedulerSettings, build_scheduler_setup
from agents.scheduler.volume_listers import VolumeListers
from agents.scheduler.workload_listers import WorkloadListers, workload_client
from emulator.base.api.core import Pod
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.client.informer import Informer
from emulator.base.client.ratelimit import TokenBucket
from emulator.base.runtime.clock import Clock
from emulator.base.runtime.inline import run_inline
from emulator.base.runtime.rng import Seeds

__all__ = [
    "NodeEvents",
    "Scheduler",
    "SchedulerGroup",
    "SchedulerOptions",
    "node_update_events",
    "num_feasible_nodes_to_find",
    "select_host",
    "start_schedulers",
]

_DEFAULT_OPTIONS = SchedulerOptions()


class NamespaceLister:
    """Namespaces from the scheduler's informer, for plugins' namespaceSelectors."""

    def __init__(self, informer: Informer) -> None:
        self._informer = informer

    def get(self, name: str) -> Any:
        return self._informer.get(name)

    def list(self) -> list[Any]:
        return sorted(self._informer.objects(), key=lambda n: n.metadata.name)


class Scheduler(SchedulingCycle, EventHandlers):
    """One kube-scheduler instance."""

    def __init__(
        self,
        *,
        client: Client,
        clock: Clock,
        rng: random.Random,
        profiles: Sequence[ProfileSpec],
        registry: Mapping[str, PluginFactory],
        options: SchedulerOptions = _DEFAULT_OPTIONS,
        name: str = "default-scheduler",
    ) -> None:
        self.name = name
        self.client = client
        self.clock = clock
        if options.client_qps > 0:  # clientConnection.qps: the client and the events client limited apart
            burst = max(options.client_burst, 1)
            client.rate_limiter = TokenBucket(options.client_qps, burst, clock)
            client.event_rate_limiter = TokenBucket(options.client_qps, burst, clock)
        self.rng = rng
        self.events = EventRecorder(
            client,
            clock,
            name,
            legacy_source=False,
            naming="random",
            rng=random.Random(rng.getrandbits(64)),
            mode="series",  # upstream's scheduler records through the events/v1 broadcaster
        )
        """Event names draw from their own stream, so API writes never shift host tie-breaks."""
        self.options = options
        self.cache = Cache(clock)
        self.snapshot = Snapshot()
        self.waiting_pods = WaitingPodsMap()
        self.metrics = SchedulingMetrics()
        self.pods = Informer(client, "Pod")
        self.nodes = Informer(client, "Node")
        self.namespaces = Informer(client, "Namespace")
        self.workloads = WorkloadListers(workload_client(client))
        self.volumes = VolumeListers(workload_client(client, "volumes"))
        self.dra = DraManager(workload_client(client, "dra"), features=options.dra_features)
        # The nominator comes first and goes to both the frameworks and the queue (upstream's
        # ``WithPodNominator``): the queue needs the first profile's QueueSort, and the frameworks
        # the nominator. ``activate`` reaches the queue through ``self`` when a plugin calls it.
        nominator = Nominator(self._get_pod)  # refuses deleted or bound pods (upstream)
        self.frameworks: dict[str, Framework] = {}
        for spec in profiles:
            self.frameworks[spec.scheduler_name] = Framework(
                spec,
                registry,
                clock=clock,
                rng=rng,
                client=client,
                snapshot=self.snapshot,
                waiting_pods=self.waiting_pods,
                namespaces=NamespaceLister(self.namespaces),
                nominator=nominator,
                run_async=self._run_async,
                activate=self._handle_activate,
                get_pod=self._get_pod,
                pdb_lister=self.workloads.pdbs,
                default_selector=self.workloads.default_selector,
                volume_listers=self.volumes,
                dra_manager=self.dra,
            )
        first = next(iter(self.frameworks.values()))
        self._hints: dict[str, dict[str, list[ClusterEventWithHint]]] = {
            n: f.events_to_register() for n, f in self.frameworks.items()
        }
        registered = [e.event for h in self._hints.values() for evs in h.values() for e in evs]
        self.queue = SchedulingQueue(
            clock=clock,
            less=first.queue_sort_less,
            sort_key=first.queue_sort_key(),
            pre_enqueue=self._pre_enqueue,
            hints=lambda pod: self._hints.get(pod.spec.scheduler_name, {}),
            registered_events=registered,
            queueing_hints=options.queueing_hints,
            in_flight_events=options.in_flight_events,
            pod_initial_backoff=options.pod_initial_backoff,
            pod_max_backoff=options.pod_max_backoff,
            namespace_labels=self._namespace_labels,
            nominator=nominator,
        )
        self.pods.add_handlers(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        self.nodes.add_handlers(self._on_node_add, self._on_node_update, self._on_node_delete)
        self.volumes.set_sink(self.queue.move_all_to_active_or_backoff)
        self.dra.set_sink(self.queue.move_all_to_active_or_backoff)
        self.next_start_node_index = 0
        self._first_seen: dict[str, float] = {}
        self._evaluated = 0
        """Nodes the current cycle evaluated (for ``cycleCost.perNode``)."""
        self._feasible_rows: IntArray | None = None
        """The table rows of the last vectorised search's feasible nodes (same order)."""
        self._tg: asyncio.TaskGroup | None = None
        self._binding: tuple[Coroutine[Any, Any, None], str] | None = None
        self.ready = asyncio.Event()

    def __repr__(self) -> str:
        return f"<Scheduler {self.name!r} {self.queue!r} {self.cache!r}>"

    def responsible_for(self, pod: Pod) -> bool:
        return pod.spec.scheduler_name in self.frameworks

    def _pre_enqueue(self, pod: Pod) -> tuple[Status, str] | None:
        fwk = self.frameworks.get(pod.spec.scheduler_name)
        if fwk is None:
            return None
        status, plugin = fwk.run_pre_enqueue_plugins(pod)
        return None if status.code is Code.Success else (status, plugin)

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        ns = self.namespaces.get(namespace)
        return ns.metadata.labels if ns is not None else {}

    def _get_pod(self, namespace: str, name: str) -> Pod | None:
        pod: Pod | None = self.pods.get(name, namespace)
        return pod

    def _handle_activate(self, pods: Iterable[Pod]) -> None:
        """Upstream ``Handle.Activate``: move the pods to activeQ."""
        self.queue.activate(pods)

    def _run_async(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        """Plugins' API work (preemption) as a named task of the scheduler's task group."""
        if self._tg is None:
            coro.close()
            raise RuntimeError("the scheduler is not running")
        self._tg.create_task(coro, name=f"{self.name}:{name}")

    # --- running ------------------------------------------------------------------------

    async def run(self) -> None:
        """Informers, queue flushes and the scheduling loop, until cancelled."""
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            tg.create_task(self.namespaces.run(), name=f"{self.name}:informer:namespaces")
            tg.create_task(self.nodes.run(), name=f"{self.name}:informer:nodes")
            tg.create_task(self.pods.run(), name=f"{self.name}:informer:pods")
            self.workloads.start(tg, self.name)
            self.volumes.start(tg, self.name)
            self.dra.start(tg, self.name)
            await self.namespaces.synced.wait()
            await self.nodes.synced.wait()
            await self.pods.synced.wait()
            await self.workloads.synced()
            await self.volumes.synced()
            await self.dra.synced()
            tg.create_task(self.queue.run(), name=f"{self.name}:queue-flush")
            tg.create_task(self.events.run(), name=f"{self.name}:event-series")
            self.ready.set()
            try:
                while True:
                    await self.schedule_one()
                    await asyncio.sleep(0)  # let binding cycles and informers run (no clock time)
                    self.bind_next()
            except QueueClosed:
                return
            finally:
                self.drop_binding()

    def bind_next(self) -> None:
        """Start the binding cycle the last ``schedule_one`` left (upstream's goroutine): run
        it here up to its first suspension, the rest (a Permit wait, a bind with latency) in a
        task of its own. The loop calls this right after its ``sleep(0)``, which is where the
        binding task's first step would have run: that step was queued by the cycle's last
        statement and the loop's wake-up right after it, so the two were adjacent in the ready
        queue and nothing ran between them. The same order, without a task, its step and its
        done-callback for the common binding that never waits."""
        pending = self._binding
        if pending is None:
            return
        self._binding = None
        coro, name = pending
        rest = run_inline(coro)
        if rest is not None:
            self._spawn(rest, name)

    def drop_binding(self) -> None:
        """The loop ends before the binding cycle left by ``schedule_one`` started: close it."""
        pending, self._binding = self._binding, None
        if pending is not None:
            pending[0].close()

    # --- reporting ----------------------------------------------------------------------

    def enabled_plugins(self) -> dict[str, list[str]]:
        """Extension point (as configured: ``filter``, ``score``...) → enabled plugin names,
        over this instance's profiles, first seen first."""
        out: dict[str, list[str]] = {}
        for fwk in self.frameworks.values():
            for point, names in fwk.list_plugins().items():
                out.setdefault(point.value, []).extend(n for n in names if n not in out.get(point.value, []))
        return out

    def statistics(self) -> dict[str, Any]:
        return {"queue": self.queue.statistics(), "metrics": self.metrics.report()}


class SchedulerGroup:
    """The scheduler instances of one run; ``report()`` gives the JSON ``scheduling`` object."""

    def __init__(self, schedulers: list[Scheduler], missing_plugins: Sequence[str] = ()) -> None:
        self.schedulers = schedulers
        self.missing_plugins = list(missing_plugins)

    def report(self) -> dict[str, Any]:
        total = SchedulingMetrics()
        for s in self.schedulers:
            total.merge(s.metrics)
        doc = total.report()
        doc["instances"] = len(self.schedulers)
        if self.missing_plugins:
            doc["pluginsNotImplemented"] = self.missing_plugins
        return {"scheduling": doc}


def start_schedulers(
    settings: SchedulerSettings,
    tg: asyncio.TaskGroup,
    *,
    new_client: Callable[[str], Client],
    clock: Clock,
    seeds: Seeds,
    explain: ExplainHook | None = None,
    recorder: MetricsRecorder | None = None,
    group: SchedulerGroup | None = None,
    instances: int | None = None,
) -> SchedulerGroup:
    """Build scheduler instances from ``settings`` and start each as a named task of ``tg``:
    the one place a run starts schedulers.

    ``new_client(name)``: the instance's API client (the runner's latencies and fault plan
    attached). Without ``group``: the run's first ``settings.instances`` instances in a new
    group (one is ``default-scheduler``; several are ``default-scheduler-<i>``). With ``group``
    and ``instances`` (a ``scheduler`` fault): that many more, numbered after the group's,
    added to it. Instance ``i`` draws from the seed stream ``scheduler/<i>``; ``explain``
    hears every instance's attempts; ``recorder`` (a benchmark's ``MetricsRecorder``) every
    instance's extension-point durations."""
    setup = build_scheduler_setup(settings)
    options = setup.options
    if explain is not None:
        options = dataclasses.replace(options, explain=explain)
    if recorder is not None:
        options = dataclasses.replace(options, recorder=recorder)
    adding = instances is not None
    count = setup.instances if instances is None else instances
    if group is None:
        group = SchedulerGroup([], setup.missing_plugins)
    first = len(group.schedulers)
    for i in range(first, first + count):
        name = "default-scheduler" if not adding and count == 1 else f"default-scheduler-{i}"
        sched = Scheduler(
            client=new_client(name),
            clock=clock,
            rng=seeds.stream(f"scheduler/{i}"),
            profiles=setup.profiles,
            registry=setup.registry,
            options=options,
            name=name,
        )
        group.schedulers.append(sched)
        tg.create_task(sched.run(), name=f"scheduler:{name}")
    return group
