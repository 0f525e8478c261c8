"""``spec.backoffLimitPerIndex`` of an Indexed Job, as upstream's ``indexed_job_utils.go``
and ``backoff_utils.go`` keep it (pure functions, no I/O).

Each index counts its own failures. A pod carries the count of its index's earlier failures
in the annotation ``batch.kubernetes.io/job-index-failure-count`` (failures a
``podFailurePolicy`` Ignore rule matched go to ``...-ignored-failure-count``); the
replacement of a failed pod gets that pod's counts plus its own failure
(``new_failure_counts``, upstream ``getNewIndexFailureCounts``).

========================================  ==============================================
a failed pod of index ``i``               effect
========================================  ==============================================
matched by a ``FailIndex`` rule           ``i`` fails at once
counted, its failure count ≥ the limit    ``i`` fails (upstream ``isIndexFailed``)
otherwise                                 ``i`` is re-created after its own backoff:
                                          10 s doubling per earlier failure of ``i``
                                          (ignored ones too), from the pod's finish
========================================  ==============================================

A failed index is never re-created and is listed in ``status.failedIndexes`` ("1,3-5").
The controller fails the Job (``conditions``) with ``MaxFailedIndexesExceeded`` once more
indexes failed than ``maxFailedIndexes``, or with ``FailedIndexes`` once every index either
succeeded or failed and at least one failed; ``backoffLimit`` (defaulted to the int32
maximum) plays no part. Upstream delays a failed pod's finalizer removal until its
replacement exists, so that the replacement can read its counts
(``getPodsWithDelayedDeletionPerIndex``); the emulator's controller remembers, per index,
the last failed pod it counted (``better_replaced``) and picks from those
(``replaced_pods``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from typing import Final

from agents.controllers.job.backoff import finish_time, remaining_for_failures
from agents.controllers.job.conditions import FAILED_INDEXES, MAX_FAILED_INDEXES_EXCEEDED
from agents.controllers.job.failurepolicy import match
from agents.controllers.job.indexes import completion_index, parse_intervals
from emulator.base.api.batch import Job
from emulator.base.api.core import Pod

__all__ = [
    "FAILURE_COUNT",
    "IGNORED_FAILURE_COUNT",
    "better_replaced",
    "creatable_indexes",
    "failure_count_annotations",
    "failure_counts",
    "failure_reason",
    "is_index_failed",
    "new_failed_indexes",
    "replaced_pods",
    "update_failed_indexes",
]

FAILURE_COUNT: Final = "batch.kubernetes.io/job-index-failure-count"
IGNORED_FAILURE_COUNT: Final = "batch.kubernetes.io/job-index-ignored-failure-count"
_INT32_MAX: Final = 2**31 - 1


def _count(pod: Pod, key: str) -> int:
    """Upstream ``parseInt32``: the annotation's value, 0 when missing, malformed or out of
    the int32 range."""
    raw = pod.metadata.annotations.get(key)
    if raw is None or not raw.isdecimal():
        return 0
    value = int(raw)
    return value if value <= _INT32_MAX else 0


def failure_counts(pod: Pod) -> tuple[int, int]:
    """(failures, ignored failures) of the pod's index before it."""
    return _count(pod, FAILURE_COUNT), _count(pod, IGNORED_FAILURE_COUNT)


def is_index_failed(job: Job, pod: Pod) -> bool:
    """Upstream ``isIndexFailed`` for a failed ``pod``."""
    limit = job.spec.backoff_limit_per_index or 0
    result = match(job.spec.pod_failure_policy, pod)
    if result.action == "FailIndex":
        return True
    return result.count_failed and failure_counts(pod)[0] >= limit


def new_failed_indexes(job: Job, failed: Iterable[Pod], completions: int) -> set[int]:
    """The indexes the newly counted ``failed`` pods fail (upstream ``calculateFailedIndexes``)."""
    out: set[int] = set()
    for pod in failed:
        ix = completion_index(pod)
        if ix is not None and ix < completions and is_index_failed(job, pod):
            out.add(ix)
    return out


def update_failed_indexes(job: Job, failed: Iterable[Pod], last_failed: dict[int, Pod]) -> set[int]:
    """The failed indexes after a sync counted the newly ``failed`` pods: ``status.failedIndexes``
    and those the new failures fail. Each index's pod to replace is updated in ``last_failed``."""
    completions = job.spec.completions or 0
    out = parse_intervals(job.status.failed_indexes or "", completions)
    for pod in failed:
        ix = completion_index(pod)
        if ix is None or ix >= completions:
            continue
        if is_index_failed(job, pod):
            out.add(ix)
        if better_replaced(last_failed.get(ix), pod):
            last_failed[ix] = pod
    return out


def failure_reason(job: Job, failed: Set[int], succeeded: Set[int]) -> tuple[str, str] | None:
    """The reason and message the Job fails with (upstream ``syncJob``): more failed indexes
    than ``maxFailedIndexes``, or every index finished and one failed."""
    limit = job.spec.max_failed_indexes
    if limit is not None and len(failed) > limit:
        return MAX_FAILED_INDEXES_EXCEEDED
    if failed and len(failed) + len(succeeded) >= (job.spec.completions or 0):
        return FAILED_INDEXES
    return None


def better_replaced(last: Pod | None, pod: Pod) -> bool:
    """Whether failed ``pod`` replaces ``last`` as its index's pod to replace: at least its
    failure count and not finished before it (upstream ``getPodsWithDelayedDeletionPerIndex``)."""
    if last is None:
        return True
    return sum(failure_counts(last)) <= sum(failure_counts(pod)) and finish_time(pod) >= finish_time(last)


def replaced_pods(last_failed: Mapping[int, Pod], skip: Set[int]) -> dict[int, Pod]:
    """The failed pod each pending index replaces: those of indexes not in ``skip``
    (succeeded, failed or active ones)."""
    return {ix: pod for ix, pod in last_failed.items() if ix not in skip}


def new_failure_counts(job: Job, replaced: Pod | None) -> tuple[int, int]:
    """Upstream ``getNewIndexFailureCounts``: the counts of the pod replacing ``replaced``."""
    if replaced is None:
        return 0, 0
    failures, ignored = failure_counts(replaced)
    if job.spec.pod_failure_policy is None or match(job.spec.pod_failure_policy, replaced).count_failed:
        return failures + 1, ignored
    return failures, ignored + 1


def failure_count_annotations(job: Job, replaced: Pod | None) -> dict[str, str]:
    """Upstream ``addIndexFailureCountAnnotation``: the failure count always, the ignored
    count when not 0."""
    failures, ignored = new_failure_counts(job, replaced)
    out = {FAILURE_COUNT: str(failures)}
    if ignored > 0:
        out[IGNORED_FAILURE_COUNT] = str(ignored)
    return out


def creatable_indexes(indexes: list[int], replaced: Mapping[int, Pod], now: float) -> tuple[list[int], float]:
    """Upstream ``getPodCreationInfoForIndependentIndexes``: the ``indexes`` whose own backoff
    is over (``getRemainingTimePerIndex``), else none and the shortest wait left."""
    ready: list[int] = []
    wait: float | None = None
    for ix in indexes:
        pod = replaced.get(ix)
        left = 0.0 if pod is None else remaining_for_failures(sum(failure_counts(pod)) + 1, finish_time(pod), now)
        if left == 0:
            ready.append(ix)
        elif wait is None or left < wait:
            wait = left
    if ready:
        return ready, 0.0
    return ready, wait or 0.0
