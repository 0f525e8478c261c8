"""VirtualTimeEventLoop: jumping clock, FIFO ties, deadlock detection, threads, determinism."""

from __future__ import annotations

import asyncio
import collections
import contextvars
import heapq
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from emulator.base.runtime import Channel, DeadlockError, VirtualTimeEventLoop, new_virtual_loop, stream
from emulator.base.runtime.loop import POLL_EVERY, wake

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]


def run_virtual(
    main: Callable[[], Coroutine[Any, Any, T]],
    factory: Callable[[], asyncio.AbstractEventLoop] = new_virtual_loop,
) -> T:
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main())


def now() -> float:
    return asyncio.get_running_loop().time()


# --- the clock -----------------------------------------------------------------------------


def test_time_starts_at_zero_or_at_start() -> None:
    for loop, expected in ((VirtualTimeEventLoop(), 0.0), (VirtualTimeEventLoop(start=100.5), 100.5)):
        try:
            assert loop.time() == expected
        finally:
            loop.close()


@pytest.mark.real_time
def test_sleep_an_hour_returns_at_once() -> None:
    async def main() -> float:
        await asyncio.sleep(3600)
        return now()

    started = time.perf_counter()
    assert run_virtual(main) == 3600.0
    assert time.perf_counter() - started < 0.5


def test_sleep_longer_than_a_day_jumps_straight_to_the_deadline() -> None:
    # asyncio caps one select() at a day; the clock must still land on the deadline exactly.
    async def main() -> float:
        await asyncio.sleep(10 * 86400 + 0.25)
        return now()

    assert run_virtual(main) == 864000.25


@pytest.mark.real_time
def test_an_hour_of_200_periodic_tasks_never_waits_on_the_wall_clock() -> None:
    """Virtual time: an hour of timers passes without sleeping. The bound is loose on purpose
    (an hour that slept would take 3,600 s; a loaded CI machine takes a second or two): speed
    is measured in bench/, not here."""
    period = 60.0

    async def main() -> tuple[int, float]:
        ticks = 0

        async def tick(i: int) -> None:
            nonlocal ticks
            await asyncio.sleep(i * period / 200)  # spread the phases over one period
            while now() < 3600:
                ticks += 1
                await asyncio.sleep(period)

        async with asyncio.TaskGroup() as tg:
            for i in range(200):
                tg.create_task(tick(i), name=f"tick-{i}")
        return ticks, now()

    started = time.perf_counter()
    ticks, end = run_virtual(main)
    elapsed = time.perf_counter() - started
    assert ticks == 60 * 200
    assert end == pytest.approx(3600 - period / 200 + period)
    assert elapsed < 60.0, f"an hour of 200 periodic tasks took {elapsed:.2f}s of real time"


# --- timer order ---------------------------------------------------------------------------


def test_tasks_sleeping_to_the_same_deadline_wake_in_creation_order() -> None:
    async def main() -> list[int]:
        woke: list[int] = []

        async def sleeper(i: int) -> None:
            await asyncio.sleep(5)
            woke.append(i)

        async with asyncio.TaskGroup() as tg:
            for i in range(100):
                tg.create_task(sleeper(i))
        return woke

    assert run_virtual(main) == list(range(100))


def test_equal_deadlines_fire_fifo_among_other_deadlines() -> None:
    deadlines = [3.0, 1.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0] * 8

    async def main() -> list[tuple[float, int]]:
        loop = asyncio.get_running_loop()
        fired: list[tuple[float, int]] = []
        done = loop.create_future()

        def fire(i: int) -> None:
            fired.append((now(), i))

        for i, when in enumerate(deadlines):
            loop.call_at(when, fire, i)
        loop.call_at(3.0, done.set_result, None)
        await done
        return fired

    assert run_virtual(main) == sorted((when, i) for i, when in enumerate(deadlines))


