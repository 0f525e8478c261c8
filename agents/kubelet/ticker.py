"""``Ticker``: one task and one heap for the periodic work of many kubelets.

This module owns coalesced timers: instead of a task per node sleeping on its own event-loop
timer, callers ``push(due, fire)`` entries onto one heap of ``(due, sequence, fire)``; the
ticker's single task sleeps until the earliest due time and calls ``fire(due)`` for every
entry due by then, in (due, sequence) order, that is in the order they were pushed when their
due times are equal, as the virtual-time loop orders equal timers. Due times are kept exactly
(no rounding to a tick), so every callback runs at the simulated instant its own timer would
have fired. A callback is synchronous; it pushes its next entry itself if it wants one.

It also owns ``run_inline``, which runs a coroutine up to its first suspension in the caller
(an API call without latency or faults never suspends) and hands back what is left, if
anything, for a task to finish.

Lease renewals: ``leases`` (``emulator.base.client.leasebatch``) collects the renewals the
heartbeats of one instant make through the fast path and writes them in one pass; it is
flushed before every entry not pushed ``batched`` and after the last entry of the instant,
before the ticker sleeps, so no other code runs between a renewal being added and written.

It does not know what the callbacks do (``heartbeat.py``: Lease renewals and status
requests), nor which task group runs it (the scenario runner's, ``cluster.py``; a kubelet
given no ticker keeps a sleeping task per node, the reference behaviour).

Rules that keep the due times exact without ever interrupting the ticker's sleep:

=========================  ===================================================================
state of the ticker        ``accepts(due)``
=========================  ===================================================================
idle (empty heap)          always (``push`` wakes it; it sleeps until the earliest entry)
sleeping until ``target``  ``due >= target``: the entry is looked at when the ticker wakes;
                           an earlier one must wait in its caller's own task this once
=========================  ===================================================================
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable, Coroutine, Generator
from typing import Any

from emulator.base.client.leasebatch import LeaseBatch
from emulator.base.runtime.clock import Clock

__all__ = ["Fire", "Ticker", "run_inline"]

Fire = Callable[[float], None]
"""``fire(due)``: the work of an entry due at ``due``, called at that simulated instant."""


class Ticker:
    """Coalesced timers on ``clock``; ``await run()`` in a task group until cancelled."""

    def __init__(self, clock: Clock, name: str = "ticker") -> None:
        self._clock = clock
        self._name = name
        self._heap: list[tuple[float, int, Fire, bool]] = []
        self._seq = 0
        self._target: float | None = None
        """When the ticker's task wakes next; None while it is idle."""
        self._idle = asyncio.Event()
        self.leases = LeaseBatch()
        """Lease renewals the heartbeats of an instant add (``batched`` entries), written
        before any other entry fires and after the last one of the instant."""
        self.fired = 0
        self.wakeups = 0

    def __repr__(self) -> str:
        return f"<Ticker {self._name} entries={len(self._heap)} target={self._target!r} fired={self.fired}>"

    def statistics(self) -> dict[str, Any]:
        return {
            "entries": len(self._heap),
            "fired": self.fired,
            "wakeups": self.wakeups,
            "leaseFlushes": self.leases.flushes,
        }

    def accepts(self, due: float) -> bool:
        """Whether an entry due at ``due`` would fire on time if pushed now."""
        target = self._target
        return target is None or target <= due

    def push(self, due: float, fire: Fire, *, batched: bool = False) -> None:
        """Call ``fire(due)`` at ``due``; only when ``accepts(due)``. ``batched``: ``fire``
        may add to ``leases`` and flushes it itself before any other write (a heartbeat);
        any other entry fires with ``leases`` flushed."""
        if not self.accepts(due):
            raise ValueError(f"{self!r} cannot take an entry due at {due!r} before its target")
        self._seq += 1
        heapq.heappush(self._heap, (due, self._seq, fire, batched))
        if self._target is None:
            self._idle.set()

    async def run(self) -> None:
        """Fire the entries as they fall due; runs until cancelled."""
        heap, clock = self._heap, self._clock
        pop = heapq.heappop
        try:
            while True:
                if not heap:
                    self._target = None
                    await self._idle.wait()
                    self._idle.clear()
                    continue
                self._target = heap[0][0]
                await clock.sleep_until(self._target)
                self.wakeups += 1
                now = clock.now()
                leases = self.leases
                while heap and heap[0][0] <= now:
                    due, _, fire, batched = pop(heap)
                    self.fired += 1
                    if not batched:
                        leases.flush()
                    fire(due)
                leases.flush()
        finally:
            self._target = None


def run_inline(coro: Coroutine[Any, Any, None]) -> Coroutine[Any, Any, None] | None:
    """Run ``coro`` in the caller up to its first suspension: ``None`` if it finished, else
    a coroutine that finishes it (await it, from a task). An exception it raises before
    suspending propagates here."""
    try:
        pending = coro.send(None)
    except StopIteration:
        return None
    return _finish(coro, pending)


async def _finish(coro: Coroutine[Any, Any, None], pending: Any) -> None:
    await _Resume(coro, pending)


class _Resume:
    """Awaiting it hands ``pending`` (what ``coro`` yielded when it suspended, e.g. a
    future) to the awaiting task, then drives ``coro`` on as ``await coro`` would have:
    values and exceptions (cancellation included) go in, yields come out."""

    __slots__ = ("_coro", "_pending")

    def __init__(self, coro: Coroutine[Any, Any, None], pending: Any) -> None:
        self._coro = coro
        self._pending = pending

    def __await__(self) -> Generator[Any, Any, None]:
        coro, pending = self._coro, self._pending
        while True:
            try:
                value = yield pending
            except BaseException as exc:  # thrown in by the task (CancelledError): pass it on
                try:
                    pending = coro.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    pending = coro.send(value)
                except StopIteration:
                    return
