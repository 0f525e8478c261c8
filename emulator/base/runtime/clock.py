"""The clock every component is given, and the text forms of times and durations.

This module owns the ``Clock`` seam: ``now()`` in seconds since the clock started,
``sleep``/``sleep_until``, and ``timestamp()``, the Kubernetes RFC 3339 form of a clock time.
Components never read ``time.time()`` or call bare ``asyncio.sleep``; they are handed a
``Clock``. ``LoopClock`` is the one implementation: it reads the running event loop's
``time()``, so the same code runs on the virtual-time loop (simulations and tests, see
``loop.py``) and on uvloop in real time (benchmarks). ``run()`` starts either.
``PacedClock`` is a ``LoopClock`` whose seconds run ``speed`` times faster than the loop's
(``serve --speed 10``: ten simulated seconds per wall second); at speed 1 it reads exactly
what a ``LoopClock`` reads.

Timestamps count from a fixed ``EPOCH`` (2026-01-01T00:00:00Z), never from the wall clock,
so a simulated run prints the same timestamps on every machine and every day. They have
whole-second precision and truncate, as Kubernetes' ``metav1.Time`` does on the wire.

Durations use Go's ``time.Duration`` syntax (``5ms``, ``1.5s``, ``1h30m``), as in
Kubernetes and kube-scheduler configuration; plain numbers are seconds.

It does not own how virtual time moves (``loop.py``) or random streams (``rng.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import re
from collections.abc import Callable, Coroutine, Iterator
from datetime import UTC, datetime, timedelta, timezone
from fractions import Fraction
from typing import Any, Final, Protocol, TypeVar

from .loop import VirtualTimeEventLoop, new_virtual_loop
from .loop import wake as _wake

__all__ = [
    "EPOCH",
    "MAX_DURATION_SECONDS",
    "Clock",
    "LoopClock",
    "PacedClock",
    "StoppedClock",
    "calendar_epoch",
    "calendar_epoch_at",
    "format_duration",
    "format_timestamp",
    "parse_duration",
    "parse_timestamp",
    "run",
]

T = TypeVar("T")

EPOCH: Final = datetime(2026, 1, 1, tzinfo=UTC)
"""Clock time 0 as a calendar time: every timestamp is EPOCH plus clock seconds."""
_calendar_epoch: datetime = EPOCH
"""The calendar time of clock time 0 in this process: ``EPOCH`` except inside
``calendar_epoch_at`` (``serve``, whose clock is paced to the wall clock, starts it at the
wall time of its start, so that kubectl's client-side ages — ``describe``'s event ages, ``kubectl
events`` — read true)."""


def calendar_epoch() -> datetime:
    """The calendar time of clock time 0 (``EPOCH`` unless ``calendar_epoch_at`` moved it)."""
    return _calendar_epoch


@contextlib.contextmanager
def calendar_epoch_at(when: datetime) -> Iterator[None]:
    """Within the block, clock time 0 is the calendar time ``when`` (whole seconds, UTC).

    Only ``serve`` uses it, around its run: a simulated run keeps ``EPOCH``, so its timestamps
    are the same on every machine and every day."""
    global _calendar_epoch
    previous = _calendar_epoch
    _calendar_epoch = when.astimezone(UTC).replace(microsecond=0)
    _format_second.cache_clear()
    parse_timestamp.cache_clear()
    try:
        yield
    finally:
        _calendar_epoch = previous
        _format_second.cache_clear()
        parse_timestamp.cache_clear()


class Clock(Protocol):
    """Time as the emulator's components see it."""

    virtual: bool
    """True when time is simulated (it jumps whenever every task waits)."""

    def now(self) -> float:
        """Seconds since the clock started."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of clock time (zero or less: just let other tasks run)."""
        ...

    async def sleep_until(self, t: float) -> None:
        """Wait until ``now() >= t`` (at once, after letting other tasks run, if already so)."""
        ...

    def timestamp(self, t: float | None = None) -> str:
        """Clock time ``t`` (default: now) as Kubernetes RFC 3339, e.g. 2026-01-01T00:00:07Z."""
        ...


