"""``run_inline``: a coroutine run in the caller up to its first suspension, the rest handed
back to be awaited from a task (values, cancellation and exceptions passed through)."""

from __future__ import annotations

import asyncio

import pytest

from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.inline import run_inline
from tests.clocks import run_virtual


async def _walk(log: list[str], clock: LoopClock, waits: int) -> None:
    log.append("start")
    for i in range(waits):
        await clock.sleep(1.0)
        log.append(f"{i}@{clock.now():g}")
    log.append("end")


@pytest.mark.parametrize(
    ("waits", "finished", "log"),
    [
        pytest.param(0, True, ["start", "end"], id="no-wait"),
        pytest.param(2, False, ["start", "0@1", "1@2", "end"], id="two-waits"),
    ],
)
def test_runs_up_to_the_first_suspension(waits: int, finished: bool, log: list[str]) -> None:
    async def main() -> list[str]:
        clock = LoopClock(virtual=True)
        got: list[str] = []
        rest = run_inline(_walk(got, clock, waits))
        assert (rest is None) == finished
        if rest is not None:
            assert got == ["start"]
            await asyncio.get_running_loop().create_task(rest, name="rest")
        return got

    assert run_virtual(main()) == log


def test_errors_before_and_after_the_suspension_and_cancellation() -> None:
    async def fails_at_once() -> None:
        raise ValueError("now")

    async def fails_later(clock: LoopClock) -> None:
        await clock.sleep(1.0)
        raise KeyError("later")

    async def main() -> None:
        clock = LoopClock(virtual=True)
        with pytest.raises(ValueError, match="now"):
            run_inline(fails_at_once())
        rest = run_inline(fails_later(clock))
        assert rest is not None
        with pytest.raises(KeyError, match="later"):
            await rest
        log: list[str] = []
        rest = run_inline(_walk(log, clock, 5))
        assert rest is not None
        task = asyncio.get_running_loop().create_task(rest, name="rest")
        await clock.sleep(1.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert log == ["start", "0@2"]

    run_virtual(main())
