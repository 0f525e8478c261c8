"""How the job controller reads its pods (pure): which are failed, terminating, newly
finished, and whether a ``podFailurePolicy`` FailJob rule or container restarts end the Job.

==========================  ========================================================
pod                         counts as
==========================  ========================================================
phase Succeeded             a success (Indexed: its index, if below completions)
phase Failed                a failure (``podFailurePolicy`` Ignore: not counted)
deletionTimestamp, not      a failure, unless only failed pods are replaced
Succeeded                   (``podReplacementPolicy: Failed`` or a podFailurePolicy)
vanished before counted     a failure unless it had Succeeded (the finalizer upstream
                            keeps such a pod around until counted)
==========================  ========================================================

Each finished pod is counted once: ``new_finished`` skips the UIDs already ``counted``
and returns those it saw, for the controller to remember after its status write.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from typing import Final

from agents.controllers.controllerutils import deletion_order, related_ranks
from agents.controllers.job.failurepolicy import match
from agents.controllers.job.indexes import completion_index, duplicated_index_pods
from emulator.base.api.batch import Job
from emulator.base.api.core import Pod

__all__ = [
    "Finished",
    "fail_job_message",
    "is_failed",
    "is_terminating",
    "new_finished",
    "only_replace_failed",
    "pods_for_removal",
    "restarts_past_limit",
]

_TERMINAL: Final = ("Succeeded", "Failed")


def only_replace_failed(job: Job) -> bool:
    """Upstream ``onlyReplaceFailedPods``."""
    return job.spec.pod_replacement_policy == "Failed" or job.spec.pod_failure_policy is not None


def is_failed(pod: Pod, job: Job) -> bool:
    """Upstream ``isPodFailed``: Failed, or (unless only failed pods are replaced) being
    deleted before it succeeded."""
    if pod.status.phase == "Failed":
        return True
    if only_replace_failed(job):
        return False
    return pod.metadata.deletion_timestamp is not None and pod.status.phase != "Succeeded"


def is_terminating(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is not None and pod.status.phase not in _TERMINAL


def restarts_past_limit(job: Job, pods: Sequence[Pod]) -> bool:
    """Upstream ``pastBackoffLimitOnFailure``: under ``restartPolicy: OnFailure``, the
    restarts of the running and pending pods' containers reach ``backoffLimit``."""
    if job.spec.template.spec.restart_policy != "OnFailure":
        return False
    total = sum(
        s.restart_count
        for p in pods
        if p.status.phase in ("Running", "Pending")
        for s in (*p.status.init_container_statuses, *p.status.container_statuses)
    )
    limit = job.spec.backoff_limit or 0
    return total > 0 if limit == 0 else total >= limit


def fail_job_message(job: Job, pods: Sequence[Pod]) -> str | None:
    """Upstream ``getFailJobMessage``: the message of the first failed pod a FailJob rule matches."""
    policy = job.spec.pod_failure_policy
    if policy is None:
        return None
    for p in pods:
        if is_failed(p, job) and (message := match(policy, p).fail_job_message) is not None:
            return message
    return None


@dataclass(slots=True)
class Finished:
    succeeded: list[Pod] = field(default_factory=list)
    failed: list[Pod] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    """UIDs to remember as counted (including pods of an invalid index, never counted)."""


def new_finished(job: Job, pods: Sequence[Pod], vanished: Sequence[Pod], counted: Set[str]) -> Finished:
    """The pods that finished since the last sync (``pods`` in the store, then ``vanished``)."""
    indexed = job.spec.completion_mode == "Indexed"
    completions = job.spec.completions or 0
    out = Finished()
    for p, gone in [*((p, False) for p in pods), *((p, True) for p in vanished)]:
        uid = p.metadata.uid
        if uid in counted:
            continue
        if p.status.phase == "Succeeded":
            bucket = out.succeeded
        elif gone or is_failed(p, job):
            bucket = out.failed
        else:
            continue
        out.seen.append(uid)
        ix = completion_index(p)
        if not indexed or (ix is not None and ix < completions):
            bucket.append(p)
    return out


def pods_for_removal(job: Job, active: list[Pod], at_least: int, now: float) -> list[Pod]:
    """Upstream ``activePodsForRemoval``: duplicated or invalid indexes first, then at
    least ``at_least`` in the ``ActivePods`` order (unscheduled, pending, not ready first)."""
    remove: list[Pod] = []
    left = active
    if job.spec.completion_mode == "Indexed":
        remove, left = duplicated_index_pods(active, job.spec.completions or 0)
    if len(remove) < at_least:
        remove.extend(deletion_order(left, related_ranks(left, []), now)[: at_least - len(remove)])
    return remove
