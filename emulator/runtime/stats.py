"""Nearest-rank percentiles: the one implementation the scheduler's metrics and the benchmark
harness share.

What it owns: ``nearest_rank`` (the rule) and ``percentile`` (sort, then the rule; 0 for no
values). The rule is upstream scheduler_perf's (``test/integration/scheduler_perf/util.go``):
the value at index ``ceil(n · q / 100) - 1`` of the ascending sorted samples, clamped to the
first sample for small ``q``. The rank is computed exactly (``fractions.Fraction``), so a
``q / 100`` that binary floating point cannot hold never moves it by one.

It does not own which quantiles are reported, rounding, or units: its callers
(``agents.scheduler.metrics``, ``emulator.bench.metrics``) do. It lives in the runtime, the
bottom layer, because both an agent and the bench harness above it need it and it depends on
nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

__all__ = ["nearest_rank", "percentile"]


def nearest_rank(ordered: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0 < q ≤ 100) of ``ordered`` (ascending, non-empty)."""
    if not ordered:
        raise ValueError("nearest_rank of no values")
    if not 0 < q <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {q}")
    rank = math.ceil(len(ordered) * Fraction(q) / 100)
    return ordered[max(rank, 1) - 1]


def percentile(values: Sequence[float], q: float) -> float:
    """``nearest_rank`` of ``values`` in any order; 0.0 for no values."""
    return nearest_rank(sorted(values), q) if values else 0.0
