"""The virtual loop's pending timers: a FIFO timer handle, a small heap and per-delay lanes.

This module owns *where a timer waits until it is due*: ``call_at`` (the one way in), the
heap of ``(when, seq, timer)`` tuples the loop's step takes due timers from (``_take``), the
lanes beside it, the compaction of a heap of mostly cancelled timers, and the moves of the
timers between this heap and the stock step's when debug mode is switched. It does not own
the step that takes and runs them, nor when the clock jumps, nor the list of private asyncio
internals the loop relies on (``loop.py``, whose docstring and ``test_loop.py`` pin them):
``TimerLanes`` is a mixin of ``VirtualTimeEventLoop`` and reads the loop's state by name.

Order. Timers with equal deadlines fire first in, first out: each timer carries a creation
sequence number that breaks ties (the stock heap orders ties by heap position, not by
creation). Outside debug mode the timers are ``(when, seq, timer)`` tuples on ``_timers``, a
heap compared in C (the handles' Python ``__lt__`` was ~30 calls a churn pod); in debug mode
they are handles on the stock step's heap (``BaseEventLoop._scheduled``), ordered by
``_FifoTimerHandle.__lt__``: the same order. ``set_debug`` moves them from one heap to the
other (``_move_timers``).

Lanes (outside debug mode). Timers made with the same delay come in deadline order (the clock
never goes back): ``call_at`` appends such a timer to its delay's lane (a deque, ``_lanes``)
when it is due no earlier than the lane's last, and only each lane's head is on the heap; a
timer taken off the heap brings its lane's next one on (``_take``, the one place that does).
The heap then holds a few entries (churn: the timeline's next arrival and the head of ≈ 3,000
sleeping pods' 60-second runs) instead of one per sleeping task, so a timer costs a pop from a
few-entry heap, not ≈ 22 tuple comparisons. The heap and the sorted lanes give the timers in
exactly the one heap's order (``(when, seq)`` keys are unique); a timer of another delay past
``_MAX_LANES`` lanes, or due before its lane's last, is on the heap alone. The compaction
(the stock step's rule, counted over the heap and the lanes) filters the lanes too.
``tests/runtime/test_loop_lanes.py`` compares the order with the stock step's on random
timers, cancellations and debug switches; a test that changes ``_MAX_LANES`` patches it here,
where ``call_at`` and ``_drop_empty_lanes`` read it.

``call_at`` outside debug mode sets the slots ``Handle.__init__`` and ``TimerHandle.__init__``
set on a bare ``_FifoTimerHandle`` itself (a timer per sleep made the two inherited
constructors ~0.5 % of a churn run); ``test_loop.py`` checks that they are the same as the
stock constructors'. Debug-mode checks of the stock ``call_at`` (calling thread, callback
type) are not repeated.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
from collections.abc import Callable, Iterator, Sequence
from contextvars import Context, copy_context
from typing import Any, TypeVarTuple, Unpack

_Ts = TypeVarTuple("_Ts")


class _FifoTimerHandle(asyncio.TimerHandle):
    """A timer ordered by (deadline, creation sequence): equal deadlines fire FIFO.

    Outside debug mode the loop keeps its timers as ``(when, seq, timer)`` tuples, compared
    in C (``TimerLanes._timers``); in debug mode the stock step's heap of handles
    (``_scheduled``) orders them by ``<``, the same order. ``heapq`` only uses ``<``; the other
    comparisons keep their stock meaning.
    """

    __slots__ = ("_lane", "_seq")
    _scheduled: bool  # TimerHandle's slot (private; see loop.py's docstring)
    _lane: collections.deque[_Entry] | None
    """The lane holding the timer's entry (outside debug mode), or None: on the heap alone."""

    def __init__(
        self,
        when: float,
        seq: int,
        callback: Callable[..., object],
        args: Sequence[Any],
        loop: asyncio.AbstractEventLoop,
        context: Context | None,
    ) -> None:
        # Debug mode's constructor: outside it, ``call_at`` sets the same slots itself.
        super().__init__(when, callback, args, loop, context)
        self._scheduled = True  # call_at pushes it at once
        self._seq = seq
        self._lane = None

    def __lt__(self, other: asyncio.TimerHandle) -> bool:
        # Every timer on the heap is ours (``call_at`` is the only way in), so the common case
        # skips the isinstance test.
        try:
            return (self._when, self._seq) < (other._when, other._seq)  # type: ignore[attr-defined]
        except AttributeError:
            return self.when() < other.when()


