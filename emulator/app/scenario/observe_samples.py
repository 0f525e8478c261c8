"""The observer's samples: pod phase counts and scheduler queues at fixed instants, no timer task.

What this module owns: the sampling clock of ``observe.Observer`` (``Sampling``, a mixin: the
observer's own attributes by name, so that ``bookkeeping.RunBook`` and ``observe_series`` read
them as before), its samples, and the interval's steps up when they are too many. Samples sit
at ``t[i] = i * interval``. When a write's time passes the next sample time, the listener
records every passed sample (``sample_until``) *before* the write applies, so the pod counts
of a sample are exact (nothing changed between the writes), writes at exactly ``t[i]``
included; no task sleeps on the virtual clock for them (it could reorder same-instant timers
and change the trace). Queue sizes and attempt counters are read from the scheduler instances
at that moment, i.e. up to the next write late (attempts in between belong to the next
interval). More series on the same clock (``samplers``: ``cost.CostMeter``) record at each
sample and thin with it.

Memory: at most ``MAX_SAMPLES`` samples of ten ints; past the cap the interval steps up the
``INTERVALS`` chain, each dividing the next, and every k-th sample is kept (the attempt counters
are cumulative, so nothing is lost). A test that lowers ``MAX_SAMPLES`` patches it here, where
``sample_until`` reads it.

It does not own the phase counts it samples (``observe``: ``Observer.phases``), nor the series
document built from the samples (``observe_series``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["INTERVALS", "MAX_SAMPLES", "PHASES", "Sampling"]

PHASES: Final = ("Pending", "Running", "Succeeded", "Failed")
"""The pod phases counted and sampled, in the series' order."""
MAX_SAMPLES: Final = 4096  # read at each sample (tests lower it)
"""Samples kept at most (a 1-hour run keeps its 1 s interval)."""
INTERVALS: Final = (1.0, 2.0, 10.0, 30.0, 60.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 21600.0, 43200.0, 86400.0)
"""Sampling intervals, finest first; each divides the next (then doubling past the last)."""


class Sampling:
    """The samples of ``observe.Observer`` (a mixin; see the module docstring)."""

    phases: dict[str, int]
    """The observer's live pod count per phase (``Observer.phases``): what a sample records."""
    schedulers: Callable[[], list[Any]]
    """The run's scheduler instances at that moment (``Observer``'s argument): their queue
    sizes and attempt counters are sampled."""

    def _init_samples(self) -> None:
        self.interval = INTERVALS[0]
        self.next_sample = 0.0
        self.samples: dict[str, list[int]] = {
            name: []
            for name in (*PHASES, "activeQ", "backoffQ", "unschedulablePods", "scheduled", "unschedulable", "error")
        }
        self.count = 0
        self.has_scheduler = False
        self.samplers: list[Any] = []
        """More series on this clock (``cost.CostMeter``): ``record()`` at each sample,
        ``keep_every(k)`` when the interval steps up."""

    def sample_until(self, t: float, *, inclusive: bool) -> None:
        """Record every sample before ``t`` (at or before with ``inclusive``)."""
        while self.next_sample < t or (inclusive and self.next_sample <= t):
            self._record()
            self.count += 1
            if self.count >= MAX_SAMPLES:
                self._coarsen()
            self.next_sample = self.count * self.interval

    def _record(self) -> None:
        s = self.samples
        for phase in PHASES:
            s[phase].append(self.phases[phase])
        active = backoff = unschedulable = scheduled = failed = errors = 0
        for sched in self.schedulers():
            self.has_scheduler = True
            a, b, u = sched.queue.sizes()
            active += a
            backoff += b
            unschedulable += u
            m = sched.metrics
            scheduled += m.scheduled
            failed += m.unschedulable
            errors += m.errors
        s["activeQ"].append(active)
        s["backoffQ"].append(backoff)
        s["unschedulablePods"].append(unschedulable)
        s["scheduled"].append(scheduled)
        s["unschedulable"].append(failed)
        s["error"].append(errors)
        for sampler in self.samplers:
            sampler.record()

    def _coarsen(self) -> None:
        """Step the interval up the chain; keep the samples at its multiples (the attempt
        counters are cumulative, so nothing is lost)."""
        i = INTERVALS.index(self.interval) if self.interval in INTERVALS else len(INTERVALS)
        new = INTERVALS[i + 1] if i + 1 < len(INTERVALS) else self.interval * 2
        k = round(new / self.interval)
        for values in self.samples.values():
            values[:] = values[::k]
        for sampler in self.samplers:
            sampler.keep_every(k)
        self.interval = new
        self.count = len(self.samples["Pending"])
