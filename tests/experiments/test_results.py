"""``experiments.results``: the hunt's and compare's rows, CSV and Parquet, and bad paths."""

from __future__ import annotations

import builtins
import csv
from pathlib import Path
from typing import Any

import pytest

from emulator.app.experiments.hunt import HuntReport, SeedOutcome
from emulator.app.experiments.results import (
    COMPARE_COLUMNS,
    HUNT_COLUMNS,
    ResultsError,
    check_results_path,
    compare_rows,
    hunt_rows,
    write_results,
)

METRICS: dict[str, Any] = {
    "podsScheduled": 4,
    "podsUnschedulable": 1,
    "pendingSeconds": {"p50": 0.5, "p90": 1.25, "p99": None},
    "nodesUsed": {"mean": 1.5, "max": 2},
    "cpuAllocation": {"mean": 0.5, "p50": 0.5, "p90": 0.75},
    "memoryAllocation": {"mean": 0.25, "p50": 0.25, "p90": 0.5},
    "gpuAllocation": None,
    "preemptions": 0,
    "evictions": 0,
    "makespanSeconds": 30.0,
}

DOC: dict[str, Any] = {
    "scenario": "s",
    "seeds": [0, 1],
    "variants": [
        {
            "config": "a.yaml",
            "perSeed": [
                {"seed": 0, "metrics": METRICS, "traceHash": "h0", "passed": True},
                {"seed": 1, "metrics": None, "traceHash": None, "passed": False, "error": "RuntimeError: boom"},
            ],
        },
        {"config": "scenario", "perSeed": [{"seed": 0, "metrics": METRICS, "traceHash": "h2", "passed": False}]},
    ],
}


def hunt_report() -> HuntReport:
    report = HuntReport("s", "s.yaml", 4)
    report.outcomes = [SeedOutcome(0, True), SeedOutcome(2, False, "invariant x: y", 3.5)]
    report.crashed = [1]
    return report


def test_hunt_rows_by_seed() -> None:
    assert hunt_rows(hunt_report()) == [
        {"seed": 0, "passed": True, "reason": None, "t": None},
        {"seed": 1, "passed": False, "reason": "crashed: the worker process died twice", "t": None},
        {"seed": 2, "passed": False, "reason": "invariant x: y", "t": 3.5},
    ]


def test_compare_rows_flatten_the_metrics() -> None:
    rows = compare_rows(DOC)
    assert [(r["config"], r["seed"]) for r in rows] == [("a.yaml", 0), ("a.yaml", 1), ("scenario", 0)]
    assert rows[0]["pendingSeconds.p90"] == 1.25
    assert rows[0]["gpuAllocation.mean"] is None
    assert rows[1]["error"] == "RuntimeError: boom"
    assert rows[1]["podsScheduled"] is None
    assert set(rows[0]) == {c.name for c in COMPARE_COLUMNS}


def test_csv(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    write_results(path, COMPARE_COLUMNS, compare_rows(DOC))
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3
    assert rows[0]["config"] == "a.yaml"
    assert rows[0]["passed"] == "true"
    assert rows[0]["podsScheduled"] == "4.0"
    assert rows[0]["pendingSeconds.p99"] == ""
    assert rows[1]["error"] == "RuntimeError: boom"


def test_hunt_csv(tmp_path: Path) -> None:
    path = tmp_path / "r.CSV"
    write_results(path, HUNT_COLUMNS, hunt_rows(hunt_report()))
    assert path.read_text().splitlines() == [
        "seed,passed,reason,t",
        "0,true,,",
        "1,false,crashed: the worker process died twice,",
        "2,false,invariant x: y,3.5",
    ]


def test_parquet(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "r.parquet"
    write_results(path, COMPARE_COLUMNS, compare_rows(DOC))
    table = pq.read_table(path)
    assert table.column_names == [c.name for c in COMPARE_COLUMNS]
    assert str(table.schema.field("seed").type) == "int64"
    assert str(table.schema.field("passed").type) == "bool"
    assert str(table.schema.field("nodesUsed.max").type) == "double"
    assert table.column("pendingSeconds.p90").to_pylist() == [1.25, None, 1.25]
    assert table.column("traceHash").to_pylist() == ["h0", None, "h2"]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("r.json", id="json"),
        pytest.param("r", id="no-suffix"),
        pytest.param("r.csv.gz", id="compressed"),
    ],
)
def test_bad_suffix(tmp_path: Path, name: str) -> None:
    with pytest.raises(ResultsError, match=r"^--results .*: expected a file name ending in \.csv or \.parquet$"):
        check_results_path(tmp_path / name)


def test_parquet_without_pyarrow(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == "pyarrow":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(
        ResultsError, match=r"needs pyarrow; install the parquet extra: pip install 'kube-emulator\[parquet\]'"
    ):
        check_results_path(tmp_path / "r.parquet")


def test_unwritable(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match=r"^--results .*missing/r\.csv: cannot write the results: No such file"):
        write_results(tmp_path / "missing" / "r.csv", HUNT_COLUMNS, [])
