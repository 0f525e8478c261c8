"""A sweep's runs as a table for pandas/polars users: ``--results PATH.csv`` or ``PATH.parquet``.

What it owns: the accepted suffixes (``check_results_path``, called before any run so a bad
path costs nothing), the rows of a hunt (``hunt_rows``: one per seed that completed or crashed:
``seed, passed, reason, t``) and of a comparison (``compare_rows``: one per (variant, seed):
``config, seed, passed, traceHash, error``, then every metric flattened as ``pendingSeconds.p90``
columns, empty where null), and writing them (``write_results``: CSV with the stdlib, Parquet
with pyarrow, an optional extra). It does not own the runs nor their JSON reports.

Columns are typed (``Column``): Parquet gets ``int64``, ``double``, ``bool`` and ``string``
columns, nullable; CSV writes ``true``/``false`` for booleans and nothing for a null. Rows come in
the reports' order (by seed; by variant, then seed), so the same sweep gives the same file.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from emulator.app.experiments.hunt import HuntReport
from emulator.app.experiments.metrics import FIELDS, flatten
from emulator.base.inputs import PlainInputError

__all__ = [
    "COMPARE_COLUMNS",
    "HUNT_COLUMNS",
    "PARQUET_EXTRA",
    "SUFFIXES",
    "Column",
    "ResultsError",
    "check_results_path",
    "compare_rows",
    "hunt_rows",
    "write_results",
]

SUFFIXES: Final = (".csv", ".parquet")
PARQUET_EXTRA: Final = "pip install 'kube-emulator[parquet]'"


class ResultsError(PlainInputError):
    """A ``--results`` path that cannot be written (``error: ...``, exit 2)."""


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: Literal["int", "float", "bool", "str"]


HUNT_COLUMNS: Final = (Column("seed", "int"), Column("passed", "bool"), Column("reason", "str"), Column("t", "float"))
COMPARE_COLUMNS: Final = (
    Column("config", "str"),
    Column("variant", "str"),
    Column("gpuSharing", "str"),
    Column("seed", "int"),
    Column("passed", "bool"),
    Column("traceHash", "str"),
    Column("error", "str"),
    *(Column(f.name, "float") for f in FIELDS),
)
"""Metric columns are floats: a count's column then has one type whether or not a run is null."""


def check_results_path(path: Path) -> None:
    """A ``.csv`` or ``.parquet`` path (and pyarrow installed for the latter)."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ResultsError(f"--results {path}: expected a file name ending in .csv or .parquet")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ResultsError(
                f"--results {path}: writing Parquet needs pyarrow; install the parquet extra: {PARQUET_EXTRA}"
            ) from None


def hunt_rows(report: HuntReport) -> list[dict[str, Any]]:
    """One row per seed of a ``HuntReport`` that completed or crashed, by seed."""
    rows = [{"seed": o.seed, "passed": o.passed, "reason": o.reason or None, "t": o.t} for o in report.outcomes]
    rows += [
        {"seed": s, "passed": False, "reason": "crashed: the worker process died twice", "t": None}
        for s in report.crashed
    ]
    return sorted(rows, key=lambda r: int(r["seed"]))


def compare_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per (variant, seed) of a comparison document (``compare_doc``)."""
    rows: list[dict[str, Any]] = []
    for variant in doc["variants"]:
        for entry in variant["perSeed"]:
            row = {
                "config": variant["config"],
                "variant": variant.get("variant"),
                "gpuSharing": variant.get("gpuSharing"),
                "seed": entry["seed"],
                "passed": entry["passed"],
                "traceHash": entry["traceHash"],
                "error": entry.get("error"),
            }
            row.update(flatten(entry["metrics"]))
            rows.append(row)
    return rows


def _cell(value: Any, column: Column) -> Any:
    if value is None:
        return None
    if column.type == "float":
        return float(value)
    if column.type == "int":
        return int(value)
    if column.type == "bool":
        return bool(value)
    return str(value)


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def write_results(path: Path, columns: Sequence[Column], rows: Sequence[Mapping[str, Any]]) -> None:
    """Write ``rows`` (keyed by column name) to ``path``, CSV or Parquet by its suffix."""
    check_results_path(path)
    table = [[_cell(row.get(c.name), c) for c in columns] for row in rows]
    try:
        if path.suffix.lower() == ".csv":
            with path.open("w", newline="", encoding="utf-8") as f:
                writer = csv.writer(f, lineterminator="\n")
                writer.writerow([c.name for c in columns])
                writer.writerows([_csv_text(v) for v in line] for line in table)
        else:
            _write_parquet(path, columns, table)
    except OSError as err:
        raise ResultsError(f"--results {path}: cannot write the results: {err.strerror or err}") from None


def _write_parquet(path: Path, columns: Sequence[Column], table: Sequence[Sequence[Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "str": pa.string()}
    schema = pa.schema([pa.field(c.name, types[c.type], nullable=True) for c in columns])
    arrays = [pa.array([line[i] for line in table], type=types[c.type]) for i, c in enumerate(columns)]
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), str(path))
