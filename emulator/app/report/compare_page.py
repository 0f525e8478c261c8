"""``render_compare``: the HTML page of ``compare``: the metric table (variants as columns,
mean ± standard deviation over the seeds, the best value per row marked by ``fmt.BETTER``,
the rule ``compare``'s text table uses too) and each time series overlaid per variant (from
each variant's lowest seed): pods Running, pods Pending, pods in the scheduling queues, nodes
used, the mean CPU allocation of the existing nodes, and (from ``series.cost``, when a variant
has an autoscaler or a priced node) the existing nodes and their $/h. The table's ``cost.*``
rows are in dollars.

The last two are derived from the heat map's buckets: "nodes used" counts nodes with at
least one assigned pod at each bucket's end (``nodes.pods``; without it, nodes with some CPU
allocated), the CPU line is the unweighted mean over nodes that existed in the bucket.
"""

from __future__ import annotations

from typing import Any

from emulator.app.report.cost_section import cost_lines, fmt_dollars
from emulator.app.report.fmt import BETTER, best_index, esc, fmt_duration, fmt_number, metric_rows
from emulator.app.report.heatmap import ABSENT, decode_rows
from emulator.app.report.page import VARIANT_COLORS, document, note, section, table
from emulator.app.report.svg import Series, time_chart

__all__ = ["bucket_lines", "render_compare"]

DASHES = ("", "6 3", "2 2", "8 3 2 3")
RATE_UNIT = "$ / h"
Chart = tuple[str, str, str, list[Series], bool]
"""(id, title, unit, lines, percent)."""


def render_compare(doc: dict[str, Any]) -> str:
    """One HTML document for ``compare``'s result with per-variant ``series``."""
    variants: list[dict[str, Any]] = doc.get("variants") or []
    seeds = doc.get("seeds") or []
    head = (
        f'<header class="top"><h1>{esc(doc.get("scenario", ""))}: {len(variants)} configurations compared</h1>'
        f'<div class="facts"><span>seeds <b>{esc(", ".join(str(s) for s in seeds))}</b></span>'
        f"<span>runs per configuration <b>{len(seeds)}</b></span></div></header>"
    )
    parts = [head, _table(variants)]
    parts += _overlays(variants)
    return document(f"{doc.get('scenario', 'compare')} · kube-emulator compare", "".join(parts))


def _label(i: int, variant: dict[str, Any]) -> str:
    mode = f" gpuSharing={variant['gpuSharing']}" if variant.get("gpuSharing") else ""
    name = variant.get("variant") or variant.get("config", "?")
    return f"{chr(ord('A') + i) if i < 26 else i + 1}: {name}{mode}"


def _table(variants: list[dict[str, Any]]) -> str:
    caption = (
        "Mean over the seeds ± population standard deviation; the best value of each row is shaded green "
        "(none when two or more tie for best), as compare's text table marks it; ↑ higher is better, ↓ lower."
    )
    if not variants:
        return section("metrics", "Metrics", caption, note("No variants."))
    first: dict[str, Any] = next((v["metrics"] for v in variants if isinstance(v.get("metrics"), dict)), {})
    keys = [k for k, _ in metric_rows(first)]
    rows: list[list[str]] = []
    for key in keys:
        values = [_get(v.get("metrics"), key) for v in variants]
        spreads = [_get(v.get("spread"), key) for v in variants]
        best = best_index(key, values)
        arrow = {"higher": " ↑", "lower": " ↓"}.get(BETTER.get(key.split(".", 1)[0], ""), "")
        cells = [esc(key) + arrow]
        for i, (value, spread) in enumerate(zip(values, spreads, strict=True)):
            text = _value(key, value) + (
                f" ± {_spread(key, spread)}" if isinstance(spread, int | float) and spread else ""
            )
            cells.append(f'<span class="{"bestv" if i == best else ""}">{esc(text)}</span>')
        rows.append(cells)
    passed = ["passed"]
    for v in variants:
        per_seed = v.get("perSeed") or []
        passed.append(esc(f"{sum(1 for s in per_seed if s.get('passed'))} of {len(per_seed)}"))
    rows.append(passed)
    head = ["metric"] + [esc(_label(i, v)) for i, v in enumerate(variants)]
    html = table(head, rows, numeric=frozenset(range(1, len(variants) + 1)))
    html = html.replace('<td class="num"><span class="bestv">', '<td class="num best"><span class="bestv">')
    return section("metrics", "Metrics", caption, html)


def _get(metrics: dict[str, Any] | None, key: str) -> Any:
    value: Any = metrics or {}
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _value(key: str, value: Any) -> str:
    if key.startswith("cost.") and key != "cost.nodeHours":
        return fmt_dollars(value)
    if "Allocation" in key and isinstance(value, int | float):
        return f"{value * 100:.1f}%"
    if "Seconds" in key and isinstance(value, int | float):
        return fmt_duration(float(value))
    return fmt_number(value)


