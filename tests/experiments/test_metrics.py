"""``experiments.metrics``: means and population spreads over runs in the metrics' own shapes,
nulls left out, flattened columns, and the best value of a row."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.app.experiments.metrics import FIELDS, aggregate, best, flatten, lookup


def metrics(**over: Any) -> dict[str, Any]:
    """A run's metrics (contract section 1) with some values replaced."""
    doc: dict[str, Any] = {
        "podsScheduled": 10,
        "podsUnschedulable": 0,
        "pendingSeconds": {"p50": 1.0, "p90": 2.0, "p99": 3.0},
        "nodesUsed": {"mean": 2.5, "max": 3},
        "cpuAllocation": {"mean": 0.5, "p50": 0.5, "p90": 0.75},
        "memoryAllocation": {"mean": 0.25, "p50": 0.25, "p90": 0.5},
        "gpuAllocation": None,
        "preemptions": 0,
        "evictions": 0,
        "makespanSeconds": 100.0,
    }
    doc.update(over)
    return doc


@pytest.mark.parametrize(
    ("runs", "name", "mean", "spread"),
    [
        pytest.param([metrics(podsScheduled=10), metrics(podsScheduled=14)], "podsScheduled", 12.0, 2.0, id="count"),
        pytest.param([metrics()], "nodesUsed.mean", 2.5, 0.0, id="one-run-spread-0"),
        pytest.param(
            [metrics(nodesUsed={"mean": 1.0, "max": 1}), metrics(nodesUsed={"mean": 2.0, "max": 3})],
            "nodesUsed.max",
            2.0,
            1.0,
            id="nested",
        ),
        pytest.param(
            [metrics(pendingSeconds={"p50": None, "p90": None, "p99": None}), metrics()],
            "pendingSeconds.p90",
            2.0,
            0.0,
            id="null-percentile-left-out",
        ),
        pytest.param(
            [metrics(pendingSeconds={"p50": None, "p90": None, "p99": None})] * 2,
            "pendingSeconds.p99",
            None,
            None,
            id="all-null-stays-null",
        ),
        pytest.param([metrics(), metrics()], "gpuAllocation.mean", None, None, id="no-gpu"),
        pytest.param(
            [metrics(gpuAllocation={"mean": 0.2, "p50": 0.0, "p90": 0.5}), metrics()],
            "gpuAllocation.mean",
            0.2,
            0.0,
            id="gpu-in-one-run",
        ),
        pytest.param(
            [metrics(makespanSeconds=1.0), metrics(makespanSeconds=2.0), metrics(makespanSeconds=2.0)],
            "makespanSeconds",
            1.666667,
            0.471405,
            id="rounded-6",
        ),
    ],
)
def test_aggregate(runs: list[dict[str, Any]], name: str, mean: float | None, spread: float | None) -> None:
    means, spreads = aggregate(runs)
    assert lookup(means, name) == mean
    assert lookup(spreads, name) == spread


def test_aggregate_keeps_the_shape() -> None:
    means, spreads = aggregate([metrics(), metrics(podsScheduled=12)])
    assert means is not None
    assert spreads is not None
    assert list(means) == list(metrics())
    assert means["pendingSeconds"] == {"p50": 1.0, "p90": 2.0, "p99": 3.0}
    assert isinstance(means["podsScheduled"], float)
    assert spreads["pendingSeconds"] == {"p50": 0.0, "p90": 0.0, "p99": 0.0}


def test_aggregate_of_no_run_is_null() -> None:
    assert aggregate([]) == (None, None)


def test_aggregate_refuses_a_string() -> None:
    with pytest.raises(ValueError, match="expected numbers or mappings"):
        aggregate([metrics(podsScheduled="ten")])


def test_flatten_names_every_field() -> None:
    flat = flatten(metrics())
    assert list(flat) == [f.name for f in FIELDS]
    assert flat["pendingSeconds.p90"] == 2.0
    assert flat["gpuAllocation.p50"] is None
    assert flatten(None)["podsScheduled"] is None


def field(name: str) -> Any:
    return next(f for f in FIELDS if f.name == name)


@pytest.mark.parametrize(
    ("name", "values", "want"),
    [
        pytest.param("nodesUsed.mean", [3.0, 2.0, 4.0], 1, id="fewer-nodes"),
        pytest.param("cpuAllocation.mean", [0.3, 0.8], 1, id="higher-allocation"),
        pytest.param("podsScheduled", [10.0, 9.0], 0, id="more-scheduled"),
        pytest.param("pendingSeconds.p90", [5.0, 1.0], 1, id="less-pending"),
        pytest.param("podsUnschedulable", [0.0, 2.0], 0, id="fewer-unschedulable"),
        pytest.param("makespanSeconds", [100.0, 90.0], 1, id="shorter-makespan"),
        pytest.param("preemptions", [1.0, 1.0], None, id="tie-no-mark"),
        pytest.param("evictions", [0.0, 0.0, 1.0], None, id="tie-for-best-no-mark"),
        pytest.param("pendingSeconds.p99", [None, 2.0], None, id="one-value-no-mark"),
        pytest.param("pendingSeconds.p50", [None, 2.0, 1.0], 2, id="null-ignored"),
    ],
)
def test_best(name: str, values: list[float | None], want: int | None) -> None:
    assert best(values, field(name)) == want
