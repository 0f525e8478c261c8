"""backoffQ: pods waiting out their backoff before they may return to activeQ (upstream
``backoff_queue.go``, v1.34).

This module owns the two backoff heaps and the expiry arithmetic:

* ``podBackoffQ`` holds pods rejected by plugins (``unschedulable_plugins`` or
  ``pending_plugins`` non-empty); ``podErrorBackoffQ`` pods that failed with no rejector (API or
  internal errors). ``add`` routes by that test.
* expiry = ``timestamp + backoff_duration(n)`` with ``n`` from ``backoff_count`` (errors count
  when the last attempt erred, else rejections); ``n == 0`` never backs off. Cached on the
  ``QueuedPodInfo`` until it is popped or re-added.
* ``SchedulerPopFromBackoffQ`` (``pop_from_backoff_q=True``, beta-on in 1.33/1.34): expiries are
  truncated to whole seconds (``BACKOFF_Q_ORDERING_WINDOW``); a pod is backing off while its
  expiry window is not before the current window (``expiry >= floor(now)``); ``podBackoffQ``
  orders by (window, activeQ ``less``) and the scheduling queue may pop its head when activeQ is
  empty. Off: exact expiries, backing off while ``expiry > now``, both heaps by expiry.

Ties the comparison leaves open go first-added first (``KeyedHeap``). It does not own when
flushing happens (the scheduling queue's ``run``) nor PreEnqueue.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any, Final

from emulator.base.runtime.clock import Clock

from .heap import KeyedHeap
from .queued_pod_info import QueuedPodInfo, backoff_count, backoff_duration

__all__ = ["BACKOFF_Q_ORDERING_WINDOW", "BackoffQueue", "truncate_to_window"]

BACKOFF_Q_ORDERING_WINDOW: Final = 1.0
"""Seconds per backoffQ ordering window (upstream ``backoffQOrderingWindowDuration``)."""

_NEVER: Final = -math.inf
"""Expiry of a pod with no counted failure: it never backs off."""


def truncate_to_window(t: float) -> float:
    """``t`` rounded down to a whole window (Go ``Time.Truncate(1s)``), after rounding to the
    nanosecond so float noise (2.9999999999999996) cannot drop a whole window."""
    return float(math.floor(round(t, 9) / BACKOFF_Q_ORDERING_WINDOW) * BACKOFF_Q_ORDERING_WINDOW)


def _key(qpi: QueuedPodInfo) -> str:
    return qpi.key


class BackoffQueue:
    """``podBackoffQ`` + ``podErrorBackoffQ`` behind one interface."""

    __slots__ = ("_clock", "_errors", "_initial", "_maximum", "_pop_from_backoff_q", "_rejected")

    def __init__(
        self,
        clock: Clock,
        *,
        initial: float,
        maximum: float,
        active_less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        pop_from_backoff_q: bool,
        active_key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        """``active_key``: activeQ's ``sort_key`` when its QueueSort offers one (its order is
        exactly ``active_less``); the heaps then compare precomputed ranks (``heap.py``). A
        pod's expiry is fixed while it is in a heap (it changes only with a failure, when the
        pod is in flight), so it can be part of the rank."""
        self._clock = clock
        self._initial = initial
        self._maximum = maximum
        self._pop_from_backoff_q = pop_from_backoff_q
        expiry = self.backoff_time

        def by_expiry(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
            return expiry(a) < expiry(b)

        def by_window_then_priority(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
            ea, eb = expiry(a), expiry(b)
            if ea != eb:
                return ea < eb
            return active_less(a, b)

        def window_then_key(qpi: QueuedPodInfo) -> tuple[float, Any]:
            assert active_key is not None
            return expiry(qpi), active_key(qpi)

        rejected_rank: Callable[[QueuedPodInfo], Any] | None = expiry
        if pop_from_backoff_q:
            rejected_rank = window_then_key if active_key is not None else None
        self._rejected: KeyedHeap[QueuedPodInfo] = KeyedHeap(
            _key, by_window_then_priority if pop_from_backoff_q else by_expiry, rejected_rank
        )
        self._errors: KeyedHeap[QueuedPodInfo] = KeyedHeap(_key, by_expiry, expiry)

    # --- expiry --------------------------------------------------------------------------

    def backoff_time(self, qpi: QueuedPodInfo) -> float:
        """Clock time the pod's backoff ends (window-aligned with pop-from-backoffQ); cached."""
        if qpi.backoff_expiration is not None:
            return qpi.backoff_expiration
        n = backoff_count(qpi)
        if n == 0:
            return _NEVER  # not cached, as upstream: a later failure must compute a real one
        expiry = qpi.timestamp + backoff_duration(n, self._initial, self._maximum)
        if self._pop_from_backoff_q:
            expiry = truncate_to_window(expiry)
        qpi.backoff_expiration = expiry
        return expiry

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """Upstream ``isPodBackingoff``: the pod must not be retried yet."""
        expiry = self.backoff_time(qpi)
        now = self._clock.now()
        if self._pop_from_backoff_q:
            return expiry >= truncate_to_window(now)
        return expiry > now

    # --- membership ----------------------------------------------------------------------

    def add(self, qpi: QueuedPodInfo) -> None:
        """Insert into podErrorBackoffQ if no plugin rejected the pod, else podBackoffQ."""
        if qpi.unschedulable_plugins or qpi.pending_plugins:
            self._errors.delete(qpi.key)
            self._rejected.add_or_update(qpi)
        else:
            self._rejected.delete(qpi.key)
            self._errors.add_or_update(qpi)

    def update(self, key: str) -> QueuedPodInfo | None:
        """Restore the order after the pod under ``key`` changed in place; the pod or None."""
        for heap in (self._rejected, self._errors):
            qpi = heap.get(key)
            if qpi is not None:
                heap.add_or_update(qpi)
                return qpi
        return None

    def get(self, key: str) -> QueuedPodInfo | None:
        qpi = self._rejected.get(key)
        return qpi if qpi is not None else self._errors.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._rejected or key in self._errors

    def delete(self, key: str) -> QueuedPodInfo | None:
        # Each heap's index asked first: a popped pod (every bound one) is in neither.
        rejected, errors = self._rejected, self._errors
        if key in rejected._index:
            return rejected.delete(key)
        return errors.delete(key) if key in errors._index else None

    def __len__(self) -> int:
        return len(self._rejected) + len(self._errors)

    def len_rejected(self) -> int:
        """Size of podBackoffQ alone (what pop-from-backoffQ may take from)."""
        return len(self._rejected)

    def len_errors(self) -> int:
        return len(self._errors)

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        yield from self._rejected
        yield from self._errors

    def ordered(self) -> list[QueuedPodInfo]:
        """podBackoffQ then podErrorBackoffQ, each in pop order."""
        return self._rejected.ordered() + self._errors.ordered()

    # --- leaving -------------------------------------------------------------------------

    def pop_all_completed(self) -> list[QueuedPodInfo]:
        """Pop every pod whose backoff is over: podBackoffQ first, then podErrorBackoffQ."""
        out: list[QueuedPodInfo] = []
        for heap in (self._rejected, self._errors):
            while (head := heap.peek()) is not None and not self.is_backing_off(head):
                heap.pop()
                out.append(head)
        return out

    def pop_backoff(self) -> QueuedPodInfo | None:
        """Pop the head of podBackoffQ even if still backing off (never podErrorBackoffQ)."""
        return self._rejected.pop()

    def __repr__(self) -> str:
        return f"<BackoffQueue rejected={len(self._rejected)} errors={len(self._errors)}>"
