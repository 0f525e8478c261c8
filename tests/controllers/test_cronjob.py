"""The CronJob controller on virtual time (alone: Jobs are finished by hand, as the job
controller would): firing at schedule times, names and the scheduled-timestamp
annotation, concurrency policies, history limits, time zones; and upstream's
``mostRecentScheduleTime`` arithmetic, table-driven."""

from __future__ import annotations

import pytest

from agents.controllers.cronjob import SCHEDULED_TIMESTAMP
from agents.controllers.cronschedule import (
    Missed,
    UnknownZone,
    job_name,
    load_zone,
    most_recent_schedule_time,
    next_schedule_delay,
)
from emulator.base.api.cron import parse_schedule
from tests.controllers.jobworld import World, cronjob, finish_job, world

MINUTE0 = 29453760
"""2026-01-01T00:00:00Z (clock time 0) in Unix minutes."""


def _jobs(w: World) -> list[str]:
    return sorted(j.metadata.name for j in w.server.list("Job")[0])


def _created(w: World) -> list[tuple[float, str]]:
    return [(round(x.time, 1), x.obj.metadata.name) for x in w.cluster.of("Job", verb="create")]


@pytest.mark.asyncio
async def test_fires_at_each_schedule_time_over_an_hour() -> None:
    async with world(cronjob("tick", "*/5 * * * *"), names=("cronjob",)) as w:
        await w.clock.sleep_until(3600.5)
        created = _created(w)
        assert created == [(300.0 * k + 0.1, f"tick-{MINUTE0 + 5 * k}") for k in range(1, 13)]
        first = w.job(f"tick-{MINUTE0 + 5}")
        assert first.metadata.annotations[SCHEDULED_TIMESTAMP] == "2026-01-01T00:05:00Z"
        ref = first.metadata.owner_references[0]
        assert (ref.kind, ref.name, ref.controller, ref.block_owner_deletion) == ("CronJob", "tick", True, True)
        cj = w.server.get("CronJob", "tick", "default")
        assert cj.status.last_schedule_time == "2026-01-01T01:00:00Z"
        assert [a.name for a in cj.status.active] == [name for _, name in created]
        assert len(w.events("SuccessfulCreate")) == 12
        assert ("tick", "SuccessfulCreate", f"Created job tick-{MINUTE0 + 5}") in w.events("SuccessfulCreate")


