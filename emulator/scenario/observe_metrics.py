"""Quality metrics of one run from the observer's step functions: pure arithmetic, no state.

A step function is two arrays, change times (ascending) and values: ``values[i]`` holds from
``times[i]`` until the next point (several points at one instant: the last one holds), and 0
before the first. Over a window ``[start, end]``:

- ``segments`` cuts it into (value, duration) pieces inside the window;
- ``time_weighted`` gives the time-weighted mean and the time-weighted nearest-rank
  percentiles: the smallest value ``v`` such that the time spent at values ≤ ``v`` is at least
  ``q`` % of the window (the nearest-rank rule of ``emulator.runtime.stats`` with durations
  for counts). A window of length 0 is the value at its start, with weight 1.

Everything is numpy arrays rather than lists of tuples: after a long run the collector's
thresholds are back to normal, and a few hundred thousand surviving tuples would trigger a
full collection of the whole run's heap (seconds, measured: 1.9 s after a 5-minute 1,000-node
churn).

``metrics`` assembles the ``metrics`` document of the contract (``docs/architecture.md``,
"Run metrics and series"): exactly its keys, floats rounded to 6 decimals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["PERCENTILES", "metrics", "pending_percentiles", "segments", "time_weighted"]

PERCENTILES = (50.0, 90.0)
"""Allocation percentiles (``p50``, ``p90``)."""
_EPS = 1e-9


def _r(x: float) -> float:
    return round(float(x), 6)


Array = npt.NDArray[np.float64]


def segments(times: Array, values: Array, start: float, end: float) -> tuple[Array, Array]:
    """(values, durations) of the pieces of the step function (``values[i]`` from
    ``times[i]``) over ``[start, end]``; for a window of length 0, the value at ``start`` with
    duration 1. Pieces of no duration (several points at one instant) are left out."""

    def at(t: Array) -> Array:
        i = np.searchsorted(times, t, side="right") - 1
        return np.where(i >= 0, values[np.maximum(i, 0)] if len(values) else 0.0, 0.0)

    if end <= start:
        return at(np.array([start])), np.ones(1)
    inside = times[(times > start) & (times < end)]
    bounds = np.concatenate(([start], inside, [end]))
    durations = np.diff(bounds)
    keep = durations > 0
    return at(bounds[:-1])[keep], durations[keep]


def time_weighted(
    values: Array, durations: Array, quantiles: Sequence[float] = PERCENTILES
) -> tuple[float, list[float]]:
    """(mean, [percentile for each q]) of pieces of ``values`` lasting ``durations``; (0,
    zeros) when they last nothing."""
    total = float(durations.sum())
    if total <= 0:
        return 0.0, [0.0 for _ in quantiles]
    mean = float((values * durations).sum()) / total
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    cum = np.cumsum(durations[order])
    out = []
    for q in quantiles:
        i = int(np.searchsorted(cum, total * q / 100.0 - _EPS * total, side="left"))
        out.append(float(ordered[min(i, len(ordered) - 1)]))
    return min(max(mean, float(ordered[0])), float(ordered[-1])), out


def pending_percentiles(pending: Array) -> dict[str, float | None]:
    """Nearest-rank p50/p90/p99 of the pending times; nulls when no pod was bound."""
    if not len(pending):
        return {"p50": None, "p90": None, "p99": None}
    ordered = np.sort(pending)
    n = len(ordered)
    return {f"p{q}": _r(ordered[max(math.ceil(n * Fraction(q) / 100), 1) - 1]) for q in (50, 90, 99)}


def _allocation(step: tuple[Array, Array], window: tuple[float, float]) -> dict[str, float]:
    mean, (p50, p90) = time_weighted(*segments(*step, *window))
    return {"mean": _r(mean), "p50": _r(p50), "p90": _r(p90)}


def metrics(
    *,
    scheduled: int,
    unschedulable: int,
    pending: Array,
    window: tuple[float, float] | None,
    nodes_used: tuple[Array, Array],
    allocation: Mapping[str, tuple[Array, Array]],
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
        values, durations = segments(*nodes_used, *window)
        mean, _ = time_weighted(values, durations, ())
        used = {"mean": _r(mean), "max": int(values.max())}
        cpu = _allocation(allocation["cpu"], window)
        memory = _allocation(allocation["memory"], window)
        gpus = _allocation(allocation["nvidia.com/gpu"], window) if gpu else None
        makespan = _r(window[1] - window[0])
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