def test_the_stock_timer_heap_does_not_keep_ties_in_order() -> None:
    # Why the loop needs its own tie-break: stock TimerHandles compare by deadline only.
    loop = VirtualTimeEventLoop()
    try:
        heap: list[asyncio.TimerHandle] = []
        callbacks = [lambda: None for _ in range(20)]
        for cb in callbacks:
            heapq.heappush(heap, asyncio.TimerHandle(5.0, cb, (), loop))
        popped = [heapq.heappop(heap)._callback for _ in range(20)]  # type: ignore[attr-defined]
        assert popped != callbacks
    finally:
        loop.close()


def test_cancelled_timers_neither_fire_nor_move_the_clock() -> None:
    # 300 timers, 200 of them cancelled (enough for asyncio to compact its heap), among them
    # the 100 latest: once the live ones have fired, the clock must stay at the last one.
    fired: list[int] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        handles = [loop.call_later(1 + i, fired.append, i) for i in range(300)]
        for i, handle in enumerate(handles):
            if i % 3 or i >= 200:
                handle.cancel()
        await loop.create_future()  # nothing completes it

    with pytest.raises(DeadlockError, match=r"at t=199\.0;"):
        run_virtual(main, lambda: VirtualTimeEventLoop(idle_real_wait=0))
    assert fired == list(range(0, 200, 3))


# --- timeouts ------------------------------------------------------------------------------


@pytest.mark.parametrize("start", [pytest.param(0.0, id="t0=0"), pytest.param(0.1, id="t0=0.1")])
def test_timeout_and_wait_for_fire_at_exact_virtual_deadlines(start: float) -> None:
    async def main() -> list[float]:
        seen: list[float] = []
        await asyncio.sleep(start)
        t0 = now()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(30):
                await asyncio.sleep(100)
        seen.append(now())
        with pytest.raises(TimeoutError):
            async with asyncio.timeout_at(t0 + 42.5):
                await asyncio.Event().wait()
        seen.append(now())
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.get_running_loop().create_future(), 7.25)
        seen.append(now())
        assert await asyncio.wait_for(asyncio.sleep(1, result="early"), 5) == "early"
        seen.append(now())
        return seen

    t0 = start
    assert run_virtual(main) == [t0 + 30, t0 + 42.5, t0 + 42.5 + 7.25, t0 + 42.5 + 7.25 + 1]


# --- deadlock ------------------------------------------------------------------------------


@pytest.mark.real_time
def test_a_task_waiting_on_a_future_nobody_completes_is_a_deadlock() -> None:
    async def main() -> None:
        await asyncio.sleep(5)
        await asyncio.get_running_loop().create_future()

    async def runner() -> None:
        await asyncio.create_task(main(), name="stuck-waiter")

    started = time.perf_counter()
    with pytest.raises(DeadlockError, match=r"at t=5\.0; 2 waiting task\(s\): .*stuck-waiter"):
        run_virtual(runner)
    waited = time.perf_counter() - started
    assert 0.2 <= waited < 2.0  # the default idle_real_wait, then the verdict


@pytest.mark.real_time
def test_deadlock_wait_is_configurable() -> None:
    async def main() -> None:
        await asyncio.Event().wait()

    started = time.perf_counter()
    with pytest.raises(DeadlockError, match=r"within 0\.01s of real time, at t=0\.0"):
        run_virtual(main, lambda: VirtualTimeEventLoop(idle_real_wait=0.01))
    assert time.perf_counter() - started < 0.2


def test_idle_real_wait_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="idle_real_wait must be >= 0"):
        VirtualTimeEventLoop(idle_real_wait=-1)


def test_call_at_on_a_closed_loop_raises() -> None:
    loop = VirtualTimeEventLoop()
    loop.close()
    with pytest.raises(RuntimeError, match="Event loop is closed"):
        loop.call_at(1.0, lambda: None)


# --- threads -------------------------------------------------------------------------------


@pytest.mark.real_time
def test_to_thread_works_and_takes_no_virtual_time() -> None:
    def work() -> int:
        time.sleep(0.02)
        return threading.get_ident()

    async def main() -> tuple[int, float, list[float]]:
        ticks: list[float] = []

        async def ticker() -> None:  # keeps a timer pending the whole time
            while True:
                await asyncio.sleep(1)
                ticks.append(now())

        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(ticker())
            ident = await asyncio.to_thread(work)
            task.cancel()
        return ident, now(), ticks

    ident, end, ticks = run_virtual(main)
    assert ident != threading.get_ident()
    assert end == 0.0
    assert ticks == []


