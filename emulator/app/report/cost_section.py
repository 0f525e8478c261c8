"""The nodes and their cost over time: the run page's section (``cost_section``, from the
report's ``metrics.cost``, ``metrics.autoscaler`` and ``series.cost``) and the compare page's
overlay lines (``cost_lines``, one per variant).

Run page: two stacked charts over simulated time, the existing nodes and their $/h, a band
per group (a Cluster Autoscaler node group, a Karpenter instance type/capacity type, the nodes
no autoscaler manages, ``other`` past the document's group cap); then a table of the run's
totals and the autoscaler's counters, and one of each group (its most nodes, node-hours,
dollars and share of the total). A run without an autoscaler nor a priced node gets the
totals only and a note saying why there is no chart. Colours: ``GROUP_COLORS`` in the
document's group order (the same group keeps its colour across both charts), grey for the
unmanaged nodes and ``other``.
"""

from __future__ import annotations

from typing import Any

from emulator.app.report.fmt import esc, fmt_number
from emulator.app.report.page import note, section, table
from emulator.app.report.svg import Marker, Series, time_chart

__all__ = ["GROUP_COLORS", "cost_lines", "cost_section", "fmt_dollars"]

GROUP_COLORS = (
    "#2563eb",
    "#16a34a",
    "#ea580c",
    "#9333ea",
    "#0891b2",
    "#db2777",
    "#ca8a04",
    "#4f46e5",
    "#059669",
    "#dc2626",
    "#7c3aed",
)
GREY = {"unmanaged": "#9ca3af", "other": "#6b7280"}
KINDS = {
    "nodeGroup": "node group",
    "instanceType": "instance type",
    "unmanaged": "no autoscaler",
    "other": "the rest, summed",
}
COUNTER_NAMES = {
    "scaleUps": "scale-ups",
    "scaleDowns": "scale-downs",
    "nodesCreated": "nodes created",
    "nodesRemoved": "nodes removed",
    "podsDisrupted": "pods disrupted",
}
CAPTION = (
    "Stacked: each band is a node group (Cluster Autoscaler) or an instance type/capacity type (Karpenter); "
    "above, the existing nodes, below, what they cost per hour; hover for the values. Then the run's totals, "
    "the autoscaler's counters and each group's share."
)


def fmt_dollars(value: Any) -> str:
    """Dollars for a table: ``$0.1497``, ``$12.35``; ``—`` for null."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    return f"${value:,.4f}" if abs(value) < 100 else f"${value:,.2f}"


def _colors(groups: list[dict[str, Any]]) -> list[str]:
    out, i = [], 0
    for g in groups:
        if g["kind"] in GREY:
            out.append(GREY[g["kind"]])
        else:
            out.append(GROUP_COLORS[i % len(GROUP_COLORS)])
            i += 1
    return out


def _totals(metrics: dict[str, Any]) -> str:
    cost = metrics.get("cost") or {}
    per_hour = cost.get("perHour") or {}
    rows = [
        ["total cost", esc(fmt_dollars(cost.get("total")))],
        ["node-hours", esc(fmt_number(cost.get("nodeHours")))],
        ["mean $/h (total over the run's hours)", esc(fmt_dollars(per_hour.get("mean")))],
        ["max $/h (the existing nodes at their most)", esc(fmt_dollars(per_hour.get("max")))],
    ]
    counters = metrics.get("autoscaler") or {}
    rows += [[esc(f"autoscaler: {label}"), esc(fmt_number(counters.get(key)))] for key, label in COUNTER_NAMES.items()]
    return table(["cost and autoscaler", "value"], rows, numeric=frozenset({1}))


def _group_table(groups: list[dict[str, Any]], colors: list[str], total: float) -> str:
    rows = []
    for g, color in zip(groups, colors, strict=True):
        name = f'<span class="key"><i style="background:{color}"></i>{esc(g["name"])}</span>'
        kind = KINDS.get(g["kind"], g["kind"])
        if g["kind"] == "other":
            kind += f" ({g.get('members', '?')} groups)"
        dollars = float(g.get("total") or 0.0)
        share = f"{dollars / total * 100:.1f}%" if total > 0 else "—"
        rows.append(
            [
                name,
                esc(kind),
                esc(fmt_number(max(g["nodes"], default=0))),
                esc(fmt_number(g.get("nodeHours"))),
                esc(fmt_dollars(dollars)),
                esc(share),
            ]
        )
    head = ["group", "kind", "most nodes", "node-hours", "cost", "share of cost"]
    return table(head, rows, numeric=frozenset({2, 3, 4, 5}))


def cost_section(report: dict[str, Any], series: dict[str, Any], markers: list[Marker]) -> str:
    """The run page's "Nodes and cost over time" section (module docstring)."""
    metrics: dict[str, Any] = report.get("metrics") or {}
    title = "Nodes and cost over time"
    if "cost" not in metrics:
        return section("cost", title, CAPTION, note("This report carries no cost (an older version)."))
    totals = _totals(metrics)
    cost = series.get("cost")
    if not isinstance(cost, dict):
        body = note("This report carries no cost series (an older version): totals only.") + totals
        return section("cost", title, CAPTION, body)
    groups: list[dict[str, Any]] = cost["groups"]
    counters = metrics.get("autoscaler") or {}
    managed = any(g["kind"] != "unmanaged" for g in groups)
    if not managed and not float(metrics["cost"].get("total") or 0.0) and not any(counters.values()):
        body = note("No autoscaler and no priced node in this run: every node counts at $0; no chart.") + totals
        return section("cost", title, CAPTION, body)
    t = series["t"]
    colors = _colors(groups)
    nodes = [Series(name=g["name"], color=c, t=t, values=g["nodes"]) for g, c in zip(groups, colors, strict=True)]
    rates = [Series(name=g["name"], color=c, t=t, values=g["perHour"]) for g, c in zip(groups, colors, strict=True)]
    end = series["end"]
    body = '<p class="plot-title">Existing nodes</p>'
    body += time_chart("cost-nodes", nodes, end=end, unit="nodes", stacked=True, markers=markers, height=200)
    body += '<p class="plot-title">What they cost, $ per hour</p>'
    body += time_chart(
        "cost-rate", rates, end=end, unit="$ / h", stacked=True, markers=markers, integer=False, height=200, money=True
    )
    body += '<p class="plot-title">Totals</p>' + totals
    body += '<p class="plot-title">Per group</p>'
    body += _group_table(groups, colors, float(metrics["cost"].get("total") or 0.0))
    return section("cost", title, CAPTION, body)


def cost_lines(series: dict[str, Any]) -> tuple[list[float], list[float], list[float]] | None:
    """``(t, nodes, $/h)`` of a run's whole cluster from its ``series.cost`` (None: none)."""
    cost = series.get("cost")
    if not isinstance(cost, dict):
        return None
    return list(series["t"]), [float(v) for v in cost["nodes"]], [float(v) for v in cost["perHour"]]
