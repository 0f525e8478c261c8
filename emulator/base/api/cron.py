"""Cron schedules: upstream's ``cron.ParseStandard`` (robfig/cron v3), used to validate a
CronJob's ``spec.schedule`` and, by the CronJob controller, to find its next run.

What this module owns: ``parse_schedule(text)`` → ``Schedule`` or ``CronError`` with
robfig/cron's message (the API server shows it after ``spec.schedule: Invalid value: "…": ``),
and ``Schedule.next_after(t)``: the first whole minute strictly after ``t`` (seconds since
the epoch, UTC: the scenario's clock) that the schedule fires at.

Syntax: five fields, minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
``jan``-``dec``), day of week (0-6 or ``sun``-``sat``); each a comma-separated list of ``*``
or ``?``, ``N``, ``N-M``, any of those with ``/step`` (``N/step`` means ``N-max/step``). Macros:
``@yearly`` (``@annually``), ``@monthly``, ``@weekly``, ``@daily`` (``@midnight``), ``@hourly``,
``@every <duration>``. As robfig/cron: when both day fields are restricted a day matches
either; when one is ``*`` (or ``*/1``), both must match; a schedule that fires at no time
within five years has no next time (``None``).

It does not own time zones (``spec.timeZone`` and ``CRON_TZ=``: the schedule is read in UTC)
nor when a CronJob runs (the controller: starting deadlines, concurrency).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Final

__all__ = ["CronError", "Schedule", "parse_schedule"]

_MINUTES: Final = (0, 59, None)
_HOURS: Final = (0, 23, None)
_DOM: Final = (1, 31, None)
_MONTHS: Final = (
    1,
    12,
    {
        m: i
        for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
    },
)
_DOW: Final = (0, 6, {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))})
_MACROS: Final = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_EVERY: Final = "@every "
_DURATION_PART: Final = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS: Final = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_HORIZON_DAYS: Final = 5 * 366
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class CronError(ValueError):
    """A schedule robfig/cron's standard parser refuses; the message is its own."""


def _go_fields(fields: list[str]) -> str:
    """Go's ``%s`` of a ``[]string``."""
    return "[" + " ".join(fields) + "]"


def _parse_int(expr: str) -> int:
    """``mustParseInt``: a non-negative decimal (``strconv.Atoi``)."""
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax')
    num = int(expr)
    if not -(2**63) <= num < 2**63:
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": value out of range')
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _parse_int(expr)


def _range(expr: str, bounds: tuple[int, int, dict[str, int] | None]) -> tuple[frozenset[int], bool]:
    """``getRange``: the values of one list element, and whether it keeps the star bit."""
    low_bound, high_bound, names = bounds
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    star = False
    if low_high[0] in ("*", "?"):
        start, end, star = low_bound, high_bound, True
    else:
        start = _int_or_name(low_high[0], names)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int_or_name(low_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _parse_int(range_and_step[1])
        if len(low_high) == 1:
            end = high_bound
        if step > 1:
            star = False
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < low_bound:
        raise CronError(f"beginning of range ({start}) below minimum ({low_bound}): {expr}")
    if end > high_bound:
        raise CronError(f"end of range ({end}) above maximum ({high_bound}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return frozenset(range(start, end + 1, step)), star


def _field(text: str, bounds: tuple[int, int, dict[str, int] | None]) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for expr in filter(None, text.split(",")):
        got, is_star = _range(expr, bounds)
        values |= got
        star = star or is_star
    return frozenset(values), star


def _go_duration(text: str) -> float:
    """Go's ``time.ParseDuration`` for the positive durations ``@every`` takes, in seconds."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(body):
        m = _DURATION_PART.match(body, pos)
        if m is None:
            raise ValueError
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    if not body:
        raise ValueError
    return -total if text.startswith("-") else total


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule; ``every`` (seconds) is set for ``@every`` and the fields unused."""

    minutes: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    days_of_month: frozenset[int] = frozenset()
    months: frozenset[int] = frozenset()
    days_of_week: frozenset[int] = frozenset()
    dom_star: bool = False
    dow_star: bool = False
    every: float | None = None

    def _day_matches(self, day: dt.date) -> bool:
        dom = day.day in self.days_of_month
        dow = (day.weekday() + 1) % 7 in self.days_of_week  # Python: Monday 0; cron: Sunday 0
        if self.dom_star or self.dow_star:
            return dom and dow
        return dom or dow

    def next_after(self, t: float) -> float | None:
        """The first firing time strictly after ``t`` (seconds since the epoch, UTC)."""
        if self.every is not None:
            # robfig's ConstantDelaySchedule: at least one second, whole seconds, from t.
            step = max(1.0, math.floor(self.every))
            return math.floor(t) + step
        start = _EPOCH + dt.timedelta(seconds=math.floor(t / 60) * 60 + 60)
        hours, minutes = sorted(self.hours), sorted(self.minutes)
        day = start.date()
        for offset in range(_HORIZON_DAYS):
            d = day + dt.timedelta(days=offset)
            if d.month not in self.months or not self._day_matches(d):
                continue
            first_minute = start.hour * 60 + start.minute if offset == 0 else 0
            for h in hours:
                if h * 60 + 59 < first_minute:
                    continue
                for m in minutes:
                    if h * 60 + m >= first_minute:
                        when = dt.datetime(d.year, d.month, d.day, h, m, tzinfo=dt.UTC)
                        return (when - _EPOCH).total_seconds()
        return None


def parse_schedule(text: str) -> Schedule:
    """``cron.ParseStandard(text)``; ``CronError`` with robfig/cron's message."""
    if not text:
        raise CronError("empty spec string")
    if text.startswith("@"):
        if text.startswith(_EVERY):
            try:
                seconds = _go_duration(text[len(_EVERY) :])
            except ValueError:
                raise CronError(
                    f'failed to parse duration {text}: time: invalid duration "{text[len(_EVERY) :]}"'
                ) from None
            return Schedule(every=seconds)
        macro = _MACROS.get(text)
        if macro is None:
            raise CronError(f"unrecognized descriptor: {text}")
        text = macro
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: {_go_fields(fields)}")
    minutes, _ = _field(fields[0], _MINUTES)
    hours, _ = _field(fields[1], _HOURS)
    dom, dom_star = _field(fields[2], _DOM)
    months, _ = _field(fields[3], _MONTHS)
    dow, dow_star = _field(fields[4], _DOW)
    return Schedule(minutes, hours, dom, months, dow, dom_star, dow_star)
