"""VirtualTimeEventLoop's stepping without a round trip: ``advance`` moves the clock only
when the loop would do exactly that next, and wake-ups owed while wakes are held
(``hold_wakes`` / ``release_wakes``, ``Channel.set_drain``) settle in the order the eager
wake-ups would have run in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from emulator.base.runtime import Channel, ChannelClosed, VirtualTimeEventLoop, new_virtual_loop
from emulator.base.runtime.loop import POLL_EVERY


def _run(main: Callable[[], Any]) -> Any:
    loop = new_virtual_loop()
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()


def _loop() -> VirtualTimeEventLoop:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualTimeEventLoop)
    return loop


# --- advance -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("other_timer", "expected"),
    [
        pytest.param(None, False, id="no-other-timer"),
        pytest.param(5.0, True, id="later-timer"),
        pytest.param(2.0, False, id="timer-at-the-instant"),
        pytest.param(2.0 + 1e-12, False, id="timer-within-the-clock-resolution"),
        pytest.param(1.5, False, id="earlier-timer"),
    ],
)
def test_advance_moves_the_clock_only_before_every_other_timer(other_timer: float | None, expected: bool) -> None:
    async def main() -> tuple[bool, float]:
        loop = _loop()
        await asyncio.sleep(1.0)
        if other_timer is not None:
            loop.call_at(other_timer, lambda: None)
        moved = loop.advance(2.0)
        return moved, loop.time()

    assert _run(main) == (expected, 2.0 if expected else 1.0)


def test_advance_drops_cancelled_timers_and_refuses_while_anything_is_ready() -> None:
    async def main() -> list[bool]:
        loop = _loop()
        loop.call_at(5.0, lambda: None)
        loop.call_at(1.0, lambda: None).cancel()  # dropped, as _run_once drops it
        out = [loop.advance(2.0)]
        handle = loop.call_soon(lambda: None)
        out.append(loop.advance(3.0))  # a callback is ready: it runs first
        handle.cancel()
        await asyncio.sleep(0)
        out.append(loop.advance(1.0))  # never backwards
        return out

    assert _run(main) == [True, False, False]


# --- owed wake-ups -------------------------------------------------------------------------

Action = tuple[str, str]
"""("put", channel) | ("soon", label): a put, or a plain callback scheduled."""

CASES: list[tuple[str, list[Action]]] = [
    ("one-put", [("put", "a")]),
    ("two-channels", [("put", "a"), ("put", "b")]),
    ("puts-twice", [("put", "a"), ("put", "a"), ("put", "b"), ("put", "a")]),
    ("callback-after", [("put", "a"), ("soon", "x")]),
    ("callback-before", [("soon", "x"), ("put", "a")]),
    ("interleaved", [("put", "a"), ("soon", "x"), ("put", "b"), ("soon", "y"), ("put", "a")]),
    ("declining-first", [("put", "no"), ("put", "a")]),
    ("declining-between", [("put", "a"), ("put", "no"), ("put", "b")]),
    ("close-while-owed", [("put", "a"), ("close", "a"), ("put", "b")]),
]


def _play(actions: list[Action], *, held: bool) -> list[Any]:
    """The log of what ran, in order: (consumer, items) per batch applied, labels of the
    callbacks, ``closed`` ends; the producer's step holds wakes when ``held``."""

    async def main() -> list[Any]:
        loop = _loop()
        log: list[Any] = []
        channels = {name: Channel[int]() for name in ("a", "b", "no")}
        counter = iter(range(1000))

        async def consume(name: str) -> None:
            channel = channels[name]
            if name != "no":
                channel.set_drain(lambda: log.append((name, channel.get_nowait_batch())) is None)
            else:
                channel.set_drain(lambda: False)
            try:
                while True:
                    log.append((name, await channel.get_batch()))
            except ChannelClosed:
                log.append((name, "closed"))

        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(consume(name)) for name in channels]
            for _ in range(3):
                await asyncio.sleep(0)  # every consumer waits
            if held:
                loop.hold_wakes()
            for verb, name in actions:
                if verb == "put":
                    channels[name].put(next(counter))
                elif verb == "close":
                    channels[name].close()
                else:
                    loop.call_soon(log.append, name)
            if held:
                loop.release_wakes()
            log.append("producer-done")
            await asyncio.sleep(1.0)
            for task in tasks:
                task.cancel()
        return log

    return _run(main)  # type: ignore[no-any-return]


@pytest.mark.parametrize("actions", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_owed_wakeups_settle_in_the_eager_order(actions: list[Action]) -> None:
    # a drain run in place comes before the rest of the producer's own step (its only
    # observer), so the producer's mark is left out of the comparison
    eager = [e for e in _play(actions, held=False) if e != "producer-done"]
    assert [e for e in _play(actions, held=True) if e != "producer-done"] == eager


def test_a_drain_runs_in_place_only_when_nothing_else_is_ready() -> None:
    held = _play([("put", "a"), ("put", "b")], held=True)
    assert held[:3] == [("a", [0]), ("b", [1]), "producer-done"]  # drained at release
    held = _play([("soon", "x"), ("put", "a")], held=True)
    assert held[:3] == ["producer-done", "x", ("a", [0])]  # woken, behind the callback


def test_wakes_are_held_by_one_holder_and_a_failing_drain_leaves_no_consumer_asleep() -> None:
    async def main() -> list[Any]:
        loop = _loop()
        log: list[Any] = []
        bad, good = Channel[int](), Channel[int]()

        def boom() -> bool:
            raise ValueError("drain failed")

        async def consume(name: str, channel: Channel[int]) -> None:
            log.append((name, await channel.get_batch()))

        async with asyncio.TaskGroup() as tg:
            tg.create_task(consume("good", good))
            tg.create_task(consume("bad", bad))
            await asyncio.sleep(0)
            bad.set_drain(boom)
            good.set_drain(lambda: False)
            loop.hold_wakes()
            with pytest.raises(RuntimeError, match="already held"):
                loop.hold_wakes()
            bad.put(1)
            good.put(2)
            with pytest.raises(ValueError, match="drain failed"):
                loop.release_wakes()
            bad.put(3)  # held no more: wakes at once
        return log

    assert _run(main) == [("good", [2]), ("bad", [1, 3])]


def test_every_pollth_step_goes_through_the_loop_which_polls_the_real_fds() -> None:
    async def main() -> tuple[list[bool], bool]:
        loop = _loop()
        loop.call_at(1000.0, lambda: None)
        steps = [loop.advance(float(i)) for i in range(1, 2 * POLL_EVERY)]
        await asyncio.sleep(0)  # a loop iteration: its select polls the real fds
        return steps, loop.advance(500.0)

    steps, after_poll = _run(main)
    first_refused = steps.index(False)
    assert 0 < first_refused < POLL_EVERY
    assert not any(steps[first_refused:])
    assert after_poll
