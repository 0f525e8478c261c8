"""``nearest_rank``/``percentile``: upstream's examples, the edge cases, and a property test
against an oracle that states the definition by counting instead of indexing."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.runtime.stats import nearest_rank, percentile


def oracle(values: list[float], q: float) -> float:
    """The smallest value ``v`` such that at least ``q`` percent of the values are ``<= v``."""
    n = len(values)
    return min(v for v in values if Fraction(sum(1 for w in values if w <= v) * 100) >= Fraction(q) * n)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        pytest.param([5.0], 50, 5.0, id="one-value"),
        pytest.param([1.0, 2.0], 50, 1.0, id="two-p50-is-the-lower"),
        pytest.param([1.0, 2.0], 51, 2.0, id="two-p51"),
        pytest.param([float(i) for i in range(1, 11)], 90, 9.0, id="ten-p90"),
        pytest.param([float(i) for i in range(1, 11)], 99, 10.0, id="ten-p99"),
        pytest.param([float(i) for i in range(1, 101)], 7, 7.0, id="q-over-100-inexact-in-binary"),
        pytest.param([float(i) for i in range(1, 101)], 100, 100.0, id="p100-is-the-max"),
        pytest.param([3.0, 1.0, 2.0], 0.1, 1.0, id="tiny-q-is-the-min"),
    ],
)
def test_examples(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == expected
    assert nearest_rank(sorted(values), q) == expected


def test_no_values() -> None:
    assert percentile([], 50) == 0.0
    with pytest.raises(ValueError, match="no values"):
        nearest_rank([], 50)


@pytest.mark.parametrize("q", [pytest.param(0, id="zero"), pytest.param(100.5, id="over-100")])
def test_q_out_of_range(q: float) -> None:
    with pytest.raises(ValueError, match=r"percentile must be in \(0, 100\]"):
        nearest_rank([1.0], q)


values_st = st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1, max_size=60)
q_st = st.one_of(st.integers(1, 100).map(float), st.floats(min_value=0.001, max_value=100.0))


@given(values=values_st, q=q_st)
def test_matches_the_counting_oracle(values: list[float], q: float) -> None:
    assert percentile(values, q) == oracle(values, q)
    assert percentile(values, q) in values
