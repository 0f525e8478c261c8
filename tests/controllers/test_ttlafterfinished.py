"""The TTL-after-finished controller: a finished Job goes ``ttlSecondsAfterFinished``
after its Complete/Failed condition's lastTransitionTime; unfinished Jobs, Jobs without
a TTL, and a TTL raised before expiry are respected."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.controllers.ttlafterfinished import time_left
from emulator.base.api.batch import JobCondition, JobStatus
from tests.controllers.jobworld import World, finish_job, job, world


def _deleted(w: World) -> dict[str, float]:
    return {x.obj.metadata.name: round(x.time, 3) for x in w.cluster.of("Job", verb="delete")}


@pytest.mark.asyncio
async def test_finished_jobs_go_after_their_ttl() -> None:
    async with world(
        job("done", ttl_seconds_after_finished=30),
        job("failed", ttl_seconds_after_finished=0),
        job("no-ttl"),
        job("running", ttl_seconds_after_finished=5),
        names=("ttlafterfinished", "garbagecollector"),
    ) as w:
        await w.clock.sleep_until(10.0)
        await finish_job(w, "done")
        await finish_job(w, "failed", "Failed")
        await finish_job(w, "no-ttl")
        await w.clock.sleep_until(100.0)
        assert _deleted(w) == {"failed": 10.0, "done": 40.0}
        assert {j.metadata.name for j in w.server.list("Job")[0]} == {"no-ttl", "running"}


@pytest.mark.asyncio
async def test_a_ttl_raised_before_expiry_is_respected() -> None:
    async with world(job("j", ttl_seconds_after_finished=10), names=("ttlafterfinished", "garbagecollector")) as w:
        await finish_job(w, "j")
        await w.clock.sleep_until(5.0)
        j = w.job("j")
        w.server.update(replace(j, spec=replace(j.spec, ttl_seconds_after_finished=60)))
        await w.clock.sleep_until(100.0)
        assert _deleted(w) == {"j": 60.0}


@pytest.mark.asyncio
async def test_with_the_job_controller_a_completed_job_is_cleaned_up() -> None:
    async with world(
        job("pi", ttl_seconds_after_finished=20), names=("job", "ttlafterfinished", "garbagecollector")
    ) as w:
        await w.clock.sleep_until(1.5)  # off the instant the creation's batched sync comes
        await w.finish_all("pi")
        await w.clock.sleep_until(60.0)
        assert _deleted(w) == {"pi": 22.0}  # Complete at 2 s (the batched sync then), + 20 s


@pytest.mark.parametrize(
    ("ttl", "finished", "now", "want"),
    [
        pytest.param(None, True, 0.0, None, id="no-ttl"),
        pytest.param(10, False, 0.0, None, id="not-finished"),
        pytest.param(10, True, 4.0, 6.0, id="waiting"),
        pytest.param(10, True, 12.0, -2.0, id="expired"),
    ],
)
def test_time_left(ttl: int | None, finished: bool, now: float, want: float | None) -> None:
    j = job("x", ttl_seconds_after_finished=ttl)
    if finished:
        cond = JobCondition(type="Complete", status="True", last_transition_time="2026-01-01T00:00:00Z")
        j = replace(j, status=JobStatus(conditions=[cond]))
    assert time_left(j, now) == want