@pytest.mark.asyncio
async def test_forbid_skips_while_a_job_is_active() -> None:
    async with world(cronjob("f", "*/5 * * * *", concurrency_policy="Forbid"), names=("cronjob",)) as w:
        await w.clock.sleep_until(700.0)  # 5 min: created; 10 min: skipped
        assert _jobs(w) == [f"f-{MINUTE0 + 5}"]
        assert w.events("JobAlreadyActive") == [
            (
                "f",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
        ]
        await finish_job(w, f"f-{MINUTE0 + 5}")
        await w.clock.sleep_until(701.0)
        # the skipped 10-minute run starts late, once nothing runs (no startingDeadlineSeconds)
        assert _created(w)[-1] == (700.0, f"f-{MINUTE0 + 10}")
        cj = w.server.get("CronJob", "f", "default")
        assert [a.name for a in cj.status.active] == [f"f-{MINUTE0 + 10}"]
        assert (cj.status.last_schedule_time, cj.status.last_successful_time) == (
            "2026-01-01T00:10:00Z",
            "2026-01-01T00:11:40Z",
        )
        assert w.events("SawCompletedJob") == [
            ("f", "SawCompletedJob", f"Saw completed job: f-{MINUTE0 + 5}, condition: Complete")
        ]
        await w.clock.sleep_until(901.0)
        assert _jobs(w) == [f"f-{MINUTE0 + 5}", f"f-{MINUTE0 + 10}"]  # 15 min: skipped again


@pytest.mark.asyncio
async def test_a_starting_deadline_turns_a_late_run_into_a_missed_one() -> None:
    cj = cronjob("d", "*/5 * * * *", concurrency_policy="Forbid", starting_deadline_seconds=60)
    async with world(cj, names=("cronjob",)) as w:
        await w.clock.sleep_until(700.0)
        await finish_job(w, f"d-{MINUTE0 + 5}")
        await w.clock.sleep_until(901.0)
        assert _jobs(w) == [f"d-{MINUTE0 + 5}", f"d-{MINUTE0 + 15}"]  # the 10-minute run is lost


@pytest.mark.asyncio
async def test_replace_deletes_the_running_job() -> None:
    async with world(cronjob("r", "*/5 * * * *", concurrency_policy="Replace"), names=("cronjob",)) as w:
        await w.clock.sleep_until(601.0)
        assert _jobs(w) == [f"r-{MINUTE0 + 10}"]
        assert w.events("SuccessfulDelete") == [("r", "SuccessfulDelete", f"Deleted job r-{MINUTE0 + 5}")]
        cj = w.server.get("CronJob", "r", "default")
        assert [a.name for a in cj.status.active] == [f"r-{MINUTE0 + 10}"]


@pytest.mark.asyncio
async def test_history_limits_delete_the_oldest_finished_jobs() -> None:
    cj = cronjob("h", "* * * * *", successful_jobs_history_limit=2, failed_jobs_history_limit=1)
    async with world(cj, names=("cronjob",)) as w:
        for minute in range(1, 7):
            await w.clock.sleep_until(60.0 * minute + 1)
            await finish_job(w, f"h-{MINUTE0 + minute}", "Failed" if minute in (2, 4) else "Complete")
        await w.clock.sleep_until(60.0 * 7 + 1)
        # finished: 1, 3, 5, 6 Complete (keep 5, 6), 2, 4 Failed (keep 4); 7 is running
        assert _jobs(w) == [f"h-{MINUTE0 + m}" for m in (4, 5, 6, 7)]


@pytest.mark.asyncio
async def test_suspended_cronjob_creates_nothing() -> None:
    async with world(cronjob("s", "* * * * *", suspend=True), names=("cronjob",)) as w:
        await w.clock.sleep_until(600.0)
        assert _jobs(w) == []


@pytest.mark.asyncio
async def test_time_zone_reads_the_schedule_on_the_zone_wall_clock() -> None:
    async with world(cronjob("paris", "0 9 * * *", time_zone="Europe/Paris"), names=("cronjob",)) as w:
        await w.clock.sleep_until(8 * 3600 + 1.0)
        assert _created(w) == [(8 * 3600 + 0.1, f"paris-{MINUTE0 + 8 * 60}")]
        job = w.job(f"paris-{MINUTE0 + 8 * 60}")
        assert job.metadata.annotations[SCHEDULED_TIMESTAMP] == "2026-01-01T09:00:00+01:00"


@pytest.mark.asyncio
async def test_an_unknown_time_zone_is_refused_with_an_event() -> None:
    async with world(cronjob("nowhere", "* * * * *", time_zone="Mars/Olympus_Mons"), names=("cronjob",)) as w:
        await w.clock.sleep_until(120.0)
        assert _jobs(w) == []
        assert w.events("UnknownTimeZone") == [
            ("nowhere", "UnknownTimeZone", 'invalid timeZone: "Mars/Olympus_Mons": unknown time zone Mars/Olympus_Mons')
        ]


@pytest.mark.parametrize(
    ("schedule", "now", "earliest", "deadline", "want"),
    [
        pytest.param("*/5 * * * *", 299.0, 0.0, None, (None, Missed.NONE), id="before-first"),
        pytest.param("*/5 * * * *", 300.0, 0.0, None, (300.0, Missed.NONE), id="at-first"),
        pytest.param("*/5 * * * *", 601.0, 0.0, None, (600.0, Missed.FEW), id="two-due-most-recent"),
        pytest.param("*/5 * * * *", 601.0, 300.0, None, (600.0, Missed.NONE), id="from-last-schedule"),
        pytest.param("* * * * *", 101 * 60.0 + 5, 0.0, None, (6060.0, Missed.MANY), id="over-100-missed"),
        pytest.param("* * * * *", 101 * 60.0 + 5, 0.0, 200, (6060.0, Missed.FEW), id="deadline-bounds-the-search"),
        pytest.param("@every 90s", 200.0, 0.0, None, (180.0, Missed.FEW), id="every"),
    ],
)
def test_most_recent_schedule_time(
    schedule: str, now: float, earliest: float, deadline: int | None, want: tuple[float | None, Missed]
) -> None:
    _, recent, missed = most_recent_schedule_time(parse_schedule(schedule), load_zone(None), now, earliest, deadline)
    assert (recent, missed) == want


def test_next_schedule_delay_is_upstreams_plus_100ms() -> None:
    assert next_schedule_delay(parse_schedule("*/5 * * * *"), load_zone("UTC"), 10.0, 0.0) == pytest.approx(290.1)


def test_job_name_is_scheduled_unix_minutes() -> None:
    assert job_name("hello", 300.0) == f"hello-{MINUTE0 + 5}"


@pytest.mark.parametrize(
    "name", [pytest.param(None, id="unset"), pytest.param("UTC", id="UTC"), pytest.param("", id="empty")]
)
def test_utc_zones(name: str | None) -> None:
    assert load_zone(name).tz is None


def test_unknown_zone_message() -> None:
    with pytest.raises(UnknownZone, match=r"^unknown time zone Nowhere/Land$"):
        load_zone("Nowhere/Land")


@pytest.mark.asyncio
async def test_with_the_job_controller_runs_complete_and_history_is_kept() -> None:
    cj = cronjob("nightly", "*/10 * * * *", successful_jobs_history_limit=1)
    async with world(cj, names=("job", "cronjob")) as w:
        for k in (1, 2, 3):
            await w.clock.sleep_until(600.0 * k + 5)
            await w.finish_all(f"nightly-{MINUTE0 + 10 * k}")
        await w.clock.sleep_until(1900.0)
        assert _jobs(w) == [f"nightly-{MINUTE0 + 30}"]
        cj_now = w.server.get("CronJob", "nightly", "default")
        assert cj_now.status.active == []
        assert cj_now.status.last_successful_time == "2026-01-01T00:30:06Z"  # pod done at +5 s; the Job 1 s later
        assert w.job(f"nightly-{MINUTE0 + 30}").status.succeeded == 1
