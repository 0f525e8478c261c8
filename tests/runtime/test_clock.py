"""LoopClock, run(), timestamps and Go-style durations."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from emulator.base.runtime import (
    EPOCH,
    Clock,
    DeadlockError,
    LoopClock,
    PacedClock,
    VirtualTimeEventLoop,
    format_duration,
    format_timestamp,
    parse_duration,
    parse_timestamp,
    run,
)

# --- LoopClock -----------------------------------------------------------------------------


@pytest.mark.real_time
def test_sleeping_an_hour_is_instant_and_exact() -> None:
    async def main() -> tuple[float, str]:
        clock: Clock = LoopClock(virtual=True)
        await clock.sleep(3600)
        return clock.now(), clock.timestamp()

    started = time.perf_counter()
    assert run(main) == (3600.0, "2026-01-01T01:00:00Z")
    assert time.perf_counter() - started < 0.5


def test_the_clock_counts_from_its_construction() -> None:
    async def main() -> list[float]:
        await asyncio.sleep(3)
        clock = LoopClock(virtual=True)
        seen = [clock.now()]
        await clock.sleep(2.5)
        seen.append(clock.now())
        await clock.sleep_until(10)
        seen.append(clock.now())
        return seen

    with asyncio.Runner(loop_factory=lambda: VirtualTimeEventLoop(start=1000)) as runner:
        assert runner.run(main()) == [0.0, 2.5, 10.0]


def test_sleep_until_lands_exactly_on_the_deadline() -> None:
    async def main() -> list[float]:
        clock = LoopClock(virtual=True)
        seen = []
        for t in (0.1, 0.3, 10.25, 3600.7):
            await clock.sleep_until(t)
            seen.append(clock.now())
        return seen

    assert run(main) == [0.1, 0.3, 10.25, 3600.7]


@pytest.mark.parametrize(
    "wait",
    [
        pytest.param(lambda c: c.sleep_until(1.0), id="sleep_until-past"),
        pytest.param(lambda c: c.sleep_until(2.0), id="sleep_until-now"),
        pytest.param(lambda c: c.sleep(0), id="sleep-0"),
        pytest.param(lambda c: c.sleep(-5), id="sleep-negative"),
    ],
)
def test_a_wait_already_due_lets_others_run_without_moving_time(
    wait: Callable[[LoopClock], Awaitable[None]],
) -> None:
    async def main() -> tuple[float, list[str]]:
        clock = LoopClock(virtual=True)
        await clock.sleep(2)
        ran: list[str] = []

        async def other() -> None:
            ran.append("other")

        task = asyncio.create_task(other())
        await wait(clock)
        ran.append("me")
        await task
        return clock.now(), ran

    assert run(main) == (2.0, ["other", "me"])


def test_a_cancelled_sleep_leaves_no_timer_behind() -> None:
    # If the cancelled sleep's timer were left pending, the clock would jump to t=100
    # instead of reporting the deadlock at t=1.
    async def main() -> None:
        clock = LoopClock(virtual=True)
        sleeper = asyncio.create_task(clock.sleep_until(100))
        await clock.sleep(1)
        sleeper.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sleeper
        await asyncio.get_running_loop().create_future()

    with pytest.raises(DeadlockError, match=r"at t=1\.0;"):
        run(main)


def test_loop_clock_reads_the_given_loop() -> None:
    loop = VirtualTimeEventLoop(start=50)
    try:
        clock = LoopClock(loop, virtual=True)
        assert (clock.now(), clock.virtual) == (0.0, True)
        assert repr(clock) == "<LoopClock virtual=True now=0.0>"
    finally:
        loop.close()


def test_loop_clock_refuses_a_loop_of_the_other_kind() -> None:
    real = asyncio.new_event_loop()
    virtual = VirtualTimeEventLoop()
    try:
        with pytest.raises(ValueError, match=r"virtual=True\) needs a virtual-time loop"):
            LoopClock(real, virtual=True)
        with pytest.raises(ValueError, match=r"virtual=False\) needs a real-time loop"):
            LoopClock(virtual, virtual=False)
    finally:
        real.close()
        virtual.close()


def test_loop_clock_outside_a_loop_needs_one() -> None:
    with pytest.raises(RuntimeError, match="no running event loop"):
        LoopClock(virtual=True)


# --- run() ---------------------------------------------------------------------------------


def test_run_defaults_to_virtual_time() -> None:
    async def main() -> tuple[str, float]:
        await asyncio.sleep(86400)
        return type(asyncio.get_running_loop()).__name__, asyncio.get_running_loop().time()

    assert run(main) == ("VirtualTimeEventLoop", 86400.0)


@pytest.mark.real_time
def test_run_in_real_time_uses_uvloop() -> None:
    pytest.importorskip("uvloop")

    async def main() -> tuple[str, float]:
        clock = LoopClock(virtual=False)
        await clock.sleep(0.02)
        return type(asyncio.get_running_loop()).__module__, clock.now()

    module, elapsed = run(main, virtual=False)
    assert module.startswith("uvloop")
    assert 0.015 <= elapsed < 1.0


@pytest.mark.real_time
def test_run_in_real_time_falls_back_to_asyncio_without_uvloop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # makes `import uvloop` fail

    async def main() -> type[asyncio.AbstractEventLoop]:
        await LoopClock(virtual=False).sleep(0.001)
        return type(asyncio.get_running_loop())

    loop_type = run(main, virtual=False)
    assert issubclass(loop_type, asyncio.BaseEventLoop)
    assert not issubclass(loop_type, VirtualTimeEventLoop)


# --- timestamps ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("t", "text"),
    [
        pytest.param(0, "2026-01-01T00:00:00Z", id="epoch"),
        pytest.param(7, "2026-01-01T00:00:07Z", id="seconds"),
        pytest.param(7.999, "2026-01-01T00:00:07Z", id="truncates"),
        pytest.param(3661, "2026-01-01T01:01:01Z", id="h-m-s"),
        pytest.param(31 * 86400, "2026-02-01T00:00:00Z", id="next-month"),
        pytest.param(365 * 86400, "2027-01-01T00:00:00Z", id="next-year"),
        pytest.param(-0.5, "2025-12-31T23:59:59Z", id="before-epoch"),
    ],
)
def test_format_timestamp(t: float, text: str) -> None:
    assert format_timestamp(t) == text


def test_timestamp_defaults_to_now_and_never_reads_the_wall_clock() -> None:
    async def main() -> tuple[str, str]:
        clock = LoopClock(virtual=True)
        await clock.sleep(90061.5)
        return clock.timestamp(), clock.timestamp(0)

    assert run(main) == ("2026-01-02T01:01:01Z", "2026-01-01T00:00:00Z")
    assert EPOCH.isoformat() == "2026-01-01T00:00:00+00:00"


def test_the_virtual_clocks_timestamp_reads_what_the_plain_one_reads() -> None:
    """A virtual ``LoopClock`` at origin 0 reads the loop's clock in place for ``timestamp()``;
    a ``PacedClock`` at speed 1 keeps the plain method: both give the same text at every step."""

    async def main() -> list[tuple[str, str, str, str]]:
        fast = LoopClock(virtual=True)
        plain = PacedClock(virtual=True, speed=1.0)
        assert fast.timestamp != plain.timestamp  # the in-place reader is in use
        out = []
        for step in (0.0, 0.25, 0.75, 1.0, 59.0, 3600.5, 0.0, 86400.0):
            await fast.sleep(step)
            out.append((fast.timestamp(), plain.timestamp(), fast.timestamp(12.5), plain.timestamp(12.5)))
            out.append((fast.timestamp(), plain.timestamp(), fast.timestamp(None), plain.timestamp(None)))
        loop: Any = asyncio.get_running_loop()
        for far in (-6e10, 2e11, 3e11, 1e300):  # beyond the range written out in place: clamped
            loop._now = far
            out.append((fast.timestamp(), plain.timestamp(), fast.timestamp(), format_timestamp(far)))
            out.append((fast.timestamp(far), plain.timestamp(far), fast.timestamp(-far), plain.timestamp(-far)))
        return out

    for a, b, c, d in run(main):
        assert a == b
        assert c == d


@pytest.mark.parametrize(
    ("text", "t"),
    [
        pytest.param("2026-01-01T00:00:07Z", 7.0, id="zulu"),
        pytest.param("2026-01-01t00:00:07z", 7.0, id="lowercase"),
        pytest.param("2026-01-01T00:00:07.25Z", 7.25, id="fraction"),
        pytest.param("2026-01-01T00:00:07.000000001Z", 7.000000001, id="nanoseconds"),
        pytest.param("2026-01-01T01:00:00+01:00", 0.0, id="east-offset"),
        pytest.param("2025-12-31T19:00:00-05:00", 0.0, id="west-offset"),
        pytest.param("2025-12-31T23:59:59Z", -1.0, id="before-epoch"),
    ],
)
def test_parse_timestamp(text: str, t: float) -> None:
    assert parse_timestamp(text) == t


@pytest.mark.parametrize("t", [0, 1, 59, 3600, 86399, 86400 * 400 + 17, -3600])
def test_timestamps_round_trip(t: int) -> None:
    assert parse_timestamp(format_timestamp(t)) == t
    assert format_timestamp(parse_timestamp(format_timestamp(t))) == format_timestamp(t)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "expected an RFC 3339 timestamp", id="empty"),
        pytest.param("yesterday", "expected an RFC 3339 timestamp", id="word"),
        pytest.param("2026-01-01", "expected an RFC 3339 timestamp", id="date-only"),
        pytest.param("2026-01-01T00:00:07", "expected an RFC 3339 timestamp", id="no-zone"),
        pytest.param("2026-01-01 00:00:07Z", "expected an RFC 3339 timestamp", id="space"),
        pytest.param("2026-13-01T00:00:00Z", "invalid RFC 3339 timestamp .*month", id="month-13"),
    ],
)
def test_parse_timestamp_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_timestamp(text)


# --- durations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("0", 0.0, id="zero"),
        pytest.param("0s", 0.0, id="zero-seconds"),
        pytest.param("5ms", 0.005, id="ms"),
        pytest.param("1.5s", 1.5, id="fractional-s"),
        pytest.param("2m", 120.0, id="minutes"),
        pytest.param("1h30m", 5400.0, id="h-m"),
        pytest.param("1h0m0s", 3600.0, id="go-string"),
        pytest.param("2h45m30.5s", 9930.5, id="h-m-s"),
        pytest.param("250us", 0.00025, id="us"),
        pytest.param("250µs", 0.00025, id="micro-sign"),
        pytest.param("250μs", 0.00025, id="greek-mu"),
        pytest.param("100ns", 1e-7, id="ns"),
        pytest.param(".5s", 0.5, id="leading-dot"),
        pytest.param("1.5h", 5400.0, id="fractional-h"),
        pytest.param("1m1ms", 60.001, id="m-then-ms"),
        pytest.param(" 10s ", 10.0, id="whitespace"),
        pytest.param("30", 30.0, id="plain-number-text"),
        pytest.param("2.5", 2.5, id="plain-decimal-text"),
        pytest.param(30, 30.0, id="int"),
        pytest.param(0.25, 0.25, id="float"),
    ],
)
def test_parse_duration(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == seconds


BAD = "expected a duration like 5ms, 1.5s, 2m or 1h30m, got "


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", BAD + "''", id="empty"),
        pytest.param("x", BAD + "'x'", id="word"),
        pytest.param("5 s", BAD + "'5 s'", id="inner-space"),
        pytest.param("5sec", BAD + "'5sec'", id="unknown-unit"),
        pytest.param("1d", BAD + "'1d'", id="days"),
        pytest.param("h", BAD + "'h'", id="unit-only"),
        pytest.param("1h30", BAD + "'1h30'", id="trailing-number"),
        pytest.param("1.2.3s", BAD + "'1.2.3s'", id="two-dots"),
        pytest.param("nan", BAD + "'nan'", id="nan-text"),
        pytest.param(True, BAD + "True", id="bool"),
        pytest.param("-5s", "durations cannot be negative, got '-5s'", id="negative-text"),
        pytest.param(-1, "durations cannot be negative, got -1", id="negative-int"),
        pytest.param(float("inf"), "expected a finite duration, got inf", id="inf"),
        pytest.param(float("nan"), "expected a finite duration, got nan", id="nan"),
    ],
)
def test_parse_duration_rejects(text: str | float, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(0, "0s", id="zero"),
        pytest.param(1e-9, "1ns", id="ns"),
        pytest.param(0.00025, "250µs", id="us"),
        pytest.param(0.0015, "1.5ms", id="fractional-ms"),
        pytest.param(0.005, "5ms", id="ms"),
        pytest.param(0.5, "500ms", id="half-second"),
        pytest.param(1.5, "1.5s", id="fractional-s"),
        pytest.param(61.001, "1m1.001s", id="m-s-ms"),
        pytest.param(90, "1m30s", id="m-s"),
        pytest.param(3600, "1h0m0s", id="hour"),
        pytest.param(5400, "1h30m0s", id="h-m"),
        pytest.param(-1.5, "-1.5s", id="negative"),
    ],
)
def test_format_duration_prints_like_go(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("seconds", [0, 1e-9, 0.00025, 0.005, 1.5, 61.001, 5400, 9930.5, 86400])
def test_durations_round_trip(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


def test_format_duration_rejects_infinity() -> None:
    with pytest.raises(ValueError, match="expected a finite number of seconds"):
        format_duration(float("inf"))
