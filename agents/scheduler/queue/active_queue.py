"""activeQ's consuming side: popping, the scheduling cycle counter and in-flight tracking
(upstream ``activeQueue`` in ``backend/queue/active_queue.go``, v1.34: ``pop``, ``done``,
``close``, ``schedulingCycle``, ``isPodInFlight``).

What this module owns: ``ActiveQueue``, the part of ``SchedulingQueue`` that hands the next pod
to the scheduling loop -- activeQ's head, or with pop-from-backoffQ and activeQ empty
podBackoffQ's head -- and marks it in flight (``attempts`` and the cycle grow by one, its
rejector plugins are cleared); ``pop`` waits for a poppable pod until ``close``; ``done`` ends a
pod's in-flight tracking. ``QueueClosed`` is what ``pop`` raises on a closed, empty queue.

What it does not own: filling activeQ (``moves.py``'s ``_move_to_active``, called from
``scheduling_queue.py`` and ``unschedulable_pods.py``), the heap itself (``heap.py``), nor the
in-flight event log's bookkeeping (``inflight.py``).
"""

from __future__ import annotations

import asyncio

from emulator.base.api.core import Pod

from . import events as ev
from .moves import ACTIVE_Q, QueueMoves
from .queued_pod_info import QueuedPodInfo

__all__ = ["ActiveQueue", "QueueClosed"]


class QueueClosed(Exception):
    """``pop`` on a closed, empty queue: the scheduling loop should end."""


class ActiveQueue(QueueMoves):
    """Popping from activeQ (or backoffQ) and the in-flight pods (a base of ``SchedulingQueue``)."""

    @property
    def scheduling_cycle(self) -> int:
        return self._cycle

    @property
    def closed(self) -> bool:
        return self._closed

    def is_in_flight(self, uid: str) -> bool:
        return uid in self._in_flight

    def in_flight_pods(self) -> list[Pod]:
        return self._in_flight.pods()

    def pop_nowait(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None if nothing is poppable (never blocks).

        activeQ's head; with pop-from-backoffQ and activeQ empty, podBackoffQ's head. The pod is
        now in flight: ``attempts`` and ``scheduling_cycle`` grow by one, its rejector plugins are
        cleared for the new attempt.
        """
        active, backoff = self._active, self._backoff
        while True:
            # The heaps' entry lists asked first: every pod's first pop attempt finds both empty.
            qpi = active.pop() if active._entries else None
            label = ""
            if qpi is None and self._pop_from_backoff_q and backoff._rejected._entries:
                qpi = backoff.pop_backoff()
                label = ev.POP_FROM_BACKOFF_Q
            if qpi is None:
                return None
            pod = qpi.pod_info.pod  # ``qpi.pod``, ``qpi.uid`` without the properties
            uid = pod.metadata.uid
            if self._qhints and uid in self._in_flight:
                continue  # tracked twice (upstream logs and discards the duplicate)
            if label:
                self._count(ACTIVE_Q, label)
            qpi.attempts += 1
            qpi.backoff_expiration = None
            self._in_flight.add_pod(uid, pod)
            self._cycle += 1
            qpi.unschedulable_plugins.clear()
            qpi.pending_plugins.clear()
            return qpi

    async def pop(self) -> QueuedPodInfo:
        """Wait for a poppable pod and pop it. Cancellable; raises ``QueueClosed`` once the queue
        is closed and nothing is left to pop."""
        while True:
            qpi = self.pop_nowait()
            if qpi is not None:
                return qpi
            if self._closed:
                raise QueueClosed("scheduling queue is closed")
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def done(self, uid: str) -> None:
        """The pod's attempt is over (failure requeued, or Permit passed): stop tracking it."""
        self._in_flight.done(uid)

    def close(self) -> None:
        """Wake every ``pop`` (they raise ``QueueClosed`` once the queue is empty); ``run`` ends
        at its next tick. In-flight tracking is dropped, as upstream's ``close``."""
        self._closed = True
        self._in_flight.clear()
        self._wake()
