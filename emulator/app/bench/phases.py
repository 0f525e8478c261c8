"""Measured phases of one benchmark workload, and their figures.

Upstream's scheduler_perf starts its collectors at each ``createPods`` op with
``collectMetrics: true`` and at each ``startCollectingMetrics``, and stops them at the op's end or
at ``stopCollectingMetrics``; every such phase yields its own data items (thresholds are checked
against each). A workload here has as many: ``Phase`` marks where one opened and closed — the
wall and CPU clocks, the scheduler's sample counters, and the tracker's measured bindings and
start-ups. ``figures`` turns one phase or several into the result's fields: for one phase exactly
the figures of that phase; for several, the pooled figures (bound pods over the phases' summed
seconds, samples and latencies of all of them) plus one entry per phase under ``phases``.
Phases never overlap (``resolve.py`` refuses that, as upstream does).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from emulator.app.bench.metrics import millis, summarize, throughput_samples

__all__ = ["Phase", "Samples", "figures"]

Marks = tuple[int, int, int, int]


@dataclass(slots=True)
class Phase:
    """One measured phase: where it is in the workload and what the clocks and counters said."""

    where: str
    """The step that opened it, as the progress lines name it: ``createPods[i]`` (its
    ``collectMetrics``) or ``startCollectingMetrics[i]``."""
    marks_start: Marks
    t_start: float
    cpu_start: float
    bound_start: int
    startup_start: int
    marks_end: Marks | None = None
    t_end: float = 0.0
    cpu_end: float = 0.0
    bound_end: int = 0
    startup_end: int = 0

    def close(self, marks: Marks, bound: int, startup: int) -> None:
        self.t_end, self.cpu_end = time.perf_counter(), time.process_time()
        self.marks_end, self.bound_end, self.startup_end = marks, bound, startup


@dataclass(slots=True)
class Samples:
    """The run's sample lists, which the phases' marks index."""

    attempt: list[float]
    e2e: list[float]
    filter: list[float]
    score: list[float]
    bound_at: list[float]
    startup: list[float]
    marks_now: Marks = (0, 0, 0, 0)


def _one(p: Phase, s: Samples) -> dict[str, Any]:
    """The figures of one phase (a phase still open closes at the end of the run)."""
    a0, e0, f0, s0 = p.marks_start
    if p.marks_end is None:
        a1, e1, f1, s1 = s.marks_now
        t1, cpu1, b1, u1 = time.perf_counter(), time.process_time(), len(s.bound_at), len(s.startup)
    else:
        a1, e1, f1, s1 = p.marks_end
        t1, cpu1, b1, u1 = p.t_end, p.cpu_end, p.bound_end, p.startup_end
    bound_at = sorted(s.bound_at[p.bound_start : b1])
    seconds, cpu = t1 - p.t_start, cpu1 - p.cpu_start
    return {
        "samples": throughput_samples(bound_at, p.t_start, t1),
        "bound": len(bound_at),
        "seconds": seconds,
        "cpu": cpu,
        "attempt": s.attempt[a0:a1],
        "e2e": s.e2e[e0:e1],
        "filter": s.filter[f0:f1],
        "score": s.score[s0:s1],
        "startup": s.startup[p.startup_start : u1],
    }


def _fields(raw: dict[str, Any]) -> dict[str, Any]:
    throughput: dict[str, Any] = dict(summarize(raw["samples"]))
    throughput["overall"] = round(raw["bound"] / max(raw["seconds"], 1e-9), 3)
    throughput["overallCpu"] = round(raw["bound"] / max(raw["cpu"], 1e-9), 3)
    return {
        "throughput": throughput,
        "attempt_ms": millis(raw["attempt"]),
        "e2e_ms": millis(raw["e2e"]),
        "filter_ms": millis(raw["filter"]),
        "score_ms": millis(raw["score"]),
        "startup_ms": millis(raw["startup"]),
        "measured_seconds": raw["seconds"],
        "measured_cpu_seconds": raw["cpu"],
        "bound": raw["bound"],
    }


def figures(phases: list[Phase], s: Samples) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the result's figures, one JSON entry per phase when there are several, else [])."""
    if not phases:  # no phase opened (the workload stopped before it): nothing measured
        return _fields(
            {"samples": [], "bound": 0, "seconds": 0.0, "cpu": 0.0}
            | {k: [] for k in ("attempt", "e2e", "filter", "score", "startup")}
        ), []
    raws = [_one(p, s) for p in phases]
    if len(raws) == 1:
        return _fields(raws[0]), []
    pooled: dict[str, Any] = {"bound": sum(r["bound"] for r in raws)}
    for key in ("seconds", "cpu"):
        pooled[key] = sum(r[key] for r in raws)
    for key in ("samples", "attempt", "e2e", "filter", "score", "startup"):
        pooled[key] = [x for r in raws for x in r[key]]
    per_phase = []
    for n, (p, r) in enumerate(zip(phases, raws, strict=True), start=1):
        f = _fields(r)
        per_phase.append(
            {
                "phase": n,
                "openedBy": p.where,
                "scheduledPods": f["bound"],
                "throughput": f["throughput"],
                "attemptMs": f["attempt_ms"],
                "e2eMs": f["e2e_ms"],
                "filterMs": f["filter_ms"],
                "scoreMs": f["score_ms"],
                "measuredSeconds": round(f["measured_seconds"], 3),
                "measuredCpuSeconds": round(f["measured_cpu_seconds"], 3),
            }
        )
    return _fields(pooled), per_phase
