"""The report's Job ``status`` is kubectl 1.32's STATUS column, with the condition's reason."""

from __future__ import annotations

import pytest

from emulator.app.scenario.workload_status import report
from emulator.base.api.batch import Job, JobCondition, JobStatus
from emulator.base.api.meta import ObjectMeta


def _job(*conditions: tuple[str, str, str], deleting: bool = False) -> Job:
    return Job(
        metadata=ObjectMeta(
            name="j", namespace="default", uid="u", deletion_timestamp="2026-01-01T00:01:00Z" if deleting else None
        ),
        status=JobStatus(conditions=[JobCondition(type=t, status=s, reason=r) for t, s, r in conditions]),
    )


@pytest.mark.parametrize(
    ("job", "status", "reason"),
    [
        pytest.param(_job(), "Running", "", id="no-condition"),
        pytest.param(_job(("Suspended", "True", "JobSuspended")), "Suspended", "JobSuspended", id="suspended"),
        pytest.param(
            _job(("SuccessCriteriaMet", "True", "CompletionsReached"), ("Complete", "True", "CompletionsReached")),
            "Complete",
            "CompletionsReached",
            id="complete-wins-over-success-criteria",
        ),
        pytest.param(
            _job(("FailureTarget", "True", "BackoffLimitExceeded")),
            "FailureTarget",
            "BackoffLimitExceeded",
            id="failure-target-before-failed",
        ),
        pytest.param(
            _job(("FailureTarget", "True", "DeadlineExceeded"), ("Failed", "True", "DeadlineExceeded")),
            "Failed",
            "DeadlineExceeded",
            id="failed",
        ),
        pytest.param(_job(("Suspended", "False", "JobResumed")), "Running", "", id="false-conditions-ignored"),
        pytest.param(_job(("Complete", "True", "CompletionsReached"), deleting=True), "Terminating", "", id="deleting"),
    ],
)
def test_job_status_column(job: Job, status: str, reason: str) -> None:
    (entry,) = report({"Job": [job]}, [])
    assert (entry["status"], entry["reason"]) == (status, reason)
