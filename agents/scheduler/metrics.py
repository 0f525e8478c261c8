"""Scheduling metrics kept per scheduler instance, reported as the ``scheduling`` object.

Upstream names: ``schedule_attempts_total`` by result (scheduled, unschedulable, error),
``scheduling_attempt_duration_seconds``, ``pod_scheduling_sli_duration_seconds`` (from the
pod's first entry into the queue to its successful binding — "e2e" here) and the queue
wait. Durations are in simulated seconds (the virtual clock), plus the wall time spent in
scheduling cycles for benchmarks. Percentiles are nearest-rank (``emulator.runtime.stats``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from emulator.runtime.stats import percentile

__all__ = ["SchedulingMetrics"]


@dataclass(slots=True)
class SchedulingMetrics:
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    attempt_seconds: list[float] = field(default_factory=list)
    attempt_wall_seconds: list[float] = field(default_factory=list)
    e2e_seconds: list[float] = field(default_factory=list)
    queue_wait_seconds: list[float] = field(default_factory=list)
    first_bound: float | None = None
    last_bound: float | None = None

    @property
    def attempts(self) -> int:
        return self.scheduled + self.unschedulable + self.errors

    def bound(self, now: float, e2e: float) -> None:
        self.e2e_seconds.append(e2e)
        if self.first_bound is None:
            self.first_bound = now
        self.last_bound = now

    def merge(self, other: SchedulingMetrics) -> None:
        self.scheduled += other.scheduled
        self.unschedulable += other.unschedulable
        self.errors += other.errors
        self.attempt_seconds += other.attempt_seconds
        self.attempt_wall_seconds += other.attempt_wall_seconds
        self.e2e_seconds += other.e2e_seconds
        self.queue_wait_seconds += other.queue_wait_seconds
        for t in (other.first_bound, other.last_bound):
            if t is not None:
                self.first_bound = t if self.first_bound is None else min(self.first_bound, t)
                self.last_bound = t if self.last_bound is None else max(self.last_bound, t)

    def report(self) -> dict[str, Any]:
        def pct(values: Sequence[float]) -> dict[str, float]:
            return {f"p{q}": round(percentile(values, q), 6) for q in (50, 90, 99)}

        span = (self.last_bound or 0.0) - (self.first_bound or 0.0)
        bound = len(self.e2e_seconds)
        return {
            "attempts": self.attempts,
            "scheduled": self.scheduled,
            "unschedulable": self.unschedulable,
            "errors": self.errors,
            "bound": bound,
            "attemptSeconds": pct(self.attempt_seconds),
            "e2eSeconds": pct(self.e2e_seconds),
            "queueWaitSeconds": pct(self.queue_wait_seconds),
            "simulatedThroughput": round(bound / span, 3) if span > 0 else None,
            "attemptWallMs": {k: round(v * 1000, 3) for k, v in pct(self.attempt_wall_seconds).items()},
        }
