"""PacedClock: ``serve --speed``'s clock, tested on virtual time (no wall clock read)."""

from __future__ import annotations

import asyncio
import math

import pytest

from emulator.base.runtime import LoopClock, PacedClock, run


@pytest.mark.parametrize(
    ("speed", "sleep", "loop_seconds"),
    [
        pytest.param(1.0, 30.0, 30.0, id="speed-1-is-the-loop"),
        pytest.param(10.0, 30.0, 3.0, id="speed-10-ten-clock-seconds-per-loop-second"),
        pytest.param(0.5, 3.0, 6.0, id="speed-half-slows-down"),
        pytest.param(3.0, 0.1, 0.1 / 3.0, id="speed-3-inexact-division"),
    ],
)
def test_clock_seconds_are_speed_times_loop_seconds(speed: float, sleep: float, loop_seconds: float) -> None:
    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        clock = PacedClock(loop, virtual=True, speed=speed)
        start = loop.time()
        await clock.sleep(sleep)
        return clock.now(), loop.time() - start

    now, elapsed = run(main)
    assert now >= sleep
    assert math.isclose(now, sleep, rel_tol=1e-12)
    assert math.isclose(elapsed, loop_seconds, rel_tol=1e-12)


@pytest.mark.parametrize("speed", [pytest.param(s, id=f"speed-{s}") for s in (0.3, 1.0, 7.0, 10.0, 1000.0)])
def test_sleep_until_wakes_at_or_after_the_deadline(speed: float) -> None:
    async def main() -> list[float]:
        clock = PacedClock(virtual=True, speed=speed)
        woke = []
        for t in (0.1, 0.7, 1.3, 10.01, 59.999):
            await clock.sleep_until(t)
            woke.append(clock.now() - t)
        return woke

    assert all(0 <= late < 1e-9 for late in run(main))


def test_speed_1_reads_what_a_loop_clock_reads() -> None:
    async def main() -> tuple[float, float, str, str]:
        paced, plain = PacedClock(virtual=True, speed=1.0), LoopClock(virtual=True)
        await paced.sleep(12.345)
        return paced.now(), plain.now(), paced.timestamp(), plain.timestamp()

    paced_now, plain_now, paced_ts, plain_ts = run(main)
    assert paced_now == plain_now
    assert paced_ts == plain_ts == "2026-01-01T00:00:12Z"


@pytest.mark.parametrize(
    "speed",
    [
        pytest.param(0.0, id="zero"),
        pytest.param(-1.0, id="negative"),
        pytest.param(math.inf, id="infinite"),
        pytest.param(math.nan, id="nan"),
    ],
)
def test_speed_must_be_finite_and_positive(speed: float) -> None:
    async def main() -> None:
        PacedClock(virtual=True, speed=speed)

    with pytest.raises(ValueError, match=r"the clock's speed must be a finite number above 0, got "):
        run(main)


def test_repr_names_the_speed() -> None:
    async def main() -> str:
        return repr(PacedClock(virtual=True, speed=10.0))

    assert run(main) == "<PacedClock virtual=True speed=10.0 now=0.0>"


def test_timestamp_of_now_is_the_paced_time_and_moves_with_it() -> None:
    """``timestamp()`` remembers the text of the current instant; on a PacedClock that instant
    is the paced time (a regression: the memo once read the loop's own time)."""

    async def main() -> list[tuple[str, str]]:
        clock = PacedClock(virtual=True, speed=10.0)
        out = []
        for t in (0.0, 0.0, 30.0, 95.0):
            await clock.sleep_until(t)
            out.append((clock.timestamp(), clock.timestamp(clock.now())))
        return out

    stamps = run(main)
    assert all(memo == fresh for memo, fresh in stamps)
    assert [s[-9:] for s, _ in stamps] == ["00:00:00Z", "00:00:00Z", "00:00:30Z", "00:01:35Z"]
