"""``Ticker``: one task and one heap for the periodic work of many kubelets.

This module owns coalesced timers: instead of a task per node sleeping on its own event-loop
timer, callers ``push(due, fire)`` entries into one bucket per due time (a list, in the order
they were pushed), the due times on one heap; the ticker's single task sleeps until the
earliest due time and calls ``fire(due)`` for every entry due by then, in (due, push) order,
that is in the order they were pushed when their due times are equal, as the virtual-time
loop orders equal timers (1,000 kubelets beating at one instant are one heap entry and one
list, not 1,000 heap entries). Entries may be members of a group (``push_member(due, group,
member)``): a run of consecutive entries of one group in a bucket is fired in one call,
``group(due, members)``, which must do exactly what firing each member in order would
(``heartbeat.beats``: the heartbeats of an instant in one pass). Due times are kept exactly
(no rounding to a tick), so every callback runs at the simulated instant its own timer would
have fired. A callback is synchronous; it pushes its next entry itself if it wants one.

It re-exports ``run_inline`` (``emulator.base.runtime.inline``), which runs a coroutine up to
its first suspension in the caller (an API call without latency or faults never suspends) and
hands back what is left, if anything, for a task to finish.

Lease renewals: ``leases`` (``emulator.base.client.leasebatch``) collects the renewals the
heartbeats of one instant make through the fast path and writes them in one pass; it is
flushed before every entry not pushed ``batched`` and after the last entry of the instant,
before the ticker sleeps, so no other code runs between a renewal being added and written.

Stepping (on the virtual-time loop, ``VirtualTimeEventLoop.advance``): after an instant,
when the loop would do nothing but wake this task at its next due time (nothing ready, no
other timer due as soon), the ticker moves the clock there itself and fires on, rather than
sleeping on a timer. A written renewal wakes the node lifecycle controller's Lease informer
(it is not handed renewals in place, so that a renewal at a monitor pass's instant is the
next pass's, written or held: ``nodelifecycle.py``); the loop then has work and the ticker
sleeps on its timer as before. Every write keeps its instant and its order either way.

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
from collections.abc import Callable
from typing import Any

from emulator.base.client.leasebatch import LeaseBatch
from emulator.base.runtime.clock import Clock
from emulator.base.runtime.inline import run_inline
from emulator.base.runtime.loop import VirtualTimeEventLoop

__all__ = ["Fire", "Group", "Ticker", "run_inline"]

Fire = Callable[[float], None]
"""``fire(due)``: the work of an entry due at ``due``, called at that simulated instant."""
Group = Callable[[float, list[Any]], None]
"""``group(due, members)``: the work of several entries due at ``due``, in their order."""

_PLAIN: Any = object()
"""The member of an entry pushed by ``push`` (fired alone, as ``fire(due)``)."""


class Ticker:
    """Coalesced timers on ``clock``; ``await run()`` in a task group until cancelled."""

    def __init__(self, clock: Clock, name: str = "ticker") -> None:
        self._clock = clock
        self._name = name
        self._heap: list[float] = []
        """The due times of the buckets, each once."""
        self._buckets: dict[float, list[tuple[Any, Any, bool]]] = {}
        """due → its entries (``fire`` or group, member or ``_PLAIN``, ``batched``) in push
        order; an entry pushed for the instant being fired joins its bucket while the ticker
        walks it."""
        self._entries = 0
        self._target: float | None = None
        """When the ticker's task wakes next; None while it is idle."""
        self._idle = asyncio.Event()
        self.leases = LeaseBatch()
        """Lease renewals the heartbeats of an instant add (``batched`` entries), written
        before any other entry fires and after the last one of the instant."""
        self.fired = 0
        self.wakeups = 0
        """Instants fired (each a wake-up of the task, or a step of the clock)."""
        self.stepped = 0
        """Instants reached by stepping the clock (``run``) rather than by a timer."""

    def __repr__(self) -> str:
        return f"<Ticker {self._name} entries={self._entries} target={self._target!r} fired={self.fired}>"

    def statistics(self) -> dict[str, Any]:
        return {
            "entries": self._entries,
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
        self._add(due, (fire, _PLAIN, batched))

    def push_member(self, due: float, group: Group, member: Any) -> None:
        """``push`` for a member of ``group`` (a ``batched`` entry): consecutive members of
        one group due at one instant are fired together, ``group(due, members)``. ``group``
        is compared by identity: pass the same function object every time."""
        if not self.accepts(due):
            raise ValueError(f"{self!r} cannot take an entry due at {due!r} before its target")
        self._add(due, (group, member, True))

    def push_members(self, due: float, group: Group, members: list[Any]) -> None:
        """``push_member(due, group, m)`` for each of ``members`` in order, in one call."""
        if not self.accepts(due):
            raise ValueError(f"{self!r} cannot take an entry due at {due!r} before its target")
        if not members:
            return
        self._add(due, (group, members[0], True))
        bucket = self._buckets[due]
        bucket.extend([(group, m, True) for m in members[1:]])
        self._entries += len(members) - 1

    def _add(self, due: float, entry: tuple[Any, Any, bool]) -> None:
        self._entries += 1
        bucket = self._buckets.get(due)
        if bucket is None:
            self._buckets[due] = bucket = []
            heapq.heappush(self._heap, due)
        bucket.append(entry)
        if self._target is None:
            self._idle.set()

    async def run(self) -> None:
        """Fire the entries as they fall due; runs until cancelled."""
        heap, clock = self._heap, self._clock
        stepping = isinstance(asyncio.get_running_loop(), VirtualTimeEventLoop)
        advance_to = getattr(clock, "advance_to", None) if stepping else None
        task = asyncio.current_task()
        try:
            while True:
                if not heap:
                    self._target = None
                    await self._idle.wait()
                    self._idle.clear()
                    continue
                self._target = heap[0]
                await clock.sleep_until(self._target)
                while True:  # an instant, then the next ones while the loop would only wake us
                    self.wakeups += 1
                    self._fire(clock.now())
                    if not heap or advance_to is None or (task is not None and task.cancelling()):
                        break  # a cancel requested meanwhile is delivered at the next await
                    if not advance_to(heap[0]):
                        break
                    self._target = heap[0]
                    self.stepped += 1
        finally:
            self._target = None

    def _fire(self, now: float) -> None:
        """Fire every entry due by ``now`` and write the Lease renewals they added."""
        heap, buckets, leases = self._heap, self._buckets, self.leases
        pop = heapq.heappop
        while heap and heap[0] <= now:
            due = pop(heap)
            bucket = buckets[due]
            i = 0
            while i < len(bucket):  # entries pushed for ``due`` meanwhile join the walk
                fire, member, batched = bucket[i]
                if not batched:
                    leases.flush()
                if member is _PLAIN:
                    i += 1
                    fire(due)
                    continue
                j, n = i + 1, len(bucket)
                while j < n and bucket[j][0] is fire and bucket[j][1] is not _PLAIN:
                    j += 1
                members = [entry[1] for entry in bucket[i:j]]
                i = j
                fire(due, members)
            del buckets[due]
            self.fired += i
            self._entries -= i
        leases.flush()
