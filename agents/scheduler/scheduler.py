"""The kube-scheduler agent: the scheduling cycle and the binding cycle (upstream
``scheduler.go``, ``schedule_one.go``); informer handlers live in ``eventhandlers.py``.

One ``Scheduler`` is one kube-scheduler instance with its own informers, cache and queue
(``schedulerOptions.instances: N`` runs N of them against the same API server, each
believing it is alone — as two schedulers with the same name would).

Scheduling cycle (``schedule_one``), one pod at a time, never awaiting the API:
pop → skip deleting or already-assumed pods → pick the profile by ``spec.schedulerName`` →
snapshot → PreFilter → Filter over ``numFeasibleNodesToFind`` nodes from the round-robin
start index (the nominated node first) → PostFilter when none fit → PreScore →
Score/Normalize/weights → select host (one seeded draw among the top scores) →
[``cycleCost``: the cycle takes ``fixed + perNode × nodes evaluated`` on the clock; events
delivered meanwhile reach the cache and are recorded as in-flight events, but the decision
was made on the snapshot taken at the start, as upstream's cycle races its informers] →
assume → Reserve → Permit → activate ``PodsToActivate`` → the binding cycle, as a task of
the scheduler's task group. The loop yields to the event loop between cycles, so binding
cycles and informer deliveries interleave with scheduling as upstream's goroutines do.

Binding cycle (concurrent): WaitOnPermit → ``queue.done`` → PreBind → Bind (through the
client: with latency, and it may fail) → ``cache.finish_binding`` → PostBind → activate.
On failure: Unreserve, forget (a forgotten pod is an ``AssignedPodDelete`` for the others;
for a rejection deferred and excluding the pod itself), requeue, clear the nomination.

Failure handling (``handle_failure``): rejected pods remember their rejecting plugins (they
drive queueing hints); the pod gets ``PodScheduled=False`` with reason ``Unschedulable`` (or
``SchedulerError``) and upstream's ``0/N nodes are available: ...`` message, plus a
``FailedScheduling`` Event (aggregated: a repeat bumps the count); success gives a
``Scheduled`` Event. Those API writes run as tasks: the cycle itself does not wait on them.

Metrics (``schedule_attempts_total`` as upstream): an attempt counts ``scheduled`` when its
binding succeeds, ``unschedulable`` on a rejection, ``error`` otherwise.

Filter and Score run vectorised over the snapshot's ``NodeTable`` (``framework/vectorized.py``:
the same feasible nodes, processed count, statuses, scores and host as the per-node path, which
``SchedulerOptions(vectorized=False)`` restores); ``explain`` always takes the per-node path.

``schedulerOptions.assumeCache: false`` removes the assume step: the cache learns of a
binding only from the watch, so two quick cycles can pick the same free room (a race the
kubelet's admission then settles). ``queueingHints: false`` gives the pre-1.32 queue;
``inFlightEvents: false`` loses the events that arrive during a pod's attempt (the queue's
in-flight protection off).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final

import numpy as np
from msgspec.structs import replace

from agents.scheduler.cache import Cache, CacheError, Snapshot
from agents.scheduler.eventhandlers import EventHandlers, NodeEvents, node_update_events
from agents.scheduler.framework import vectorized
from agents.scheduler.framework.diagnosis import Diagnosis, FitError
from agents.scheduler.framework.interface import NodeToStatus, NominatingMode, PluginFactory, ProfileSpec
from agents.scheduler.framework.node_table import IntArray
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import (
    PODS_TO_ACTIVATE_KEY,
    ClusterEventWithHint,
    Code,
    CycleState,
    NodeInfo,
    PodInfo,
    PodsToActivate,
    Status,
)
from agents.scheduler.framework.waiting_pods import WaitingPodsMap
from agents.scheduler.metrics import SchedulingMetrics
from agents.scheduler.queue import EventAssignedPodDelete, QueueClosed, QueuedPodInfo, SchedulingQueue
from emulator.api.core import Event, Pod, PodCondition
from emulator.api.errors import ApiError, Conflict, NotFound
from emulator.api.meta import ObjectMeta, ObjectReference
from emulator.client.client import Client
from emulator.client.informer import Informer
from emulator.runtime.clock import Clock

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

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5
NOTE_LENGTH_LIMIT: Final = 1024
"""Upstream ``validation.NoteLengthLimit``: longer Event messages are truncated with " ..."."""


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind`` (adaptive when the percentage is 0 or unset)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    p = percentage or 0
    if p == 0:
        p = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    k = num_all_nodes * p // 100
    return max(k, MIN_FEASIBLE_NODES_TO_FIND)


def select_host(totals: Sequence[tuple[str, int]], rng: random.Random) -> str:
    """The highest total; ties broken uniformly at random with one draw.

    Upstream's ``selectHost`` keeps one of the top-scoring nodes by reservoir sampling (one
    ``rand.Intn`` per tie). Go's random stream cannot be reproduced, only its distribution:
    every top-scoring node is equally likely. One ``randrange`` over the ties, in list order,
    gives that distribution with a single draw (and only when there is a tie)."""
    best = max(score for _, score in totals)
    top = [name for name, score in totals if score == best]
    if len(top) == 1:
        return top[0]
    return top[rng.randrange(len(top))]


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    assume_cache: bool = True
    queueing_hints: bool = True
    in_flight_events: bool = True
    """False: the queue's in-flight protection is off (no in-flight events, no moveRequestCycle)."""
    cycle_cost_fixed: float = 0.0
    cycle_cost_per_node: float = 0.0
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    explain: Callable[..., None] | None = None
    """Called after every attempt with its per-plugin explanation (``run --explain``)."""
    vectorized: bool = True
    """Filter and Score over the snapshot's NodeTable (False: node by node; same results)."""


