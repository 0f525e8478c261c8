"""The job controller on virtual time: NonIndexed and Indexed Jobs, pod failures and the
backoff limit, the recreation backoff, activeDeadlineSeconds, suspend. The kubelet is
stood in for by setting pod phases through the API (``jobworld.World.finish``)."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.controllers.job import backoff as bo
from agents.controllers.job.indexes import COMPLETION_INDEX, format_intervals, parse_intervals
from emulator.base.api.core import ContainerState, ContainerStateTerminated, ContainerStatus, Pod
from emulator.base.runtime.clock import format_timestamp
from tests.builders import pod
from tests.controllers.jobworld import World, job, world


@pytest.mark.asyncio
async def test_nonindexed_runs_parallelism_pods_until_completions() -> None:
    async with world(job("pi", completions=5, parallelism=2)) as w:
        await w.clock.sleep(0.5)
        for _ in range(10):
            await w.finish_all("pi")
            await w.clock.sleep(2.0)
        j = w.job("pi")
        assert j.status.succeeded == 5
        assert [(c.type, c.status, c.reason) for c in j.status.conditions] == [
            ("SuccessCriteriaMet", "True", "CompletionsReached"),
            ("Complete", "True", "CompletionsReached"),
        ]
        assert j.status.completion_time is not None
        assert j.status.start_time == "2026-01-01T00:00:00Z"
        w.track_active()
        assert w.max_active["pi"] == 2
        assert len(w.pods()) == 5
        created = w.events("SuccessfulCreate")
        assert len(created) == 5
        assert created[0][2].startswith("Created pod: pi-")
        assert w.events("Completed") == [("pi", "Completed", "Job completed")]


def _created(w: World, owner: str) -> list[tuple[float, str]]:
    return [
        (round(x.time, 3), x.new.metadata.name)
        for x in w.cluster.of("Pod", verb="create")
        if x.new is not None and x.new.metadata.owner_references[0].name == owner
    ]


@pytest.mark.asyncio
async def test_indexed_pods_carry_their_index_and_completed_indexes_are_intervals() -> None:
    async with world(job("idx", completions=4, parallelism=2, completion_mode="Indexed")) as w:
        await w.clock.sleep(0.5)
        pods = w.active("idx")
        assert [p.metadata.name.rsplit("-", 1)[0] for p in pods] == ["idx-0", "idx-1"]
        for p, ix in zip(pods, ("0", "1"), strict=True):
            assert p.metadata.annotations[COMPLETION_INDEX] == ix
            assert p.metadata.labels[COMPLETION_INDEX] == ix
            assert p.spec.hostname == f"idx-{ix}"
            assert p.metadata.generate_name == f"idx-{ix}-"
        await w.finish(pods[1])  # index 1 first
        await w.clock.sleep(2.0)
        j = w.job("idx")
        assert (j.status.completed_indexes, j.status.succeeded, j.status.active) == ("1", 1, 2)
        assert sorted(p.metadata.annotations[COMPLETION_INDEX] for p in w.active("idx")) == ["0", "2"]
        for _ in range(4):
            await w.finish_all("idx")
            await w.clock.sleep(2.0)
        j = w.job("idx")
        assert (j.status.completed_indexes, j.status.succeeded) == ("0-3", 4)
        assert w.conditions("idx")[-1] == ("Complete", "True", "CompletionsReached")


@pytest.mark.parametrize(
    ("indexes", "text"),
    [
        pytest.param([], "", id="none"),
        pytest.param([0], "0", id="one"),
        pytest.param([1, 3, 4, 5], "1,3-5", id="single-and-range"),
        pytest.param([5, 4, 3, 1, 1], "1,3-5", id="unordered-duplicates"),
        # upstream indexed_job_utils.go orderedIntervals.String writes two adjacent indexes
        # with a comma, not as a range
        pytest.param([0, 1, 3, 4], "0,1,3,4", id="pairs-are-two-indexes"),
        pytest.param([0, 1, 2, 7, 8], "0-2,7,8", id="range-and-pair"),
    ],
)
def test_completed_indexes_text(indexes: list[int], text: str) -> None:
    assert format_intervals(indexes) == text
    assert parse_intervals(text, 10) == set(indexes)


def test_parse_intervals_drops_indexes_past_completions() -> None:
    assert parse_intervals("1,3-5,x,9", 4) == {1, 3}


@pytest.mark.asyncio
async def test_failures_past_backoff_limit_fail_the_job_after_the_recreation_backoff() -> None:
    async with world(job("flaky", backoff_limit=2)) as w:
        await w.clock.sleep_until(1.0)
        await w.finish_all("flaky", "Failed")  # failure 1 at t=1: next pod 10 s later
        await w.clock.sleep_until(12.0)
        await w.finish_all("flaky", "Failed")  # failure 2 at t=12: next pod 20 s later
        await w.clock.sleep_until(33.0)
        assert w.job("flaky").status.failed == 2
        await w.finish_all("flaky", "Failed")  # failure 3 > backoffLimit 2
        await w.clock.sleep_until(40.0)
        assert [t for t, _ in _created(w, "flaky")] == [0.0, 11.0, 32.0]
        j = w.job("flaky")
        assert (j.status.failed, j.status.succeeded, j.status.active) == (3, 0, 0)
        assert w.conditions("flaky") == [
            ("FailureTarget", "True", "BackoffLimitExceeded"),
            ("Failed", "True", "BackoffLimitExceeded"),
        ]
        assert j.status.completion_time is None
        assert w.events("BackoffLimitExceeded") == [
            ("flaky", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        ]


@pytest.mark.parametrize(
    ("failures", "elapsed", "want"),
    [
        pytest.param(0, 0.0, 0.0, id="no-failure"),
        pytest.param(1, 0.0, 10.0, id="first-10s"),
        pytest.param(1, 4.0, 6.0, id="first-partly-waited"),
        pytest.param(3, 0.0, 40.0, id="doubling"),
        pytest.param(6, 0.0, 320.0, id="below-cap"),
        pytest.param(7, 100.0, 500.0, id="640s-capped-at-upstream-MaxJobPodFailureBackOff-10min"),
        pytest.param(7, 0.0, 600.0, id="seventh-capped-10min"),
        pytest.param(8, 0.0, 600.0, id="capped-10min"),
        pytest.param(2, 25.0, 0.0, id="waited-out"),
    ],
)
def test_recreation_backoff(failures: int, elapsed: float, want: float) -> None:
    record = bo.BackoffRecord(failures, 100.0 if failures else None)
    assert bo.remaining(record, 100.0 + elapsed) == want


@pytest.mark.asyncio
async def test_a_success_resets_the_recreation_backoff() -> None:
    async with world(job("mix", completions=3, parallelism=1, backoff_limit=6)) as w:
        await w.clock.sleep_until(1.0)
        await w.finish_all("mix", "Failed")
        await w.clock.sleep_until(12.5)  # off the instant the creation's batched sync comes
        await w.finish_all("mix")  # success at t=12.5: the next pod comes with the batch period
        await w.clock.sleep_until(20.0)
        assert [t for t, _ in _created(w, "mix")] == [0.0, 11.0, 13.5]


@pytest.mark.asyncio
async def test_active_deadline_fails_the_job_and_deletes_its_pods() -> None:
    async with world(job("slow", parallelism=2, completions=4, active_deadline_seconds=30)) as w:
        await w.clock.sleep_until(1.0)
        for p in w.active("slow"):
            await w.make_ready(p)
        await w.clock.sleep_until(3.0)
        assert w.job("slow").status.ready == 2
        await w.clock.sleep_until(32.0)
        assert w.conditions("slow") == [
            ("FailureTarget", "True", "DeadlineExceeded"),
            ("Failed", "True", "DeadlineExceeded"),
        ]
        assert w.active("slow") == []
        assert len(w.events("SuccessfulDelete")) == 2
        assert [t for t, _ in [(round(x.time), 0) for x in w.cluster.of("Pod", verb="delete")]] == [30, 30]
        assert w.events("DeadlineExceeded") == [
            ("slow", "DeadlineExceeded", "Job was active longer than specified deadline")
        ]
        assert w.job("slow").status.failed == 2  # the deleted active pods count as failed


@pytest.mark.asyncio
async def test_suspend_deletes_active_pods_and_resume_recreates_them() -> None:
    async with world(job("s", parallelism=3, completions=3)) as w:
        await w.clock.sleep_until(1.0)
        assert len(w.active("s")) == 3
        j = w.job("s")
        w.server.update(replace(j, spec=replace(j.spec, suspend=True)))
        await w.clock.sleep_until(5.0)
        assert w.active("s") == []
        j = w.job("s")
        assert (j.status.active, j.status.failed) == (0, 0)
        assert w.conditions("s") == [("Suspended", "True", "JobSuspended")]
        assert w.events("Suspended") == [("s", "Suspended", "Job suspended")]
        w.server.update(replace(j, spec=replace(j.spec, suspend=False)))
        await w.clock.sleep_until(10.0)
        assert len(w.active("s")) == 3
        assert w.conditions("s") == [("Suspended", "False", "JobResumed")]
        assert w.job("s").status.start_time == "2026-01-01T00:00:05Z"


@pytest.mark.asyncio
async def test_a_job_created_suspended_starts_nothing_and_has_no_start_time() -> None:
    async with world(job("later", suspend=True)) as w:
        await w.clock.sleep_until(5.0)
        assert w.pods() == []
        assert w.job("later").status.start_time is None


def _finished_at(t: float, phase: str) -> Pod:
    term = ContainerStateTerminated(exit_code=0 if phase == "Succeeded" else 1, finished_at=format_timestamp(t))
    p = pod(f"p{t:g}", phase=phase)
    return replace(
        p,
        status=replace(p.status, container_statuses=[ContainerStatus(name="c", state=ContainerState(terminated=term))]),
    )


@pytest.mark.parametrize(
    ("old", "succeeded", "failed", "want"),
    [
        pytest.param(bo.BackoffRecord(2, 5.0), [], [], bo.BackoffRecord(2, 5.0), id="nothing-new"),
        pytest.param(bo.BackoffRecord(1, 5.0), [], [8.0, 7.0], bo.BackoffRecord(3, 8.0), id="failures-add-up"),
        pytest.param(bo.BackoffRecord(3, 5.0), [9.0], [], bo.BackoffRecord(0, None), id="success-resets"),
        pytest.param(
            bo.BackoffRecord(3, 5.0), [9.0], [8.0, 10.0, 11.0], bo.BackoffRecord(2, 11.0), id="failures-after-success"
        ),
        pytest.param(bo.BackoffRecord(3, 5.0), [9.0], [8.0], bo.BackoffRecord(0, None), id="failure-before-success"),
    ],
)
def test_backoff_record(
    old: bo.BackoffRecord, succeeded: list[float], failed: list[float], want: bo.BackoffRecord
) -> None:
    got = bo.next_record(
        old, [_finished_at(t, "Succeeded") for t in succeeded], [_finished_at(t, "Failed") for t in failed]
    )
    assert got == want


@pytest.mark.asyncio
async def test_a_job_managed_by_another_controller_is_left_alone() -> None:
    jobs = job("ext", managed_by="example.com/batch"), job("own", managed_by="kubernetes.io/job-controller")
    async with world(*jobs) as w:
        await w.clock.sleep_until(3.0)
        assert {p.metadata.owner_references[0].name for p in w.pods()} == {"own"}
        assert w.job("ext").status.start_time is None