class LoopClock:
    """A ``Clock`` reading an event loop's ``time()``, relative to its value at construction."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None, *, virtual: bool) -> None:
        self._loop = asyncio.get_running_loop() if loop is None else loop
        if virtual != isinstance(self._loop, VirtualTimeEventLoop):
            kind = "virtual" if virtual else "real"
            raise ValueError(f"LoopClock(virtual={virtual}) needs a {kind}-time loop, got {type(self._loop).__name__}")
        self.virtual = virtual
        self._origin = self._loop.time()
        self._stamped: tuple[float, str] = (math.nan, "")
        """The last ``timestamp()`` of now: (the time, its text); most calls share an instant."""
        if type(self) is LoopClock and self._origin == 0.0:
            # ``now()`` is then the loop's ``time()`` itself (``x - 0.0 == x`` for every
            # time): the loop's method stands in for it, one frame less per read (≈ 25 a
            # churn pod). A subclass (``PacedClock``) keeps its own ``now``.
            self.now = self._loop.time  # type: ignore[method-assign]
            if virtual:
                # and ``timestamp()`` reads the virtual loop's clock itself (≈ 9 a churn pod)
                self.timestamp = self._virtual_timestamp  # type: ignore[method-assign]

    def now(self) -> float:
        return self._loop.time() - self._origin

    async def sleep(self, seconds: float) -> None:
        # ``_sleep_to(time() + seconds)`` written out: one coroutine less per sleep.
        loop = self._loop
        now = loop.time()
        when = now + seconds
        if when <= now:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.Future(loop=loop)  # loop.create_future()
        if not when - now <= MAX_DURATION_SECONDS:
            await future  # beyond Go's time.Duration (or NaN): never; no timer (it could overflow)
            return
        timer = loop.call_at(when, _wake, future)
        try:
            await future
        except BaseException:
            timer.cancel()  # woken otherwise (cancelled): the timer must not fire
            raise

    async def sleep_until(self, t: float) -> None:
        when = self._origin + t
        # Float rounding: ``(origin + t) - origin`` can come out just below ``t``; nudge the
        # deadline up so that ``now() >= t`` really holds on waking (callers rely on it).
        while when - self._origin < t:
            when = math.nextafter(when, math.inf)
        await self._sleep_to(when)

    def advance_to(self, t: float) -> bool:
        """On the virtual-time loop, move the clock to ``t`` if the loop would do so next
        with a ``sleep_until(t)`` of the caller's and wake nothing else (the same loop time
        ``sleep_until`` would set); False (nothing changed) otherwise
        (``VirtualTimeEventLoop.advance``)."""
        loop = self._loop
        if not isinstance(loop, VirtualTimeEventLoop):
            return False
        if not math.isfinite(t):
            return False  # NaN or infinite: the normal path (a sleep that never ends)
        when = self._origin + t
        while when - self._origin < t:  # as sleep_until
            when = math.nextafter(when, math.inf)
        if when <= loop.time():
            return False  # sleep_until would only yield: take the normal path
        if not when - loop.time() <= MAX_DURATION_SECONDS:
            return False  # _sleep_to sets no timer beyond Go's Duration: it would never wake
        return loop.advance(when)

    def timestamp(self, t: float | None = None) -> str:
        if t is not None:
            return format_timestamp(t)
        now = self.now()  # a PacedClock's own
        last, text = self._stamped
        if now != last:
            text = format_timestamp(now)
            self._stamped = (now, text)
        return text

    def _virtual_timestamp(self, t: float | None = None) -> str:
        """``timestamp`` where ``now()`` is the virtual loop's time: the same, read in place."""
        if t is not None:  # ``format_timestamp(t)``, its usual range written out (≈ 2 a churn pod)
            return _format_second(math.floor(t)) if _USUAL_LOW < t < _USUAL_HIGH else format_timestamp(t)
        now = self._loop._now  # type: ignore[attr-defined]  # VirtualTimeEventLoop.time()
        last, text = self._stamped
        if now != last:
            # ``format_timestamp(now)``, its usual range written out (≈ 1 a churn pod)
            text = _format_second(math.floor(now)) if _USUAL_LOW < now < _USUAL_HIGH else format_timestamp(now)
            self._stamped = (now, text)
        return text

    async def _sleep_to(self, when: float) -> None:
        """Sleep until loop time ``when``, exactly: the timer is set at ``when`` itself."""
        loop = self._loop
        if when <= loop.time():
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.Future(loop=loop)  # loop.create_future()
        if not when - loop.time() <= MAX_DURATION_SECONDS:
            await future  # beyond Go's time.Duration (or NaN): never; no timer (it could overflow)
            return
        timer = loop.call_at(when, _wake, future)
        try:
            await future
        except BaseException:
            timer.cancel()  # woken otherwise (cancelled): the timer must not fire
            raise
        # Woken by the timer itself: it has run, nothing to cancel.

    def __repr__(self) -> str:
        return f"<LoopClock virtual={self.virtual} now={self.now()!r}>"


