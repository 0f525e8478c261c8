"""Pod recreation backoff after failures, as upstream's ``backoff_utils.go``.

A Job whose pods fail waits before it creates their replacements: 10 s after the first
failure since the last success, doubling per further failure, capped at 10 minutes
(``DEFAULT_BACKOFF``, ``MAX_BACKOFF``: upstream ``DefaultJobPodFailureBackOff`` and
``MaxJobPodFailureBackOff``). The wait runs from the newest failure's finish time. A Job
with ``backoffLimitPerIndex`` waits per index instead (``perindex``), with the same
doubling over the index's failures (``remaining_for_failures``).

What this module owns (pure, clock times in seconds): ``BackoffRecord`` (failures since
the last success, time of the newest failure), ``next_record`` (the record after a sync
saw new finished pods), ``remaining`` (how long creation still waits) and
``remaining_for_failures`` (upstream ``getRemainingTimeForFailuresCount``) and
``finish_time(pod)`` (when a pod finished). Keeping the records per Job is the controller's.

======================================  ======================================
new pods seen by a sync                 record after it
======================================  ======================================
none                                    unchanged
failures only                           failures + n, newest failure time
successes only                          failures 0, no failure time
both                                    the failures finishing after the newest
                                        success, and the newest of them
======================================  ======================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from emulator.base.api.core import Pod
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "DEFAULT_BACKOFF",
    "MAX_BACKOFF",
    "BackoffRecord",
    "finish_time",
    "next_record",
    "remaining",
    "remaining_for_failures",
]

DEFAULT_BACKOFF: Final = 10.0
MAX_BACKOFF: Final = 600.0


@dataclass(frozen=True, slots=True)
class BackoffRecord:
    failures_after_last_success: int = 0
    last_failure_time: float | None = None


def finish_time(pod: Pod) -> float:
    """Upstream ``getFinishedTime``: the newest ``finishedAt`` once every container has
    terminated; else the Ready=False condition's transition; else the deletion's start
    (``deletionTimestamp`` minus the grace period); else the pod's creation."""
    newest: float | None = None
    for s in pod.status.container_statuses:
        t = s.state.terminated
        if t is None or not t.finished_at:
            newest = None
            break
        at = parse_timestamp(t.finished_at)
        newest = at if newest is None else max(newest, at)
    if newest is not None:
        return newest
    for c in pod.status.conditions:
        if c.type == "Ready" and c.status == "False" and c.last_transition_time:
            return parse_timestamp(c.last_transition_time)
    meta = pod.metadata
    if meta.deletion_timestamp:
        return parse_timestamp(meta.deletion_timestamp) - (meta.deletion_grace_period_seconds or 0)
    return parse_timestamp(meta.creation_timestamp) if meta.creation_timestamp else 0.0


def next_record(old: BackoffRecord, succeeded: Sequence[Pod], failed: Sequence[Pod]) -> BackoffRecord:
    """Upstream ``newBackoffRecord``: the record after ``succeeded``/``failed`` were seen
    (every failed pod, whatever ``podFailurePolicy`` says about counting it)."""
    if not succeeded and not failed:
        return old
    failed_times = sorted(finish_time(p) for p in failed)
    if not succeeded:
        return BackoffRecord(old.failures_after_last_success + len(failed_times), failed_times[-1])
    last_success = max(finish_time(p) for p in succeeded)
    after = [t for t in failed_times if t > last_success]
    return BackoffRecord(len(after), after[-1] if after else None)


def remaining(record: BackoffRecord, now: float) -> float:
    """Upstream ``getRemainingTime``: seconds until pods may be created again (0: now)."""
    return remaining_for_failures(record.failures_after_last_success, record.last_failure_time, now)


def remaining_for_failures(failures: int, last_failure_time: float | None, now: float) -> float:
    """Upstream ``getRemainingTimeForFailuresCount``: the wait after ``failures`` failures,
    the newest at ``last_failure_time`` (10 s doubling per failure up to ``MAX_BACKOFF``)."""
    if failures <= 0 or last_failure_time is None:
        return 0.0
    delay = DEFAULT_BACKOFF
    for _ in range(1, failures):
        delay *= 2
        if delay >= MAX_BACKOFF:
            delay = MAX_BACKOFF
            break
    elapsed = now - last_failure_time
    return 0.0 if delay < elapsed else delay - elapsed
