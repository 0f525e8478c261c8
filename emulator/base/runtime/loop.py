"""The virtual-time event loop: asyncio with a simulated clock that jumps.

This module owns *how simulated time moves*. ``VirtualTimeEventLoop`` is a stock
``asyncio.SelectorEventLoop`` whose ``time()`` returns a virtual clock instead of
``time.monotonic()``. Whenever every task is waiting, the clock jumps straight to the
earliest pending timer, so an hour of simulated heartbeats costs only the CPU time of the
callbacks. It does not own the ``Clock`` API that the emulator's components are given
(``clock.py``), nor where a pending timer waits (the heap and lanes of ``timers.py``), nor any
policy about what a simulation does with time.

How the loop decides what to do when nothing is ready to run (asyncio calls the selector's
``select(timeout)`` exactly when it would block; ``timeout`` is 0 if callbacks are ready, the
delay to the earliest timer if one is pending, ``None`` if there is none):

| ready | timer | thread job | what happens                                                  |
| ----- | ----- | ---------- | ------------------------------------------------------------- |
| yes   | -     | -          | run them (real fds polled without waiting, see below)         |
| no    | yes   | no         | clock := earliest deadline (real fds polled first, see below) |
| no    | yes   | yes        | wait up to ``idle_real_wait`` real seconds for the thread,    |
|       |       |            | then jump as above                                            |
| no    | no    | yes        | wait for the thread, ``idle_real_wait`` real seconds at a     |
|       |       |            | time                                                          |
| no    | no    | no         | wait up to ``idle_real_wait`` real seconds for I/O (another   |
|       |       |            | thread's ``call_soon_threadsafe``), then ``DeadlockError``    |

("ready": callbacks ready to run; "timer": a timer pending; "thread job": an executor job
submitted through ``run_in_executor`` is still awaited.)

Real fds are polled (without waiting) on every ``POLL_EVERY``-th loop iteration and whenever
no timer is pending, not on every iteration: a simulation has no real I/O of its own, a
thread's ``call_soon_threadsafe`` puts its callback on the ready queue directly (the self-pipe
byte only wakes a blocking wait, and is drained at the next poll), an awaited executor job makes
the idle step wait for it as the table says, and an ``epoll_wait`` per iteration was ~6 % of a
busy run. Real I/O callbacks (which a simulation should not have) are thus noticed within
``POLL_EVERY`` iterations, possibly after a jump of the clock.

Waiting for awaited executor jobs (``run_in_executor``, hence ``asyncio.to_thread``) before
jumping makes a short thread job take zero virtual time, like any other CPU work, and keeps a
thread job slower than ``idle_real_wait`` from being reported as a deadlock. A job that runs
longer than ``idle_real_wait`` while timers are pending lets the clock move on without it: its
result then lands at a virtual time that depends on the machine, so keep threads out of
simulated code paths.

Timers with equal deadlines fire first in, first out (a creation sequence number breaks ties),
and wait on a heap of a few entries beside per-delay lanes: ``timers.py`` (``TimerLanes``, a
mixin of the loop) owns that. Together with asyncio's FIFO ready queue this makes a run without
threads or real I/O reproducible event for event.

Stepping without a round trip (``advance``: the kubelets' Lease ticker,
``agents/kubelet/ticker.py``). A task that fires timed work of its own may, instead of
sleeping until its next instant, move the clock there itself, when the loop would do exactly
that next: nothing ready, no executor job, the loop not stopping, and no other live timer due
before the instant plus the clock resolution (such a timer would be taken in the same loop
step, or before). ``advance(when)`` checks this and moves the clock; a step counts as a loop
iteration for the polling of real fds (every ``POLL_EVERY``-th goes through the loop).

Private asyncio internals used, and why (the same in CPython 3.11 to 3.13;
``test_loop.py`` pins them):

- ``BaseEventLoop._scheduled``, the stock step's timer heap, used in debug mode only: there
  ``call_at`` pushes our tie-breaking timers onto it (as the stock ``call_at`` does). Outside
  debug mode the timers are ``(when, seq, timer)`` tuples on ``_timers`` and per-delay lanes
  (``timers.py``); ``set_debug`` moves them from one heap to the other. The idle hook reads
  the head to know where to jump; the step has already dropped cancelled timers from the head
  when it calls ``select``.
- ``TimerHandle._scheduled``: set for the push, as the stock ``call_at`` does, so that
  ``cancel()`` counts the timer for the loop's periodic heap compaction.
- The slots ``Handle.__init__`` and ``TimerHandle.__init__`` set (``_context``, ``_loop``,
  ``_callback``, ``_args``, ``_cancelled``, ``_repr``, ``_source_traceback``, ``_when``):
  ``call_at`` (``timers.py``) sets them itself on a bare ``_FifoTimerHandle`` outside debug
  mode (a timer per sleep made the two inherited constructors ~0.5 % of a churn run, and the
  handle's own constructor was a frame more); ``test_loop.py`` checks that they are the same
  as the stock constructors'. ``call_soon`` likewise builds its ``Handle`` itself, outside
  debug mode (it reads ``_debug`` and ``_closed``, the flags the stock ``get_debug`` and
  ``_check_closed`` read): a handle per wake-up of a task or future, the stock path's four
  frames were ~1 % of a churn run. ``create_task`` (no task factory, outside debug mode)
  reads ``_closed`` and ``_task_factory`` and builds the ``Task`` as the stock one does.
- ``get_debug`` outside debug mode is the instance attribute ``bool`` (``bool()`` is False):
  the C ``Future`` and ``Task`` constructors call ``loop.get_debug()`` each time, and ``bool``
  answers without a Python frame; ``set_debug`` sets and removes it.

- ``BaseEventLoop._ready``, the queue of ready callbacks, and ``_stopping``, read by
  ``advance`` (nothing ready, the loop not stopping); ``_clock_resolution``,
  which ``_run_once`` adds to the time when it takes the timers due.
- ``BaseEventLoop._run_once``, replaced outside debug mode by ``VirtualTimeEventLoop._run_once``
  (which iterates until the loop is stopping, as ``run_forever`` would call it; each iteration
  the same step without a selector call on an iteration that does not poll — a jump of the
  clock included —, running a plain handle's callback itself, and a sleep's timer's ``wake``
  in place): it reads the stock step's constants
  (``_MIN_SCHEDULED_TIMER_HANDLES``, ``_MIN_CANCELLED_TIMER_HANDLES_FRACTION``,
  ``MAXIMUM_SELECT_TIMEOUT``), ``_timer_cancelled_count``, ``_process_events`` and, for a raising
  callback, ``format_helpers._format_callback_source`` as ``Handle._run`` does. Debug mode
  keeps the stock step (``test_loop.py`` runs a workload through both and compares the logs).

Everything else is public: the selector handed to ``SelectorEventLoop(selector)``, ``time()``,
``call_at()`` and ``run_in_executor()``.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import selectors
from asyncio import base_events, format_helpers
from collections.abc import Callable, Coroutine, Generator
from concurrent.futures import Executor
from contextvars import Context, copy_context
from typing import Any, TypeVar, TypeVarTuple, Unpack

from .timers import TimerLanes, _FifoTimerHandle

__all__ = ["POLL_EVERY", "DeadlockError", "VirtualTimeEventLoop", "new_virtual_loop", "wake"]

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")
_Events = list[tuple[selectors.SelectorKey, int]]


#: How many waiting tasks a DeadlockError names.
_TASKS_SHOWN = 10
#: While callbacks are ready, real fds are polled on every POLL_EVERY-th loop iteration.
POLL_EVERY = 64


class DeadlockError(RuntimeError):
    """No task can run, no timer is pending and no I/O or thread result arrived."""


def wake(future: asyncio.Future[None]) -> None:
    """A sleep's timer callback (``clock.py``): complete ``future`` unless it is done (cancelled).

    The virtual loop's step runs it in place, without a frame (``_run_once``)."""
    if not future.done():
        future.set_result(None)


