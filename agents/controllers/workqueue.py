"""``WorkQueue``: client-go's rate-limiting work queue (``util/workqueue``) on the injected clock.

What the workload controllers reconcile from: informer handlers ``add`` a key (usually
``namespace/name`` of the object to sync), workers ``get`` one, sync it, and call ``done``;
a failed sync calls ``add_rate_limited`` (per-item exponential backoff) and a good one
``forget``. Upstream's guarantees hold:

- a key is queued at most once (``dirty``), however often it is added before a worker takes it;
- a key is processed by one worker at a time: added while processing, it is queued again
  only when that worker calls ``done``;
- ``add_after`` queues a key once ``delay`` seconds of clock time have passed (the earliest
  of several pending delays wins, as upstream's delaying queue keeps the earliest);
- keys come out in the order they were queued (FIFO), so runs are deterministic.

The rate limiter is upstream's ``ItemExponentialFailureRateLimiter`` (5 ms doubling to
1,000 s per key, reset by ``forget``), the per-item half of
``DefaultTypedControllerRateLimiter``; its overall 10 qps bucket is left out (it only bites
when more than 100 keys fail at once).

``run_workers`` runs ``workers`` named tasks in the caller's task group, each looping
get → sync → done until cancelled; ``process`` is the usual sync wrapper (re-queue on the
errors a controller retries, reset the backoff on success). It does not own what a sync does.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Final, Generic, TypeVar

from emulator.base.runtime.clock import Clock

__all__ = ["BASE_DELAY", "MAX_DELAY", "WorkQueue"]

K = TypeVar("K", bound=Hashable)

BASE_DELAY: Final = 0.005
"""Upstream ``DefaultTypedControllerRateLimiter``'s per-item base delay (5 ms)."""
MAX_DELAY: Final = 1000.0
"""... and its cap (1,000 s)."""


class WorkQueue(Generic[K]):
    """A deduplicating FIFO of keys with delayed and rate-limited adds."""

    def __init__(
        self, clock: Clock, name: str, *, base_delay: float = BASE_DELAY, max_delay: float = MAX_DELAY
    ) -> None:
        self.clock = clock
        self.name = name
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._failures: dict[K, int] = {}
        self._delayed: list[tuple[float, int, K]] = []
        self._delayed_at: dict[K, float] = {}
        self._seq = itertools.count()
        self._wake = asyncio.Event()
        self._base = base_delay
        self._max = max_delay
        self.adds = 0
        self.retries = 0

    def __repr__(self) -> str:
        return (
            f"<WorkQueue {self.name} queued={len(self._queue)} processing={len(self._processing)} "
            f"delayed={len(self._delayed_at)}>"
        )

    def __len__(self) -> int:
        return len(self._queue)

    # --- adding -------------------------------------------------------------------------

    def add(self, key: K) -> None:
        """Queue ``key`` now (no-op if it is already waiting)."""
        self.adds += 1
        if key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return
        self._queue.append(key)
        self._wake.set()

    def add_after(self, key: K, delay: float) -> None:
        """Queue ``key`` once ``delay`` seconds have passed (at once when ``delay <= 0``)."""
        if delay <= 0:
            self.add(key)
            return
        at = self.clock.now() + delay
        pending = self._delayed_at.get(key)
        if pending is not None and pending <= at:
            return
        self._delayed_at[key] = at
        heapq.heappush(self._delayed, (at, next(self._seq), key))
        self._wake.set()

    def when(self, key: K) -> float:
        """The next backoff delay of ``key`` (and count the failure)."""
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        return min(self._base * 2.0**n, self._max) if n < 64 else self._max

    def add_rate_limited(self, key: K) -> None:
        """Queue ``key`` after its per-item backoff (a failed sync)."""
        self.retries += 1
        self.add_after(key, self.when(key))

    def forget(self, key: K) -> None:
        """A good sync: reset ``key``'s backoff."""
        self._failures.pop(key, None)

    def num_requeues(self, key: K) -> int:
        return self._failures.get(key, 0)

    # --- taking -------------------------------------------------------------------------

    def _promote_due(self) -> float | None:
        """Move due delayed keys to the queue; the time of the next one still pending."""
        now = self.clock.now()
        while self._delayed:
            at, _, key = self._delayed[0]
            if self._delayed_at.get(key) != at:
                heapq.heappop(self._delayed)  # superseded by an earlier add_after
                continue
            if at > now:
                return at
            heapq.heappop(self._delayed)
            del self._delayed_at[key]
            self.add(key)
        return None

    async def get(self) -> K:
        """The next key (waiting for one); the caller must call ``done(key)`` after."""
        while True:
            next_at = self._promote_due()
            if self._queue:
                key = self._queue.popleft()
                self._dirty.discard(key)
                self._processing.add(key)
                return key
            self._wake.clear()
            if next_at is None:
                await self._wake.wait()
            else:
                await self._wait_until(next_at)

    async def _wait_until(self, at: float) -> None:
        """Until clock time ``at`` or an add, whichever comes first (the clock is the
        loop's time, so the loop's timeout is the clock's, as the other controllers use it;
        under ``serve``'s ``PacedClock`` a loop second is ``speed`` clock seconds)."""
        speed = getattr(self.clock, "speed", 1.0)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, at - self.clock.now()) / speed):
                await self._wake.wait()

    def done(self, key: K) -> None:
        """The worker is finished with ``key``; if it was added meanwhile, queue it again."""
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._wake.set()

    # --- workers ------------------------------------------------------------------------

    async def process(
        self, key: K, sync: Callable[[K], Awaitable[None]], retry_on: tuple[type[Exception], ...]
    ) -> bool:
        """Upstream ``processNextWorkItem``'s error half: ``sync(key)``; an error of
        ``retry_on`` re-queues the key after its backoff (False), success resets the backoff
        (True); any other error propagates."""
        try:
            await sync(key)
        except retry_on:
            self.add_rate_limited(key)
            return False
        self.forget(key)
        return True

    def run_workers(self, tg: asyncio.TaskGroup, workers: int, sync: Callable[[K], Awaitable[None]]) -> None:
        """Start ``workers`` tasks named ``<name>:worker:<i>`` in ``tg``, each calling
        ``sync(key)`` for the keys it takes; ``sync`` handles its own errors (an exception
        escaping it ends the task group, as a bug should)."""
        for i in range(workers):
            tg.create_task(self._worker(sync), name=f"{self.name}:worker:{i}")

    async def _worker(self, sync: Callable[[K], Awaitable[None]]) -> None:
        while True:
            key = await self.get()
            try:
                await sync(key)
            finally:
                self.done(key)