class PacedClock(LoopClock):
    """A ``LoopClock`` running ``speed`` clock seconds per loop second (``serve --speed``).

    On the real-time loop it paces a simulation to the wall clock; on the virtual loop (tests)
    it behaves as a ``LoopClock`` whose timers are ``speed`` times closer. ``speed`` must be
    a finite number above 0. A subclass rather than a parameter of ``LoopClock`` so that
    scenario runs keep ``LoopClock``'s arithmetic, and hence their traces, untouched.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None, *, virtual: bool, speed: float) -> None:
        if not (math.isfinite(speed) and speed > 0):
            raise ValueError(f"the clock's speed must be a finite number above 0, got {speed!r}")
        super().__init__(loop, virtual=virtual)
        self.speed = speed

    def now(self) -> float:
        return (self._loop.time() - self._origin) * self.speed

    async def sleep(self, seconds: float) -> None:
        await self.sleep_until(self.now() + seconds)

    async def sleep_until(self, t: float) -> None:
        when = self._origin + t / self.speed
        # As in LoopClock: nudge the loop deadline up until ``now() >= t`` holds on waking.
        while (when - self._origin) * self.speed < t:
            when = math.nextafter(when, math.inf)
        await self._sleep_to(when)

    def advance_to(self, t: float) -> bool:
        """Never: a paced clock keeps the loop's timers (``LoopClock.advance_to``)."""
        return False

    def __repr__(self) -> str:
        return f"<PacedClock virtual={self.virtual} speed={self.speed!r} now={self.now()!r}>"


class StoppedClock:
    """A ``Clock`` stopped at 0, for code that needs one outside any run (``explain``,
    constructing plugins during ``validate``): nothing may wait on it, so sleeps return."""

    virtual = True

    def now(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        return None

    async def sleep_until(self, t: float) -> None:
        return None

    def timestamp(self, t: float | None = None) -> str:
        return format_timestamp(0.0 if t is None else t)

    def __repr__(self) -> str:
        return "<StoppedClock now=0.0>"


def run(main: Callable[[], Coroutine[Any, Any, T]], *, virtual: bool = True) -> T:
    """Run ``main()`` on a fresh loop: virtual time by default, else real time on uvloop.

    Without uvloop installed, real time runs on the stock asyncio loop.
    """
    factory = new_virtual_loop if virtual else _real_time_loop_factory()
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main())


def _real_time_loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop
    return uvloop.new_event_loop


# --- timestamps --------------------------------------------------------------------------

_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))")


_USUAL_LOW: Final = -6e10
_USUAL_HIGH: Final = 2e11
"""Times (s) within about 1900 years before and 6300 after any calendar epoch: formatted as
their second without clamping (``format_timestamp`` and ``LoopClock._virtual_timestamp``)."""

