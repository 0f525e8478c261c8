"""Pod recreation backoff after failures, as upstream's ``backoff_utils.go``.

A Job whose pods fail waits before it creates their replacements: 10 s after the first
failure since the last success, doubling per further failure, capped at 6 minutes
(``DEFAULT_BACKOFF``, ``MAX_BACKOFF``: upstream ``DefaultJobPodFailureBackOff`` and
``MaxJobPodFailureBackOff``). The wait runs from the newest failure's finish time.

What this module owns (pure, clock times in seconds): ``BackoffRecord`` (failures since
the last success, time of the newest failure), ``next_record`` (the record after a sync
saw new finished pods), ``remaining`` (how long creation still waits) and
``finish_time(pod)`` (when a pod finished: its containers' newest ``finishedAt``, else its
``deletionTimestamp``, else now). Keeping the records per Job is the controller's.

======================================  ======================================
new pods seen by a sync                 record after it
======================================  ======================================
none                                    unchanged
failures only                           failures + n, newest failure time
successes only                          failures 0 (time kept)
both                                    failures finishing after the newest
                                        success, newest failure time
======================================  ======================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from emulator.api.core import Pod
from emulator.runtime.clock import parse_timestamp

__all__ = ["DEFAULT_BACKOFF", "MAX_BACKOFF", "BackoffRecord", "finish_time", "next_record", "remaining"]

DEFAULT_BACKOFF: Final = 10.0
MAX_BACKOFF: Final = 360.0


@dataclass(frozen=True, slots=True)
class BackoffRecord:
    failures_after_last_success: int = 0
    last_failure_time: float | None = None


def finish_time(pod: Pod, now: float) -> float:
    """Upstream ``getFinishedTime`` (without the Ready=False fallback)."""
    newest: float | None = None
    for s in (*pod.status.init_container_statuses, *pod.status.container_statuses):
        t = s.state.terminated
        if t is not None and t.finished_at:
            at = parse_timestamp(t.finished_at)
            newest = at if newest is None else max(newest, at)
    if newest is not None:
        return newest
    if pod.metadata.deletion_timestamp:
        return parse_timestamp(pod.metadata.deletion_timestamp)
    return now


def next_record(old: BackoffRecord, succeeded: Sequence[Pod], failed: Sequence[Pod], now: float) -> BackoffRecord:
    """Upstream ``newBackoffRecord``: the record after ``succeeded``/``failed`` were counted."""
    if not succeeded and not failed:
        return old
    failed_times = sorted(finish_time(p, now) for p in failed)
    if not succeeded:
        newest = failed_times[-1]
        last = newest if old.last_failure_time is None else max(old.last_failure_time, newest)
        return BackoffRecord(old.failures_after_last_success + len(failed_times), last)
    if not failed:
        return BackoffRecord(0, old.last_failure_time)
    last_success = max(finish_time(p, now) for p in succeeded)
    after = [t for t in failed_times if t > last_success]
    return BackoffRecord(len(after), failed_times[-1])


def remaining(record: BackoffRecord, now: float) -> float:
    """Upstream ``getRemainingTime``: seconds until pods may be created again (0: now)."""
    if record.failures_after_last_success == 0 or record.last_failure_time is None:
        return 0.0
    delay = DEFAULT_BACKOFF
    for _ in range(1, record.failures_after_last_success):
        delay *= 2
        if delay >= MAX_BACKOFF:
            delay = MAX_BACKOFF
            break
    elapsed = now - record.last_failure_time
    return 0.0 if delay < elapsed else delay - elapsed
