"""Properties of the observer's arithmetic: step-function statistics, histograms, and random
runs fed by hand (time-weighted means between the extremes, allocations within [0, 1] when
no node is overcommitted, histogram counts adding up to the bound pods)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.app.scenario.observe import Observer
from emulator.app.scenario.observe_metrics import RESOLUTION, TimeWeighted
from emulator.app.scenario.observe_series import MAX_BINS, histogram, series
from tests.scenario.test_observe import Feed


@pytest.mark.parametrize(
    ("pieces", "mean", "quantiles", "peak"),
    [
        pytest.param([(0.0, 2.0), (0.25, 8.0)], 0.2, [0.25, 0.25], 0.25, id="one-pod"),
        pytest.param([(0.25, 5.0), (0.5, 5.0)], 0.375, [0.25, 0.5], 0.5, id="half-and-half"),
        pytest.param([(1.0, 9.0), (0.0, 1.0)], 0.9, [1.0, 1.0], 1.0, id="unsorted"),
        pytest.param([(3.0, 0.0), (0.5, 1.0)], 0.5, [0.5, 0.5], 0.5, id="no-duration-no-peak"),
        pytest.param([(0.123456, 1.0)], 0.123456, [0.1235, 0.1235], 0.123456, id="percentiles-to-resolution"),
        pytest.param([], 0.0, [0.0, 0.0], 0.0, id="empty"),
    ],
)
def test_time_weighted(pieces: list[tuple[float, float]], mean: float, quantiles: list[float], peak: float) -> None:
    tw = TimeWeighted()
    for value, duration in pieces:
        tw.add(value, duration)
    assert tw.mean() == pytest.approx(mean)
    assert [tw.percentile(50.0), tw.percentile(90.0)] == quantiles
    assert tw.peak == peak


@pytest.mark.parametrize(
    ("values", "edges_tail", "counts"),
    [
        pytest.param([], [0.0, 2**-10], [0], id="empty"),
        pytest.param([0.0, 0.0], [0.0, 2**-10], [2], id="zeros"),
        pytest.param([1.0], [1.0, 2.0], None, id="power-of-two-opens-its-bin"),
        pytest.param([3.0, 0.0001], [2.0, 4.0], None, id="below-the-first-edge"),
    ],
)
def test_histogram(values: list[float], edges_tail: list[float], counts: list[int] | None) -> None:
    h = histogram(values)
    assert h["edges"][0] == 0.0
    assert h["edges"][-len(edges_tail) :] == edges_tail
    assert len(h["counts"]) == len(h["edges"]) - 1
    assert sum(h["counts"]) == len(values)
    if counts is not None:
        assert h["counts"] == counts
    for v in values:
        i = next(i for i in range(len(h["counts"])) if v < h["edges"][i + 1] or i == len(h["counts"]) - 1)
        assert h["edges"][i] <= v


@given(st.lists(st.floats(min_value=0, max_value=1e9, allow_nan=False), max_size=50))
def test_histogram_bins_are_bounded_and_complete(values: list[float]) -> None:
    h = histogram(values)
    assert len(h["counts"]) <= MAX_BINS
    assert sum(h["counts"]) == len(values)
    assert max(values, default=0.0) <= h["edges"][-1]


# A random run: pods (create, wait before bind or never, run time, node, cpu); nodes are big
# enough for every pod at once, so no allocation exceeds 1.
pods_strategy = st.lists(
    st.tuples(
        st.integers(0, 50),
        st.one_of(st.none(), st.integers(0, 20)),
        st.one_of(st.none(), st.integers(0, 40)),
        st.integers(0, 2),
        st.integers(1, 4),
    ),
    max_size=12,
)


def random_run(pods: list[tuple[int, int | None, int | None, int, int]]) -> tuple[Feed, int]:
    feed = Feed(Observer())
    for n in range(3):
        feed.node(0.0, f"n{n}", cpu=str(4 * max(1, len(pods))), memory="1Gi")
    events: list[tuple[float, int, str, dict[str, object]]] = []
    for i, (created, wait, runs, node, _cpu) in enumerate(pods):
        if wait is not None:
            events.append((created + wait, 1, f"p{i}", {"node": f"n{node}", "phase": "Running"}))
            if runs is not None:
                events.append((created + wait + runs, 2, f"p{i}", {"phase": "Succeeded"}))
    for i, (created, *_rest, cpu) in enumerate(pods):
        events.append((float(created), 0, f"p{i}", {"cpu": str(cpu)}))
    for t, order, name, what in sorted(events, key=lambda e: (e[0], e[1], e[2])):
        if order == 0:
            feed.pod(t, name, cpu=what["cpu"])
        else:
            feed.change(t, name, **what)
    return feed, sum(1 for p in pods if p[1] is not None)


@settings(max_examples=60, deadline=None)
@given(pods_strategy)
def test_random_runs(pods: list[tuple[int, int | None, int | None, int, int]]) -> None:
    feed, bound = random_run(pods)
    end = 120.0  # after every write: created <= 50, then waits <= 20, runs <= 40
    m = feed.obs.metrics(end)
    assert m["podsScheduled"] == bound
    assert m["podsUnschedulable"] == len(pods) - bound
    for key in ("cpuAllocation", "memoryAllocation"):
        a = m[key]
        assert 0.0 <= a["p50"] <= a["p90"] <= 1.0
        assert 0.0 <= a["mean"] <= 1.0
    assert 0.0 <= m["nodesUsed"]["mean"] <= m["nodesUsed"]["max"] <= 3
    s = series(feed.obs, end)
    assert sum(s["pendingSeconds"]["counts"]) == bound
    k = len(s["nodes"]["edges"]) - 1
    for row in s["nodes"]["allocation"]["cpu"]:
        decoded = base64.b64decode(row)
        assert len(decoded) == k
        assert all(b <= 200 for b in decoded)
    lengths = {len(s["t"]), *(len(v) for v in s["pods"].values())}
    assert lengths == {int(end) + 1}
    assert sum(s["pods"][phase][-1] for phase in s["pods"]) == len(pods)


@given(
    st.lists(
        st.tuples(st.floats(0, 1, allow_nan=False), st.floats(0.001, 100, allow_nan=False)), min_size=1, max_size=30
    )
)
def test_time_weighted_mean_between_extremes(pieces: list[tuple[float, float]]) -> None:
    tw = TimeWeighted()
    for value, duration in pieces:
        tw.add(value, duration)
    values = [v for v, _ in pieces]
    assert min(values) - 1e-12 <= tw.mean() <= max(values) + 1e-12
    p50, p90 = tw.percentile(50.0), tw.percentile(90.0)
    assert p50 <= p90
    for p in (p50, p90):
        assert any(abs(p - v) <= RESOLUTION / 2 + 1e-12 for v in values)