@pytest.mark.real_time
def test_a_thread_job_slower_than_idle_real_wait_is_not_a_deadlock() -> None:
    def slow() -> str:
        time.sleep(0.15)
        return "done"

    async def main() -> str:
        return await asyncio.to_thread(slow)

    assert run_virtual(main, lambda: VirtualTimeEventLoop(idle_real_wait=0.02)) == "done"


@pytest.mark.real_time
def test_call_soon_threadsafe_from_a_plain_thread_wakes_the_loop() -> None:
    async def main() -> str:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()

        def report() -> None:
            time.sleep(0.02)
            loop.call_soon_threadsafe(future.set_result, "from thread")

        thread = threading.Thread(target=report)
        thread.start()
        try:
            return await future
        finally:
            thread.join()

    assert run_virtual(main) == "from thread"


# --- other libraries and asyncio internals -------------------------------------------------


@pytest.mark.real_time
def test_anyio_runs_on_the_virtual_loop() -> None:
    # anyio ignores unknown backend options, so check the loop really is virtual.
    async def main() -> tuple[float, bool]:
        with anyio.move_on_after(10) as scope:
            await anyio.sleep(3600)
        return anyio.current_time(), scope.cancelled_caught

    started = time.perf_counter()
    result = anyio.run(main, backend="asyncio", backend_options={"loop_factory": new_virtual_loop})
    assert result == (10.0, True)
    assert time.perf_counter() - started < 0.5


def test_the_private_asyncio_internals_the_loop_relies_on_still_exist() -> None:
    loop = VirtualTimeEventLoop()
    try:
        assert loop._scheduled == []
        assert "_scheduled" in asyncio.TimerHandle.__slots__
        handle = loop.call_at(5.0, lambda: None)
        assert loop._timers == [(5.0, 0, handle)]  # outside debug mode: our tuple heap
        assert handle._scheduled is True  # type: ignore[attr-defined]
        handle.cancel()
        assert loop._timer_cancelled_count == 1
        loop.set_debug(True)  # the stock step's heap of handles (BaseEventLoop._scheduled)
        assert loop._scheduled == [handle]
        assert loop._timers == []
        loop.set_debug(False)
        assert loop._scheduled == []
        assert loop._timers == [(5.0, 0, handle)]
        # advance: the ready queue (a deque call_soon appends to), the
        # stopping flag and the resolution _run_once adds when it takes the timers due
        assert isinstance(loop._ready, collections.deque)
        soon = loop.call_soon(lambda: None)
        assert loop._ready[-1] is soon
        assert loop._stopping is False
        assert loop._clock_resolution == time.get_clock_info("monotonic").resolution
        # _run_once: the stock step's constants and Handle._run's report of a raising callback
        base_events: Any = asyncio.base_events
        assert base_events._MIN_SCHEDULED_TIMER_HANDLES > 0
        assert 0 < base_events._MIN_CANCELLED_TIMER_HANDLES_FRACTION < 1
        assert base_events.MAXIMUM_SELECT_TIMEOUT > 0
        assert callable(asyncio.format_helpers._format_callback_source)  # type: ignore[attr-defined]
    finally:
        loop.close()


@pytest.mark.parametrize("debug", [pytest.param(False, id="ours"), pytest.param(True, id="stock")])
def test_a_raising_callback_is_reported_as_the_stock_loop_reports_it(debug: bool) -> None:
    """``_run_once`` runs a plain handle's callback itself outside debug mode (the stock
    ``_run_once`` and ``Handle._run`` in debug mode): the same context reaches the handler,
    and the next callbacks still run."""

    def bad(x: int) -> None:
        raise ValueError(x)

    def collect(loop: VirtualTimeEventLoop) -> tuple[list[dict[str, Any]], list[int], asyncio.Handle]:
        seen: list[dict[str, Any]] = []
        ran: list[int] = []
        loop.set_exception_handler(lambda _loop, context: seen.append(context))
        handle = loop.call_soon(bad, 7)
        loop.call_soon(ran.append, 1)
        loop.call_at(0.0, ran.append, 2)  # a timer due now: a _FifoTimerHandle
        loop.call_at(1.0, loop.stop)
        loop.run_forever()
        return seen, ran, handle

    loop = VirtualTimeEventLoop()
    loop.set_debug(debug)
    try:
        seen, ran, handle = collect(loop)
    finally:
        loop.close()
    assert ran == [1, 2]
    assert len(seen) == 1
    context = seen[0]
    assert context["handle"] is handle
    assert isinstance(context["exception"], ValueError)
    assert context["exception"].args == (7,)
    assert context["message"].startswith("Exception in callback ")
    assert "bad(7)" in context["message"]
    assert ("source_traceback" in context) == debug


