"""The scenario runner: builds the cluster, plays the timeline, checks expectations.

One run, in order:

1. Clock (virtual unless ``clock: real``), the API server, write listeners (the invariant
   checker, trace, pod activity, report observer and cost meter, fed as one by
   ``bookkeeping.RunBook``; the caller's progress hook).
2. Namespaces ``default``, ``kube-system``, ``kube-public``, ``kube-node-lease`` and any
   namespace the scenario's objects or templates name (created for the user, as a
   convenience; upstream would refuse a pod in a missing namespace), except the
   Namespaces the scenario creates itself (``schema.auto_namespaces``).
3. ``objects`` (in file order, PriorityClasses and Namespaces first), then ``nodes``.
   Manifests are created as new objects: the server-populated metadata of a
   ``kubectl get -o yaml`` dump (``resourceVersion``, ``uid``, ``creationTimestamp``,
   ``deletionTimestamp``, ``deletionGracePeriodSeconds``) is dropped first.
4. Agents, each a named task of one task group: a kubelet per node (started when the
   node is created, stopped when the runner deletes it), the controllers (node
   lifecycle — only when kubelets heartbeat —, taint eviction, pod GC; see
   ``agents/controllers``) and the scheduler instance(s) when the scheduler package is
   present.
5. ``steps`` in order (``at`` waits for that simulated time), then the settle rule: the
   run ends once no Pod was written for ``settle`` seconds, or at ``until``.
6. Expectations against the final state; the task group is cancelled; a ``RunResult``.

Serve mode (``RunOptions.serve``, ``python -m emulator serve``): the run is on the real-time
loop, its clock paced by ``RunOptions.speed`` (a ``PacedClock``). Once the objects and nodes
exist and the agents have started, ``serve(server, clock, ready)`` starts as the task
``http:serve`` of the run's task group, and the steps wait for its ``ready()`` (called once
it listens: a handshake, so a client can watch the first step play). The steps play as
usual, but the settle rule does not end the run, nor does the scenario's ``until`` (only
``RunOptions.until``): the run ends when ``serve`` returns (the serve command returns on
SIGINT/SIGTERM, its HTTP server closed), after the same wait for the schedulers' caches as
at settle; then everything else is cancelled through the task group and the result is
built as usual. An ``InputError`` raised by ``serve`` (a port in
use) leaves the run as a ``StepError`` does: unwrapped, no result.

The runner is a client like any other: ``cluster.Cluster`` creates objects through its own
``Client`` (with the scenario's API latency), never by reaching into an agent, and retries
its calls as a controller would (``cluster`` says how).

Errors: the loader rejects every write it can foresee. A refused write it could not (an
object the controllers deleted, a name reused while its pod still terminates, a fault
that outlasts the retries) aborts the run at that point with a ``StepError``
(``<file>: steps[3].cordon: NotFound: nodes "n-9" not found``); the trace written so far
stays. ``delete`` by name of a missing object is such an error; by selector, an object
that disappears between the list and its delete is skipped, as kubectl does.

``waitFor`` keeps the counts of pods meeting its condition incrementally
(``monitor.ConditionCounter``, fed by the pod write listener), so each pod write costs it
O(1), not a list of every pod.

Faults (``emulator.app.scenario.faults``): when the scenario has any, ``Cluster.faults`` is a
``FaultPlan``; every client the cluster makes gets its hooks (``FaultPlan.attach``), the
kubelets get it as ``KubeletSettings.faults``, and the runner plays the timed ones itself
(``watchCut``: closes the matching watchers' channels; ``scheduler``: starts more
instances). A ``fault`` step arms its fault when it plays. Without faults nothing is
installed and nothing is consulted.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import IO, Any

from emulator.app.scenario.autoscaling import prepare_cloud, start_autoscalers, startup_writes
from emulator.app.scenario.bookkeeping import RunBook
from emulator.app.scenario.cluster import Cluster, StepError
from emulator.app.scenario.cost import COUNTERS, CostMeter
from emulator.app.scenario.drivers import start_dra_drivers, start_storage_drivers
from emulator.app.scenario.event_trace import TraceRecorder
from emulator.app.scenario.expectations import ExpectationResult, check
from emulator.app.scenario.invariants import InvariantChecker
from emulator.app.scenario.monitor import PodActivity
from emulator.app.scenario.observe import Observer
from emulator.app.scenario.observe_labels import fault_markers, step_label
from emulator.app.scenario.observe_series import series
from emulator.app.scenario.schema import (
    ObjectCount,
    Scenario,
    auto_namespaces,
    creation_order,
)
from emulator.app.scenario.timedfaults import start_faults
from emulator.app.scenario.workload_status import REPORT_KINDS
from emulator.app.scenario.workload_status import report as workload_report
from emulator.base.api.core import Pod
from emulator.base.api.errors import ApiError
from emulator.base.apiserver.server import ApiServer, WriteRecord
from emulator.base.inputs import InputError
from emulator.base.runtime.clock import Clock, LoopClock, PacedClock

__all__ = ["BOOKMARK_INTERVAL", "Cluster", "RunOptions", "RunResult", "StepError", "run_scenario"]

BOOKMARK_INTERVAL = 60.0
#: Young-generation threshold of the garbage collector during a run (CPython default: 700).
#: The young generation's survivors are mostly the store's live objects (pods, their copies in
#: informers and caches), so each collection costs about the live set, however rarely it runs:
#: at 50,000 a 5-minute 1,000-node churn run spent ~1.3 s in 17 collections; at 1,000,000 none
#: is due in those 5 minutes. Memory: at most a million unreclaimed cyclic objects meanwhile.
GC_YOUNG_THRESHOLD = 1_000_000


Serve = Callable[[ApiServer, Clock, Callable[[], None]], Awaitable[None]]
"""Serve mode's callback: ``serve(server, clock, ready)``; calls ``ready()`` once listening."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    seed: int | None = None
    until: float | None = None
    real_time: bool = False
    trace: IO[bytes] | None = None
    on_write: Callable[[WriteRecord], None] | None = None
    explain: Callable[..., None] | None = None
    """Per-attempt scheduler explanations go here (``run --explain``; an ``ExplainRecorder``)."""
    source: str = "scenario"
    """The scenario's file, to name in a ``StepError``."""
    speed: float = 1.0
    """Clock seconds per wall second on the real-time loop (``serve --speed``)."""
    serve: Serve | None = None
    """Serve mode (see the module docstring): runs beside the agents, calls its third argument
    once listening (the steps wait for it); the run ends when it returns."""
    standing_renewals: bool = True
    """Let the kubelets leave their Lease renewals to the API server where nothing can tell
    (``Cluster.standing_renewals_apply``); False writes every renewal (the reference the
    differential test compares with)."""
    plain_listeners: bool = False
    """The run's five write listeners called one by one with a ``WriteRecord`` each, the
    reference path of the one listener that feeds them all (``bookkeeping.RunBook``; the tests
    compare the two)."""