_Handle = asyncio.Handle
_new_handle = asyncio.Handle.__new__
_Task = asyncio.Task
_MIN_SCHEDULED: int = base_events._MIN_SCHEDULED_TIMER_HANDLES  # type: ignore[attr-defined]
_MIN_CANCELLED_FRACTION: float = base_events._MIN_CANCELLED_TIMER_HANDLES_FRACTION  # type: ignore[attr-defined]
_MAX_SELECT_TIMEOUT: float = base_events.MAXIMUM_SELECT_TIMEOUT  # type: ignore[attr-defined]


def _report(handle: asyncio.Handle, exc: BaseException) -> None:
    """What ``Handle._run`` does when its callback raises (not SystemExit/KeyboardInterrupt)."""
    slots: Any = handle
    cb = format_helpers._format_callback_source(slots._callback, slots._args)
    context: dict[str, Any] = {"message": f"Exception in callback {cb}", "exception": exc, "handle": handle}
    if slots._source_traceback:
        context["source_traceback"] = slots._source_traceback
    slots._loop.call_exception_handler(context)


class _IdleHookSelector(selectors.DefaultSelector):
    """The platform selector with the loop's idle policy spliced into ``select``."""

    def __init__(self, on_idle: Callable[[float | None], _Events]) -> None:
        super().__init__()
        self._on_idle = on_idle
        self._busy = 0

    def select(self, timeout: float | None = None) -> _Events:
        self._busy += 1
        if timeout is None or self._busy >= POLL_EVERY:
            self._busy = 0
            events = super().select(0)  # real fds first
            if events:
                return events
        if timeout is not None and timeout <= 0:
            return []
        return self._on_idle(timeout)

    def wait(self, timeout: float) -> _Events:
        """Block in real time for up to ``timeout`` seconds (the stock ``select``)."""
        return super().select(timeout)


