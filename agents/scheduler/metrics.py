"""Scheduling metrics kept per scheduler instance, reported as the ``scheduling`` object.

Upstream names: ``schedule_attempts_total`` by result (scheduled, unschedulable, error),
``scheduling_attempt_duration_seconds``, ``pod_scheduling_sli_duration_seconds`` (from the
pod's first entry into the queue to its successful binding — "e2e" here) and the queue
wait. Durations are in simulated seconds (the virtual clock), plus the wall time spent in
scheduling cycles for benchmarks. Percentiles are nearest-rank.

Memory: each duration is a ``QuantileSketch`` (``emulator.base.runtime.stats``), as upstream's
are histograms rather than lists: exact up to ``EXACT_CAP`` samples (every small run's report
is the exact rule's), then log buckets within 1 % of the exact percentile, so an hour-long
run keeps a few hundred counters per metric instead of one float per attempt. The bench
harness, which needs the samples of a measured window, asks for them with ``keep_samples``
(``raw``); nothing else keeps every sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from emulator.base.runtime.stats import QuantileSketch

if TYPE_CHECKING:
    from agents.scheduler.framework.interface import ExtensionPoint

__all__ = ["MetricsRecorder", "RawSamples", "SchedulingMetrics"]


class MetricsRecorder(Protocol):
    """What a benchmark hands the scheduler at construction (``SchedulerOptions.recorder``)
    to hear the wall duration of an extension point per cycle, as upstream's
    ``framework_extension_point_duration_seconds``: Filter around the whole feasible-node
    search (profiles with Filter plugins), Score around ``run_score_plugins`` or its
    vectorised twin (profiles with Score plugins). Nothing is recorded without one."""

    def observe_extension_point(self, point: ExtensionPoint, seconds: float) -> None: ...


@dataclass(slots=True)
class RawSamples:
    """Every wall attempt duration and e2e duration in order (benchmarks only)."""

    attempt_wall_seconds: list[float] = field(default_factory=list)
    e2e_seconds: list[float] = field(default_factory=list)


@dataclass(slots=True)
class SchedulingMetrics:
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    attempt_seconds: QuantileSketch = field(default_factory=QuantileSketch)
    attempt_wall_seconds: QuantileSketch = field(default_factory=QuantileSketch)
    e2e_seconds: QuantileSketch = field(default_factory=QuantileSketch)
    queue_wait_seconds: QuantileSketch = field(default_factory=QuantileSketch)
    first_bound: float | None = None
    last_bound: float | None = None
    raw: RawSamples | None = None
    """Set by ``keep_samples``: the samples themselves, for a benchmark's measured window."""

    @property
    def attempts(self) -> int:
        return self.scheduled + self.unschedulable + self.errors

    def keep_samples(self) -> RawSamples:
        """Keep every later wall attempt and e2e sample in order too (``raw``)."""
        if self.raw is None:
            self.raw = RawSamples()
        return self.raw

    def attempted(self, seconds: float, wall_seconds: float) -> None:
        """One scheduling attempt took ``seconds`` of the clock and ``wall_seconds`` of wall time."""
        self.attempt_seconds.add(seconds)
        self.attempt_wall_seconds.add(wall_seconds)
        if self.raw is not None:
            self.raw.attempt_wall_seconds.append(wall_seconds)

    def bound(self, now: float, e2e: float) -> None:
        self.e2e_seconds.add(e2e)
        if self.raw is not None:
            self.raw.e2e_seconds.append(e2e)
        if self.first_bound is None:
            self.first_bound = now
        self.last_bound = now

    def merge(self, other: SchedulingMetrics) -> None:
        self.scheduled += other.scheduled
        self.unschedulable += other.unschedulable
        self.errors += other.errors
        self.attempt_seconds.merge(other.attempt_seconds)
        self.attempt_wall_seconds.merge(other.attempt_wall_seconds)
        self.e2e_seconds.merge(other.e2e_seconds)
        self.queue_wait_seconds.merge(other.queue_wait_seconds)
        for t in (other.first_bound, other.last_bound):
            if t is not None:
                self.first_bound = t if self.first_bound is None else min(self.first_bound, t)
                self.last_bound = t if self.last_bound is None else max(self.last_bound, t)

    def report(self) -> dict[str, Any]:
        def pct(values: QuantileSketch) -> dict[str, float]:
            return {f"p{q}": round(values.quantile(q), 6) for q in (50, 90, 99)}

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
