"""Quality metrics of one run: time-weighted statistics kept in bounded memory, and the
``metrics`` document.

``TimeWeighted`` accumulates a step function piece by piece (``add(value, duration)``): the
exact time-weighted mean (a running integral), the maximum of the values that lasted, and the
time spent at each value rounded to ``RESOLUTION`` (a dict of at most ``1 / RESOLUTION + 1``
keys for values in [0, 1]), from which ``percentile`` gives the time-weighted nearest rank: the
smallest value ``v`` such that the time spent at values ≤ ``v`` is at least ``q`` % of the
total (the rule of ``emulator.base.runtime.stats`` with durations for counts), within
``RESOLUTION`` of the exact value. A window of length 0 summarises to zeros.

``metrics`` assembles the ``metrics`` document of the contract (``docs/architecture.md``,
"Run metrics and series"): exactly its keys, floats rounded to 6 decimals.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from emulator.base.runtime.stats import QuantileSketch

__all__ = ["PERCENTILES", "RESOLUTION", "TimeWeighted", "add_pieces", "metrics"]

PERCENTILES: Final = (50.0, 90.0)
"""Allocation percentiles (``p50``, ``p90``)."""
RESOLUTION: Final = 1e-4
"""Percentiles of time-weighted values are kept to this resolution (the mean is exact)."""
_SCALE: Final = 10_000
"""Keys are values in units of ``RESOLUTION`` (ints: cheaper to hash than rounded floats)."""
_EPS: Final = 1e-9


def _r(x: float) -> float:
    return round(float(x), 6)


@dataclass(slots=True)
class TimeWeighted:
    """A step function's pieces, summarised (see the module docstring)."""

    total: float = 0.0
    integral: float = 0.0
    peak: float = 0.0
    spent: dict[int, float] = field(default_factory=dict)

    def add(self, value: float, duration: float) -> None:
        if duration <= 0:
            return
        self.total += duration
        self.integral += value * duration
        if value > self.peak:
            self.peak = value
        key = int(value * _SCALE + 0.5)
        spent = self.spent
        spent[key] = spent.get(key, 0.0) + duration

    def with_piece(self, value: float, duration: float) -> TimeWeighted:
        """A copy with one more piece (the tail up to the window's end)."""
        copy = TimeWeighted(self.total, self.integral, self.peak, dict(self.spent))
        copy.add(value, duration)
        return copy

    def mean(self) -> float:
        return self.integral / self.total if self.total > 0 else 0.0

    def percentile(self, q: float) -> float:
        if self.total <= 0:
            return 0.0
        need = self.total * q / 100.0 - _EPS * self.total
        seen = 0.0
        keys = sorted(self.spent)
        for key in keys:
            seen += self.spent[key]
            if seen >= need:
                return key / _SCALE
        return keys[-1] / _SCALE


def add_pieces(summaries: list[TimeWeighted], log: array[float]) -> None:
    """``summaries[i].add(values[i], d)`` for each piece ``(d, *values)`` of ``log`` (flat,
    ``1 + len(summaries)`` numbers a piece, every ``d > 0``), in order, then ``log`` emptied.

    By numpy over the whole log, with the float operations ``add``'s loop makes, in its order:
    the running ``total`` and ``integral`` are sequential accumulations (``np.add.accumulate``
    adds left to right, unlike ``sum``'s pairwise tree), ``value * d`` the same products, each
    key's time added to ``spent`` in the pieces' order (``np.add.at`` applies its indices in
    order), new keys inserted in the order of their first piece. ``bookkeeping.RunBook`` logs
    the cluster's pieces here instead of four ``add`` calls at each change;
    ``tests/scenario/test_observe_pieces.py`` compares the two."""
    if not log:
        return
    rows = np.frombuffer(log, dtype=np.float64).reshape(-1, 1 + len(summaries)).copy()  # (``log`` is resized below)
    d = rows[:, 0]
    for i, summary in enumerate(summaries):
        v = rows[:, 1 + i]
        summary.total = float(np.add.accumulate(np.concatenate(((summary.total,), d)))[-1])
        summary.integral = float(np.add.accumulate(np.concatenate(((summary.integral,), v * d)))[-1])
        peak = float(v.max())
        if peak > summary.peak:
            summary.peak = peak
        keys = (v * _SCALE + 0.5).astype(np.int64)  # ``int()``: truncation, the values are >= 0
        unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        spent = summary.spent
        sums = np.array([spent.get(k, 0.0) for k in unique.tolist()], dtype=np.float64)
        np.add.at(sums, inverse, d)
        for j in np.argsort(first, kind="stable").tolist():
            spent[int(unique[j])] = float(sums[j])
    del log[:]


def _allocation(tw: TimeWeighted) -> dict[str, float]:
    return {"mean": _r(tw.mean()), "p50": _r(tw.percentile(50.0)), "p90": _r(tw.percentile(90.0))}


def metrics(
    *,
    scheduled: int,
    unschedulable: int,
    pending: QuantileSketch,
    window: tuple[float, float] | None,
    nodes_used: TimeWeighted,
    allocation: dict[str, TimeWeighted],
    gpu: bool,
    preemptions: int,
    evictions: int,
) -> dict[str, Any]:
    """The contract's ``metrics`` document. ``window``: None when the run had no pod; the
    ``TimeWeighted`` summaries cover exactly the window; ``allocation`` by resource name."""
    if len(pending):
        pend: dict[str, float | None] = {f"p{q}": _r(pending.quantile(q)) for q in (50, 90, 99)}
    else:
        pend = {"p50": None, "p90": None, "p99": None}
    return {
        "podsScheduled": scheduled,
        "podsUnschedulable": unschedulable,
        "pendingSeconds": pend,
        "nodesUsed": {"mean": _r(nodes_used.mean()), "max": int(nodes_used.peak)},
        "cpuAllocation": _allocation(allocation["cpu"]),
        "memoryAllocation": _allocation(allocation["memory"]),
        "gpuAllocation": _allocation(allocation["nvidia.com/gpu"]) if gpu else None,
        "preemptions": preemptions,
        "evictions": evictions,
        "makespanSeconds": 0.0 if window is None else _r(window[1] - window[0]),
    }
