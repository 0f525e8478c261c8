"""anyio's cancel scopes on the emulator's own loops, as the runner's ``waitFor`` uses them:
anyio's asyncio backend reads ``loop.time()``, so on the virtual loop a scope's deadline is
virtual time (no wall-clock wait), and equal deadlines keep the loop's first-in first-out order."""

from __future__ import annotations

import asyncio
import time

import anyio
import pytest

from emulator.base.runtime.clock import LoopClock, run


@pytest.mark.parametrize(
    "virtual",
    [
        pytest.param(True, id="virtual", marks=pytest.mark.real_time),  # a wall-clock bound, too
        pytest.param(False, id="real", marks=pytest.mark.real_time),
    ],
)
def test_move_on_after_ends_at_the_deadline_of_the_loop_clock(virtual: bool) -> None:
    timeout = 3600.0 if virtual else 0.05

    async def main() -> tuple[float, bool, float]:
        clock = LoopClock(virtual=virtual)
        with anyio.move_on_after(timeout) as scope:
            await asyncio.Event().wait()
        return clock.now(), scope.cancelled_caught, anyio.current_time() - asyncio.get_running_loop().time()

    wall = time.perf_counter()
    now, caught, skew = run(main, virtual=virtual)
    assert caught
    assert skew == 0.0
    if virtual:
        assert now == timeout
        assert time.perf_counter() - wall < 5  # an hour of virtual time, not of wall time
    else:
        assert now >= timeout - 0.002  # uvloop's timers have millisecond resolution and may fire early


def test_work_done_before_the_deadline_is_not_cancelled() -> None:
    async def main() -> tuple[float, bool]:
        clock = LoopClock(virtual=True)
        with anyio.move_on_after(10) as scope:
            await clock.sleep(9.5)
        return clock.now(), scope.cancelled_caught

    assert run(main) == (9.5, False)


def test_a_timer_due_with_the_deadline_but_set_after_it_fires_after_it() -> None:
    # The scope's timer is set when the scope is entered; the loop fires equal deadlines FIFO.
    async def main() -> list[str]:
        clock = LoopClock(virtual=True)
        order: list[str] = []

        async def other() -> None:
            await clock.sleep(5)
            order.append("other timer")

        async with asyncio.TaskGroup() as tg:
            with anyio.move_on_after(5):
                tg.create_task(other(), name="other")
                await asyncio.Event().wait()
            order.append("scope expired")
        return order

    assert run(main) == ["scope expired", "other timer"]