_Entry = tuple[float, int, _FifoTimerHandle]
_MAX_LANES = 64
"""The most lanes the loop keeps (``TimerLanes._lanes``); past it, empty lanes are dropped, and
a timer of yet another delay goes to the heap alone."""
_new_timer = _FifoTimerHandle.__new__
_heappop = heapq.heappop
_heappush = heapq.heappush


class TimerLanes:
    """The pending timers of ``VirtualTimeEventLoop`` (a mixin: the loop's own state by name)."""

    # The loop's state this mixin reads (BaseEventLoop's and VirtualTimeEventLoop's).
    _now: float
    _debug: bool
    _closed: bool
    _scheduled: list[asyncio.TimerHandle]
    _timer_cancelled_count: int
    _timers: list[_Entry]
    _timer_seq: Iterator[int]

    def _init_timers(self) -> None:
        """The empty heap and lanes (before ``BaseEventLoop.__init__``: it calls ``set_debug``)."""
        self._timers = []
        self._lanes: dict[float, collections.deque[_Entry]] = {}
        """Timers by their delay at creation (``call_at``): each lane in (deadline, sequence)
        order, its head alone on ``_timers``."""
        self._lane_extra = 0
        """The timers in lanes but not on ``_timers`` (the lanes' entries less their heads)."""
        self._lane_skip = 0
        """Asks of ``_drop_empty_lanes`` answered False without a scan."""

    def call_at(
        self,
        when: float,
        callback: Callable[[Unpack[_Ts]], object],
        *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.TimerHandle:
        if when is None:  # as the stock call_at, before the heap would fail to compare it
            raise TypeError("when cannot be None")
        if self._closed:  # the stock is_closed()
            raise RuntimeError("Event loop is closed")
        seq = next(self._timer_seq)
        if self._debug:  # the stock get_debug()
            timer = _FifoTimerHandle(when, seq, callback, args, self, context)  # type: ignore[arg-type]  # a loop
            heapq.heappush(self._scheduled, timer)  # the stock step's heap
            return timer
        # TimerHandle.__init__ and Handle.__init__ outside debug mode, inlined (no constructor
        # frame per timer; see the module docstring): the same slots with the same values,
        # already marked as on the heap.
        timer = _new_timer(_FifoTimerHandle)
        slots: Any = timer
        slots._context = copy_context() if context is None else context
        slots._loop = self
        slots._callback = callback
        slots._args = args
        slots._cancelled = False
        slots._repr = None
        slots._source_traceback = None
        slots._when = when
        slots._scheduled = True
        slots._seq = seq
        # Its lane: the timers made with the same delay (≈ 3,000 pods' runs of 60 s in churn)
        # come in deadline order, so a lane is a queue in (deadline, sequence) order and only
        # its head needs the heap: the heap holds a few entries, not one per sleeping pod.
        # A timer due before its lane's last goes to the heap alone, so the heap and the
        # lanes' heads give the timers in the one heap's order (``_take`` takes them).
        entry = (when, seq, timer)
        delay = when - self._now
        lanes = self._lanes
        lane = lanes.get(delay)
        if lane is None and (len(lanes) < _MAX_LANES or self._drop_empty_lanes()):
            lane = lanes[delay] = collections.deque()
        if lane is not None:
            if not lane:
                slots._lane = lane
                lane.append(entry)
                _heappush(self._timers, entry)
                return timer
            if lane[-1][0] <= when:
                slots._lane = lane
                lane.append(entry)
                self._lane_extra += 1
                return timer
        slots._lane = None
        _heappush(self._timers, entry)
        return timer

    def _take(self, timers: list[_Entry]) -> _FifoTimerHandle:
        """Pop the head of ``timers`` (``_timers``, non-empty), marked off the heap, and bring
        its lane's next timer onto the heap: the one place a due or cancelled head is popped
        (the step's due and cancelled heads, ``advance``'s cancelled ones; ``_compact`` and the
        debug-mode moves rebuild the heap instead).

        One call a timer taken: ≈ 58,000 calls in churn ``--until 10m`` (a run of ≈ 21 s of
        CPU), a few milliseconds; the CPU pairs against the copy written out in each place
        (session 44, helper runtime: 0.975-1.014) were within their noise."""
        timer = _heappop(timers)[2]
        timer._scheduled = False
        lane = timer._lane
        if lane is not None:
            lane.popleft()
            if lane:
                _heappush(timers, lane[0])
                self._lane_extra -= 1
        return timer

    def _compact(self) -> None:
        """The stock step's compaction of a heap where most timers are cancelled: the
        cancelled ones dropped (from the lanes too), the rest kept in their lanes."""
        kept: list[_Entry] = []
        extra = 0
        for entry in self._timers:
            timer = entry[2]
            if timer._lane is None:
                if timer._cancelled:
                    timer._scheduled = False
                else:
                    kept.append(entry)
        for delay, lane in list(self._lanes.items()):
            live = [entry for entry in lane if not entry[2]._cancelled]
            if len(live) < len(lane):
                for entry in lane:
                    if entry[2]._cancelled:
                        entry[2]._scheduled = False
                lane.clear()
                lane.extend(live)
            if lane:
                kept.append(lane[0])
                extra += len(lane) - 1
            else:
                del self._lanes[delay]
        heapq.heapify(kept)
        self._timers = kept
        self._lane_extra = extra
        self._timer_cancelled_count = 0

    def _drop_empty_lanes(self) -> bool:
        """Forget the empty lanes; True if there is room for one more. A scan that finds no
        room is not repeated for the next ``_MAX_LANES`` asks (those timers go to the heap
        alone, which gives the same order): a run of many distinct delays costs no scan of
        every lane per timer."""
        if self._lane_skip:
            self._lane_skip -= 1
            return False
        lanes = self._lanes
        for delay in [delay for delay, lane in lanes.items() if not lane]:
            del lanes[delay]
        if len(lanes) < _MAX_LANES:
            return True
        self._lane_skip = _MAX_LANES
        return False

    def _move_timers(self, debug: bool) -> None:
        """Move the pending timers to the heap the step of the new mode reads (``set_debug``):
        into debug mode, every timer onto the stock ``_scheduled``; out of it, back onto
        ``_timers`` alone (no lane)."""
        if debug and self._timers:
            scheduled: list[Any] = self._scheduled
            scheduled.extend(entry[2] for entry in self._all_timers())
            heapq.heapify(scheduled)
            for timer in scheduled:
                timer._lane = None
            self._timers = []
            self._lanes.clear()
            self._lane_extra = 0
        elif not debug and self._scheduled:
            timers: list[Any] = self._scheduled
            self._timers = [(timer._when, timer._seq, timer) for timer in timers]
            heapq.heapify(self._timers)
            self._scheduled = []

    def _all_timers(self) -> list[_Entry]:
        """Every pending timer's entry, outside debug mode: the heap's less the lanes' heads,
        then every lane's (in no particular order)."""
        entries = [entry for entry in self._timers if entry[2]._lane is None]
        for lane in self._lanes.values():
            entries.extend(lane)
        return entries

    def _clear_timers(self) -> None:
        """Forget every pending timer (``close``). A waiting timer and its lane refer to each
        other: undone here, so they go without the cycle collector."""
        self._timers.clear()
        for lane in self._lanes.values():
            for entry in lane:
                entry[2]._lane = None
            lane.clear()
        self._lanes.clear()
        self._lane_extra = 0
