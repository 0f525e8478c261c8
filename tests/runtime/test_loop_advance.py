"""VirtualTimeEventLoop's stepping without a round trip: ``advance`` moves the clock only
when the loop would do exactly that next. (Wake-ups owed and settled in place:
``tests/runtime/test_channel_drain.py``.)"""

from __future__ import annotations

import asyncio

import pytest

from emulator.base.runtime import VirtualTimeEventLoop
from emulator.base.runtime.loop import POLL_EVERY
from tests.clocks import run_virtual


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

    assert run_virtual(main()) == (expected, 2.0 if expected else 1.0)


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

    assert run_virtual(main()) == [True, False, False]


def test_every_pollth_step_goes_through_the_loop_which_polls_the_real_fds() -> None:
    async def main() -> tuple[list[bool], bool]:
        loop = _loop()
        loop.call_at(1000.0, lambda: None)
        steps = [loop.advance(float(i)) for i in range(1, 2 * POLL_EVERY)]
        await asyncio.sleep(0)  # a loop iteration: its select polls the real fds
        return steps, loop.advance(500.0)

    steps, after_poll = run_virtual(main())
    first_refused = steps.index(False)
    assert 0 < first_refused < POLL_EVERY
    assert not any(steps[first_refused:])
    assert after_poll
