"""Running one benchmark workload on the real clock (uvloop) and measuring it.

One run of a ``Workload`` builds its own cluster in a fresh event loop: an ``ApiServer`` on a
``LoopClock(virtual=False)``, the scheduler of the chosen profile (``instruments.py``) on a
zero-latency client, and with ``kubelets`` one ``Kubelet`` per node (``--kubelets off``, the
default, is scheduler_perf's set-up: pods are bound and never run). The harness itself writes
to the server directly — it is the test driver, not an agent — and plays the steps in order:

==============  =================================================================================
step            what the harness does
==============  =================================================================================
NodesStep       create the nodes (``<generateName><n>``, ``kubernetes.io/hostname`` label,
                strategy labels, ``nodeAllocatableStrategy``'s allocatable and CSINode:
                ``volumes.py``), yielding to the loop every ``create_batch`` objects
NamespacesStep  create the namespaces
PodsStep        create the pods the same way (with a volume template, each pod's own claim and
                volume first: ``volumes.py``), then (unless ``wait`` is off) wait as upstream
                does until the namespace holds at least ``count`` scheduled pods — with
                kubelets, until every pod created there is Running; with ``collectMetrics``
                this is the measured phase: from before the first create to the end of the wait
ChurnStep       start a background task (see ``workloads.py``); it stops with the workload
DeletePodsStep  delete the namespace's pods (those matching ``labelSelector``) at
                ``deletePodsPerSecond`` (in the background when ``skipWaitToCompletion``)
BarrierStep     upstream's ``runBarrierOp``: per namespace (none named: every one a
                createNamespaces or createPods step made), wait until the existing pods
                matching ``labelSelector`` that are scheduled (``Attempted``: scheduled or
                attempted, ``stages.py``) are at least the pods created there with
                ``skipWaitToCompletion``; a Scheduled barrier then forgets those namespaces; a
                namespace unknown at that point stops the workload (``stoppedBy: error``).
                Woken by the tracker on each stage change, not polled
SleepStep       sleep on the clock
AnyStep         create ``count`` objects of any kind from the template text ({{.Index}} = k)
DriverStep      upstream's ``createResourceDriver``, AllocClaimsStep its ``allocResourceClaims``
                (``dra.py``: with DRA, the resourceclaim controller runs beside the scheduler)
UpdateStep      upstream's ``updateAny`` (``update_any.py``); a failed update stops the workload
                (``stoppedBy: error``)
==============  =================================================================================

A wait gives up once no awaited pod has been bound (or started) for ``stall_timeout`` seconds,
and the whole workload once it has run for ``time_limit`` seconds (creating stops, the wait
ends, later steps are skipped): the workload is then reported ``complete: false`` with
``stoppedBy`` ``stall`` or ``timeLimit`` — e.g. preemption workloads while DefaultPreemption is
missing from the registry, or the 150k-pod scale workload on a slow machine. Metrics are those
of the measured phase only: the scheduler's attempts and e2e durations recorded during it, the
extension-point timers, the bindings of the measured namespace (throughput, ``metrics.py``);
peak RSS covers the whole workload. Before the measured phase the harness collects and then
``gc.freeze()``s what the set-up created (``run_workload`` unfreezes at the end): the collector's
full passes then skip the long-lived nodes and pods (100k pods: 1.2–2.1 s pauses before, 0 after).
It does not own the workload file (``workloads.py``), the options and result
types (``result.py``) or the output (``commands/bench.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from agents.controllers import start_workload_controllers
from agents.kubelet import Kubelet, KubeletSettings
from agents.scheduler import start_schedulers
from emulator.app.bench.dra import BenchPlugins, allocate_claims, create_driver, dra_features, server_settings, uses_dra
from emulator.app.bench.instruments import ExtensionPointTimers, ProgressHook, Tracker, scheduler_settings
from emulator.app.bench.metrics import peak_rss_mib, reset_peak_rss
from emulator.app.bench.phases import Phase, Samples, figures
from emulator.app.bench.resolve import render
from emulator.app.bench.result import BenchOptions, WorkloadResult
from emulator.app.bench.stages import ATTEMPTED, SCHEDULED, Selector, matches
from emulator.app.bench.steady import create_steadily
from emulator.app.bench.steps import (
    AllocClaimsStep,
    AnyStep,
    BarrierStep,
    ChurnStep,
    DeletePodsStep,
    DriverStep,
    MetricsStep,
    NamespacesStep,
    NodesStep,
    PodsStep,
    SleepStep,
    Step,
    UpdateStep,
    Workload,
)
from emulator.app.bench.update_any import create_objects, update_objects
from emulator.app.bench.volumes import claimed_pod, prepare_node
from emulator.base.api.core import Namespace, Node
from emulator.base.api.errors import ApiError
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import PriorityClass
from emulator.base.apiserver.server import ApiServer
from emulator.base.client.client import Client
from emulator.base.runtime.clock import LoopClock, run
from emulator.base.runtime.rng import Seeds

__all__ = ["run_workload", "run_workload_async"]

HOSTNAME_LABEL = "kubernetes.io/hostname"


def run_workload(workload: Workload, options: BenchOptions, progress: ProgressHook | None = None) -> WorkloadResult:
    """Run ``workload`` on a fresh real-time loop (uvloop) and measure it."""
    gc.collect()
    reset_peak_rss()
    try:
        result = run(lambda: run_workload_async(workload, options, progress), virtual=options.virtual)
    finally:
        gc.unfreeze()
    gc.collect()
    return result


async def run_workload_async(
    workload: Workload, options: BenchOptions, progress: ProgressHook | None = None
) -> WorkloadResult:
    wall0 = time.perf_counter()
    clock = LoopClock(asyncio.get_running_loop(), virtual=options.virtual)
    seeds = Seeds(options.seed)
    server = ApiServer(clock, seeds.stream("apiserver"), server_settings(workload.feature_gates))
    selectors = [s.label_selector for s in workload.steps if isinstance(s, BarrierStep)]
    tracker = Tracker(kubelets=options.kubelets, progress=progress, selectors=selectors)
    server.add_write_listener(tracker)
    timers = ExtensionPointTimers()
    play = _Play(workload, options, server, clock, seeds, tracker)
    settings = scheduler_settings(
        options.profile, workload.scheduler_config, workload.client, dict(workload.feature_gates)
    )
    missing: list[str] = []
    try:
        async with asyncio.TaskGroup() as tg:
            play.tg = tg

            def new_client(name: str) -> Client:
                return Client(server, clock, seeds.stream(f"client/{name}"), name=name)

            group = start_schedulers(settings, tg, new_client=new_client, clock=clock, seeds=seeds, recorder=timers)
            if play.kubelet_settings.dra_plugins is not None:  # a DRA workload: claims from templates
                start_workload_controllers(tg, clock, new_client, names=["resource-claim-controller"])
            scheduler, missing = group.schedulers[0], group.missing_plugins
            raw = scheduler.metrics.keep_samples()
            play.metrics_marks = lambda: (
                len(raw.attempt_wall_seconds),
                len(raw.e2e_seconds),
                len(timers.filter),
                len(timers.score),
            )
            await scheduler.ready.wait()
            tg.create_task(play.run(), name="bench:workload")
    except* _Done:
        pass
    samples = Samples(
        raw.attempt_wall_seconds, raw.e2e_seconds, timers.filter, timers.score, tracker.bound_at, tracker.startup
    )
    samples.marks_now = play.marks()
    fig, per_phase = figures(play.phases, samples)
    per_node = Counter(p.spec.node_name for p in server.list("Pod")[0] if p.spec.node_name)
    result = WorkloadResult(
        workload=workload.name,
        nodes=workload.nodes,
        measured_pods=workload.measured_pods,
        profile=options.profile,
        kubelets=options.kubelets,
        scale=workload.scale,
        throughput=fig["throughput"],
        attempt_ms=fig["attempt_ms"],
        e2e_ms=fig["e2e_ms"],
        filter_ms=fig["filter_ms"],
        score_ms=fig["score_ms"],
        peak_rss_mib=peak_rss_mib(),
        wall_seconds=time.perf_counter() - wall0,
        measured_seconds=fig["measured_seconds"],
        measured_cpu_seconds=fig["measured_cpu_seconds"],
        scheduled_pods=len(tracker.bound_at),
        complete=play.stopped_by is None,
        stopped_by=play.stopped_by,
        plugins_missing=missing if options.profile == "default" else [],
        max_pods_per_node=max(per_node.values(), default=0),
        threshold=workload.threshold,
        startup_ms=fig["startup_ms"],
    )
    if per_phase:
        result.extra["phases"] = per_phase
    if (limiter := scheduler.client.rate_limiter) is not None:
        events = scheduler.client.event_rate_limiter
        waited = limiter.waited + (events.waited if events is not None else 0.0)
        throttled = {"qps": limiter.qps, "burst": limiter.burst, "waitedSeconds": round(waited, 3)}
        result.extra["schedulerApiClient"] = throttled
    if play.error:
        result.extra["error"] = play.error
    if workload.scheduler_config and options.profile == "default":
        result.extra["schedulerConfig"] = workload.scheduler_config
    return result


class _Done(Exception):
    """Raised inside the task group once the last step is over."""


class _Play:
    """The steps of one workload against one cluster."""

    def __init__(
        self,
        workload: Workload,
        options: BenchOptions,
        server: ApiServer,
        clock: LoopClock,
        seeds: Seeds,
        tracker: Tracker,
    ) -> None:
        self.workload, self.options, self.server, self.clock = workload, options, server, clock
        self.seeds, self.tracker = seeds, tracker
        self.tg: asyncio.TaskGroup | None = None
        self.created: dict[str, int] = {}
        self.namespaces: set[str] = set()
        self.names: dict[tuple[str, str], int] = {}
        self.stopped_by: str | None = None
        self.t_begin = 0.0
        self.phases: list[Phase] = []
        """The measured phases so far (``phases.py``); the last may be open."""
        self.metrics_marks: Callable[[], tuple[int, int, int, int]] | None = None
        self.expected: dict[str, int] = {}
        """Upstream's ``numPodsScheduledPerNamespace``: each namespace a createNamespaces or
        createPods op made → the pods created in it with ``skipWaitToCompletion``, which a later
        barrier waits for; a Scheduled barrier forgets the namespaces it waited on."""
        self.error = ""
        self.dra = dra_features(workload.feature_gates)
        self.kubelet_settings = KubeletSettings(dra_plugins=BenchPlugins() if uses_dra(workload) else None)

    async def run(self) -> None:
        self.t_begin = self.clock.now()
        for name, value in self.workload.priority_classes:
            self.server.create(PriorityClass(metadata=ObjectMeta(name=name), value=value))
        for i, step in enumerate(self.workload.steps):
            if self.out_of_time() or self.error:
                break
            await self.step(i, step)
        self.end_measuring()  # a window left open closes with the workload
        raise _Done

    def out_of_time(self) -> bool:
        limit = self.options.time_limit
        if limit is not None and self.clock.now() - self.t_begin >= limit:
            self.stopped_by = "timeLimit"
            return True
        return False

    async def step(self, i: int, step: Step) -> None:
        match step:
            case NodesStep():
                await self.create_nodes(i, step)
            case NamespacesStep():
                for ns in step.names:
                    self.ensure_namespace(ns, dict(step.labels))
                    self.expected.setdefault(ns, 0)
            case PodsStep() if step.steady is not None:  # upstream's steady state
                await create_steadily(self, i, step)
            case PodsStep():
                await self.create_pods(i, step)
            case ChurnStep():
                assert self.tg is not None
                self.tg.create_task(self.churn(step), name=f"bench:churn:{i}")
            case BarrierStep():
                await self.barrier(i, step)
            case SleepStep():
                await self.clock.sleep(step.seconds)
            case MetricsStep() if step.start:
                self.begin_measuring(f"startCollectingMetrics[{i}]", step.namespaces, step.label_selector)
            case MetricsStep():
                self.end_measuring()
            case AnyStep():
                if error := create_objects(self.server, step, self.name, self.ensure_namespace):
                    self.stopped_by, self.error = "error", f"createAny[{i}]: {error}"
            case DriverStep():
                create_driver(self.server, step)
            case AllocClaimsStep():
                rng = self.seeds.stream(f"bench/allocResourceClaims/{i}")
                if error := allocate_claims(self.server, step, self.dra, rng):
                    self.stopped_by, self.error = "error", f"allocResourceClaims[{i}]: {error}"
            case UpdateStep():
                error = await update_objects(self.server, self.clock, step, self.out_of_time)
                if error:
                    self.stopped_by, self.error = "error", f"updateAny[{i}]: {error}"
            case DeletePodsStep() if step.wait:
                await self.delete_pods(step)
            case DeletePodsStep():
                assert self.tg is not None
                self.tg.create_task(self.delete_pods(step), name=f"bench:deletePods:{i}")

    # --- creating -------------------------------------------------------------------------

    def ensure_namespace(self, name: str, labels: dict[str, str] | None = None) -> None:
        if name not in self.namespaces:
            self.namespaces.add(name)
            with contextlib.suppress(ApiError):  # already there
                self.server.create(Namespace(metadata=ObjectMeta(name=name, labels=labels or {})))

    def name(self, namespace: str, obj: Any) -> str:
        prefix = obj.metadata.generate_name or f"{obj.kind.lower()}-"
        n = self.names.get((namespace, prefix), 0)
        self.names[(namespace, prefix)] = n + 1
        return f"{prefix}{n}"

    def create_object(self, template: Any, namespace: str, labels: dict[str, str] | None = None) -> str:
        """Create one object from ``template``; its name."""
        ns = "" if isinstance(template, Node) else namespace
        # A fixed name (upstream's node-with-name.yaml, or one rendered from {{.Index}}) is kept.
        name = template.metadata.name or self.name(ns, template)
        meta = template.metadata
        new_labels = {**meta.labels, **(labels or {})}
        if isinstance(template, Node):
            new_labels[HOSTNAME_LABEL] = name
        else:
            self.ensure_namespace(ns)
        obj = replace(template, metadata=replace(meta, name=name, generate_name="", namespace=ns, labels=new_labels))
        self.server.create(obj)
        return name

    async def create_nodes(self, i: int, step: NodesStep) -> None:
        self.tracker.watch(f"createNodes[{i}]", "", step.count)
        for k in range(step.count):
            labels: dict[str, str] = {}
            if step.label_key:
                labels[step.label_key] = step.label_values[k % len(step.label_values)]
            template = render(step.indexed, k, count=step.count, params=step.params) if step.indexed else step.template
            name = self.create_object(template, "", labels)
            if step.unique_label_key:
                node = self.server.get("Node", name)
                meta = replace(node.metadata, labels={**node.metadata.labels, step.unique_label_key: name})
                self.server.update(replace(node, metadata=meta))
            if step.allocatable is not None:
                prepare_node(self.server, name, step.allocatable)
            if self.options.kubelets:
                self.start_kubelet(name)
            if (k + 1) % self.options.create_batch == 0:
                await asyncio.sleep(0)
                if self.out_of_time():
                    return

    def start_kubelet(self, node: str) -> None:
        assert self.tg is not None
        client = Client(self.server, self.clock, self.seeds.stream(f"client/kubelet:{node}"), name=f"kubelet:{node}")
        kubelet = Kubelet(client, node, self.clock, self.seeds.stream(f"kubelet/{node}"), self.kubelet_settings)
        self.tg.create_task(kubelet.run(), name=f"kubelet:{node}")

    async def create_pods(self, i: int, step: PodsStep) -> None:
        ns = step.namespace
        self.ensure_namespace(ns)
        self.expected.setdefault(ns, 0)
        stage = f"createPods[{i}]" + (" (measured)" if step.collect_metrics else "")
        if step.collect_metrics:
            self.begin_measuring(f"createPods[{i}]", (ns,), ())
        self.tracker.watch(stage, ns, self.created.get(ns, 0) + step.count)
        for k in range(step.count):
            pod = self.pod(step, k)
            self.create_object(pod if step.claim is None else claimed_pod(self.server, ns, k, step, pod), ns)
            self.created[ns] = self.created.get(ns, 0) + 1
            if not step.wait:
                self.expected[ns] += 1
            if (k + 1) % self.options.create_batch == 0:
                await asyncio.sleep(0)
                if self.out_of_time():
                    break
        if step.wait and self.options.kubelets:
            await self.wait(stage, (ns,))
        elif step.wait:  # upstream's waitUntilPodsScheduledInNamespace(namespace, op.Count)
            count = self.tracker.stages.count
            await self.wait_until(lambda: min(count(ns, (), SCHEDULED), step.count), step.count)
        if step.collect_metrics:
            self.end_measuring()

    @staticmethod
    def pod(step: PodsStep, k: int) -> Any:
        """The ``k``-th pod of a step: its template, rendered per pod when it has actions."""
        pod = render(step.indexed, k, count=step.count, params=step.params) if step.indexed else step.template
        if step.signature_batch:
            labels = {**pod.metadata.labels, "signature": f"signature-label-{k // step.signature_batch}"}
            pod = replace(pod, metadata=replace(pod.metadata, labels=labels))
        return pod

    def begin_measuring(self, where: str, namespaces: tuple[str, ...], selector: Selector) -> None:
        """The measured window opens: from here the tracker times the bindings of these
        namespaces' pods (matching ``selector``), and the latency samples count."""
        # The set-up's objects (nodes, earlier pods) live to the end: out of the collector's
        # sight, so that a full collection during the measured phase does not walk them.
        gc.collect()
        gc.freeze()
        self.tracker.measure(namespaces, selector)
        t = self.tracker
        self.phases.append(
            Phase(where, self.marks(), time.perf_counter(), time.process_time(), len(t.bound_at), len(t.startup))
        )

    def end_measuring(self) -> None:
        if not self.phases or self.phases[-1].marks_end is not None:
            return
        t = self.tracker
        self.phases[-1].close(self.marks(), len(t.bound_at), len(t.startup))
        t.measure((), ())

    def marks(self) -> tuple[int, int, int, int]:
        assert self.metrics_marks is not None
        return self.metrics_marks()

    # --- waiting and churn ----------------------------------------------------------------

    async def wait(self, stage: str, namespaces: tuple[str, ...]) -> bool:
        """Until every pod created in ``namespaces`` is Running (with kubelets)."""
        counts = self.tracker.running
        goal = sum(self.created.get(ns, 0) for ns in namespaces)
        return await self.wait_until(lambda: sum(counts.get(ns, 0) for ns in namespaces), goal)

    async def barrier(self, i: int, step: BarrierStep) -> bool:
        """Upstream's ``runBarrierOp``: per namespace (every registered one when none is
        named), until the pods matching the selector that are scheduled (or, ``Attempted``,
        scheduled or attempted: ``stages.py``) number at least the ``expected`` ones."""
        names = step.namespaces or tuple(self.expected)
        unknown = [ns for ns in names if ns not in self.expected]
        if unknown:
            self.stopped_by, self.error = "error", f"barrier[{i}]: unknown namespace {unknown[0]}"
            return False
        stages = (SCHEDULED, ATTEMPTED) if step.attempted else (SCHEDULED,)
        goal = {ns: self.expected[ns] for ns in names}
        count = self.tracker.stages.count
        sel = step.label_selector

        def progress() -> int:
            return sum(min(count(ns, sel, *stages), n) for ns, n in goal.items())

        done = await self.wait_until(progress, sum(goal.values()))
        if done and not step.attempted:
            for ns in names:
                del self.expected[ns]
        return done

    async def wait_until(self, progress: Callable[[], int], goal: int) -> bool:
        """Until ``progress()`` reaches ``goal``, woken by the tracker; False (and
        ``stopped_by`` set) when it has not grown for ``stall_timeout`` seconds or the time
        limit is reached."""
        limit = self.options.time_limit
        end = math.inf if limit is None else self.t_begin + limit
        last = progress()
        deadline = self.clock.now() + self.options.stall_timeout
        while (now := progress()) < goal:
            if now > last:
                last, deadline = now, self.clock.now() + self.options.stall_timeout
            remaining = min(deadline, end) - self.clock.now()
            if remaining <= 0:
                self.stopped_by = "stall" if deadline <= end else "timeLimit"
                return False
            self.tracker.changed.clear()
            try:
                async with asyncio.timeout(remaining):
                    await self.tracker.changed.wait()
            except TimeoutError:
                pass
        return True

    async def delete_pods(self, step: DeletePodsStep) -> None:
        """Delete the pods the namespace holds now (those matching the selector), ``per_second``
        a second (all at once if 0)."""
        pods, _ = self.server.list("Pod", namespace=step.namespace)
        for pod in pods:
            if not matches(pod.metadata.labels, step.label_selector):
                continue
            if step.per_second:
                await self.clock.sleep(1 / step.per_second)
            with contextlib.suppress(ApiError):  # already gone
                self.server.delete("Pod", pod.metadata.name, step.namespace)

    async def churn(self, step: ChurnStep) -> None:
        slots = [[""] * max(step.number, 1) for _ in step.templates]
        count = 0
        while step.mode == "recreate" or step.number == 0 or count < step.number:
            await self.clock.sleep(step.interval)
            for t, template in enumerate(step.templates):
                if step.mode == "create":
                    self.create_object(template, step.namespace)
                    continue
                slot = count % step.number
                if slots[t][slot]:
                    ns = "" if isinstance(template, Node) else step.namespace
                    with contextlib.suppress(ApiError):  # already gone (e.g. preempted)
                        self.server.delete(template.kind, slots[t][slot], ns, grace_period_seconds=0)
                    slots[t][slot] = ""
                else:
                    slots[t][slot] = self.create_object(template, step.namespace)
            count += 1
