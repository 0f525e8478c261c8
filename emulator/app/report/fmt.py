"""Formatting shared by the report's pages: simulated durations (``1m30s``), axis ticks,
numbers, HTML escaping, JSON safe to embed in a ``<script>`` element, and the one rule of
which direction of each metric is better (``BETTER``), used by the HTML compare table and by
``compare``'s text table alike.

Owns no state. Everything here is a plain function of its arguments.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from typing import Any, Literal

__all__ = [
    "BETTER",
    "best_index",
    "esc",
    "fmt_duration",
    "fmt_number",
    "metric_rows",
    "nice_ticks",
    "script_json",
    "time_ticks",
]

Direction = Literal["lower", "higher"]

BETTER: dict[str, Direction] = {
    "podsScheduled": "higher",
    "podsUnschedulable": "lower",
    "pendingSeconds": "lower",
    "nodesUsed": "lower",
    "cpuAllocation": "higher",
    "memoryAllocation": "higher",
    "gpuAllocation": "higher",
    "preemptions": "lower",
    "evictions": "lower",
    "makespanSeconds": "lower",
    "cost": "lower",
}
"""Top-level metric key → which direction is better. Fewer nodes and higher allocation mean
tighter packing (the question a compare usually asks), and fewer dollars and node-hours
(``cost``) a cheaper cluster; a nested key (``pendingSeconds.p90``)
takes its top-level key's direction. A metric not listed here is shown but never marked."""


TIE_TOLERANCE = 1e-3
"""Values within this fraction of the best one tie with it (a makespan of 529.73 s against
529.74 s is a tie, not a win): a mark means a difference a reader can see."""


def best_index(key: str, values: Sequence[float | int | None]) -> int | None:
    """The index of the best value of metric ``key`` (a dotted path such as
    ``pendingSeconds.p90``), or None: the metric has no direction, fewer than two values are
    numbers (null and NaN left out), or two or more tie for best, within ``TIE_TOLERANCE`` of
    it (nothing is marked then, so a mark always means "better than every other")."""
    direction = BETTER.get(key.split(".", 1)[0])
    numbers = [
        (i, float(v))
        for i, v in enumerate(values)
        if isinstance(v, int | float) and not isinstance(v, bool) and not math.isnan(v)
    ]
    if direction is None or len(numbers) < 2:
        return None
    pick = min if direction == "lower" else max
    top = pick(v for _, v in numbers)
    winners = [i for i, v in numbers if math.isclose(v, top, rel_tol=TIE_TOLERANCE, abs_tol=1e-12)]
    return winners[0] if len(winners) == 1 else None


def metric_rows(metrics: dict[str, Any]) -> list[tuple[str, Any]]:
    """``metrics`` flattened to ``(dotted key, value)`` rows in the dict's order, at any depth
    (``cost.perHour.max``; a ``null`` group such as ``gpuAllocation`` stays one row)."""
    rows: list[tuple[str, Any]] = []
    for key, value in metrics.items():
        if isinstance(value, dict):
            rows.extend((f"{key}.{sub}", v) for sub, v in metric_rows(value))
        else:
            rows.append((key, value))
    return rows


def esc(value: object) -> str:
    """Text for HTML content or a quoted attribute value."""
    return html.escape(str(value), quote=True)


def script_json(value: Any) -> str:
    """JSON that cannot end the ``<script>`` element it sits in, whatever strings it holds."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def fmt_duration(seconds: float) -> str:
    """Simulated seconds as people read them: ``0s``, ``250ms``, ``45s``, ``1m30s``,
    ``2h05m``; negative values keep their sign."""
    if seconds < 0:
        return "-" + fmt_duration(-seconds)
    if seconds == 0:
        return "0s"
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:.3g}ms" if ms < 10 else f"{round(ms)}ms"
    if seconds < 60:
        return f"{round(seconds)}s" if seconds == int(seconds) else f"{seconds:.3g}s"
    total = round(seconds)
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m" if not s else f"{h}h{m:02d}m{s:02d}s"
    return f"{m}m" if not s else f"{m}m{s:02d}s"


def fmt_number(value: Any) -> str:
    """A metric value for a table: ``—`` for null, thousands separators, at most 4
    significant decimals."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.4g}" if abs(value) >= 1 else f"{value:.4g}"
    return str(value)


_TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def time_ticks(start: float, end: float, most: int = 8) -> list[float]:
    """Round simulated times between ``start`` and ``end`` for an axis: at most ``most``
    ticks, on steps people count in (1 s, 5 s, 15 s, 1 m, 5 m, ...); sub-second spans use
    ``nice_ticks``."""
    span = end - start
    if span <= 0:
        return [start]
    if span < 2:
        return nice_ticks(start, end, most)
    step = next((s for s in _TIME_STEPS if span / s <= most), _TIME_STEPS[-1] * math.ceil(span / most / 86400))
    first = math.ceil(start / step) * step
    return [float(first + i * step) for i in range(int((end - first) // step) + 1)]


def nice_ticks(lo: float, hi: float, most: int = 5, *, integer: bool = False) -> list[float]:
    """Round numbers from ``lo`` to ``hi`` (1, 2 or 5 times a power of ten apart; whole
    numbers only when ``integer``, for counts)."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = max(span / most, 1.0) if integer else span / most
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    n = math.floor((hi - first) / step + 1e-9) + 1
    return [round(first + i * step, 12) for i in range(n)]