@dataclass(slots=True)
class RunResult:
    scenario: str
    seed: int
    clock: str
    simulated_seconds: float
    wall_seconds: float
    pods: dict[str, int]
    expectations: list[ExpectationResult]
    events: int
    trace_hash: str
    waits_timed_out: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return (
            all(e.passed for e in self.expectations)
            and not self.waits_timed_out
            and not any(r.violations for r in self.extra.get("invariants", ()))
        )


class _Stop(Exception):
    """Raised inside the task group to end the run."""


def _pod_phases(server: ApiServer) -> dict[str, int]:
    pods: list[Pod] = server.list("Pod")[0]
    counts = {"total": len(pods), "pending": 0, "running": 0, "succeeded": 0, "failed": 0}
    for p in pods:
        phase = p.status.phase.lower()
        if phase in counts:
            counts[phase] += 1
    return counts


def _schedulers(cluster: Cluster) -> list[Any]:
    """The run's scheduler instances so far (the observer samples their queues)."""
    return [s for agent in cluster.agents for s in getattr(agent, "schedulers", ())]


async def _main(scenario: Scenario, seed: int, options: RunOptions, virtual: bool) -> RunResult:
    wall0 = time.perf_counter()
    loop = asyncio.get_running_loop()
    clock: LoopClock = (
        LoopClock(loop, virtual=virtual)
        if options.speed == 1.0
        else PacedClock(loop, virtual=virtual, speed=options.speed)
    )
    cluster = Cluster(scenario, seed, clock)
    cluster.explain = options.explain
    server = cluster.server
    invariants = InvariantChecker()
    tracer = TraceRecorder(options.trace)
    activity = PodActivity()
    observer = Observer(lambda: _schedulers(cluster))
    ca = scenario.autoscaling.cluster_autoscaler
    cost = CostMeter({g.name: g.price_per_hour for g in ca.node_groups} if ca is not None else {})
    observer.samplers.append(cost)
    cluster.on_step = lambda index, step: observer.mark(clock.now(), "step", step_label(index, step))
    if options.plain_listeners:
        for listener in (invariants, tracer, activity, observer, cost):
            server.add_write_listener(listener)
    else:
        server.add_write_listener(RunBook(invariants, tracer, activity, observer, cost), direct=True)
    if options.on_write is not None:
        server.add_write_listener(options.on_write)
    serve = options.serve
    # standing Lease renewals: never where a watcher through ``serve`` could want every one
    server.standing.allowed = options.standing_renewals and serve is None and cluster.standing_renewals_apply
    until = options.until if options.until is not None or serve is not None else scenario.until
    timeouts: list[str] = []

    async def guarded(path: str, work: Awaitable[None]) -> None:
        """``work``; a write the server refuses ends the run with a ``StepError`` at ``path``."""
        try:
            await work
        except ApiError as err:
            raise StepError(options.source, path, f"{err.reason}: {err.message}") from None

    async def initial_objects() -> None:
        for ns in auto_namespaces(scenario):
            await cluster.ensure_namespace(ns)
        for obj in creation_order(scenario.objects):
            await cluster.create_manifest(obj)

    async def timeline() -> None:
        await guarded("objects", initial_objects())
        for i, group in enumerate(scenario.nodes):
            await guarded(f"nodes[{i}]", cluster.create_nodes(group))
        prepare_cloud(cluster)
        for path, write in startup_writes(cluster):
            await guarded(path, write())
        cluster.start_schedulers()
        cluster.start_controllers()
        start_autoscalers(cluster)
        start_storage_drivers(cluster)
        start_dra_drivers(cluster)
        start_faults(cluster)
        if serve is not None:
            assert cluster._tg is not None  # the run's task group
            listening = asyncio.Event()
            cluster._tg.create_task(serving(serve, listening.set), name="http:serve")
            await listening.wait()
        # The set-up (nodes, agents, informers' caches) lives to the end: keep it out of the
        # collector's generations so that full collections only walk what the run creates.
        gc.freeze()
        for index, step in enumerate(scenario.steps):
            path = f"steps[{index}].{step.__struct_config__.tag}"
            await guarded(path, cluster.play(step, activity, timeouts, index))
        if serve is not None:
            return  # the run ends when serving does
        while True:
            quiet_until = activity.last_write + scenario.settle
            if clock.now() >= quiet_until:
                break
            await clock.sleep_until(quiet_until)
        await caches_caught_up()
        raise _Stop

    async def caches_caught_up() -> None:
        """Let the schedulers' informers catch up with the last writes (heartbeats, binds in
        flight) so that the cache-versus-truth invariants can be checked: at most 5 s."""
        for _ in range(500):
            await clock.sleep(0.01)
            if invariants.quiescent(cluster):
                break

    async def serving(serve: Serve, ready: Callable[[], None]) -> None:
        await serve(server, clock, ready)
        await caches_caught_up()
        raise _Stop

    async def bookmarks() -> None:
        """The watch cache's periodic BOOKMARK (upstream: about once a minute)."""
        while True:
            await clock.sleep(BOOKMARK_INTERVAL)
            server.bookmark()

    async def deadline() -> None:
        if until is not None:
            await clock.sleep_until(until)
            raise _Stop

    thresholds = gc.get_threshold()
    # A long run allocates millions of short-lived objects (events, copies of pods): collect the
    # young generation far less often. Collection timing never reaches the trace.
    gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
    try:
        async with asyncio.TaskGroup() as tg:
            cluster._tg = tg
            tg.create_task(timeline(), name="runner:timeline")
            tg.create_task(deadline(), name="runner:until")
            tg.create_task(bookmarks(), name="apiserver:bookmarks")
            tg.create_task(server.expire_events_on_time(), name="apiserver:event-ttl")
    except* _Stop:
        pass
    except* InputError as group:  # a StepError, or bad input found by ``serve`` (a port in use)
        failure = group.exceptions[0]
        assert isinstance(failure, InputError)
        raise failure from None
    finally:
        # Everything the run allocated is still in the young generation (no collection was
        # due): freezing first moves it, with the set-up, to the oldest generation in O(1), so
        # the first young collection after the threshold is restored does not walk the whole
        # run's heap (~0.6 s after a 5-minute 1,000-node churn). Cycles the run left are found
        # by the next full collection instead.
        gc.freeze()
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    checked = invariants.finish(cluster)
    pods: list[Pod] = server.list("Pod")[0]
    objects = {kind: server.list(kind)[0] for kind in REPORT_KINDS}
    for e in scenario.expect:
        if isinstance(e, ObjectCount) and e.kind not in objects:
            objects[e.kind] = server.list(e.kind)[0]
    results = check(scenario.expect, pods, invariants.overcommits, server.list("Node")[0], objects)
    extra: dict[str, Any] = {
        "agents": [a.report() for a in cluster.agents if hasattr(a, "report")],
        "invariants": checked,
    }
    if entries := workload_report(objects, pods):
        extra["workloads"] = entries
    end = clock.now()
    extra["metrics"] = observer.metrics(end)
    extra["metrics"]["cost"] = cost.document(end)
    counters = cluster.autoscaler_cloud.counters if cluster.autoscaler_cloud is not None else {}
    extra["metrics"]["autoscaler"] = {name: counters.get(name, 0) for name in COUNTERS}
    disrupted = getattr(cluster.autoscaler_cloud, "disrupted", None)
    if disrupted is not None:  # Karpenter: NodeClaims disrupted by reason (empty, underutilized, drifted, expired)
        extra["metrics"]["autoscaler"]["nodesDisrupted"] = dict(sorted(disrupted.items()))
    extra["series"] = series(observer, end, fault_markers(cluster.faults))
    extra["series"]["cost"] = cost.series_document(end)
    return RunResult(
        scenario=scenario.name,
        seed=seed,
        clock="virtual" if virtual else "real",
        simulated_seconds=round(clock.now(), 6),
        wall_seconds=time.perf_counter() - wall0,
        pods=_pod_phases(server),
        expectations=results,
        events=server.writes,
        trace_hash=tracer.hexdigest,
        waits_timed_out=timeouts,
        extra=extra,
    )


def run_scenario(scenario: Scenario, options: RunOptions | None = None) -> RunResult:
    """Run ``scenario`` to the end on its own event loop and return the result."""
    from emulator.base.runtime.clock import run

    options = options or RunOptions()
    seed = scenario.seed if options.seed is None else options.seed
    virtual = scenario.clock == "virtual" and not options.real_time and options.serve is None
    return run(lambda: _main(scenario, seed, options, virtual), virtual=virtual)