class NamespaceLister:
    """Namespaces from the scheduler's informer, for plugins' namespaceSelectors."""

    def __init__(self, informer: Informer) -> None:
        self._informer = informer

    def get(self, name: str) -> Any:
        return self._informer.get(name)

    def list(self) -> list[Any]:
        return sorted(self._informer.objects(), key=lambda n: n.metadata.name)


@dataclass(slots=True)
class _Scheduled:
    node: str
    evaluated: int
    feasible: int


class _SchedulingError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


class Scheduler(EventHandlers):
    """One kube-scheduler instance."""

    def __init__(
        self,
        *,
        client: Client,
        clock: Clock,
        rng: random.Random,
        profiles: Sequence[ProfileSpec],
        registry: Mapping[str, PluginFactory],
        options: SchedulerOptions = SchedulerOptions(),
        name: str = "default-scheduler",
    ) -> None:
        self.name = name
        self.client = client
        self.clock = clock
        self.rng = rng
        self._event_rng = random.Random(rng.getrandbits(64))
        """Event names: their own stream, so API writes never shift host tie-breaks."""
        self.options = options
        self.cache = Cache(clock)
        self.snapshot = Snapshot()
        self.waiting_pods = WaitingPodsMap()
        self.metrics = SchedulingMetrics()
        self.pods = Informer(client, "Pod")
        self.nodes = Informer(client, "Node")
        self.namespaces = Informer(client, "Namespace")
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
        )
        for f in self.frameworks.values():
            f.set_nominator(self.queue)
            f.run_async = self._run_async
            f.activate = self.queue.activate
            f.get_pod = self._get_pod
        self.pods.add_handlers(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        self.nodes.add_handlers(self._on_node_add, self._on_node_update, self._on_node_delete)
        self.next_start_node_index = 0
        self._first_seen: dict[str, float] = {}
        self._events: dict[tuple[str, str, str], tuple[str, int]] = {}
        self._evaluated = 0
        """Nodes the current cycle evaluated (for ``cycleCost.perNode``)."""
        self._feasible_rows: IntArray | None = None
        """The table rows of the last vectorised search's feasible nodes (same order)."""
        self._tg: asyncio.TaskGroup | None = None
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
        return None if status.is_success() else (status, plugin)

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        ns = self.namespaces.get(namespace)
        return ns.metadata.labels if ns is not None else {}

    def _get_pod(self, namespace: str, name: str) -> Pod | None:
        pod: Pod | None = self.pods.get(name, namespace)
        return pod

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
            await self.namespaces.synced.wait()
            await self.nodes.synced.wait()
            await self.pods.synced.wait()
            tg.create_task(self.queue.run(), name=f"{self.name}:queue-flush")
            self.ready.set()
            try:
                while True:
                    await self.schedule_one()
                    await asyncio.sleep(0)  # let binding cycles and informers run (no clock time)
            except QueueClosed:
                return

    # --- the scheduling cycle -----------------------------------------------------------

    async def schedule_one(self) -> None:
        qpi = await self.queue.pop()
        pod = qpi.pod
        uid = pod.metadata.uid
        fwk = self.frameworks.get(pod.spec.scheduler_name)
        if fwk is None or self.cache.is_assumed_pod(pod):
            self.queue.done(uid)
            return
        if pod.metadata.deletion_timestamp is not None:
            self.queue.done(uid)
            self._spawn(
                self._event(
                    pod,
                    "Warning",
                    "FailedScheduling",
                    f"skip schedule deleting pod: {pod.metadata.namespace}/{pod.metadata.name}",
                ),
                f"event:{pod.metadata.namespace}/{pod.metadata.name}",
            )
            return
        start, wall0 = self.clock.now(), time.perf_counter()
        if qpi.attempts == 1:
            self.metrics.queue_wait_seconds.append(start - self._first_seen.get(uid, start))
        state = CycleState(qpi.pod_info)
        to_activate = PodsToActivate()
        state.write(PODS_TO_ACTIVATE_KEY, to_activate)
        self._evaluated = 0
        try:
            self.cache.update_snapshot(self.snapshot)
            result = self.schedule_pod(fwk, state, pod)
        except FitError as fit:
            nominated = self._post_filter(fwk, state, pod, fit)
            await self._cycle_cost()
            self._record_attempt(start, wall0, "unschedulable")
            if self.options.explain is not None:  # explain hook
                self._explain(fwk, qpi, start, None, str(fit), nominated)
            self.handle_failure(qpi, Status(Code.Unschedulable, str(fit)), fit, nominated)
            return
        except (_SchedulingError, CacheError) as err:
            status = err.status if isinstance(err, _SchedulingError) else Status(Code.Error, str(err))
            await self._cycle_cost()
            self._record_attempt(start, wall0, "unschedulable" if status.is_rejected() else "error")
            if self.options.explain is not None:  # explain hook
                self._explain(fwk, qpi, start, None, status.message(), "")
            self.handle_failure(qpi, status, None, "")
            return
        await self._cycle_cost()
        host = result.node
        assumed = replace(pod, spec=replace(pod.spec, node_name=host))
        if self.options.assume_cache:
            try:
                self.cache.assume_pod(assumed)
            except CacheError as err:  # e.g. the pod was bound by someone else meanwhile
                self._record_attempt(start, wall0, "error")
                self.handle_failure(qpi, Status(Code.Error, str(err)), None, "")
                return
        self.queue.delete_nominated_pod_if_exists(pod)
        status = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if status.is_success():
            status = fwk.run_permit_plugins(state, assumed, host)
        if not status.is_success() and not status.is_wait():
            if status.code is not Code.Success:
                fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            self._record_attempt(start, wall0, "unschedulable" if status.is_rejected() else "error")
            if self.options.explain is not None:  # explain hook
                self._explain(fwk, qpi, start, host, status.message(), "")
            rejection = self._one_node_fit_error(assumed, host, status) if status.is_rejected() else None
            self.handle_failure(qpi, Status(status.code, str(rejection)) if rejection else status, rejection, "")
            return
        self._record_attempt(start, wall0, None)
        if self.options.explain is not None:  # explain hook
            self._explain(fwk, qpi, start, host, None, "")
        self._activate(to_activate)
        self._spawn(
            self.binding_cycle(fwk, state, qpi, assumed, host),
            f"bind:{pod.metadata.namespace}/{pod.metadata.name}",
        )

    async def _cycle_cost(self) -> None:
        """``schedulerOptions.cycleCost``: the decision is made; the cycle now takes its time
        on the clock, during which informer events keep arriving (and count as in-flight)."""
        cost = self.options.cycle_cost_fixed + self.options.cycle_cost_per_node * self._evaluated
        if cost > 0:
            await self.clock.sleep(cost)

    def _spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        assert self._tg is not None, "the scheduler is not running"
        self._tg.create_task(coro, name=f"{self.name}:{name}")

    def _activate(self, to_activate: PodsToActivate) -> None:
        if to_activate.map:
            pods = list(to_activate.map.values())
            to_activate.map.clear()
            self.queue.activate(pods)

    @staticmethod
    def _one_node_fit_error(pod: Pod, host: str, status: Status) -> FitError:
        """Reserve/Permit rejections are reported as a FitError over the one chosen node."""
        diagnosis = Diagnosis(node_to_status=NodeToStatus({host: status}))
        diagnosis.add_plugin_status(status)
        return FitError(pod, 1, diagnosis)

    # --- explain hook (agents/scheduler/explain.py): after the attempt's decision, never when
    # options.explain is None; on the cycle's snapshot, a fresh CycleState, its own rng.
    def _explain(
        self, fwk: Framework, qpi: QueuedPodInfo, start: float, selected: str | None, msg: str | None, nom: str | None
    ) -> None:
        from agents.scheduler.explain import Decided, explain_pod  # explain imports this module

        decided = Decided(selected, msg, nom or "")
        exp = explain_pod(fwk, self.snapshot, qpi.pod, rng=random.Random(0), decided=decided)
        assert self.options.explain is not None
        self.options.explain(qpi.attempts, start, qpi.pod, exp)

    # --- end of explain hook

    def _record_attempt(self, start: float, wall0: float, result: str | None) -> None:
        """The attempt's durations; its result, unless the binding cycle will tell (None)."""
        m = self.metrics
        if result == "scheduled":
            m.scheduled += 1
        elif result == "unschedulable":
            m.unschedulable += 1
        elif result == "error":
            m.errors += 1
        m.attempt_seconds.append(self.clock.now() - start)
        m.attempt_wall_seconds.append(time.perf_counter() - wall0)

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: Pod) -> _Scheduled:
        """Upstream ``schedulePod``: the host, or ``FitError`` / ``_SchedulingError``."""
        if self.snapshot.num_nodes() == 0:
            raise _SchedulingError(Status(Code.UnschedulableAndUnresolvable, "no nodes available to schedule pods"))
        feasible, diagnosis, evaluated = self.find_nodes_that_fit(fwk, state, pod)
        if not feasible:
            raise FitError(pod, self.snapshot.num_nodes(), diagnosis)
        if len(feasible) == 1:
            return _Scheduled(feasible[0].name, evaluated, 1)
        rows = self._feasible_rows
        if rows is not None and fwk.has_score_plugins():
            return _Scheduled(self._prioritize_rows(fwk, state, pod, feasible, rows), evaluated, len(feasible))
        totals = self.prioritize_nodes(fwk, state, pod, feasible)
        return _Scheduled(select_host(totals, self.rng), evaluated, len(feasible))

    def _prioritize_rows(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo], rows: IntArray
    ) -> str:
        """``prioritize_nodes`` + ``select_host`` over table rows: the chosen node's name."""
        status = fwk.run_pre_score_plugins(state, pod, nodes)
        if not status.is_success():
            raise _SchedulingError(status)
        totals, status = fwk.score_rows(state, pod, self.snapshot.table, rows, nodes)
        if not status.is_success():
            raise _SchedulingError(status)
        return nodes[vectorized.select_host(totals, self.rng)].name

    def find_nodes_that_fit(self, fwk: Framework, state: CycleState, pod: Pod) -> tuple[list[NodeInfo], Diagnosis, int]:
        diagnosis = Diagnosis(node_to_status=NodeToStatus())
        self._feasible_rows = None
        all_nodes = self.snapshot.node_info_list
        pre, status, plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
        diagnosis.unschedulable_plugins.update(plugins)
        if not status.is_success():
            if not status.is_rejected():
                raise _SchedulingError(status)
            diagnosis.node_to_status.set_absent_nodes_status(status)
            diagnosis.add_plugin_status(status)
            diagnosis.pre_filter_msg = status.message()
            return [], diagnosis, 0
        nominated = pod.status.nominated_node_name
        if nominated and nominated in self.snapshot.node_info_map:
            ni = self.snapshot.node_info_map[nominated]
            s = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
            if s.is_success():
                self._evaluated = 1
                return [ni], diagnosis, 1
        nodes = all_nodes
        if pre is not None and not pre.all_nodes():
            names = pre.node_names or frozenset()
            index = self.snapshot.node_info_map
            nodes = [index[n] for n in sorted(names) if n in index]
            absent = Status(
                Code.UnschedulableAndUnresolvable,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",
            )
            diagnosis.node_to_status.set_absent_nodes_status(absent)
        feasible, evaluated = self._find_feasible(fwk, state, pod, diagnosis, nodes)
        self._evaluated = evaluated
        # Upstream advances the start index by the nodes processed, modulo all the nodes.
        self.next_start_node_index = (self.next_start_node_index + evaluated) % len(all_nodes)
        return feasible, diagnosis, evaluated

    def _find_feasible(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, nodes: list[NodeInfo]
    ) -> tuple[list[NodeInfo], int]:
        """The feasible nodes from the start index, and how many nodes were processed."""
        self._feasible_rows = None
        n = len(nodes)
        if n == 0:
            return [], 0
        percentage = fwk.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.options.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(percentage, n)
        if not fwk.has_score_plugins():
            to_find = min(to_find, 1)
        start = self.next_start_node_index
        if not fwk.has_filter_plugins():
            chosen = [nodes[(start + i) % n] for i in range(to_find)]
            return chosen, len(chosen)
        if self.options.vectorized:
            table = self.snapshot.table
            candidates = None
            if nodes is not self.snapshot.node_info_list:
                candidates = np.array([table.index[ni.name] for ni in nodes], dtype=np.int64)
            rows, processed, error = fwk.find_feasible_rows(state, pod, table, candidates, start, to_find, diagnosis)
            if error is not None:
                raise _SchedulingError(error)
            self._feasible_rows = rows
            if len(rows) <= 1:
                return [table.infos[r] for r in rows.tolist()], processed
            first, last = int(rows[0]), int(rows[-1])
            if candidates is None and last - first == len(rows) - 1:
                # Rows visited in table order without a wrap or a gap: one slice of the list.
                return list(table.infos[first : last + 1]), processed
            return list(itemgetter(*rows.tolist())(table.infos)), processed
        feasible: list[NodeInfo] = []
        failures = 0
        for i in range(n):
            ni = nodes[(start + i) % n]
            s = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
            if s.is_success():
                feasible.append(ni)
                if len(feasible) >= to_find:
                    break
            elif s.is_rejected():
                failures += 1
                diagnosis.node_to_status.set(ni.name, s)
                diagnosis.add_plugin_status(s)
            else:
                raise _SchedulingError(s)
        return feasible, len(feasible) + failures

    def prioritize_nodes(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> list[tuple[str, int]]:
        if not fwk.has_score_plugins():
            return [(n.name, 1) for n in nodes]
        status = fwk.run_pre_score_plugins(state, pod, nodes)
        if not status.is_success():
            raise _SchedulingError(status)
        scores, status = fwk.run_score_plugins(state, pod, nodes)
        if not status.is_success():
            raise _SchedulingError(status)
        return [(s.name, s.total_score) for s in scores]

    def _post_filter(self, fwk: Framework, state: CycleState, pod: Pod, fit: FitError) -> str | None:
        """Run PostFilter (preemption): the node it nominates, "" to clear a stale nomination
        (a result without a node, mode Override), None to leave the nomination alone."""
        if not fwk.has_post_filter_plugins():
            return None
        result, status = fwk.run_post_filter_plugins(state, pod, fit.diagnosis.node_to_status)
        fit.diagnosis.post_filter_msg = status.message()
        if result is not None and result.nominating_mode is NominatingMode.Override:
            return result.nominated_node_name
        return None

    def _forget(self, assumed: Pod) -> bool:
        """Forget an assumed pod; whether there was one to forget."""
        if self.options.assume_cache and self.cache.is_assumed_pod(assumed):
            self.cache.forget_pod(assumed)
            return True
        return False

    # --- the binding cycle --------------------------------------------------------------

    async def binding_cycle(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, host: str
    ) -> None:
        uid = assumed.metadata.uid
        status = await fwk.wait_on_permit(assumed)
        if not status.is_success():
            fit = self._one_node_fit_error(assumed, host, status) if status.is_rejected() else None
            self._binding_failure(fwk, state, qpi, assumed, host, Status(status.code, str(fit)) if fit else status, fit)
            return
        self.queue.done(uid)
        status = await fwk.run_pre_bind_plugins(state, assumed, host)
        if status.is_success():
            status = await fwk.run_bind_plugins(state, assumed, host)
        if self.options.assume_cache and self.cache.is_assumed_pod(assumed):
            self.cache.finish_binding(assumed)
        if not status.is_success():
            # PreBind/Bind failures carry no rejecting plugins: the pod backs off as on an error.
            self._binding_failure(fwk, state, qpi, assumed, host, status, None)
            return
        now = self.clock.now()
        self.metrics.scheduled += 1
        self.metrics.bound(now, now - self._first_seen.pop(uid, now))
        fwk.run_post_bind_plugins(state, assumed, host)
        with contextlib.suppress(KeyError):
            self._activate(state.read(PODS_TO_ACTIVATE_KEY))
        pod = assumed
        await self._event(
            pod, "Normal", "Scheduled", f"Successfully assigned {pod.metadata.namespace}/{pod.metadata.name} to {host}"
        )

    def _binding_failure(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: Pod,
        host: str,
        status: Status,
        fit: FitError | None,
    ) -> None:
        """Upstream ``handleBindingCycleError``."""
        if status.is_rejected():
            self.metrics.unschedulable += 1
        else:
            self.metrics.errors += 1
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        forgotten = self._forget(assumed)
        if forgotten and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, assumed, None)
        self.handle_failure(qpi, status, fit, "")
        if forgotten and status.is_rejected():
            # Deferred and without the pod itself: as an in-flight event it would requeue it.
            uid = assumed.metadata.uid
            self.queue.move_all_to_active_or_backoff(
                EventAssignedPodDelete, assumed, None, lambda p: p.metadata.uid != uid
            )

    # --- failures -----------------------------------------------------------------------

    def handle_failure(
        self,
        qpi: QueuedPodInfo,
        status: Status,
        fit: FitError | None,
        nominated: str | None = None,
    ) -> None:
        """Upstream ``handleSchedulingFailure``: requeue, then report on the pod (async).

        ``nominated``: the node to nominate, "" to clear the nomination, None to keep it."""
        pod = qpi.pod
        reason = "Unschedulable" if status.is_rejected() else "SchedulerError"
        if fit is not None:
            qpi.unschedulable_plugins = set(fit.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit.diagnosis.pending_plugins)
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        current: Pod | None = self.pods.get(pod.metadata.name, pod.metadata.namespace)
        if current is not None and current.metadata.uid == pod.metadata.uid and not current.spec.node_name:
            qpi.pod_info = PodInfo(current)
            self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)
        self.queue.done(pod.metadata.uid)
        if nominated:
            self.queue.add_nominated_pod(qpi.pod_info, nominated)
        elif nominated == "":
            self.queue.delete_nominated_pod_if_exists(pod)
        message = str(fit) if fit is not None else status.message()
        self._spawn(
            self._report_failure(pod, reason, message, nominated),
            f"status:{pod.metadata.namespace}/{pod.metadata.name}",
        )

    async def _report_failure(self, pod: Pod, reason: str, message: str, nominated: str | None) -> None:
        await self._event(pod, "Warning", "FailedScheduling", message)
        for _ in range(5):
            try:
                current: Pod = await self.client.get("Pod", pod.metadata.name, pod.metadata.namespace)
            except NotFound:
                return
            if current.metadata.uid != pod.metadata.uid or current.spec.node_name:
                return
            conds = [c for c in current.status.conditions if c.type != "PodScheduled"]
            old = next((c for c in current.status.conditions if c.type == "PodScheduled"), None)
            cond = PodCondition(
                type="PodScheduled",
                status="False",
                reason=reason,
                message=message,
                last_transition_time=(
                    old.last_transition_time if old is not None and old.status == "False" else self.clock.timestamp()
                ),
            )
            new_nominated = current.status.nominated_node_name if nominated is None else nominated
            if (
                old is not None
                and (old.status, old.reason, old.message) == ("False", reason, message)
                and current.status.nominated_node_name == new_nominated
            ):
                return
            status = replace(current.status, conditions=[*conds, cond], nominated_node_name=new_nominated)
            try:
                await self.client.update_status(replace(current, status=status))
                return
            except Conflict:
                continue
            except ApiError:
                return

    async def _event(self, pod: Pod, type_: str, reason: str, message: str) -> None:
        """Record an Event; a repeat of the same (pod, reason, message) bumps its count
        (upstream's EventCorrelator aggregation) instead of adding an object."""
        if len(message) > NOTE_LENGTH_LIMIT:
            message = message[: NOTE_LENGTH_LIMIT - 4] + " ..."
        key = (pod.metadata.uid, reason, message)
        now = self.clock.timestamp()
        seen = self._events.get(key)
        with contextlib.suppress(ApiError):
            if seen is not None:
                name, count = seen
                self._events[key] = (name, count + 1)
                current: Event = await self.client.get("Event", name, pod.metadata.namespace)
                await self.client.update(replace(current, count=count + 1, last_timestamp=now))
                return
            name = f"{pod.metadata.name}.{self._event_rng.getrandbits(64):016x}"
            self._events[key] = (name, 1)
            ev = Event(
                metadata=ObjectMeta(name=name, namespace=pod.metadata.namespace),
                involved_object=ObjectReference(
                    kind="Pod", namespace=pod.metadata.namespace, name=pod.metadata.name, uid=pod.metadata.uid
                ),
                reason=reason,
                message=message,
                type=type_,
                reporting_component=self.name,
                first_timestamp=now,
                last_timestamp=now,
            )
            await self.client.create(ev)

    # --- reporting ----------------------------------------------------------------------

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


def start_schedulers(cluster: Any, tg: asyncio.TaskGroup) -> list[Any]:
    """Build the scenario's scheduler instance(s) and start them in ``tg``."""
    from agents.scheduler.setup import build_scheduler_setup

    setup = build_scheduler_setup(cluster.scenario)
    options = setup.options
    explain = getattr(cluster, "explain", None)
    if explain is not None:
        options = dataclasses.replace(options, explain=explain)
    schedulers: list[Scheduler] = []
    for i in range(setup.instances):
        name = "default-scheduler" if setup.instances == 1 else f"default-scheduler-{i}"
        sched = Scheduler(
            client=cluster.new_client(name),
            clock=cluster.clock,
            rng=cluster.seeds.stream(f"scheduler/{i}"),
            profiles=setup.profiles,
            registry=setup.registry,
            options=options,
            name=name,
        )
        schedulers.append(sched)
        tg.create_task(sched.run(), name=f"scheduler:{name}")
    return [SchedulerGroup(schedulers, setup.missing_plugins)]
