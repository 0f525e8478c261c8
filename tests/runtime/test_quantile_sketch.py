"""``QuantileSketch``: exact nearest-rank while small, within 1 % of it once bucketed, merge
equal to the union, and bucket keys that need no libm (so every machine agrees)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.runtime.stats import (
    EXACT_CAP,
    RELATIVE_ACCURACY,
    QuantileSketch,
    bucket_of,
    bucket_value,
    percentile,
)

QS = (0.1, 1, 25, 50, 90, 99, 99.9, 100)

# Durations as a run produces them: exact zeros (virtual time), sub-microsecond wall times,
# up to hours.
sample_st = st.one_of(
    st.just(0.0),
    st.floats(min_value=1e-9, max_value=1e5, allow_nan=False, allow_infinity=False),
    st.integers(0, 600).map(lambda i: i * 0.25),
)
samples_st = st.lists(sample_st, min_size=1, max_size=300)


def sketch_of(values: list[float], cap: int) -> QuantileSketch:
    s = QuantileSketch(cap)
    for v in values:
        s.add(v)
    return s


def assert_close(got: float, exact: float) -> None:
    assert abs(got - exact) <= RELATIVE_ACCURACY * exact, (got, exact)


@pytest.mark.parametrize(
    ("values", "cap"),
    [
        pytest.param([], 4, id="empty"),
        pytest.param([3.0, 1.0, 2.0], 4, id="under-cap"),
        pytest.param([float(i) for i in range(1, 5)], 4, id="at-cap"),
        pytest.param([0.0, 0.0, 0.0, 5.0, 7.5], 4, id="zeros-are-exact-past-cap"),
        pytest.param([float(i) for i in range(1, 1001)], 10, id="bucketed"),
    ],
)
def test_examples(values: list[float], cap: int) -> None:
    s = sketch_of(values, cap)
    assert len(s) == len(values)
    assert s.exact == (len(values) <= cap)
    for q in QS:
        exact = percentile(values, q)
        if s.exact:
            assert s.quantile(q) == exact
        else:
            assert_close(s.quantile(q), exact)
            if exact == 0.0:
                assert s.quantile(q) == 0.0


def test_default_cap_keeps_small_runs_exact() -> None:
    values = [i * 0.001 for i in range(EXACT_CAP)]
    s = sketch_of(values, EXACT_CAP)
    assert s.exact
    assert s.quantile(99) == percentile(values, 99)
    s.add(1.0)
    assert not s.exact


@pytest.mark.parametrize("x", [pytest.param(-1.0, id="negative"), pytest.param(math.nan, id="nan")])
def test_rejects_negative_and_nan(x: float) -> None:
    with pytest.raises(ValueError, match="non-negative"):
        QuantileSketch().add(x)


@settings(max_examples=200)
@given(values=samples_st, cap=st.integers(0, 50), q=st.sampled_from(QS))
def test_within_relative_accuracy_of_nearest_rank(values: list[float], cap: int, q: float) -> None:
    s = sketch_of(values, cap)
    exact = percentile(values, q)
    got = s.quantile(q)
    if s.exact:
        assert got == exact
    else:
        assert_close(got, exact)
        assert min(values) <= got <= max(values)


@settings(max_examples=200)
@given(a=samples_st, b=samples_st, cap=st.integers(0, 400))
def test_merge_is_the_union(a: list[float], b: list[float], cap: int) -> None:
    merged = sketch_of(a, cap)
    merged.merge(sketch_of(b, cap))
    whole = sketch_of(a + b, cap)
    assert len(merged) == len(whole)
    for q in QS:
        if merged.exact:
            assert merged.quantile(q) == percentile(a + b, q)
        else:
            # Bucketing is a function of the value, so the union's buckets are the same
            # whichever way the samples arrived.
            assert merged.quantile(q) == sketch_of(a + b, 0).quantile(q)


@given(x=st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_bucket_value_is_within_accuracy(x: float) -> None:
    key = bucket_of(x)
    assert_close(bucket_value(key), x)
    # Keys are ordered as the values are: the sketch walks them in key order.
    assert bucket_of(x * 1.05) > key


def test_bucket_edges_are_powers_of_gamma() -> None:
    # The sub-bucket edges are built by multiplication; they stay within float rounding of
    # 2^(k/35), and the last one is 1.0.
    for k in range(36):
        lo = math.ldexp(1.0, -1) * 2 ** (k / 35)
        assert bucket_value(bucket_of(lo * (1 + 1e-12))) == pytest.approx(lo * 1.0099, rel=0.011)
    assert bucket_of(1.0) == bucket_of(1.0 + 1e-12)
    assert bucket_of(0.999999) < bucket_of(1.0)
