"""A Job's conditions and the decisions that read only its spec and status (pure).

v1.34 finishes a Job in two steps (the ``JobManagedBy`` and ``JobPodReplacementPolicy``
gates are on): an interim condition first, the terminal one once no pod of the Job is
still terminating.

=====================  ===============================  ==============================
interim                reason (message)                 terminal (same reason/message)
=====================  ===============================  ==============================
SuccessCriteriaMet     CompletionsReached,              Complete (+ completionTime)
                       SuccessPolicy
FailureTarget          BackoffLimitExceeded,            Failed
                       DeadlineExceeded,
                       PodFailurePolicy,
                       MaxFailedIndexesExceeded,
                       FailedIndexes
=====================  ===============================  ==============================

``Suspended`` is True (``JobSuspended``) while ``spec.suspend`` and turns False
(``JobResumed``) on resume. This module does not count pods (``controller``).
"""

from __future__ import annotations

from typing import Final

from emulator.base.api.batch import Job, JobCondition
from emulator.base.api.meta import ObjectReference

__all__ = [
    "BACKOFF_LIMIT_EXCEEDED",
    "COMPLETIONS_REACHED",
    "DEADLINE_EXCEEDED",
    "FAILED_INDEXES",
    "MAX_FAILED_INDEXES_EXCEEDED",
    "POD_FAILURE_POLICY",
    "ensure_condition",
    "find_condition",
    "finish_time",
    "is_finished",
    "job_reference",
    "new_condition",
]

BACKOFF_LIMIT_EXCEEDED: Final = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED: Final = ("DeadlineExceeded", "Job was active longer than specified deadline")
COMPLETIONS_REACHED: Final = ("CompletionsReached", "Reached expected number of succeeded pods")
POD_FAILURE_POLICY: Final = "PodFailurePolicy"
MAX_FAILED_INDEXES_EXCEEDED: Final = (
    "MaxFailedIndexesExceeded",
    "Job has exceeded the specified maximal number of failed indexes",
)
FAILED_INDEXES: Final = ("FailedIndexes", "Job has failed indexes")


def new_condition(type_: str, reason: str, message: str, now: str, status: str = "True") -> JobCondition:
    return JobCondition(
        type=type_, status=status, reason=reason, message=message, last_probe_time=now, last_transition_time=now
    )


def find_condition(conditions: list[JobCondition], type_: str) -> JobCondition | None:
    return next((c for c in conditions if c.type == type_), None)


def ensure_condition(
    conditions: list[JobCondition], type_: str, status: str, reason: str, message: str, now: str
) -> tuple[list[JobCondition], bool]:
    """Upstream ``ensureJobConditionStatus``: set the condition (a False one is only ever
    an update, never added); whether the list changed."""
    for i, c in enumerate(conditions):
        if c.type == type_:
            if c.status == status and c.reason == reason and c.message == message:
                return conditions, False
            out = list(conditions)
            out[i] = new_condition(type_, reason, message, now, status)
            return out, True
    if status == "False":
        return conditions, False
    return [*conditions, new_condition(type_, reason, message, now, status)], True


def is_finished(job: Job) -> bool:
    """Upstream ``IsJobFinished``: a Complete or Failed condition that is True."""
    return any(c.type in ("Complete", "Failed") and c.status == "True" for c in job.status.conditions)


def finish_time(job: Job) -> str | None:
    """When a finished Job finished: its Complete or Failed condition's lastTransitionTime."""
    for c in job.status.conditions:
        if c.type in ("Complete", "Failed") and c.status == "True":
            return c.last_transition_time
    return None


def job_reference(job: Job) -> ObjectReference:
    """The Job as the ``involvedObject`` of its Events."""
    return ObjectReference(
        api_version=job.api_version,
        kind="Job",
        namespace=job.metadata.namespace,
        name=job.metadata.name,
        uid=job.metadata.uid,
        resource_version=job.metadata.resource_version,
    )