def _spread(key: str, spread: float) -> str:
    """A standard deviation to two significant digits, in its metric's unit."""
    if "Allocation" in key:
        return f"{spread * 100:.2g}%"
    if "Seconds" in key:
        return fmt_duration(float(f"{spread:.2g}"))
    if key.startswith("cost.") and key != "cost.nodeHours":
        return f"${spread:.2g}"
    return f"{spread:.2g}"


def bucket_lines(series: dict[str, Any]) -> tuple[list[float], list[float], list[float]]:
    """``(bucket mid-times, nodes used, mean CPU allocation %)`` from the heat map's buckets."""
    nodes = series["nodes"]
    edges: list[float] = nodes["edges"]
    k = len(edges) - 1
    mids = [(edges[i] + edges[i + 1]) / 2 for i in range(k)]
    cpu = decode_rows(nodes["allocation"].get("cpu", [])) if "cpu" in nodes["allocation"] else []
    pods: list[list[int]] | None = nodes.get("pods")
    used, mean = [], []
    for c in range(k):
        cells = [row[c] for row in cpu if c < len(row) and row[c] != ABSENT]
        mean.append(round(sum(cells) / len(cells) / 2, 2) if cells else 0.0)
        if pods is not None:
            used.append(float(sum(1 for row in pods if c < len(row) and row[c] > 0)))
        else:
            used.append(float(len([x for x in cells if x > 0])))
    return mids, used, mean


def _overlays(variants: list[dict[str, Any]]) -> list[str]:
    caption_end = "one line per configuration (its lowest seed's run); hover for the values."
    with_series = [(i, v) for i, v in enumerate(variants) if isinstance(v.get("series"), dict)]
    if not with_series:
        return [
            section("series", "Time series", caption_end, note("No variant carries its series: nothing to overlay."))
        ]
    end = max(float(v["series"]["end"]) for _, v in with_series)
    missing = [_label(i, v) for i, v in enumerate(variants) if not isinstance(v.get("series"), dict)]

    def line(i: int, v: dict[str, Any], t: list[float], values: list[float]) -> Series:
        return Series(
            name=_label(i, v),
            color=VARIANT_COLORS[i % len(VARIANT_COLORS)],
            t=t,
            values=values,
            dash=DASHES[i % len(DASHES)],
        )

    charts: list[Chart] = []
    for phase in ("Running", "Pending"):
        lines = [line(i, v, v["series"]["t"], v["series"]["pods"].get(phase) or []) for i, v in with_series]
        charts.append((phase.lower(), f"Pods {phase}", "pods", lines, False))
    queue_lines = []
    for i, v in with_series:
        q = v["series"].get("queues")
        if q is not None:
            total = [a + b + c for a, b, c in zip(q["activeQ"], q["backoffQ"], q["unschedulablePods"], strict=True)]
            queue_lines.append(line(i, v, v["series"]["t"], total))
    if queue_lines:
        charts.append(
            (
                "queue",
                "Pods in the scheduling queues (activeQ + backoffQ + unschedulablePods)",
                "pods",
                queue_lines,
                False,
            )
        )
    used_lines, cpu_lines = [], []
    for i, v in with_series:
        mids, used, cpu = bucket_lines(v["series"])
        used_lines.append(line(i, v, mids, used))
        cpu_lines.append(line(i, v, mids, cpu))
    charts.append(("nodes", "Nodes used (at least one assigned pod)", "nodes", used_lines, False))
    charts.append(("cpu", "Mean CPU allocation of the existing nodes", "CPU allocated", cpu_lines, True))
    charts += _cost_charts(with_series, line)
    out = []
    for cid, title, unit, lines, pct in charts:
        money = unit == RATE_UNIT
        body = time_chart(f"cmp-{cid}", lines, end=end, unit=unit, percent=pct, integer=not money, money=money)
        if missing:
            body += note("Without series: " + ", ".join(missing) + ".")
        out.append(
            section(f"series-{cid}", title, f"Over simulated time ({fmt_duration(end)} in all), {caption_end}", body)
        )
    return out


def _cost_charts(with_series: list[tuple[int, dict[str, Any]]], line: Any) -> list[Chart]:
    """The existing nodes and their $/h per variant, when some variant's nodes are managed or priced."""
    node_lines, rate_lines, shown = [], [], False
    for i, v in with_series:
        lines = cost_lines(v["series"])
        if lines is None:
            continue
        t, nodes, rates = lines
        node_lines.append(line(i, v, t, nodes))
        rate_lines.append(line(i, v, t, rates))
        groups = v["series"]["cost"]["groups"]
        shown = shown or any(rates) or any(g["kind"] != "unmanaged" for g in groups)
    if not shown:
        return []
    return [
        ("cost-nodes", "Existing nodes (every group)", "nodes", node_lines, False),
        ("cost-rate", "What the existing nodes cost, $ per hour", RATE_UNIT, rate_lines, False),
    ]
