"""Preemption, the API side: evicting the chosen node's victims (upstream v1.34 ``Evaluator``'s
``prepareCandidateAsync``, ``PreemptPod``, ``IsPodRunningPreemption``; upstream later moved them
into an ``Executor``, whose name this module takes).

What this module owns: the ``preempting`` set (preemptors whose API calls are in flight — the
plugin's PreEnqueue keeps them out of activeQ meanwhile, KEP-4832) and the API work itself,
which never runs in the scheduling cycle: ``prepare_candidate`` hands a coroutine to the
scheduler (``handle.run_async(coro, name)``); when the handle has no such hook (unit tests), the
work is queued in ``pending`` and ``run_pending()`` runs it.

One preemption (``SchedulerAsyncPreemption``, beta and on in v1.34):

=====  ===========================================  ========================================
step   when                                         what
=====  ===========================================  ========================================
1      in the cycle (sync)                          victims already terminating are skipped
                                                    (upstream PR #134927, reference §6.11);
                                                    none left → nothing to do; else the
                                                    preemptor's uid enters ``preempting``
2      the task starts                              clear ``status.nominatedNodeName`` of the
                                                    lower-priority pods nominated to the node
3      task                                         preempt every victim but the last,
                                                    concurrently (≤ ``parallelism``); the
                                                    first error cancels the others
4      task                                         the preemptor leaves ``preempting``
5      task, only if 3 succeeded                    preempt the last victim (its deletion
                                                    event then finds the preemptor un-gated)
6      any error in 2–5                             ``handle.activate([preemptor])``
=====  ===========================================  ========================================

Preempting one victim (``preempt_pod``): a pod waiting at Permit is rejected ("preempted", by
the plugin); otherwise its ``DisruptionTarget`` condition (True, ``PreemptionByScheduler``,
"<schedulerName>: preempting to accommodate a higher priority pod") is written — upstream
patches; here GET + ``update_status`` with Conflict retries — and the pod is deleted with its own
grace period. A pod already gone (NotFound, or a new pod under that name) is not an error. Then
a ``Preempted`` Event "Preempted by pod <uid> on node <node>" is recorded (as its own task: the
event recorder never blocks the preemption upstream).

With ``enable_async_preemption=False`` (v1.30–v1.32) the preemptor is not gated; the calls
still run off the cycle — the emulated cycle cannot wait for the API.

It does not own choosing the node or the victims (``evaluator.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from msgspec.structs import replace

from agents.scheduler.framework.interface import Handle
from emulator.base.api.core import Pod, PodCondition, PodStatus
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.api.meta import ObjectReference
from emulator.base.client.events import EventRecorder
from emulator.base.client.retry import Backoff, retry_on_conflict

from .candidate import Candidate, pod_priority

if TYPE_CHECKING:
    from emulator.base.client.client import Client

__all__ = [
    "DISRUPTION_TARGET",
    "PREEMPTION_BY_SCHEDULER",
    "Executor",
    "ExecutorStats",
    "with_disruption_target",
]

DISRUPTION_TARGET: Final = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"
STATUS_RETRY: Final = Backoff(steps=5)
"""A victim's status patch: five tries on Conflict, no wait (each re-reads the pod)."""

Work = Callable[[], Coroutine[Any, Any, None]]


class AsyncRunner(Protocol):
    """The scheduler's ``handle.run_async``: run ``coro`` as a named task of its task group."""

    def __call__(self, coro: Coroutine[Any, Any, None], name: str) -> None: ...


def with_disruption_target(status: PodStatus, message: str, now: str, generation: int) -> tuple[PodStatus, bool]:
    """``apipod.UpdatePodCondition`` with the preemption condition, observed at the victim's
    ``generation`` (1.34 PodObservedGenerationTracking): (new status, changed?)."""
    cond = PodCondition(
        type=DISRUPTION_TARGET,
        status="True",
        reason=PREEMPTION_BY_SCHEDULER,
        message=message,
        last_transition_time=now,
        observed_generation=generation,
    )
    conds = list(status.conditions)
    for i, old in enumerate(conds):
        if old.type != DISRUPTION_TARGET:
            continue
        if old.status == cond.status:
            cond = replace(cond, last_transition_time=old.last_transition_time)
        conds[i] = cond
        return replace(status, conditions=conds), replace(cond, observed_generation=old.observed_generation) != old
    return replace(status, conditions=[*conds, cond]), True