def test_the_lean_loop_step_runs_what_the_stock_step_runs_in_the_same_order() -> None:
    """``_run_once`` outside debug mode against the stock step (debug mode): 200 tasks with
    ties, timeouts, cancellations and a channel give the same (time, task, step) log."""

    def logged(debug: bool) -> list[str]:
        def factory() -> asyncio.AbstractEventLoop:
            loop = new_virtual_loop()
            loop.set_debug(debug)
            loop.slow_callback_duration = 1e9  # no slow-callback warnings in debug mode
            return loop

        return run_virtual(lambda: determinism_main(5), factory)

    assert logged(False) == logged(True)


def _assert_stock_slots(ours: Any, stock: asyncio.Handle, debug: bool, extra: list[str]) -> None:
    """``ours`` has the slots of the stock handle ``stock`` (a Handle's, and ``extra``), with its
    values; a source traceback only in debug mode."""
    slots = [s for cls in type(stock).__mro__ for s in getattr(cls, "__slots__", ()) if s != "__weakref__"]
    handle = ["_args", "_callback", "_cancelled", "_context", "_loop", "_repr", "_source_traceback"]
    assert sorted(slots) == sorted(handle + extra)
    for slot in slots:
        if slot != "_source_traceback":
            assert getattr(ours, slot) == getattr(stock, slot), slot
    assert (ours._source_traceback is None) == (not debug)


@pytest.mark.parametrize("debug", [pytest.param(False, id="inlined"), pytest.param(True, id="debug")])
def test_a_fifo_timer_has_the_slots_of_a_stock_timer(debug: bool) -> None:
    loop = VirtualTimeEventLoop()
    loop.set_debug(debug)
    try:

        def callback(x: int) -> None:
            pass

        ctx = contextvars.copy_context()
        ours = loop.call_at(5.0, callback, 1, context=ctx)
        stock = asyncio.TimerHandle(5.0, callback, (1,), loop, ctx)
        stock._scheduled = True  # type: ignore[attr-defined]
        _assert_stock_slots(ours, stock, debug, ["_scheduled", "_when"])
        no_context = loop.call_at(6.0, callback, 2)
        assert isinstance(no_context._context, contextvars.Context)  # type: ignore[attr-defined]
    finally:
        loop.close()


@pytest.mark.parametrize("debug", [pytest.param(False, id="inlined"), pytest.param(True, id="debug")])
def test_call_soon_makes_the_handle_of_the_stock_call_soon(debug: bool) -> None:
    loop = VirtualTimeEventLoop()
    loop.set_debug(debug)
    try:

        def callback(x: int) -> None:
            pass

        ctx = contextvars.copy_context()
        ours = loop.call_soon(callback, 1, context=ctx)
        stock = asyncio.Handle(callback, (1,), loop, ctx)
        assert type(ours) is asyncio.Handle
        assert loop._ready[-1] is ours
        _assert_stock_slots(ours, stock, debug, [])
        no_context = loop.call_soon(callback, 2)
        assert isinstance(no_context._context, contextvars.Context)  # type: ignore[attr-defined]
        assert no_context._context is not ctx  # type: ignore[attr-defined]
    finally:
        loop.close()
    with pytest.raises(RuntimeError, match="closed"):
        loop.call_soon(lambda: None)


# --- determinism ---------------------------------------------------------------------------


