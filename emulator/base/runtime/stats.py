"""Nearest-rank percentiles: the one rule the scheduler's metrics and the benchmark harness
share, and ``QuantileSketch``, its bounded-memory form for samples that accumulate over a run.

What it owns: ``nearest_rank`` (the rule) and ``percentile`` (sort, then the rule; 0 for no
values). The rule is upstream scheduler_perf's (``test/integration/scheduler_perf/util.go``):
the value at index ``ceil(n · q / 100) - 1`` of the ascending sorted samples, clamped to the
first sample for small ``q``. The rank is computed exactly (``fractions.Fraction``), so a
``q / 100`` that binary floating point cannot hold never moves it by one.

``QuantileSketch`` (one per metric, one sample per attempt or pod): exact while it holds at
most ``EXACT_CAP`` samples, so every report of a small run is the plain rule's; past it, a
log-bucketed sketch in DDSketch's manner (a count per bucket ``[γ^i, γ^(i+1))`` with
``γ = 2^(1/35)``, an exact zero bucket, exact min and max), whose nearest-rank answer is
within ``RELATIVE_ACCURACY`` (1 %) of the exact one. Its memory is bounded by the samples'
dynamic range (35 buckets per power of two actually seen), not by their number. The bucket
of a sample comes from ``math.frexp`` and a table built by IEEE multiplications only, so it
is the same on every machine (no ``math.log``). Merging two sketches is the union of their
samples (``tests/runtime/test_quantile_sketch.py`` checks both properties with hypothesis).

It does not own which quantiles are reported, rounding, or units: its callers
(``agents.scheduler.metrics``, ``emulator.app.bench.metrics``) do. It lives in the runtime, the
bottom layer, because both an agent and the bench harness above it need it and it depends on
nothing.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from fractions import Fraction
from typing import Final

__all__ = [
    "EXACT_CAP",
    "RELATIVE_ACCURACY",
    "QuantileSketch",
    "bucket_of",
    "bucket_value",
    "nearest_rank",
    "percentile",
]


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


# --- streaming quantiles ------------------------------------------------------------------

EXACT_CAP = 4096
"""How many samples a ``QuantileSketch`` keeps exactly before it switches to buckets."""

SUB_BUCKETS: Final = 35
"""Buckets per power of two: ``γ = 2^(1/35) ≈ 1.0200``, relative accuracy ``(γ-1)/(γ+1) < 1 %``."""

RELATIVE_ACCURACY: Final = 0.01
"""The bound a bucketed quantile keeps to: ``|estimate - exact| ≤ 1 % · exact``."""

_GAMMA: Final = 1.020001609421199  # 2 ** (1 / SUB_BUCKETS), as a literal: no libm in the rule


def _boundaries() -> tuple[float, ...]:
    """Lower edges of the sub-buckets of a mantissa in [0.5, 1), then 1.0: products of IEEE
    multiplications only, so the same on every machine."""
    edges = [0.5]
    for _ in range(SUB_BUCKETS - 1):
        edges.append(edges[-1] * _GAMMA)
    edges.append(1.0)
    return tuple(edges)


_EDGES: Final = _boundaries()


def bucket_of(x: float) -> int:
    """The bucket key of ``x > 0``: ``exponent · SUB_BUCKETS + sub-bucket`` of ``frexp(x)``."""
    mantissa, exponent = math.frexp(x)
    return exponent * SUB_BUCKETS + bisect_right(_EDGES, mantissa) - 1


def bucket_value(key: int) -> float:
    """The value a bucket stands for: the harmonic mean of its edges, within
    ``RELATIVE_ACCURACY`` of any value in it."""
    exponent, sub = divmod(key, SUB_BUCKETS)
    lo, hi = _EDGES[sub], _EDGES[sub + 1]
    return math.ldexp(2 * lo * hi / (lo + hi), exponent)


class QuantileSketch:
    """Non-negative samples, for nearest-rank percentiles in bounded memory.

    Up to ``cap`` samples (default ``EXACT_CAP``, read when the sketch is made) it keeps them
    all (an ``array('d')``, 8 bytes each) and answers
    exactly as ``percentile`` does. Past ``cap`` it keeps only a count per logarithmic bucket
    (DDSketch's rule with ``γ = 2^(1/35)``, bucket keys from ``frexp`` and a fixed edge table,
    so no libm rounding can move a sample between machines), an exact count of zeros, and the
    exact minimum and maximum: ``quantile`` is then within ``RELATIVE_ACCURACY`` of the exact
    nearest-rank value and never outside [min, max]. ``merge`` is the union of the samples:
    ``a.merge(b)`` answers as one sketch fed both streams would (bucket counts add).
    """

    __slots__ = ("_buckets", "_exact", "_max", "_min", "_zeros", "cap", "count")

    def __init__(self, cap: int | None = None) -> None:
        self.cap = EXACT_CAP if cap is None else cap
        self.count = 0
        self._exact: array[float] | None = array("d")
        self._buckets: dict[int, int] = {}
        self._zeros = 0
        self._min = math.inf
        self._max = -math.inf

    def __repr__(self) -> str:
        mode = "exact" if self._exact is not None else f"{len(self._buckets)} buckets"
        return f"<QuantileSketch n={self.count} {mode}>"

    def __len__(self) -> int:
        return self.count

    @property
    def exact(self) -> bool:
        """Whether every sample is still kept (quantiles are exact)."""
        return self._exact is not None

    def add(self, x: float) -> None:
        if not x >= 0.0:
            raise ValueError(f"QuantileSketch takes non-negative samples, got {x}")
        self.count += 1
        if x < self._min:
            self._min = x
        if x > self._max:
            self._max = x
        if self._exact is not None:
            self._exact.append(x)
            if len(self._exact) > self.cap:
                self._to_buckets()
        elif x == 0.0:  # ``_put(x, 1)`` written out (five samples a churn pod, most of them 0)
            self._zeros += 1
        else:
            key = bucket_of(x)
            self._buckets[key] = self._buckets.get(key, 0) + 1

    def _put(self, x: float, n: int) -> None:
        if x == 0.0:
            self._zeros += n
        else:
            key = bucket_of(x)
            self._buckets[key] = self._buckets.get(key, 0) + n

    def _to_buckets(self) -> None:
        samples, self._exact = self._exact, None
        assert samples is not None
        for x in samples:
            self._put(x, 1)

    def merge(self, other: QuantileSketch) -> None:
        """Add ``other``'s samples to this sketch (``other`` is unchanged)."""
        self.count += other.count
        self._min = min(self._min, other._min)
        self._max = max(self._max, other._max)
        if self._exact is not None and other._exact is not None and len(self._exact) + len(other._exact) <= self.cap:
            self._exact.extend(other._exact)
            return
        if self._exact is not None:
            self._to_buckets()
        if other._exact is not None:
            for x in other._exact:
                self._put(x, 1)
        else:
            self._zeros += other._zeros
            for key, n in other._buckets.items():
                self._buckets[key] = self._buckets.get(key, 0) + n

    def counts(self) -> list[tuple[float, int]]:
        """The samples as (value, how many), ascending: each sample while exact; past ``cap``,
        each bucket's value (within ``RELATIVE_ACCURACY``, clamped to [min, max]) and zeros."""
        if self._exact is not None:
            return [(x, 1) for x in sorted(self._exact)]
        out = [(0.0, self._zeros)] if self._zeros else []
        out += [(min(max(bucket_value(k), self._min), self._max), self._buckets[k]) for k in sorted(self._buckets)]
        return out

    def quantile(self, q: float) -> float:
        """The nearest-rank ``q``-th percentile (0 < q ≤ 100); 0.0 for no samples."""
        if self._exact is not None:
            return percentile(self._exact, q)
        if not 0 < q <= 100:
            raise ValueError(f"percentile must be in (0, 100], got {q}")
        rank = max(math.ceil(self.count * Fraction(q) / 100), 1)
        seen = self._zeros
        if rank <= seen:
            return 0.0
        for key in sorted(self._buckets):
            seen += self._buckets[key]
            if rank <= seen:
                return min(max(bucket_value(key), self._min), self._max)
        raise AssertionError("bucket counts do not add up to the sample count")
