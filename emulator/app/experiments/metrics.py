"""A run's quality metrics seen from a sweep: their fields, their mean and spread over seeds, their
flat column names, and which value of a row is best.

What it owns: ``FIELDS`` (every number of a run's ``metrics``, contract section 1, as a dotted
name with its type and its better direction), ``aggregate`` (means and population standard
deviations over runs, in the metrics' own shapes), ``flatten`` (a metrics dict as
``{"pendingSeconds.p90": value}`` columns) and ``best`` (the index of a row's best variant). It
does not own collecting the metrics (the runner's observer) nor printing them (``commands``).

Aggregation. Each number is averaged over the runs that have it: a ``null`` percentile (a run
that bound no pod) or a ``null`` ``gpuAllocation`` (no GPU node) is left out of the mean, and a
value null in every run stays null. Means and spreads are floats rounded to 6 decimals (the
metrics' own rounding); the spread is the population standard deviation (0 for one run). The
result depends only on the runs' order, which the callers fix (by seed), so the same seeds give
byte-identical JSON on any executor.

Better direction, per field: ``emulator.app.report.BETTER``, the one rule the HTML compare table
uses too (fewer unschedulable pods, less pending, fewer nodes, higher allocation, fewer
preemptions and evictions, a shorter makespan, fewer dollars and node-hours; more pods scheduled); ``best`` is its
``best_index``.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from emulator.app.report import BETTER, best_index

__all__ = ["FIELDS", "Field", "aggregate", "best", "flatten", "lookup"]


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    """Dotted: ``pendingSeconds.p90``."""
    integer: bool
    """A count in one run (its mean over runs is still a float)."""
    better: Literal["higher", "lower"]


def _fields() -> tuple[Field, ...]:
    def field(name: str, integer: bool) -> Field:
        return Field(name, integer, BETTER[name.split(".", 1)[0]])

    out: list[Field] = [field("podsScheduled", True), field("podsUnschedulable", True)]
    out += [field(f"pendingSeconds.{p}", False) for p in ("p50", "p90", "p99")]
    out += [field("nodesUsed.mean", False), field("nodesUsed.max", True)]
    for resource in ("cpu", "memory", "gpu"):
        out += [field(f"{resource}Allocation.{s}", False) for s in ("mean", "p50", "p90")]
    out += [field("preemptions", True), field("evictions", True)]
    out.append(field("makespanSeconds", False))
    out += [field(f"cost.{name}", False) for name in ("total", "nodeHours", "perHour.mean", "perHour.max")]
    return tuple(out)


FIELDS: Final = _fields()
"""Every number of a run's metrics, in the contract's order."""


def lookup(metrics: Mapping[str, Any] | None, name: str) -> Any:
    """The value at dotted ``name`` (None where a level is missing or null)."""
    value: Any = metrics
    for part in name.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def flatten(metrics: Mapping[str, Any] | None) -> dict[str, Any]:
    """``metrics`` as one column per field (``FIELDS`` order), None where null or missing."""
    return {f.name: lookup(metrics, f.name) for f in FIELDS}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _combine(values: Sequence[Any], how: Literal["mean", "spread"]) -> Any:
    """One node of the metrics tree over the runs: recurse into mappings, average numbers."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    if all(isinstance(v, Mapping) for v in present):
        keys: list[str] = []
        for v in present:
            keys += [k for k in v if k not in keys]
        return {k: _combine([v.get(k) for v in present], how) for k in keys}
    numbers = [float(v) for v in present if _number(v)]
    if len(numbers) != len(present):
        raise ValueError(f"expected numbers or mappings, got {present!r}")
    result = statistics.fmean(numbers) if how == "mean" else statistics.pstdev(numbers)
    return round(result, 6) + 0.0  # + 0.0: no "-0.0"


def aggregate(runs: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(means, spreads)`` of the runs' metrics, each in the metrics' shape (None, None: no run)."""
    if not runs:
        return None, None
    return _combine(runs, "mean"), _combine(runs, "spread")


def best(values: Sequence[float | None], field: Field) -> int | None:
    """The index of the best value of a row, or None: fewer than two values, or a tie for best."""
    return best_index(field.name, values)
