"""Quality metrics of one run from the observer's step functions: pure arithmetic, no state.

A step function is a list of change points ``(t, value)`` in time order: the value holds from
``t`` until the next point (several points at one instant: the last one holds), and is 0
before the first. Over a window ``[start, end]``:

- ``segments`` cuts it into (value, duration) pieces inside the window;
- ``time_weighted`` gives the time-weighted mean and the time-weighted nearest-rank
  percentiles: the smallest value ``v`` such that the time spent at values ≤ ``v`` is at least
  ``q`` % of the window (the nearest-rank rule of ``emulator.runtime.stats`` with durations
  for counts). A window of length 0 is the value at its start, with weight 1.

``metrics`` assembles the ``metrics`` document of the contract (``docs/architecture.md``,
"Run metrics and series"): exactly its keys, floats rounded to 6 decimals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from emulator.runtime.stats import nearest_rank

__all__ = ["PERCENTILES", "metrics", "pending_percentiles", "segments", "time_weighted"]

PERCENTILES = (50.0, 90.0)
"""Allocation percentiles (``p50``, ``p90``)."""
_EPS = 1e-9


def _r(x: float) -> float:
    return round(x, 6)


def segments(points: Sequence[tuple[float, float]], start: float, end: float) -> list[tuple[float, float]]:
    """(value, duration) pieces of the step function ``points`` over ``[start, end]``; for a
    window of length 0, the value at ``start`` with duration 1."""
    value = 0.0
    i = 0
    n = len(points)
    while i < n and points[i][0] <= start:
        value = points[i][1]
        i += 1
    if end <= start:
        return [(value, 1.0)]
    out: list[tuple[float, float]] = []
    t = start
    while i < n and points[i][0] < end:
        at, nxt = points[i]
        if at > t:
            out.append((value, at - t))
            t = at
        value = nxt
        i += 1
    out.append((value, end - t))
    return out


def time_weighted(
    pieces: Sequence[tuple[float, float]], quantiles: Sequence[float] = PERCENTILES
) -> tuple[float, list[float]]:
    """(mean, [percentile for each q]) of (value, duration) pieces; (0, zeros) when empty."""
    total = sum(d for _, d in pieces)
    if total <= 0:
        return 0.0, [0.0 for _ in quantiles]
    mean = sum(v * d for v, d in pieces) / total
    ordered = sorted(pieces)
    out: list[float] = []
    for q in quantiles:
        need = total * q / 100.0
        seen = 0.0
        chosen = ordered[-1][0]
        for v, d in ordered:
            seen += d
            if seen >= need - _EPS * total:
                chosen = v
                break
        out.append(chosen)
    lo, hi = ordered[0][0], ordered[-1][0]
    return min(max(mean, lo), hi), out


def pending_percentiles(pending: Sequence[float]) -> dict[str, float | None]:
    """Nearest-rank p50/p90/p99 of the pending times; nulls when no pod was bound."""
    if not pending:
        return {"p50": None, "p90": None, "p99": None}
    ordered = sorted(pending)
    return {f"p{q:g}": _r(nearest_rank(ordered, q)) for q in (50.0, 90.0, 99.0)}


def _allocation(pieces: Sequence[tuple[float, float]]) -> dict[str, float]:
    mean, (p50, p90) = time_weighted(pieces)
    return {"mean": _r(mean), "p50": _r(p50), "p90": _r(p90)}


def metrics(
    *,
    scheduled: int,
    unschedulable: int,
    pending: Sequence[float],
    window: tuple[float, float] | None,
    nodes_used: Sequence[tuple[float, float]],
    allocation: Mapping[str, Sequence[tuple[float, float]]],
    gpu: bool,
    preemptions: int,
    evictions: int,
) -> dict[str, Any]:
    """The contract's ``metrics`` document. ``window``: None when the run had no pod;
    ``allocation``: the ratio step functions of ``cpu``, ``memory`` and ``nvidia.com/gpu``."""
    if window is None:
        zero = {"mean": 0.0, "p50": 0.0, "p90": 0.0}
        used: dict[str, Any] = {"mean": 0.0, "max": 0}
        cpu, memory, gpus = dict(zero), dict(zero), (dict(zero) if gpu else None)
        makespan = 0.0
    else:
        start, end = window
        pieces = segments(nodes_used, start, end)
        mean, _ = time_weighted(pieces, ())
        used = {"mean": _r(mean), "max": int(max(v for v, _ in pieces))}
        cpu = _allocation(segments(allocation["cpu"], start, end))
        memory = _allocation(segments(allocation["memory"], start, end))
        gpus = _allocation(segments(allocation["nvidia.com/gpu"], start, end)) if gpu else None
        makespan = _r(end - start)
    return {
        "podsScheduled": scheduled,
        "podsUnschedulable": unschedulable,
        "pendingSeconds": pending_percentiles(pending),
        "nodesUsed": used,
        "cpuAllocation": cpu,
        "memoryAllocation": memory,
        "gpuAllocation": gpus,
        "preemptions": preemptions,
        "evictions": evictions,
        "makespanSeconds": makespan,
    }