class VirtualTimeEventLoop(TimerLanes, asyncio.SelectorEventLoop):
    """A selector event loop on a virtual clock; see the module docstring for the rules."""

    # BaseEventLoop's timer heap, ready queue and more (private; see the module docstring).
    _ready: collections.deque[asyncio.Handle]
    _stopping: bool
    _timer_cancelled_count: int
    _clock_resolution: float
    _debug: bool
    _closed: bool

    def __init__(self, *, start: float = 0.0, idle_real_wait: float = 0.2) -> None:
        self._now = float(start)
        self._idle_real_wait = float(idle_real_wait)
        self._timer_seq = itertools.count()
        self._executor_jobs = 0
        self._init_timers()  # before BaseEventLoop.__init__, which calls set_debug
        self.advances = 0
        """How many times ``advance`` moved the clock."""
        self._idle_selector = _IdleHookSelector(self._on_idle)
        super().__init__(self._idle_selector)
        if idle_real_wait < 0:
            self.close()  # a half-built loop would complain when collected
            raise ValueError(f"idle_real_wait must be >= 0 seconds, got {idle_real_wait!r}")

    @property
    def idle_real_wait(self) -> float:
        """Real seconds to wait for I/O or a thread when no task and no timer can proceed."""
        return self._idle_real_wait

    def time(self) -> float:
        return self._now

    def set_debug(self, enabled: bool) -> None:
        super().set_debug(enabled)
        # ``get_debug`` outside debug mode is ``bool`` itself, which returns False: the C
        # ``Future`` and ``Task`` constructors call ``loop.get_debug()`` (≈ 7 a churn pod), and a
        # C call costs no Python frame. In debug mode the stock method (the class') answers.
        if enabled:
            self.__dict__.pop("get_debug", None)
        else:
            self.get_debug = bool  # type: ignore[method-assign]
        self._move_timers(enabled)

    def close(self) -> None:
        super().close()
        self._clear_timers()

    def call_soon(
        self,
        callback: Callable[[Unpack[_Ts]], object],
        *args: *_Ts,
        context: Context | None = None,
    ) -> asyncio.Handle:
        # Every wake-up of a task or future goes through here (≈ 17 a churn pod). Outside debug
        # mode, the stock call_soon, _check_closed, _call_soon and Handle.__init__ inlined: the
        # same handle, with the same slots, appended to the ready queue (see the docstring).
        if self._debug:
            return super().call_soon(callback, *args, context=context)
        if self._closed:
            raise RuntimeError("Event loop is closed")
        handle = _new_handle(_Handle)
        slots: Any = handle  # its private slots, set as Handle.__init__ sets them
        slots._context = copy_context() if context is None else context
        slots._loop = self
        slots._callback = callback
        slots._args = args
        slots._cancelled = False
        slots._repr = None
        slots._source_traceback = None
        self._ready.append(handle)
        return handle

    def create_task(
        self,
        coro: Coroutine[Any, Any, _T] | Generator[Any, None, _T],
        *,
        name: object = None,
        context: Context | None = None,
        **kwargs: Any,
    ) -> asyncio.Task[_T]:
        # Without a task factory (and without the keywords of later Pythons), the stock
        # create_task with its _check_closed() read in place (a frame less per task; a
        # TaskGroup's create_task calls it): the same Task; in debug mode its source traceback
        # trimmed of this frame, as the stock one trims its own.
        if self._task_factory is not None or kwargs:  # type: ignore[attr-defined]
            return super().create_task(coro, name=name, context=context, **kwargs)
        if self._closed:
            raise RuntimeError("Event loop is closed")
        task = _Task(coro, loop=self, name=name, context=context)  # type: ignore[arg-type]  # as the stock one
        if task._source_traceback:  # type: ignore[attr-defined]  # debug mode only
            del task._source_traceback[-1]  # type: ignore[attr-defined]
        return task

    def _run_once(self) -> None:
        # Loop iterations, outside debug mode, until the loop is stopping (``run_forever``'s
        # own loop, ``_run_once`` then a ``_stopping`` check, written out here: a frame less
        # per iteration, ≈ 9 a churn pod) or debug mode is switched on (``run_forever`` then
        # calls again: the stock step). Each iteration is the stock ``BaseEventLoop._run_once``
        # step for step (cancelled timers dropped or compacted, the selector asked, the due
        # timers moved to the ready queue, the ready handles run), less its overhead on this
        # loop: an iteration with handles ready that does not poll the real fds
        # (``POLL_EVERY``) only counts itself, as ``select(0)`` would, with no selector call
        # and no empty event list processed; the clock is read from ``_now``; the timers are
        # ``(when, seq, timer)`` tuples, taken off the heap by ``_take`` (``timers.py``); a
        # plain handle's callback runs here, as ``Handle._run`` runs it (``_report`` when it
        # raises), one frame less per handle; a sleep's timer (callback ``wake``) completes its
        # future here; a jump of the clock on an iteration that does not poll is ``select`` and
        # ``_on_idle``'s, written out.
        if self._debug:
            super()._run_once()  # type: ignore[misc]
            return
        ready = self._ready
        selector = self._idle_selector
        process_events = self._process_events  # type: ignore[attr-defined]
        resolution = self._clock_resolution
        take = self._take
        while True:
            timers = self._timers
            cancelled = self._timer_cancelled_count
            count = len(timers) + self._lane_extra
            if cancelled and count > _MIN_SCHEDULED and cancelled / count > _MIN_CANCELLED_FRACTION:
                self._compact()
                timers = self._timers
            else:
                while timers and timers[0][2]._cancelled:
                    self._timer_cancelled_count -= 1
                    take(timers)
            if ready or self._stopping:
                if selector._busy < POLL_EVERY - 1:
                    selector._busy += 1  # select(0) on an iteration that does not poll: nothing else
                else:
                    process_events(selector.select(0))
            elif timers and not self._executor_jobs and selector._busy < POLL_EVERY - 1:
                # ``select(timeout)`` on an iteration that does not poll, and ``_on_idle``'s jump,
                # written out (two frames and an empty event list less per jump): the clock
                # moves to the earliest timer if it is ahead (else the timeout was 0).
                selector._busy += 1
                head = timers[0][0]
                if head > self._now:
                    self._now = head
            else:
                timeout = None
                if timers:
                    timeout = min(max(0, timers[0][0] - self._now), _MAX_SELECT_TIMEOUT)
                process_events(selector.select(timeout))
            timers = self._timers
            end_time = self._now + resolution
            while timers:
                if timers[0][0] >= end_time:
                    break
                ready.append(take(timers))  # its lane's next timer comes onto the heap
            popleft = ready.popleft
            for _ in range(len(ready)):
                handle: Any = popleft()
                if handle._cancelled:
                    continue
                kind = type(handle)
                if kind is not _Handle:  # (most are: a task's step or wake-up)
                    if kind is not _FifoTimerHandle:
                        handle._run()  # a handle of another kind runs its own way
                        continue
                    if handle._callback is wake:
                        # a sleep's timer: what ``wake`` does, without its frame and its
                        # ``Context.run`` (it reads no context variable); reported, not
                        # raised, if it fails, as any handle's callback
                        try:
                            future = handle._args[0]
                            if not future.done():
                                future.set_result(None)
                        except (SystemExit, KeyboardInterrupt):
                            raise
                        except BaseException as exc:
                            _report(handle, exc)
                        continue
                try:
                    # ``Handle._run``'s call, its arguments passed without a star call (no
                    # argument tuple built): none for a task's step, one for a wake-up
                    args = handle._args
                    if not args:
                        handle._context.run(handle._callback)
                    elif len(args) == 1:
                        handle._context.run(handle._callback, args[0])
                    else:
                        handle._context.run(handle._callback, *args)
                except (SystemExit, KeyboardInterrupt):
                    raise
                except BaseException as exc:
                    _report(handle, exc)
            handle = future = args = None  # breaks cycles when an exception occurs, as the stock loop does
            if self._stopping or self._debug:
                return  # run_forever stops, or calls again for the stock step

    def run_in_executor(
        self,
        executor: Executor | None,
        func: Callable[[Unpack[_Ts]], _T],
        *args: *_Ts,
    ) -> asyncio.Future[_T]:
        future = super().run_in_executor(executor, func, *args)
        self._executor_jobs += 1
        future.add_done_callback(self._executor_job_done)
        return future

    def _executor_job_done(self, _future: asyncio.Future[Any]) -> None:
        self._executor_jobs -= 1

    # --- stepping without a round trip (see the module docstring) -------------------------

    def advance(self, when: float) -> bool:
        """Move the clock to ``when`` if the loop would do so next, waking a task whose timer
        is at ``when`` (created now) and nothing else; False (nothing changed) otherwise."""
        if self._ready or self._executor_jobs or self._stopping or when < self._now:
            return False
        head = self._earliest()
        if head is None or head < when + self._clock_resolution:
            return False  # no other timer (the loop may be waiting for I/O), or one due as soon
        selector = self._idle_selector
        if selector._busy >= POLL_EVERY - 1:
            return False  # a step counts as a loop iteration: this one polls the real fds
        selector._busy += 1
        self._now = when
        self.advances += 1
        return True

    def _earliest(self) -> float | None:
        """The deadline of the earliest live timer (cancelled ones dropped from the head as
        the step drops them), or None."""
        if self._debug:
            scheduled = self._scheduled
            while scheduled and scheduled[0]._cancelled:
                self._timer_cancelled_count -= 1
                heapq.heappop(scheduled)._scheduled = False  # type: ignore[attr-defined]
            return scheduled[0].when() if scheduled else None
        timers = self._timers
        while timers and timers[0][2]._cancelled:
            self._timer_cancelled_count -= 1
            self._take(timers)
        return timers[0][0] if timers else None

    def _on_idle(self, timeout: float | None) -> _Events:
        """Nothing is runnable and no real fd is ready: wait, jump or give up."""
        if self._executor_jobs or timeout is None:
            events = self._idle_selector.wait(self._idle_real_wait)
            if events:
                return events
        if timeout is not None:
            # _run_once saw a live timer at the head of the heap, in the future.
            head = self._timers[0][0] if self._timers else self._scheduled[0].when()
            self._now = max(self._now, head)
            return []
        if self._executor_jobs:
            return []  # a worker thread still owes us a result: go round again
        raise DeadlockError(self._deadlock_message())

    def _deadlock_message(self) -> str:
        names = sorted(task.get_name() for task in asyncio.all_tasks(self))
        shown = ", ".join(names[:_TASKS_SHOWN])
        if len(names) > _TASKS_SHOWN:
            shown += f", ... ({len(names) - _TASKS_SHOWN} more)"
        return (
            f"deadlock: every task is waiting, no timer is pending and nothing arrived "
            f"within {self._idle_real_wait}s of real time, at t={self._now!r}; "
            f"{len(names)} waiting task(s): {shown or '-'}"
        )


def new_virtual_loop() -> VirtualTimeEventLoop:
    """A fresh virtual-time loop at t=0; usable as ``asyncio.Runner(loop_factory=...)``."""
    return VirtualTimeEventLoop()
