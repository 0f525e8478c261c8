"""The benchmark's arithmetic: throughput samples from bind times, percentiles, peak RSS.

Pure functions over recorded numbers, tested on synthetic timestamps; nothing here reads a
clock except ``peak_rss_mib``/``reset_peak_rss``, which read the process's memory counters.

**SchedulingThroughput** follows upstream's ``throughputCollector``
(``test/integration/scheduler_perf/util.go``), replayed after the fact on the wall-clock
times of the measured pods' bindings instead of a live ticker — so a busy event loop cannot
delay or drop a tick. Ticks fall every ``interval`` (1 s) from the start of the measured phase
up to its end (a last partial interval is not sampled, as the ticker stops with the phase):

==============================  ===================================================================
at a tick, bound so far is ...  then
==============================  ===================================================================
0                               no sample (nothing scheduled yet)
> 0, first time                 the baseline: no sample ("likely an outlier", upstream skips it)
unchanged since the last sample ``skipped += 1``, no sample yet
grown by n                      throughput n / (time since the last sample), recorded
                                ``skipped + 1`` times so percentiles keep their weight
==============================  ===================================================================

``summarize`` gives Average and Perc50/90/95/99 with upstream's index
``ceil(len · q / 100) - 1`` over the sorted samples (``emulator.base.runtime.stats.nearest_rank``,
re-exported here). Latency percentiles (attempt, e2e,
Filter, Score) use the same nearest-rank rule on the raw durations; upstream reads them from
Prometheus histograms (bucket interpolation), which only coarsens them.
"""

from __future__ import annotations

import bisect
import resource
import sys
from collections.abc import Sequence

from emulator.base.runtime.stats import nearest_rank

__all__ = [
    "THROUGHPUT_SAMPLE_INTERVAL",
    "millis",
    "nearest_rank",
    "peak_rss_mib",
    "reset_peak_rss",
    "summarize",
    "throughput_samples",
]

THROUGHPUT_SAMPLE_INTERVAL = 1.0
"""Upstream ``throughputSampleInterval``."""


def throughput_samples(
    bound_at: Sequence[float], start: float, end: float, interval: float = THROUGHPUT_SAMPLE_INTERVAL
) -> list[float]:
    """Pods/s samples of a phase from ``start`` to ``end`` given the (sorted) binding times."""
    samples: list[float] = []
    started = False
    last_count = 0
    last_tick = start
    skipped = 0
    k = 1
    while (tick := start + k * interval) <= end:
        k += 1
        scheduled = bisect.bisect_right(bound_at, tick)
        if scheduled == 0:
            continue
        if not started:
            started, last_count, last_tick = True, scheduled, tick
            continue
        new = scheduled - last_count
        if new == 0:
            skipped += 1
            continue
        rate = new / (tick - last_tick)
        samples.extend([rate] * (skipped + 1))
        last_count, last_tick, skipped = scheduled, tick, 0
    return samples


def summarize(samples: Sequence[float]) -> dict[str, float | int | None]:
    """``average``, ``p50``, ``p90``, ``p95``, ``p99`` (None without samples) and ``samples``."""
    if not samples:
        return {"average": None, "p50": None, "p90": None, "p95": None, "p99": None, "samples": 0}
    ordered = sorted(samples)
    out: dict[str, float | int | None] = {"average": round(sum(ordered) / len(ordered), 3)}
    for q in (50, 90, 95, 99):
        out[f"p{q}"] = round(nearest_rank(ordered, q), 3)
    out["samples"] = len(ordered)
    return out


def millis(durations: Sequence[float], quantiles: Sequence[int] = (50, 90, 99)) -> dict[str, float | None]:
    """Percentiles of durations given in seconds, in milliseconds (None without values)."""
    if not durations:
        return {f"p{q}": None for q in quantiles}
    ordered = sorted(durations)
    return {f"p{q}": round(nearest_rank(ordered, q) * 1000, 3) for q in quantiles}


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (Linux ``clear_refs`` 5); False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def peak_rss_mib() -> float:
    """Peak resident set size since the last reset (Linux ``VmHWM``), else since the process began."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)
