"""Moving a pod into one of the scheduling queue's sub-queues, under the one-place invariant
(upstream ``moveToActiveQ``, ``moveToBackoffQ``, ``requeuePodWithQueueingStrategy`` and the
``unschedulablePods`` additions of ``backend/queue/scheduling_queue.go``, v1.34).

What this module owns: ``QueueMoves``, the base of ``SchedulingQueue`` that declares the
queue's state (activeQ heap, ``BackoffQueue``, the unschedulablePods dict, the in-flight
tracker, the cycle counters, the ``pop`` waiters) and the primitives every transition goes
through -- PreEnqueue before activeQ (or before backoffQ with pop-from-backoffQ; a gated pod
lands in unschedulablePods instead), the ``scheduler_queue_incoming_pods_total`` counts, the
nomination of added or updated pods, waking the waiting ``pop``. The queue names and event
labels shared by the other queue modules live here too.

What it does not own: the state's construction (``SchedulingQueue.__init__``), which event or
call moves a pod (``scheduling_queue.py``: add/update/activate/failures/backoff flush;
``unschedulable_pods.py``: cluster events and the leftover flush), popping and in-flight
tracking (``active_queue.py``), nor the hint decisions (``hints.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final

from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock

from ..framework.types import Status
from . import events as ev
from .backoff_queue import BackoffQueue
from .heap import KeyedHeap
from .hints import HintEvaluator, QueueingStrategy
from .inflight import InFlightTracker
from .nominator import Nominator
from .queued_pod_info import QueuedPodInfo

__all__ = [
    "ACTIVE_Q",
    "BACKOFF_Q",
    "UNSCHEDULABLE_Q",
    "UNSCHEDULED_POD_ADD",
    "UNSCHEDULED_POD_UPDATE",
    "PreEnqueueFn",
    "QueueMoves",
    "pod_key",
    "queued_key",
]

ACTIVE_Q: Final = "Active"
BACKOFF_Q: Final = "Backoff"
UNSCHEDULABLE_Q: Final = "Unschedulable"

PreEnqueueFn = Callable[[Pod], "tuple[Status, str] | None"]
"""``pre_enqueue(pod)``: None if every PreEnqueue plugin admits it, else (status, plugin name)."""


class QueueMoves:
    """The scheduling queue's state and its moves between sub-queues (a base class:
    ``SchedulingQueue.__init__`` builds the state declared here)."""

    _clock: Clock
    _pre_enqueue: PreEnqueueFn | None
    _decide: HintEvaluator
    _qhints: bool
    _record: bool
    _in_flight_events: bool
    _pop_from_backoff_q: bool
    _active: KeyedHeap[QueuedPodInfo]
    _backoff: BackoffQueue
    _unschedulable: dict[str, QueuedPodInfo]
    _in_flight: InFlightTracker
    nominator: Nominator
    _cycle: int
    _move_request_cycle: int
    _closed: bool
    _waiters: list[asyncio.Future[None]]
    _incoming: dict[tuple[str, str], int]

    def _requeue(self, qpi: QueuedPodInfo, strategy: QueueingStrategy, label: str) -> str:
        """Upstream ``requeuePodWithQueueingStrategy``; returns where the pod ended up."""
        if strategy is QueueingStrategy.Skip:
            self._add_unschedulable(qpi, label)
            return UNSCHEDULABLE_Q
        if strategy is QueueingStrategy.AfterBackoff and self._backoff.is_backing_off(qpi):
            return BACKOFF_Q if self._move_to_backoff(qpi, label) else UNSCHEDULABLE_Q
        return ACTIVE_Q if self._move_to_active(qpi, label) else UNSCHEDULABLE_Q

    def _move_to_active(self, qpi: QueuedPodInfo, label: str, *, from_backoff: bool = False) -> bool:
        """Upstream ``moveToActiveQ``: PreEnqueue (skipped for pods leaving backoffQ with
        pop-from-backoffQ: it ran on entry), then activeQ, or unschedulablePods if gated."""
        if not (from_backoff and self._pop_from_backoff_q):
            self._run_pre_enqueue(qpi)
        key = queued_key(qpi)
        if qpi.gating_plugin:  # ``qpi.gated``
            if key not in self._active and key not in self._backoff and key not in self._unschedulable:
                self._add_unschedulable(qpi, label)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.now()
        self._unschedulable.pop(key, None)
        self._backoff.delete(key)
        self._active.add_or_update(qpi)
        incoming, k = self._incoming, (ACTIVE_Q, label)  # ``_count`` inline
        incoming[k] = incoming.get(k, 0) + 1
        if label in _NOMINATE_ON:
            self.nominator.add_nominated_pod(qpi.pod_info, None)
        if self._waiters:  # (``_wake`` of none wakes none)
            self._wake()
        return True

    def _move_to_backoff(self, qpi: QueuedPodInfo, label: str) -> bool:
        """Upstream ``moveToBackoffQ``; with pop-from-backoffQ PreEnqueue runs here."""
        if self._pop_from_backoff_q:
            self._run_pre_enqueue(qpi)
            if qpi.gated:
                if qpi.key not in self._unschedulable:
                    self._add_unschedulable(qpi, label)
                return False
        self._unschedulable.pop(qpi.key, None)
        self._backoff.add(qpi)
        self._count(BACKOFF_Q, label)
        if self._pop_from_backoff_q:
            self._wake()
        return True

    def _add_unschedulable(self, qpi: QueuedPodInfo, label: str) -> None:
        key = qpi.key
        if key not in self._unschedulable:
            self._count("Gated" if qpi.gated else UNSCHEDULABLE_Q, label)
        self._unschedulable[key] = qpi

    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> None:
        result = self._pre_enqueue(qpi.pod_info.pod) if self._pre_enqueue is not None else None
        if result is None or result[0].is_success():
            qpi.gating_plugin = ""
            return
        plugin = result[1]
        qpi.unschedulable_plugins.add(plugin)
        qpi.gating_plugin = plugin
        qpi.gating_plugin_events = self._decide.gating_events(qpi.pod, plugin)

    def _count(self, queue: str, label: str) -> None:
        k = (queue, label)
        self._incoming[k] = self._incoming.get(k, 0) + 1

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for w in waiters:
            if not w.done():
                w.set_result(None)


UNSCHEDULED_POD_ADD: Final = str(ev.EventUnscheduledPodAdd)
UNSCHEDULED_POD_UPDATE: Final = str(ev.EventUnscheduledPodUpdate)
"""The two events' labels, formatted once (a label is formatted from the event's enums)."""
_NOMINATE_ON: Final = frozenset({UNSCHEDULED_POD_ADD, UNSCHEDULED_POD_UPDATE})


def queued_key(qpi: QueuedPodInfo) -> str:
    meta = qpi.pod_info.pod.metadata  # ``qpi.key`` without the property
    return f"{meta.namespace}/{meta.name}"


def pod_key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"