def determinism_workload(seed: int) -> list[str]:
    """200 tasks sleeping seeded durations with many exact ties, plus channel hand-offs and
    timeouts; returns the (time, task, step) log."""
    return run_virtual(lambda: determinism_main(seed))


def determinism_main(seed: int) -> Coroutine[Any, Any, list[str]]:
    """``determinism_workload``'s coroutine (to run on a loop of one's choice)."""

    async def main() -> list[str]:
        log: list[str] = []
        inbox: Channel[str] = Channel()

        async def worker(i: int) -> None:
            rng = stream(seed, f"worker-{i}")
            for step in range(20):
                pick = rng.choice([0.0, 0.5, 1.0, 1.0, 2.0, 2.0, -1.0])
                delay = rng.uniform(0, 10) if pick < 0 else pick
                if step % 5 == 4:
                    try:
                        await asyncio.wait_for(asyncio.Event().wait(), delay)
                    except TimeoutError:
                        log.append(f"{now()!r} worker-{i} {step} timeout")
                        continue
                await asyncio.sleep(delay)
                log.append(f"{now()!r} worker-{i} {step}")
                inbox.put(f"worker-{i}/{step}")

        async def consumer() -> None:
            while True:
                batch = await inbox.get_batch()
                log.append(f"{now()!r} consumer {len(batch)} {batch[0]} {batch[-1]}")

        async with asyncio.TaskGroup() as tg:
            reader = tg.create_task(consumer(), name="consumer")
            workers = [tg.create_task(worker(i), name=f"worker-{i}") for i in range(200)]
            await asyncio.gather(*workers)
            reader.cancel()
        return log

    return main()