_FIRST_SECOND: Final = datetime(1, 1, 1, tzinfo=UTC)
_LAST_SECOND: Final = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def format_timestamp(t: float) -> str:
    """Clock time ``t`` (seconds since EPOCH) as RFC 3339 in UTC, truncated to whole seconds.

    Clamped to the years 0001-9999, the range metav1.Time writes (a deletion grace of 2^63-1
    seconds lands on 9999-12-31T23:59:59Z rather than overflowing)."""
    if _USUAL_LOW < t < _USUAL_HIGH:
        return _format_second(math.floor(t))
    last = (_LAST_SECOND - _calendar_epoch) // timedelta(seconds=1)
    first = -((_calendar_epoch - _FIRST_SECOND) // timedelta(seconds=1))
    if not t < last:  # NaN too
        return _format_second(last)
    if t < first + 1:
        return "0001-01-01T00:00:00Z"  # strftime writes year 1 as "1"
    return _format_second(math.floor(t))


@functools.lru_cache(maxsize=4096)
def _format_second(second: int) -> str:
    # Every write stamps the current second: formatting each second once matters at scale.
    return (_calendar_epoch + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.lru_cache(maxsize=4096)
def parse_timestamp(s: str) -> float:
    """The clock time (seconds since EPOCH) of an RFC 3339 timestamp; inverse of ``timestamp``.

    Memoised: the same few timestamps (creation and transition times of live objects) are
    parsed again for every Table row and every controller sync."""
    match = _RFC3339.fullmatch(s)
    if match is None:
        raise ValueError(f"expected an RFC 3339 timestamp like 2026-01-01T00:00:07Z, got {s!r}")
    year, month, day, hour, minute, second = (int(g) for g in match.group(1, 2, 3, 4, 5, 6))
    fraction, zulu, sign, off_h, off_m = match.group(7, 8, 9, 10, 11)
    offset = timedelta(0) if zulu else timedelta(hours=int(off_h), minutes=int(off_m))
    tz = timezone(-offset if sign == "-" else offset)
    try:
        when = datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError as e:
        raise ValueError(f"invalid RFC 3339 timestamp {s!r}: {e}") from None
    whole = (when - _calendar_epoch) // timedelta(seconds=1)
    return whole + (float(fraction) if fraction else 0.0)


# --- durations ---------------------------------------------------------------------------

_UNITS: Final[dict[str, Fraction]] = {
    "ns": Fraction(1, 10**9),
    "us": Fraction(1, 10**6),
    "µs": Fraction(1, 10**6),  # U+00B5 micro sign, as Go prints it
    "μs": Fraction(1, 10**6),  # U+03BC greek mu, which Go also accepts
    "ms": Fraction(1, 10**3),
    "s": Fraction(1),
    "m": Fraction(60),
    "h": Fraction(3600),
}
_NUMBER = r"(?:\d+\.?\d*|\.\d+)"
_PLAIN_NUMBER = re.compile(_NUMBER)
_COMPONENT = re.compile(rf"({_NUMBER})(ns|us|µs|μs|ms|s|m|h)")
_NS_PER_S: Final = 10**9
MAX_DURATION_SECONDS: Final = (2**63 - 1) / _NS_PER_S
"""The longest duration Go's ``time.Duration`` (int64 nanoseconds) holds, in seconds."""
_MAX_DURATION_TEXT: Final = "2562047h47m16.854775807s"


def parse_duration(text: str | int | float) -> float:
    """Seconds in a Go-style duration: "5ms", "1.5s", "1h30m", "250us", "0"; numbers are seconds.

    Raises ``ValueError`` for a malformed, negative or non-finite duration, and for one
    longer than Go's ``time.Duration`` holds (``MAX_DURATION_SECONDS``, about 292 years:
    upstream's ``time.ParseDuration`` refuses it as an invalid duration). Callers with a
    smaller limit (a scenario's, see ``emulator/app/scenario/limits.py``) check it themselves.
    """
    if isinstance(text, str):
        seconds = _parse_duration_text(text.strip(), text)
    elif isinstance(text, bool):
        raise ValueError(f"expected a duration like 5ms, 1.5s, 2m or 1h30m, got {text!r}")
    else:
        try:
            seconds = float(text)
        except OverflowError:  # an int beyond any float
            raise _too_long(text) from None
    if math.isnan(seconds) or math.isinf(seconds):
        raise ValueError(f"expected a finite duration, got {text!r}")
    if seconds < 0:
        raise ValueError(f"durations cannot be negative, got {text!r}")
    if seconds > MAX_DURATION_SECONDS:
        raise _too_long(text)
    return seconds


def _too_long(text: str | int | float) -> ValueError:
    return ValueError(f"durations must be at most {_MAX_DURATION_TEXT} (Go's time.Duration range), got {text!r}")


@functools.lru_cache(maxsize=1024)  # pure: a scenario repeats a few durations per pod
def _parse_duration_text(s: str, original: str) -> float:
    if s.startswith("-"):
        raise ValueError(f"durations cannot be negative, got {original!r}")
    if _PLAIN_NUMBER.fullmatch(s):
        value = float(s)  # a plain number of 309+ digits is inf
        if value > MAX_DURATION_SECONDS:
            raise _too_long(original)
        return value
    total = Fraction(0)
    pos = 0
    while pos < len(s) and (match := _COMPONENT.match(s, pos)):
        total += Fraction(match[1]) * _UNITS[match[2]]
        pos = match.end()
    if not s or pos != len(s):
        raise ValueError(f"expected a duration like 5ms, 1.5s, 2m or 1h30m, got {original!r}")
    if total > MAX_DURATION_SECONDS:  # before float(): a huge Fraction would raise OverflowError
        raise _too_long(original)
    return float(total)


def format_duration(seconds: float) -> str:
    """``seconds`` as Go's ``Duration.String()`` prints it: "1h30m0s", "1.5s", "5ms", "0s"."""
    if not math.isfinite(seconds):
        raise ValueError(f"expected a finite number of seconds, got {seconds!r}")
    ns = round(seconds * _NS_PER_S)
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns == 0:
        return "0s"
    if ns < 10**3:
        return f"{sign}{ns}ns"
    if ns < 10**6:
        return f"{sign}{_decimal(ns, 10**3)}µs"
    if ns < _NS_PER_S:
        return f"{sign}{_decimal(ns, 10**6)}ms"
    hours, ns = divmod(ns, 3600 * _NS_PER_S)
    minutes, ns = divmod(ns, 60 * _NS_PER_S)
    head = f"{hours}h{minutes}m" if hours else f"{minutes}m" if minutes else ""
    return f"{sign}{head}{_decimal(ns, _NS_PER_S)}s"


def _decimal(value: int, unit: int) -> str:
    """``value / unit`` in decimal without trailing zeros (``unit`` is a power of ten)."""
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{frac:0{digits}d}".rstrip("0")
