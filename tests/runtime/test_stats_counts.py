"""``QuantileSketch.counts``: the samples as (value, how many), exact or bucketed."""

from __future__ import annotations

import pytest

from emulator.base.runtime.stats import RELATIVE_ACCURACY, QuantileSketch


@pytest.mark.parametrize(
    ("cap", "samples", "expected"),
    [
        pytest.param(None, [], [], id="empty"),
        pytest.param(None, [3.0, 1.0, 2.0], [(1.0, 1), (2.0, 1), (3.0, 1)], id="exact-ascending"),
        pytest.param(2, [0.0, 0.0, 1.0], [(0.0, 2), (1.0, 1)], id="bucketed-zeros-then-values"),
    ],
)
def test_counts(cap: int | None, samples: list[float], expected: list[tuple[float, int]]) -> None:
    sketch = QuantileSketch(cap)
    for x in samples:
        sketch.add(x)
    got = sketch.counts()
    assert [n for _, n in got] == [n for _, n in expected]
    for (value, _), (want, _) in zip(got, expected, strict=True):
        assert value == pytest.approx(want, rel=RELATIVE_ACCURACY)


def test_bucketed_counts_add_up() -> None:
    sketch = QuantileSketch(4)
    for i in range(100):
        sketch.add(float(i))
    got = sketch.counts()
    assert sum(n for _, n in got) == 100
    assert [v for v, _ in got] == sorted(v for v, _ in got)
    assert got[-1][0] <= 99.0
