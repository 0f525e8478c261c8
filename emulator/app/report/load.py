"""Reading a finished run for ``python -m emulator report``: the run's JSON report (checked
to be one, and to carry the ``series`` the plots need), and its JSONL trace.

What the trace adds to the page: the write-by-write history of the slowest-to-schedule pods
(each write's simulated time, verb, node, phase and reason/message: the scheduler's failed
attempts, the bind, the kubelet's phase changes, a deletion), so a user sees *why* a pod
waited, not only how long. ``pod_histories`` builds it; the renderer shows it under the
slowest pods' table.

Bad input is a ``ReportError`` (one line: the file, the path inside it, what was expected).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from emulator.base.inputs import InputError

__all__ = ["REQUIRED_KEYS", "ReportError", "check_series", "load_report", "pod_histories", "read_explain", "read_trace"]

REQUIRED_KEYS = ("scenario", "seed", "simulatedSeconds", "passed", "expectations", "traceHash")
"""Keys every run report has had since the first version: their absence means "not a run report"."""

_SERIES_LISTS = ("t", "markers", "slowest")


class ReportError(InputError):
    """A run report or trace that cannot be rendered."""


def load_report(path: Path) -> dict[str, Any]:
    """The parsed run report at ``path``, checked to be a run report with ``series`` v1."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(file, "", "no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ReportError(file, "", f"cannot read: {getattr(err, 'strerror', None) or err}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise ReportError(file, "", f"not JSON: {err.msg}", line=err.lineno, column=err.colno) from None
    if not isinstance(doc, dict):
        raise ReportError(file, "", "expected a run report (a JSON object, as `run --output json` prints)")
    for key in REQUIRED_KEYS:
        if key not in doc:
            raise ReportError(
                file, "", f"not a run report: key {key!r} is missing (expected what `run --output json` prints)"
            )
    if "series" not in doc:
        raise ReportError(
            file,
            "",
            "no 'series': the report was made by an older version of the emulator, before runs collected "
            "their time series; run the scenario again with this version to plot it",
        )
    problem = check_series(doc["series"])
    if problem is not None:
        raise ReportError(file, problem[0], problem[1])
    return doc


def check_series(series: Any) -> tuple[str, str] | None:
    """``(path, what was expected)`` for the first part of ``series`` the renderer cannot
    use, or None when it follows the contract's version 1."""
    if not isinstance(series, dict):
        return "series", "expected an object"
    if series.get("version") != 1:
        return (
            "series.version",
            f"expected 1 (this version of the emulator reads series version 1), got {series.get('version')!r}",
        )
    for key in _SERIES_LISTS:
        if not isinstance(series.get(key), list):
            return f"series.{key}", "expected a list"
    if not isinstance(series.get("pods"), dict):
        return "series.pods", "expected an object of phase → counts"
    for key in ("interval", "end"):
        if not isinstance(series.get(key), int | float):
            return f"series.{key}", "expected a number"
    nodes = series.get("nodes")
    if not isinstance(nodes, dict):
        return "series.nodes", "expected an object"
    for key in ("names", "edges", "resources", "notReady"):
        if not isinstance(nodes.get(key), list):
            return f"series.nodes.{key}", "expected a list"
    allocation = nodes.get("allocation")
    if not isinstance(allocation, dict) or any(not isinstance(allocation.get(r), list) for r in nodes["resources"]):
        return "series.nodes.allocation", "expected an object with a list of base64 rows per resource"
    return _check_cost(series)


def _check_cost(series: dict[str, Any]) -> tuple[str, str] | None:
    """``series.cost`` (absent from reports older than it): its groups' lists align with ``t``."""
    if "cost" not in series:
        return None
    cost, n = series["cost"], len(series["t"])
    if not isinstance(cost, dict) or not isinstance(cost.get("groups"), list):
        return "series.cost", "expected an object with a list of groups"
    aligned = f"expected a list of {n} numbers (one per series.t)"
    for key in ("nodes", "perHour"):
        if not isinstance(cost.get(key), list) or len(cost[key]) != n:
            return f"series.cost.{key}", aligned
    for i, group in enumerate(cost["groups"]):
        if not isinstance(group, dict) or not isinstance(group.get("name"), str) or "kind" not in group:
            return f"series.cost.groups[{i}]", "expected an object with a name and a kind"
        for key in ("nodes", "perHour"):
            if not isinstance(group.get(key), list) or len(group[key]) != n:
                return f"series.cost.groups[{i}].{key}", aligned
    return None


def read_trace(path: Path, *, what: str = "a trace record") -> Iterator[dict[str, Any]]:
    """The trace's records, one JSON object a line (blank lines skipped), read as they are
    consumed: a 1-hour run's trace is millions of lines and the page keeps only the writes
    of a few pods. A bad line raises ``ReportError`` when it is reached."""
    file = str(path)
    try:
        with path.open(encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ReportError(file, "", f"not JSON: {err.msg}", line=number) from None
                if not isinstance(rec, dict):
                    raise ReportError(file, "", f"expected a JSON object ({what})", line=number)
                yield rec
    except FileNotFoundError:
        raise ReportError(file, "", "no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ReportError(file, "", f"cannot read: {getattr(err, 'strerror', None) or err}") from None


def pod_histories(trace: Iterable[dict[str, Any]], pods: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """For each ``ns/name`` in ``pods``, its Pod writes in trace order: ``{t, verb, node,
    phase, reason, message}`` (absent fields as ``""``)."""
    wanted: dict[str, list[dict[str, Any]]] = {p: [] for p in pods}
    for rec in trace:
        if rec.get("kind") != "Pod":
            continue
        key = f"{rec.get('ns', '')}/{rec.get('name', '')}"
        history = wanted.get(key)
        if history is None:
            continue
        history.append(
            {
                "t": rec.get("t", 0.0),
                "verb": str(rec.get("verb", "")),
                "node": str(rec.get("nodeName", "")),
                "phase": str(rec.get("phase", "")),
                "reason": str(rec.get("reason", "")),
                "message": str(rec.get("message", "")),
            }
        )
    return wanted


def read_explain(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a ``run --explain`` file (one JSON object a line), read as consumed."""
    return read_trace(path, what="an explained scheduling attempt")
