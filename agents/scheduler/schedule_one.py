"""One pod's scheduling cycle (upstream ``scheduleOne``/``schedulingCycle``, ``schedulePod``,
``findNodesThatFitPod``, ``prioritizeNodes`` in ``schedule_one.go``, v1.34).

What this module owns: ``SchedulingCycle``, the part of the ``Scheduler`` agent that takes
one pod from the queue to an assumed, reserved and permitted node (or back to the queue) --
``schedule_one``, ``schedule_pod``, ``find_nodes_that_fit``, ``prioritize_nodes``, host
selection, assume, Reserve/Permit -- and hands it to the binding cycle. It does not own the
binding cycle (``binding_cycle.py``, its base ``BindingCycle``), requeueing and reporting a
failure (``failure_handler.py``, ``FailureHandler``, the base of both), the informers, the task
group or the loop (``scheduler.py``), the informer handlers (``eventhandlers.py``), nor the node
sampling and tie-break (``sampling.py``). The three cycles' modules are one object, as upstream's
``schedule_one.go`` methods share the ``Scheduler``: each declares the agent state it reads.

Scheduling cycle (``schedule_one``), one pod at a time, never awaiting the API:
pop → skip deleting or already-assumed pods → pick the profile by ``spec.schedulerName`` →
snapshot → PreFilter → Filter over ``numFeasibleNodesToFind`` nodes from the round-robin
start index (the nominated node first) → PostFilter when none fit → PreScore →
Score/Normalize/weights → select host (one seeded draw among the top scores) →
[``cycleCost``: the cycle takes ``fixed + perNode × nodes evaluated`` on the clock; events
delivered meanwhile reach the cache and are recorded as in-flight events, but the decision
was made on the snapshot taken at the start, as upstream's cycle races its informers] →
assume → Reserve → Permit → activate ``PodsToActivate`` → the binding cycle, started by the
loop where its task's first step would have run (``Scheduler.bind_next``), the rest of it (a
Permit wait, a bind with latency) a task of the scheduler's task group. The loop yields to
the event loop between cycles, so binding cycles and informer deliveries interleave with
scheduling as upstream's goroutines do.

Metrics (``schedule_attempts_total`` as upstream): an attempt counts ``scheduled`` when its
binding succeeds, ``unschedulable`` on a rejection, ``error`` otherwise. A benchmark's
``SchedulerOptions.recorder`` hears the wall duration of Filter (the feasible-node search) and
Score per cycle.

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

import random
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from msgspec.structs import replace

from agents.scheduler.binding_cycle import BindingCycle
from agents.scheduler.cache import CacheError
from agents.scheduler.explain import Decided, explain_pod
from agents.scheduler.failure_handler import pod_reference, settle
from agents.scheduler.framework import vectorized
from agents.scheduler.framework.diagnosis import Diagnosis, FitError
from agents.scheduler.framework.interface import ExtensionPoint, NodeToStatus, NominatingMode
from agents.scheduler.framework.types import (
    PODS_TO_ACTIVATE_KEY,
    Code,
    CycleState,
    NodeInfo,
    PodsToActivate,
    Status,
)
from agents.scheduler.queue import QueuedPodInfo
from agents.scheduler.sampling import num_feasible_nodes_to_find, select_host
from emulator.base.api.core import Pod

if TYPE_CHECKING:
    from agents.scheduler.cache import Snapshot
    from agents.scheduler.framework.node_table import IntArray
    from agents.scheduler.framework.runtime import Framework

__all__ = ["SchedulingCycle"]

_OK: Final = Code.Success
"""``status.code is _OK``: ``Status.is_success`` without the method call (every pod's cycle)."""


@dataclass(slots=True)
class _Scheduled:
    node: str
    evaluated: int
    feasible: int


class _SchedulingError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


class SchedulingCycle(BindingCycle):
    """The scheduling cycle of the ``Scheduler`` agent (a mixin: the agent builds the state
    declared here and in its bases)."""

    rng: random.Random
    snapshot: Snapshot
    frameworks: dict[str, Framework]
    next_start_node_index: int
    _evaluated: int
    _feasible_rows: IntArray | None
    _binding: tuple[Coroutine[Any, Any, None], str] | None
    inline_binding: bool = True
    """Leave the binding cycle to the loop (``Scheduler.bind_next``); False: a task of its own."""

    async def schedule_one(self) -> None:
        qpi = await self.queue.pop()
        pod = qpi.pod_info.pod
        uid = pod.metadata.uid
        fwk = self.frameworks.get(pod.spec.scheduler_name)
        if fwk is None or self.cache.is_assumed_pod(pod):
            self.queue.done(uid)
            return
        if pod.metadata.deletion_timestamp is not None:
            self.queue.done(uid)
            self._spawn(
                self.events.event(
                    pod_reference(pod),
                    "Warning",
                    "FailedScheduling",
                    f"skip schedule deleting pod: {pod.metadata.namespace}/{pod.metadata.name}",
                    action="Scheduling",
                ),
                f"event:{pod.metadata.namespace}/{pod.metadata.name}",
            )
            return
        start, wall0 = self.clock.now(), time.perf_counter()
        if qpi.attempts == 1:
            self.metrics.queue_wait_seconds.add(start - self._first_seen.get(uid, start))
        state = CycleState(qpi.pod_info)
        to_activate = PodsToActivate()
        state.write(PODS_TO_ACTIVATE_KEY, to_activate)
        self._evaluated = 0
        try:
            cache = self.cache
            if cache.hold_swaps:
                cache.hold_swaps = False
            cache.update_snapshot(self.snapshot)
            result = self.schedule_pod(fwk, state, pod)
        except FitError as fit:
            nominated = self._post_filter(fwk, state, pod, fit)
            await self._cycle_cost()
            self._record_attempt(start, wall0, "unschedulable")
            if self.options.explain is not None:  # explain hook
                self._explain(fwk, qpi, start, None, str(fit), nominated)
            await settle(self.handle_failure(qpi, Status(Code.Unschedulable, str(fit)), fit, nominated))
            return
        except (_SchedulingError, CacheError) as err:
            status = err.status if isinstance(err, _SchedulingError) else Status(Code.Error, str(err))
            await self._cycle_cost()
            self._record_attempt(start, wall0, "unschedulable" if status.is_rejected() else "error")
            if self.options.explain is not None:  # explain hook
                self._explain(fwk, qpi, start, None, status.message(), "")
            await settle(self.handle_failure(qpi, status, None, ""))
            return
        await self._cycle_cost()
        host = result.node
        assumed = replace(pod, spec=replace(pod.spec, node_name=host))
        if self.options.assume_cache:
            try:
                self.cache.assume_pod(assumed, qpi.pod_info)
            except CacheError as err:  # e.g. the pod was bound by someone else meanwhile
                self._record_attempt(start, wall0, "error")
                await settle(self.handle_failure(qpi, Status(Code.Error, str(err)), None, ""))
                return
        self.queue.delete_nominated_pod_if_exists(pod)
        status = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if status.code is _OK:
            status = fwk.run_permit_plugins(state, assumed, host)
        if status.code is not _OK and not status.is_wait():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            self._record_attempt(start, wall0, "unschedulable" if status.is_rejected() else "error")
            if self.options.explain is not None:  # explain hook
                self._explain(fwk, qpi, start, host, status.message(), "")
            rejection = self._one_node_fit_error(assumed, host, status) if status.is_rejected() else None
            failed = Status(status.code, str(rejection)) if rejection else status
            await settle(self.handle_failure(qpi, failed, rejection, ""))
            return
        self._record_attempt(start, wall0, None)
        if self.options.explain is not None:  # explain hook
            self._explain(fwk, qpi, start, host, None, "")
        if to_activate.map:  # (``_activate``'s own test, without the call)
            self._activate(to_activate)
        binding = self.binding_cycle(fwk, state, qpi, assumed, host)
        name = f"bind:{pod.metadata.namespace}/{pod.metadata.name}"
        if self.inline_binding:
            self._binding = (binding, name)
        else:
            self._spawn(binding, name)

    async def _cycle_cost(self) -> None:
        """``schedulerOptions.cycleCost``: the decision is made; the cycle now takes its time
        on the clock, during which informer events keep arriving (and count as in-flight)."""
        cost = self.options.cycle_cost_fixed + self.options.cycle_cost_per_node * self._evaluated
        if cost > 0:
            self.cache.hold_swaps = True  # the snapshot is held across the wait (``Cache.hold_swaps``)
            await self.clock.sleep(cost)

    # --- explain hook (agents/scheduler/explain.py): after the attempt's decision, never when
    # options.explain is None; on the cycle's snapshot, a fresh CycleState, its own rng.
    def _explain(
        self, fwk: Framework, qpi: QueuedPodInfo, start: float, selected: str | None, msg: str | None, nom: str | None
    ) -> None:
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
        m.attempted(self.clock.now() - start, time.perf_counter() - wall0)

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
        if status.code is not _OK:
            raise _SchedulingError(status)
        rec, t0 = self.options.recorder, time.perf_counter()
        try:
            totals, status = fwk.score_rows(state, pod, self.snapshot.table, rows, nodes)
        finally:
            if rec is not None:
                rec.observe_extension_point(ExtensionPoint.Score, time.perf_counter() - t0)
        if status.code is not _OK:
            raise _SchedulingError(status)
        return nodes[vectorized.select_host(totals, self.rng)].name

    def find_nodes_that_fit(self, fwk: Framework, state: CycleState, pod: Pod) -> tuple[list[NodeInfo], Diagnosis, int]:
        diagnosis = Diagnosis(node_to_status=NodeToStatus())
        self._feasible_rows = None
        all_nodes = self.snapshot.node_info_list
        pre, status, plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
        if plugins:
            diagnosis.unschedulable_plugins.update(plugins)
        if status.code is not _OK:
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
        rec, t0 = self.options.recorder, time.perf_counter()
        try:
            feasible, evaluated, error = self._find_feasible(fwk, state, pod, diagnosis, nodes)
        finally:
            if rec is not None and fwk.has_filter_plugins():
                rec.observe_extension_point(ExtensionPoint.Filter, time.perf_counter() - t0)
        self._evaluated = evaluated
        # Upstream advances the start index by the nodes processed (feasible or rejected), modulo
        # all the nodes, even when a Filter returned Error: every node gets its turn.
        self.next_start_node_index = (self.next_start_node_index + evaluated) % len(all_nodes)
        if error is not None:
            raise _SchedulingError(error)
        return feasible, diagnosis, evaluated

    def _find_feasible(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, nodes: list[NodeInfo]
    ) -> tuple[list[NodeInfo], int, Status | None]:
        """The feasible nodes from the start index, how many nodes were processed (found
        feasible or rejected, as upstream counts them: not the node whose Filter returned
        Error), and that Error status, if any."""
        self._feasible_rows = None
        n = len(nodes)
        if n == 0:
            return [], 0, None
        percentage = fwk.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.options.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(percentage, n)
        if not fwk.has_score_plugins():
            to_find = min(to_find, 1)
        start = self.next_start_node_index
        if not fwk.has_filter_plugins():
            chosen = [nodes[(start + i) % n] for i in range(to_find)]
            return chosen, len(chosen), None
        if self.options.vectorized:
            table = self.snapshot.table
            candidates = None
            if nodes is not self.snapshot.node_info_list:
                candidates = np.array([table.index[ni.name] for ni in nodes], dtype=np.int64)
            rows, processed, error = fwk.find_feasible_rows(state, pod, table, candidates, start, to_find, diagnosis)
            if error is not None:
                return [], processed, error
            self._feasible_rows = rows
            if len(rows) <= 1:
                return [table.infos[r] for r in rows.tolist()], processed, None
            first, last = int(rows[0]), int(rows[-1])
            if candidates is None and (last - first) % table.size == len(rows) - 1:
                # Rows visited in table order without a gap (each row once, from the start index
                # on): one slice of the list, or two when the visit wrapped past the last row.
                infos = table.infos
                if first <= last:
                    part = infos[first : last + 1]  # a list already when ``infos`` is the snapshot's
                    return part if isinstance(part, list) else list(part), processed, None
                return [*infos[first:], *infos[: last + 1]], processed, None
            return list(itemgetter(*rows.tolist())(table.infos)), processed, None
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
                return [], len(feasible) + failures, s
        return feasible, len(feasible) + failures, None

    def prioritize_nodes(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> list[tuple[str, int]]:
        if not fwk.has_score_plugins():
            return [(n.name, 1) for n in nodes]
        status = fwk.run_pre_score_plugins(state, pod, nodes)
        if not status.is_success():
            raise _SchedulingError(status)
        rec, t0 = self.options.recorder, time.perf_counter()
        try:
            scores, status = fwk.run_score_plugins(state, pod, nodes)
        finally:
            if rec is not None:
                rec.observe_extension_point(ExtensionPoint.Score, time.perf_counter() - t0)
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
