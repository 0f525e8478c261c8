"""When a CronJob runs, as upstream's ``pkg/controller/cronjob/utils.go`` decides it (pure).

Times here are scenario clock seconds (0 = ``EPOCH``, 2026-01-01T00:00:00Z); the parsed
schedule (``emulator.base.api.cron``) works in Unix seconds, so ``Zone.next_after`` converts.

- ``Zone``: ``spec.timeZone`` (``None``, ``UTC``, ``Etc/UTC`` or any IANA name the
  installed tz database has, through ``zoneinfo``); ``load_zone`` raises ``UnknownZone``
  with Go's ``time.LoadLocation`` message otherwise, and the controller refuses to run
  the CronJob with an ``UnknownTimeZone`` Event as upstream. A schedule in a zone fires
  at the zone's wall-clock minutes (a nonexistent local time in a DST gap is taken as the
  zone's offset before the gap).
- ``most_recent_schedule_time``: upstream ``mostRecentScheduleTime``: from the later of
  creation and ``lastScheduleTime`` (and, with ``startingDeadlineSeconds``, now minus the
  deadline), the newest firing time not after now, and how many were missed (``MANY``
  over 100: the ``TooManyMissedTimes`` warning);
- ``next_schedule_delay``: upstream ``nextScheduleTimeDuration``: how long until the
  next firing after the most recent one, plus upstream's 100 ms ``nextScheduleDelta``;
- ``job_name`` (``<cronjob>-<scheduled Unix minutes>``) and ``scheduled_annotation``
  (RFC 3339 in the CronJob's zone, for ``batch.kubernetes.io/cronjob-scheduled-timestamp``).

It does not own the reconcile loop (``cronjob``).
"""

from __future__ import annotations

import datetime as dt
import math
import zoneinfo
from dataclasses import dataclass
from enum import Enum
from typing import Final

from emulator.base.api.cron import Schedule
from emulator.base.runtime.clock import calendar_epoch

__all__ = [
    "NEXT_SCHEDULE_DELTA",
    "Missed",
    "UnknownZone",
    "Zone",
    "job_name",
    "load_zone",
    "most_recent_schedule_time",
    "next_schedule_delay",
    "scheduled_annotation",
]

NEXT_SCHEDULE_DELTA: Final = 0.1
_UNIX_EPOCH: Final = dt.datetime(1970, 1, 1)


def _epoch_unix() -> float:
    """Unix time of clock time 0 (``EPOCH``, or serve's start: ``calendar_epoch``)."""
    return calendar_epoch().timestamp()


class Missed(Enum):
    NONE = 0
    FEW = 1
    MANY = 2


class UnknownZone(ValueError):
    """A ``spec.timeZone`` the tz database does not have (Go's message)."""


@dataclass(frozen=True, slots=True)
class Zone:
    """A time zone; ``tz`` None is UTC."""

    tz: zoneinfo.ZoneInfo | None = None

    def next_after(self, schedule: Schedule, t: float) -> float | None:
        """The first firing strictly after clock time ``t`` (clock seconds), or None."""
        unix = t + _epoch_unix()
        if self.tz is None or schedule.every is not None:
            nxt = schedule.next_after(unix)
            return None if nxt is None else nxt - _epoch_unix()
        # Read the schedule on the zone's wall clock: shift to local, step, shift back.
        local = dt.datetime.fromtimestamp(unix, self.tz).replace(tzinfo=None)
        local_unix = (local - _UNIX_EPOCH).total_seconds()
        nxt_local = schedule.next_after(local_unix)
        if nxt_local is None:
            return None
        wall = (_UNIX_EPOCH + dt.timedelta(seconds=nxt_local)).replace(tzinfo=self.tz)
        return wall.timestamp() - _epoch_unix()

    def format(self, t: float) -> str:
        """Clock time ``t`` in RFC 3339 in this zone (``Z`` for UTC), as Go's ``time.RFC3339``."""
        when = dt.datetime.fromtimestamp(math.floor(t) + _epoch_unix(), self.tz or dt.UTC)
        text = when.isoformat(timespec="seconds")
        return text.replace("+00:00", "Z") if self.tz is None or text.endswith("+00:00") else text


def load_zone(name: str | None) -> Zone:
    """``time.LoadLocation``: None, ``""`` and ``UTC`` are UTC; else an IANA name."""
    if name is None or name in ("", "UTC"):
        return Zone()
    try:
        return Zone(zoneinfo.ZoneInfo(name))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise UnknownZone(f"unknown time zone {name}") from None


def most_recent_schedule_time(
    schedule: Schedule,
    zone: Zone,
    now: float,
    earliest: float,
    starting_deadline: int | None = None,
) -> tuple[float, float | None, Missed]:
    """Upstream ``mostRecentScheduleTime``: (earliest time considered, the most recent
    firing not after ``now`` or None, how many were missed). ``ValueError`` when two
    firings are less than a second apart (upstream's invalid schedule)."""
    if starting_deadline is not None:
        earliest = max(earliest, now - starting_deadline)
    t1 = zone.next_after(schedule, earliest)
    if t1 is None or now < t1:
        return earliest, None, Missed.NONE
    t2 = zone.next_after(schedule, t1)
    if t2 is None or now < t2:
        return earliest, t1, Missed.NONE
    between = round(t2 - t1)
    if between < 1:
        raise ValueError("time difference between two schedules is less than 1 second")
    missed_count = int(now - t1) // between + 1
    potential = t1 + (missed_count - 2) * between
    recent: float | None = None
    t = zone.next_after(schedule, potential)
    while t is not None and t <= now:
        recent = t
        t = zone.next_after(schedule, t)
    missed = Missed.MANY if missed_count > 100 else Missed.FEW
    return earliest, recent, missed


def next_schedule_delay(schedule: Schedule, zone: Zone, now: float, earliest: float) -> float | None:
    """Upstream ``nextScheduleTimeDuration``: seconds from ``now`` until the firing after the
    most recent one (+100 ms); None if the schedule never fires again."""
    try:
        base, recent, missed = most_recent_schedule_time(schedule, zone, now, earliest)
    except ValueError:
        recent, base, missed = now, now, Missed.NONE
    if recent is None:
        recent = base if missed is Missed.NONE else now
    nxt = zone.next_after(schedule, recent)
    return None if nxt is None else nxt + NEXT_SCHEDULE_DELTA - now


def job_name(cronjob: str, scheduled: float) -> str:
    """Upstream ``getJobName``: ``<cronjob>-<scheduled time in Unix minutes>``."""
    return f"{cronjob}-{int((scheduled + _epoch_unix()) // 60)}"


def scheduled_annotation(zone: Zone, scheduled: float) -> str:
    return zone.format(scheduled)