@pytest.mark.real_time
def test_two_processes_with_different_hash_seeds_produce_identical_logs() -> None:
    def in_subprocess(hash_seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        done = subprocess.run(
            [sys.executable, __file__, "1234"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout

    first, second = in_subprocess("1"), in_subprocess("2")
    here = "\n".join(determinism_workload(1234)) + "\n"
    assert first == second == here
    lines = here.splitlines()
    times = Counter(line.split()[0] for line in lines if "worker" in line.split()[1])
    assert times.total() == 200 * 20
    tied = sum(n for n in times.values() if n > 1)
    assert tied > 1000, "the workload should have many events at exactly the same time"


if __name__ == "__main__":
    print("\n".join(determinism_workload(int(sys.argv[1]))))


def test_timers_keep_their_order_when_debug_mode_is_switched_with_timers_pending() -> None:
    """``set_debug`` moves the pending timers between our tuple heap and the stock step's
    heap of handles: ties still fire first in, first out, cancelled ones not at all."""
    loop = VirtualTimeEventLoop()
    try:
        fired: list[tuple[float, int]] = []
        cancelled = []
        for i in range(40):
            when = float(i % 7)
            handle = loop.call_at(when, lambda w=when, n=i: fired.append((w, n)))
            if i % 5 == 3:
                cancelled.append(i)
                handle.cancel()
            if i % 9 == 4:
                loop.set_debug(not loop.get_debug())
        loop.call_at(3.5, lambda: loop.set_debug(not loop.get_debug()))
        loop.call_at(10.0, loop.stop)
        loop.run_forever()
        want = sorted((float(i % 7), i) for i in range(40) if i not in cancelled)
        assert fired == want
    finally:
        loop.close()


def test_a_fired_timer_is_not_kept_alive_by_the_loop_step() -> None:
    """The lean step's frame lives as long as ``run_forever``: it must not hold the last timer
    it fired, nor the last entry of a heap it compacted (their callbacks' arguments would live
    on, unlike under the stock loop)."""
    import gc
    import weakref

    class Payload:
        pass

    loop = VirtualTimeEventLoop()
    refs: list[weakref.ref[Payload]] = []

    async def main() -> None:
        handles = [loop.call_later(100 + i, lambda: None) for i in range(150)]
        payload = Payload()
        refs.append(weakref.ref(payload))
        loop.call_later(200, lambda _p: None, payload)  # live, last in the heap's list
        del payload
        for h in handles:
            h.cancel()
        del handles
        await asyncio.sleep(0)  # the heap is compacted in this iteration
        await asyncio.sleep(300)  # the live timer fires at 200
        gc.collect()
        assert refs[0]() is None
        fired = Payload()
        refs.append(weakref.ref(fired))
        seen: list[bool] = []

        def next_iteration() -> None:  # no timer fired since the payload's
            gc.collect()
            seen.append(refs[1]() is None)

        loop.call_later(1, lambda _p: loop.call_soon(next_iteration), fired)
        del fired
        await asyncio.sleep(2)
        assert seen == [True]

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


def test_call_at_refuses_none_as_the_stock_loop_does() -> None:
    loop = VirtualTimeEventLoop()
    try:
        with pytest.raises(TypeError, match="when cannot be None"):
            loop.call_at(None, lambda: None)  # type: ignore[arg-type]
    finally:
        loop.close()


def test_get_debug_answers_as_the_stock_method_in_both_modes() -> None:
    """Outside debug mode ``get_debug`` is ``bool`` (no Python frame for the C futures' call):
    it must answer what the stock method answers, before, after and across switches."""
    loop = VirtualTimeEventLoop()
    try:
        for enabled in (False, True, True, False, True, False):
            loop.set_debug(enabled)
            assert loop.get_debug() is enabled
            assert asyncio.BaseEventLoop.get_debug(loop) is enabled
            # what the C Future and Task constructors see: a source traceback only in debug mode
            future = loop.create_future()
            assert (future._source_traceback is not None) is enabled  # type: ignore[attr-defined]
            future.cancel()
    finally:
        loop.close()


@pytest.mark.parametrize("debug", [pytest.param(False, id="inlined"), pytest.param(True, id="debug")])
def test_create_task_makes_the_task_of_the_stock_create_task(debug: bool) -> None:
    names: list[tuple[str, bool, object]] = []
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")

    async def child(tag: str) -> str:
        names.append((asyncio.current_task().get_name(), asyncio.current_task().get_loop() is loop, var.get()))  # type: ignore[union-attr]
        return tag

    async def main() -> None:
        var.set("main")
        ctx = contextvars.copy_context()
        ctx.run(var.set, "ctx")
        tasks = [
            loop.create_task(child("a"), name="named"),
            loop.create_task(child("b")),
            loop.create_task(child("c"), name=7),  # the stock Task takes any object: its str()
            loop.create_task(child("d"), context=ctx),
        ]
        for task in tasks:
            assert type(task) is asyncio.Task
            assert (task._source_traceback is not None) is debug  # type: ignore[attr-defined]
        async with asyncio.TaskGroup() as tg:
            grouped = tg.create_task(child("e"), name="grouped")
        assert [await t for t in tasks] + [grouped.result()] == ["a", "b", "c", "d", "e"]

    loop = VirtualTimeEventLoop()
    loop.set_debug(debug)
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert names[0][0] == "named"
    assert names[2][0] == "7"
    assert names[4][0] == "grouped"
    assert names[1][0].startswith("Task-")
    assert all(n[1] for n in names)
    assert [n[2] for n in names] == ["main", "main", "main", "ctx", "main"]
    coro = child("x")
    with pytest.raises(RuntimeError, match="Event loop is closed"):
        loop.create_task(coro)
    coro.close()


def test_create_task_with_a_task_factory_takes_the_stock_path() -> None:
    made: list[str] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        made.append("factory")
        return asyncio.Task(coro, loop=loop, **kwargs)

    async def main() -> None:
        task = asyncio.get_running_loop().create_task(asyncio.sleep(1), name="slept")
        assert task.get_name() == "slept"
        await task

    loop = VirtualTimeEventLoop()
    loop.set_task_factory(factory)
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert made == ["factory", "factory"]  # run_until_complete's task and ours


@pytest.mark.parametrize("debug", [pytest.param(False, id="in-place"), pytest.param(True, id="stock")])
def test_a_sleep_timer_due_with_its_sleeper_cancelled_wakes_nothing_and_reports_nothing(debug: bool) -> None:
    """The step runs a sleep's ``wake`` in place outside debug mode: when the sleeper was cancelled
    in the same step (its future done, its timer not yet cancelled), the timer must do nothing,
    as the callback does under the stock step; a sleep not cancelled wakes at its deadline."""
    from emulator.base.runtime.clock import LoopClock

    reported: list[dict[str, Any]] = []
    log: list[tuple[str, float]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: reported.append(context))
        clock = LoopClock(loop, virtual=True)

        async def sleeper(name: str) -> None:
            try:
                await clock.sleep(5.0)
                log.append((name, clock.now()))
            except asyncio.CancelledError:
                log.append((name + " cancelled", clock.now()))
                raise

        tasks: list[asyncio.Task[None]] = []
        # due at 5 s like both sleeps' timers, and made before them: it runs first in the step
        # that takes them, so the victim's future is done when its timer runs
        loop.call_at(5.0, lambda: tasks[0].cancel())
        tasks += [asyncio.create_task(sleeper("victim")), asyncio.create_task(sleeper("other"))]
        await asyncio.gather(*tasks, return_exceptions=True)

    loop = VirtualTimeEventLoop()
    loop.set_debug(debug)
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert reported == []
    assert log == [("victim cancelled", 5.0), ("other", 5.0)]


# --- the review of session 42's loop shortcuts: each against the stock path ---


def _task_traceback_tail(factory: Callable[[], asyncio.AbstractEventLoop]) -> list[str]:
    async def main() -> list[str]:
        task = asyncio.get_running_loop().create_task(asyncio.sleep(0))
        await task
        return [f.name for f in task._source_traceback[-2:]]  # type: ignore[attr-defined]

    with asyncio.Runner(loop_factory=factory, debug=True) as runner:
        return runner.run(main())


def test_debug_mode_task_source_traceback_ends_at_the_caller_as_stock() -> None:
    """``create_task`` trims its own frame from a debug-mode task's source traceback, as the
    stock one does (what "Task was destroyed but it is pending" prints)."""
    assert _task_traceback_tail(new_virtual_loop) == _task_traceback_tail(asyncio.new_event_loop)


class _RaisingFuture:
    def done(self) -> bool:
        return False

    def set_result(self, _value: object) -> None:
        raise ValueError("boom")


@pytest.mark.parametrize("debug", [False, True])
def test_a_raising_wake_is_reported_not_raised(debug: bool) -> None:
    """The sleep timer completed in the step is reported like any handle's callback when it
    fails, in place (lean step) as under the stock step (debug mode)."""
    loop = VirtualTimeEventLoop()
    loop.set_debug(debug)
    loop.slow_callback_duration = 1e9
    reported: list[str] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context["message"]))

    async def main() -> None:
        loop.call_at(1.0, wake, _RaisingFuture())
        await asyncio.sleep(2)

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert len(reported) == 1


def _jumps(debug: bool) -> list[tuple[object, ...]]:
    """A jump-heavy workload with a real fd that becomes readable now and then: the time and
    the selector's iteration count at every wake-up and every read."""
    loop = VirtualTimeEventLoop()
    loop.set_debug(debug)
    loop.slow_callback_duration = 1e9
    log: list[tuple[object, ...]] = []
    a, b = socket.socketpair()
    a.setblocking(False)
    loop.add_reader(a.fileno(), lambda: log.append(("read", loop.time(), loop._idle_selector._busy, a.recv(99))))

    async def sleeper(i: int) -> None:
        for k in range(3 * POLL_EVERY):
            await asyncio.sleep(1.0 + (i * k) % 3)
            log.append((i, k, loop.time(), loop._idle_selector._busy))
            if k % 17 == 3:
                b.send(b"x")

    async def main() -> None:
        await asyncio.gather(*(sleeper(i) for i in range(3)))

    try:
        loop.run_until_complete(main())
    finally:
        loop.remove_reader(a.fileno())
        a.close()
        b.close()
        loop.close()
    return log


def test_the_clock_jump_written_out_counts_and_polls_as_the_stock_select() -> None:
    """The lean step's jump (``select`` and ``_on_idle`` written out) counts its iterations and
    polls the real fds exactly when the stock step does."""
    assert _jumps(False) == _jumps(True)