@dataclass(slots=True)
class ExecutorStats:
    """Upstream's preemption metrics, as counters."""

    preemptions: int = 0
    """Candidates prepared (``PreemptionVictims`` observations)."""
    victims: int = 0
    succeeded: int = 0
    """Finished preemption tasks without error (``PreemptionGoroutinesExecutionTotal{success}``)."""
    failed: int = 0


class _PreemptFailed(Exception):
    pass


ERRORS_KEPT: Final = 100
"""How many of the latest API errors ``Executor.errors`` keeps (a log, not a record of the run)."""


class Executor:
    """The API calls of preemption and the set of preemptors waiting for them."""

    def __init__(self, plugin_name: str, handle: Handle, *, enable_async_preemption: bool = True) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.enable_async_preemption = enable_async_preemption
        self._preempting: dict[str, None] = {}
        self.pending: list[tuple[str, Work]] = []
        """Work queued when the handle has no ``run_async`` (run it with ``run_pending``)."""
        self.errors: list[str] = []
        """The last API errors met (at most ``ERRORS_KEPT``), in order (upstream logs them)."""
        self._events: EventRecorder | None = None
        self.stats = ExecutorStats()

    def __repr__(self) -> str:
        return f"<Executor preempting={len(self._preempting)} pending={len(self.pending)} {self.stats}>"

    def statistics(self) -> dict[str, int]:
        s = self.stats
        return {
            "preempting": len(self._preempting),
            "preemptions": s.preemptions,
            "victims": s.victims,
            "succeeded": s.succeeded,
            "failed": s.failed,
        }

    def _error(self, message: str) -> None:
        self.errors.append(message)
        if len(self.errors) > 2 * ERRORS_KEPT:
            del self.errors[:-ERRORS_KEPT]

    def is_pod_running_preemption(self, uid: str) -> bool:
        """Upstream ``IsPodRunningPreemption`` (v1.34): the preemptor's calls are in flight."""
        return uid in self._preempting

    # --- in the scheduling cycle ------------------------------------------------------------

    def prepare_candidate(self, candidate: Candidate, preemptor: Pod) -> None:
        """Start evicting ``candidate``'s victims for ``preemptor`` (steps 1–6); never blocks."""
        self.stats.preemptions += 1
        self.stats.victims += len(candidate.victims.pods)
        victims = [v for v in candidate.victims.pods if v.metadata.deletion_timestamp is None]
        if not victims:
            return
        if self.enable_async_preemption:
            self._preempting[preemptor.metadata.uid] = None
        meta = preemptor.metadata
        self._dispatch(
            f"preemption:{meta.namespace}/{meta.name}", lambda: self._prepare(candidate.name, preemptor, victims)
        )

    def _dispatch(self, name: str, work: Work) -> None:
        run_async: AsyncRunner | None = getattr(self.handle, "run_async", None)
        if run_async is not None:
            run_async(work(), name)
        else:
            self.pending.append((name, work))

    async def run_pending(self) -> None:
        """Run the queued work (and what it queues) in order; for handles without ``run_async``."""
        while self.pending:
            _, work = self.pending.pop(0)
            await work()

    # --- the task ---------------------------------------------------------------------------

    async def _prepare(self, node: str, preemptor: Pod, victims: Sequence[Pod]) -> None:
        uid = preemptor.metadata.uid
        try:
            cleared = await self._clear_nominated(node, preemptor)
            ok = await self._preempt_all(node, preemptor, victims[:-1])
            self._preempting.pop(uid, None)
            if ok:
                try:
                    await self.preempt_pod(node, preemptor, victims[-1])
                except ApiError as err:
                    self._error(err.message)
                    ok = False
        finally:
            self._preempting.pop(uid, None)
        if ok and cleared:
            self.stats.succeeded += 1
            return
        # The preemptor may wait in the unschedulable pool for events that never come: move it.
        self.stats.failed += 1
        activate: Callable[[Iterable[Pod]], None] | None = getattr(self.handle, "activate", None)
        if activate is not None:
            activate([preemptor])

    async def _clear_nominated(self, node: str, preemptor: Pod) -> bool:
        """Clear the nomination of lower-priority pods nominated to ``node``; False on an error."""
        priority = pod_priority(preemptor)
        ok = True
        for pi in self.handle.nominated_pods_for_node(node):
            pod = pi.pod
            if pod_priority(pod) >= priority or not pod.status.nominated_node_name:
                continue
            try:
                await self._update_status(
                    pod, lambda s: (replace(s, nominated_node_name=""), bool(s.nominated_node_name))
                )
            except ApiError as err:
                self._error(err.message)
                ok = False
        return ok

    async def _preempt_all(self, node: str, preemptor: Pod, victims: Sequence[Pod]) -> bool:
        """Preempt ``victims`` concurrently; the first API error cancels the rest (False)."""
        if not victims:
            return True
        gate = asyncio.Semaphore(max(1, self.handle.parallelism))

        async def one(victim: Pod) -> None:
            async with gate:
                try:
                    await self.preempt_pod(node, preemptor, victim)
                except ApiError as err:
                    self._error(err.message)
                    raise _PreemptFailed from err

        ok = True
        try:
            async with asyncio.TaskGroup() as tg:
                for v in victims:
                    tg.create_task(one(v), name=f"preempt:{v.metadata.namespace}/{v.metadata.name}")
        except* _PreemptFailed:
            ok = False
        return ok

    async def preempt_pod(self, node: str, preemptor: Pod, victim: Pod) -> None:
        """Upstream ``PreemptPod``: reject a waiting victim, else condition + delete; then the Event."""
        waiting = self.handle.get_waiting_pod(victim.metadata.uid)
        if waiting is not None:
            waiting.reject(self.plugin_name, "preempted")
        else:
            message = f"{preemptor.spec.scheduler_name}: preempting to accommodate a higher priority pod"
            now, gen = self.handle.clock.timestamp(), victim.metadata.generation
            if not await self._update_status(victim, lambda s: with_disruption_target(s, message, now, gen)):
                return  # already gone
            try:
                await self._client().delete("Pod", victim.metadata.name, victim.metadata.namespace)
            except NotFound:
                return
        meta = victim.metadata
        self._dispatch(f"event:{meta.namespace}/{meta.name}", lambda: self._event(victim, preemptor, node))

    def _client(self) -> Client:
        client = self.handle.client
        if client is None:
            raise ApiError(f"{self.plugin_name}: the profile has no API client")
        return client

    async def _update_status(self, pod: Pod, change: Callable[[PodStatus], tuple[PodStatus, bool]]) -> bool:
        """Apply ``change`` to the stored pod's status (a patch); False if the pod is gone.
        Retried on Conflict (``STATUS_RETRY``); a Conflict on every try is raised as stale."""
        client = self._client()
        meta = pod.metadata

        async def attempt() -> bool:
            try:
                current: Pod = await client.get("Pod", meta.name, meta.namespace)
            except NotFound:
                return False
            if current.metadata.uid != meta.uid:
                return False
            status, changed = change(current.status)
            if not changed:
                return True
            try:
                await client.update_status(replace(current, status=status))
            except NotFound:
                return False
            return True

        try:
            return await retry_on_conflict(STATUS_RETRY, attempt, clock=self.handle.clock)
        except Conflict:
            raise Conflict.stale("Pod", meta.name) from None

    async def _event(self, victim: Pod, preemptor: Pod, node: str) -> None:
        client = self.handle.client
        if client is None:
            return
        if self._events is None:
            self._events = EventRecorder(
                client,
                self.handle.clock,
                self.handle.scheduler_name,
                naming="generated",
                on_error=lambda err: self._error(err.message),
            )
        meta = victim.metadata
        involved = ObjectReference(kind="Pod", namespace=meta.namespace, name=meta.name, uid=meta.uid)
        message = f"Preempted by pod {preemptor.metadata.uid} on node {node}"
        await self._events.event(involved, "Normal", "Preempted", message, action="Preempting")
