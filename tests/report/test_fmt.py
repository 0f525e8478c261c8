"""The report's formatting helpers and the one "which direction is better" rule."""

from __future__ import annotations

import json

import pytest

from emulator.app.report.fmt import BETTER, best_index, fmt_duration, fmt_number, metric_rows, script_json, time_ticks


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(0.0, "0s", id="zero"),
        pytest.param(0.0021, "2.1ms", id="milliseconds"),
        pytest.param(0.25, "250ms", id="sub-second"),
        pytest.param(3.2, "3.2s", id="seconds-decimal"),
        pytest.param(45.0, "45s", id="seconds"),
        pytest.param(90.0, "1m30s", id="minutes-seconds"),
        pytest.param(180.0, "3m", id="whole-minutes"),
        pytest.param(3600.0, "1h00m", id="hour"),
        pytest.param(7505.0, "2h05m05s", id="hours-minutes-seconds"),
        pytest.param(-90.0, "-1m30s", id="negative"),
    ],
)
def test_fmt_duration(seconds: float, text: str) -> None:
    assert fmt_duration(seconds) == text


@pytest.mark.parametrize(
    ("start", "end", "ticks"),
    [
        pytest.param(0.0, 211.0, [0.0, 30.0, 60.0, 90.0, 120.0, 150.0, 180.0, 210.0], id="faults-demo"),
        pytest.param(0.0, 3600.0, [0.0, 600.0, 1200.0, 1800.0, 2400.0, 3000.0, 3600.0], id="hour"),
        pytest.param(0.0, 10.0, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0], id="ten-seconds"),
        pytest.param(5.0, 5.0, [5.0], id="empty-span"),
    ],
)
def test_time_ticks(start: float, end: float, ticks: list[float]) -> None:
    assert time_ticks(start, end) == ticks


@pytest.mark.parametrize(
    ("key", "values", "best"),
    [
        pytest.param("nodesUsed.mean", [3.0, 2.0, 2.5], 1, id="lower"),
        pytest.param("nodesUsed.mean", [3.0, 2.0, 2.0], None, id="tie-for-best-unmarked"),
        pytest.param("podsScheduled", [10, 12], 1, id="higher"),
        pytest.param("cpuAllocation.p90", [0.5, 0.4], 0, id="allocation-higher"),
        pytest.param("pendingSeconds.p99", [None, 2.0, 1.0], 2, id="null-left-out"),
        pytest.param("pendingSeconds.p99", [float("nan"), 2.0, 3.0], 1, id="nan-left-out"),
        pytest.param("pendingSeconds.p99", [None, 2.0], None, id="one-number"),
        pytest.param("evictions", [1, 1], None, id="all-equal"),
        pytest.param("makespanSeconds", [529.73, 529.74], None, id="within-tolerance-ties"),
        pytest.param("makespanSeconds", [529.73, 530.3], 0, id="beyond-tolerance-wins"),
        pytest.param("pendingSeconds.p50", [0.00708, 0.00690], 1, id="small-values-relative"),
        pytest.param("preemptions", [0, 0.0000000000001], None, id="zero-absolute-tolerance"),
        pytest.param("somethingElse", [1, 2], None, id="no-direction"),
    ],
)
def test_best_index(key: str, values: list[float | None], best: int | None) -> None:
    assert best_index(key, values) == best


def test_better_covers_every_contract_metric() -> None:
    assert set(BETTER) == {
        "podsScheduled",
        "podsUnschedulable",
        "pendingSeconds",
        "nodesUsed",
        "cpuAllocation",
        "memoryAllocation",
        "gpuAllocation",
        "preemptions",
        "evictions",
        "makespanSeconds",
        "cost",
    }


def test_metric_rows_flatten_groups_and_keep_null_groups() -> None:
    assert metric_rows({"a": 1, "b": {"p50": 2, "p90": None}, "c": None}) == [
        ("a", 1),
        ("b.p50", 2),
        ("b.p90", None),
        ("c", None),
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(None, "—", id="null"),
        pytest.param(1234567, "1,234,567", id="int"),
        pytest.param(2.0, "2", id="whole-float"),
        pytest.param(0.012345, "0.01235", id="small-float"),
        pytest.param(True, "yes", id="bool"),
    ],
)
def test_fmt_number(value: object, text: str) -> None:
    assert fmt_number(value) == text


def test_script_json_cannot_close_its_script_element() -> None:
    text = script_json({"name": "</script><script>alert(1)</script>", "amp": "&"})
    assert "<" not in text
    assert "&" not in text
    assert json.loads(text) == {"name": "</script><script>alert(1)</script>", "amp": "&"}
