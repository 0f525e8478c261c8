"""The kube-scheduler agent: informers → cache and queue; the scheduling cycle; the
binding cycle (upstream ``scheduler.go``, ``schedule_one.go``, ``eventhandlers.go``).

One ``Scheduler`` is one kube-scheduler instance with its own informers, cache and queue
(``schedulerOptions.instances: N`` runs N of them against the same API server, each
believing it is alone — as two schedulers with the same name would).

Scheduling cycle (``schedule_one``), one pod at a time, never awaiting the API:
pop → pick the profile by ``spec.schedulerName`` → snapshot → [``cycleCost``: the cycle
takes that long on the clock; events delivered meanwhile reach the cache and are recorded
as in-flight events, but the decision is made on the snapshot taken at the start] →
PreFilter → Filter over ``numFeasibleNodesToFind`` nodes from the round-robin start index
(nominated node first) → PostFilter when none fit → PreScore → Score/Normalize/weights →
select host (reservoir sampling among the top scores, seeded) → assume → Reserve → Permit →
binding cycle started as a task of the scheduler's task group.

Binding cycle (concurrent): WaitOnPermit → ``queue.done`` → PreBind → Bind (through the
client: with latency, and it may fail) → ``cache.finish_binding`` → PostBind. On failure:
Unreserve, forget, requeue with backoff, PodScheduled=False.

Failure handling: the pod's status gets ``PodScheduled=False`` with reason
``Unschedulable`` (or ``SchedulerError``) and the ``0/N nodes are available: ...`` message,
plus a ``FailedScheduling`` Event; success gives a ``Scheduled`` Event. Those API writes
run as tasks, so the cycle itself does not wait for them (as v1.34's async API calls).

``schedulerOptions.assumeCache: false`` removes the assume step: the cache learns of a
binding only from the watch, so two quick cycles can pick the same free room (a race the
kubelet's admission then settles). ``queueingHints: false`` gives the pre-1.32 queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from msgspec.structs import replace

from agents.scheduler.cache import Cache, CacheError, Snapshot
from agents.scheduler.framework.diagnosis import Diagnosis, FitError
from agents.scheduler.framework.interface import NodeToStatus, NominatingMode, PluginFactory, ProfileSpec
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    Status,
)
from agents.scheduler.framework.waiting_pods import WaitingPodsMap
from agents.scheduler.metrics import SchedulingMetrics
from agents.scheduler.queue import EventAssignedPodDelete, QueueClosed, QueuedPodInfo, SchedulingQueue
from emulator.api.core import Event, Node, Pod, PodCondition
from emulator.api.errors import ApiError, Conflict, NotFound
from emulator.api.meta import ObjectMeta, ObjectReference
from emulator.client.client import Client
from emulator.client.informer import Informer
from emulator.runtime.clock import Clock

__all__ = ["NodeEvents", "Scheduler", "SchedulerOptions", "num_feasible_nodes_to_find", "select_host"]

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5


class NodeEvents:
    """The Node cluster events the informer derives (upstream ``framework/events.go``)."""

    Add: Final = ClusterEvent(EventResource.Node, ActionType.Add, "NodeAdd")
    Delete: Final = ClusterEvent(EventResource.Node, ActionType.Delete, "NodeDelete")
    Allocatable: Final = ClusterEvent(EventResource.Node, ActionType.UpdateNodeAllocatable, "NodeAllocatableChange")
    Label: Final = ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel, "NodeLabelChange")
    Taint: Final = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint, "NodeTaintChange")
    Condition: Final = ClusterEvent(EventResource.Node, ActionType.UpdateNodeCondition, "NodeConditionChange")
    Annotation: Final = ClusterEvent(EventResource.Node, ActionType.UpdateNodeAnnotation, "NodeAnnotationChange")


def node_update_events(old: Node, new: Node) -> list[ClusterEvent]:
    """Upstream ``nodeSchedulingPropertiesChange``: one event per changed property."""
    out: list[ClusterEvent] = []
    if old.status.allocatable != new.status.allocatable:
        out.append(NodeEvents.Allocatable)
    if old.metadata.labels != new.metadata.labels:
        out.append(NodeEvents.Label)
    if old.spec.taints != new.spec.taints or old.spec.unschedulable != new.spec.unschedulable:
        out.append(NodeEvents.Taint)
    if [(c.type, c.status) for c in old.status.conditions] != [(c.type, c.status) for c in new.status.conditions]:
        out.append(NodeEvents.Condition)
    if old.metadata.annotations != new.metadata.annotations:
        out.append(NodeEvents.Annotation)
    return out


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
    """The highest total; ties broken by reservoir sampling (uniform among the top)."""
    selected, best = totals[0]
    count = 1
    for name, score in totals[1:]:
        if score > best:
            selected, best, count = name, score, 1
        elif score == best:
            count += 1
            if rng.randrange(count) == 0:
                selected = name
    return selected


class NamespaceLister:
    """Namespaces from the scheduler's informer, for plugins' namespaceSelectors."""

    def __init__(self, informer: Informer) -> None:
        self._informer = informer

    def get(self, name: str) -> Any:
        return self._informer.get(name)

    def list(self) -> list[Any]:
        return sorted(self._informer.objects(), key=lambda n: n.metadata.name)


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    assume_cache: bool = True
    queueing_hints: bool = True
    cycle_cost_fixed: float = 0.0
    cycle_cost_per_node: float = 0.0
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    explain: Callable[..., None] | None = None
    """``explain(attempt, time, pod, explanation)`` after every attempt's decision (``run --explain``;
    ``agents.scheduler.explain.ExplainRecorder.record``); None: no cost."""


@dataclass(slots=True)
class _Scheduled:
    node: str
    evaluated: int
    feasible: int


class Scheduler:
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
        self.options = options
        self.cache = Cache(clock)
        self.snapshot = Snapshot()
        self.waiting_pods = WaitingPodsMap()
        self.metrics = SchedulingMetrics()
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
            pre_enqueue=self._pre_enqueue,
            hints=lambda pod: self._hints.get(pod.spec.scheduler_name, {}),
            registered_events=registered,
            queueing_hints=options.queueing_hints,
            pod_initial_backoff=options.pod_initial_backoff,
            pod_max_backoff=options.pod_max_backoff,
        )
        for f in self.frameworks.values():
            f.set_nominator(self.queue)
            f.run_async = self._run_async
            f.activate = self.queue.activate
            f.get_pod = self._get_pod
        self.pods = Informer(client, "Pod")
        self.nodes = Informer(client, "Node")
        self.pods.add_handlers(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        self.nodes.add_handlers(self._on_node_add, self._on_node_update, self._on_node_delete)
        self.next_start_node_index = 0
        self._first_seen: dict[str, float] = {}
        self._tg: asyncio.TaskGroup | None = None
        self.ready = asyncio.Event()

    def __repr__(self) -> str:
        return f"<Scheduler {self.name!r} {self.queue!r} {self.cache!r}>"

    def responsible_for(self, pod: Pod) -> bool:
        return pod.spec.scheduler_name in self.frameworks

    # --- event handlers (upstream eventhandlers.go) --------------------------------------

    def _pre_enqueue(self, pod: Pod) -> tuple[Status, str] | None:
        fwk = self.frameworks.get(pod.spec.scheduler_name)
        if fwk is None:
            return None
        status, plugin = fwk.run_pre_enqueue_plugins(pod)
        return None if status.is_success() else (status, plugin)

    @staticmethod
    def _terminal(pod: Pod) -> bool:
        return pod.status.phase in ("Succeeded", "Failed")

    def _on_pod_add(self, pod: Pod) -> None:
        if pod.spec.node_name:
            if not self._terminal(pod):
                self.cache.add_pod(pod)
                self.queue.assigned_pod_added(pod)
        elif self.responsible_for(pod) and pod.metadata.deletion_timestamp is None:
            self._first_seen.setdefault(pod.metadata.uid, self.clock.now())
            self.queue.add(pod)

    def _on_pod_update(self, old: Pod, new: Pod) -> None:
        if old.metadata.resource_version == new.metadata.resource_version:
            return
        if not old.spec.node_name and new.spec.node_name:
            if self.responsible_for(old):
                self.queue.delete(old)
            if not self._terminal(new):
                self.cache.add_pod(new)
                self.queue.assigned_pod_added(new)
        elif new.spec.node_name:
            if self._terminal(new) and not self._terminal(old):
                self.cache.remove_pod(old)
                self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, old, None)
            elif not self._terminal(new):
                self.cache.update_pod(old, new)
                self.queue.assigned_pod_updated(old, new, ClusterEvent(EventResource.AssignedPod, ActionType.Update))
        elif self.responsible_for(new):
            if self.cache.is_assumed_pod(new):
                return
            self.queue.update(old, new)

    def _on_pod_delete(self, pod: Pod) -> None:
        if pod.spec.node_name:
            if not self._terminal(pod):
                with contextlib.suppress(CacheError):  # a pod the cache never saw (e.g. terminal)
                    self.cache.remove_pod(pod)
                self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, pod, None)
            return
        if not self.responsible_for(pod):
            return
        self.queue.delete(pod)
        self._first_seen.pop(pod.metadata.uid, None)
        fwk = self.frameworks[pod.spec.scheduler_name]
        if fwk.reject_waiting_pod(pod.metadata.uid) or pod.status.nominated_node_name:
            self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, pod, None)

    def _on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NodeEvents.Add, None, node)

    def _on_node_update(self, old: Node, new: Node) -> None:
        self.cache.update_node(old, new)
        for event in node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def _on_node_delete(self, node: Node) -> None:
        self.queue.move_all_to_active_or_backoff(NodeEvents.Delete, node, None)
        self.cache.remove_node(node)

    # --- running ------------------------------------------------------------------------

    def _get_pod(self, namespace: str, name: str) -> Pod | None:
        pod: Pod | None = self.pods.get(name, namespace)
        return pod

    def _run_async(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        """Plugins' API work (preemption) as a named task of the scheduler's task group."""
        if self._tg is None:
            coro.close()
            raise RuntimeError("the scheduler is not running")
        self._tg.create_task(coro, name=f"{self.name}:{name}")

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
            except QueueClosed:
                return

    # --- the scheduling cycle -----------------------------------------------------------

    async def schedule_one(self) -> None:
        qpi = await self.queue.pop()
        pod = qpi.pod
        uid = pod.metadata.uid
        fwk = self.frameworks.get(pod.spec.scheduler_name)
        if fwk is None or pod.metadata.deletion_timestamp is not None or self.cache.is_assumed_pod(pod):
            self.queue.done(uid)
            return
        start, wall0 = self.clock.now(), time.perf_counter()
        if qpi.attempts == 1:
            self.metrics.queue_wait_seconds.append(start - self._first_seen.get(uid, start))
        state = CycleState()
        self.cache.update_snapshot(self.snapshot)
        cost = self.options.cycle_cost_fixed + self.options.cycle_cost_per_node * self.snapshot.num_nodes()
        if cost > 0:
            await self.clock.sleep(cost)
        try:
            result = self.schedule_pod(fwk, state, pod)
        except FitError as fit:
            nominated = self._post_filter(fwk, state, pod, fit)
            self._record_attempt(start, wall0, "unschedulable")
            if self.options.explain is not None:  # explain hook
                self._explain(fwk, qpi, start, None, str(fit), nominated)
            self.handle_failure(fwk, qpi, Status(Code.Unschedulable, str(fit)), fit.diagnosis, fit, nominated)
            return
        except _SchedulingError as err:
            self._record_attempt(start, wall0, "error")
            if self.options.explain is not None:  # explain hook
                self._explain(fwk, qpi, start, None, err.status.message(), "")
            self.handle_failure(fwk, qpi, err.status, None, None)
            return
        host = result.node
        assumed = replace(pod, spec=replace(pod.spec, node_name=host))
        if self.options.assume_cache:
            self.cache.assume_pod(assumed)
        self.queue.delete_nominated_pod_if_exists(pod)
        status = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if status.is_success():
            status = fwk.run_permit_plugins(state, assumed, host)
        if not status.is_success() and not status.is_wait():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            self._record_attempt(start, wall0, "unschedulable" if status.is_rejected() else "error")
            if self.options.explain is not None:  # explain hook
                self._explain(fwk, qpi, start, host, status.message(), "")
            diagnosis = None
            if status.is_rejected():
                diagnosis = Diagnosis(node_to_status=NodeToStatus({host: status}))
                diagnosis.add_plugin_status(status)
            self.handle_failure(fwk, qpi, status, diagnosis, None)
            return
        self._record_attempt(start, wall0, "scheduled")
        if self.options.explain is not None:  # explain hook
            self._explain(fwk, qpi, start, host, None, "")
        assert self._tg is not None
        self._tg.create_task(
            self.binding_cycle(fwk, state, qpi, assumed, host),
            name=f"{self.name}:bind:{pod.metadata.namespace}/{pod.metadata.name}",
        )

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

    def _record_attempt(self, start: float, wall0: float, result: str) -> None:
        m = self.metrics
        if result == "scheduled":
            m.scheduled += 1
        elif result == "unschedulable":
            m.unschedulable += 1
        else:
            m.errors += 1
        m.attempt_seconds.append(self.clock.now() - start)
        m.attempt_wall_seconds.append(time.perf_counter() - wall0)

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: Pod) -> _Scheduled:
        """Upstream ``schedulePod``: the host, or ``FitError`` / ``_SchedulingError``."""
        if self.snapshot.num_nodes() == 0:
            raise _SchedulingError(Status(Code.Error, "no nodes available to schedule pods"))
        feasible, diagnosis, evaluated = self.find_nodes_that_fit(fwk, state, pod)
        if not feasible:
            raise FitError(pod, self.snapshot.num_nodes(), diagnosis)
        if len(feasible) == 1:
            return _Scheduled(feasible[0].name, evaluated, 1)
        totals = self.prioritize_nodes(fwk, state, pod, feasible)
        return _Scheduled(select_host(totals, self.rng), evaluated, len(feasible))

    def find_nodes_that_fit(self, fwk: Framework, state: CycleState, pod: Pod) -> tuple[list[NodeInfo], Diagnosis, int]:
        diagnosis = Diagnosis(node_to_status=NodeToStatus())
        all_nodes = self.snapshot.node_info_list
        pre, status, plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
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
                return [ni], diagnosis, 1
        nodes = all_nodes
        if pre is not None and not pre.all_nodes():
            names = pre.node_names or frozenset()
            nodes = [n for n in all_nodes if n.name in names]
            absent = Status(
                Code.UnschedulableAndUnresolvable,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",
            )
            diagnosis.node_to_status.set_absent_nodes_status(absent)
        feasible, evaluated = self._find_feasible(fwk, state, pod, diagnosis, nodes)
        return feasible, diagnosis, evaluated

    def _find_feasible(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, nodes: list[NodeInfo]
    ) -> tuple[list[NodeInfo], int]:
        n = len(nodes)
        if n == 0:
            return [], 0
        percentage = fwk.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.options.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(percentage, n)
        if not fwk.has_score_plugins():
            to_find = min(to_find, 1) if n else 0
        start = self.next_start_node_index % n
        if not fwk.has_filter_plugins():
            chosen = [nodes[(start + i) % n] for i in range(to_find)]
            self.next_start_node_index = (start + len(chosen)) % n
            return chosen, len(chosen)
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
        processed = len(feasible) + failures
        self.next_start_node_index = (start + processed) % n
        return feasible, processed

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
        if status.code is Code.Error:
            return None
        if not status.is_success():
            fit.diagnosis.add_plugin_status(status)
        if status.message():
            fit.diagnosis.post_filter_msg = status.message()
        if result is not None and result.nominating_mode is NominatingMode.Override:
            return result.nominated_node_name
        return None

    def _forget(self, assumed: Pod) -> None:
        if self.options.assume_cache and self.cache.is_assumed_pod(assumed):
            self.cache.forget_pod(assumed)

    # --- the binding cycle --------------------------------------------------------------

    async def binding_cycle(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, host: str
    ) -> None:
        uid = assumed.metadata.uid
        status = await fwk.wait_on_permit(assumed)
        if not status.is_success():
            self._binding_failure(fwk, state, qpi, assumed, host, status)
            return
        self.queue.done(uid)
        status = await fwk.run_pre_bind_plugins(state, assumed, host)
        if status.is_success():
            status = await fwk.run_bind_plugins(state, assumed, host)
        if self.options.assume_cache and self.cache.is_assumed_pod(assumed):
            self.cache.finish_binding(assumed)
        if not status.is_success():
            self._binding_failure(fwk, state, qpi, assumed, host, status)
            return
        now = self.clock.now()
        self.metrics.bound(now, now - self._first_seen.pop(uid, now))
        fwk.run_post_bind_plugins(state, assumed, host)
        pod = assumed
        await self._event(
            pod, "Normal", "Scheduled", f"Successfully assigned {pod.metadata.namespace}/{pod.metadata.name} to {host}"
        )

    def _binding_failure(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, host: str, status: Status
    ) -> None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        self._forget(assumed)
        self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, assumed, None)
        diagnosis = None
        if status.is_rejected():
            diagnosis = Diagnosis(node_to_status=NodeToStatus({host: status}))
            diagnosis.add_plugin_status(status)
        else:
            self.metrics.errors += 1
            self.metrics.scheduled -= 1
        self.handle_failure(fwk, qpi, status, diagnosis, None)

    # --- failures -----------------------------------------------------------------------

    def handle_failure(
        self,
        fwk: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        diagnosis: Diagnosis | None,
        fit: FitError | None,
        nominated: str | None = None,
    ) -> None:
        """Upstream ``handleSchedulingFailure``: requeue, then report on the pod (async)."""
        pod = qpi.pod
        reason = "Unschedulable" if status.is_rejected() else "SchedulerError"
        if diagnosis is not None:
            qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(diagnosis.pending_plugins)
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        current: Pod | None = self.pods.get(pod.metadata.name, pod.metadata.namespace)
        if current is not None and current.metadata.uid == pod.metadata.uid and not current.spec.node_name:
            qpi.pod_info = PodInfo(current)
            self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)
        self.queue.done(pod.metadata.uid)
        if nominated:
            self.queue.add_nominated_pod(PodInfo(pod), nominated)
        elif nominated == "":
            self.queue.delete_nominated_pod_if_exists(pod)
        message = str(fit) if fit is not None else status.message()
        assert self._tg is not None
        self._tg.create_task(
            self._report_failure(pod, reason, message, nominated),
            name=f"{self.name}:status:{pod.metadata.namespace}/{pod.metadata.name}",
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
            if (
                old is not None
                and (old.status, old.reason, old.message) == ("False", reason, message)
                and (not nominated or current.status.nominated_node_name == nominated)
            ):
                return
            status = replace(
                current.status,
                conditions=[*conds, cond],
                nominated_node_name=nominated or current.status.nominated_node_name,
            )
            try:
                await self.client.update_status(replace(current, status=status))
                return
            except Conflict:
                continue
            except ApiError:
                return

    async def _event(self, pod: Pod, type_: str, reason: str, message: str) -> None:
        suffix = f"{self.rng.getrandbits(48):x}"
        ev = Event(
            metadata=ObjectMeta(name=f"{pod.metadata.name}.{suffix}", namespace=pod.metadata.namespace),
            involved_object=ObjectReference(
                kind="Pod", namespace=pod.metadata.namespace, name=pod.metadata.name, uid=pod.metadata.uid
            ),
            reason=reason,
            message=message[:1024] if len(message) <= 1024 else message[:1020] + " ...",
            type=type_,
            reporting_component=self.name,
            first_timestamp=self.clock.timestamp(),
            last_timestamp=self.clock.timestamp(),
        )
        with contextlib.suppress(ApiError):
            await self.client.create(ev)

    # --- reporting ----------------------------------------------------------------------

    def statistics(self) -> dict[str, Any]:
        return {"queue": self.queue.statistics(), "metrics": self.metrics.report()}


class _SchedulingError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


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
