"""``render_run``: the HTML page of one run, from its JSON report (``run --output json``)
and, optionally, its trace and its ``--explain`` file.

Sections, in order, each with a heading and a one-line caption saying how to read it:
the header; pods by phase over time with the steps and faults marked; the scheduling queue
and attempts per second; the nodes and their $/h over time per node group or instance type,
with the cost totals and autoscaler counters (``cost_section``); the node allocation heat
map; the pods-on-nodes timeline (runs of at most 200 nodes); the pending-time and
end-to-end latency histograms; expectations and invariants; the slowest pods (with their
write history when the trace is given); the per-plugin tables of their last attempts (when
the explanations are given); the metrics. A section without its data says why instead of
drawing an empty plot.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from emulator.app.report.cost_section import cost_section
from emulator.app.report.explain import explain_section_body, last_attempts
from emulator.app.report.fmt import esc, fmt_duration, fmt_number, metric_rows
from emulator.app.report.heatmap import heatmap
from emulator.app.report.load import pod_histories
from emulator.app.report.page import (
    GANTT_COLORS,
    PHASE_COLORS,
    QUEUE_COLORS,
    RESULT_COLORS,
    document,
    note,
    section,
    table,
)
from emulator.app.report.svg import Bar, Marker, Series, gantt, histogram, marker_list, time_chart

__all__ = ["markers_of", "render_run"]

PHASES = ("Running", "Pending", "Succeeded", "Failed")
"""Stack order of the pods chart, bottom first: what runs is the base the rest sits on."""


def render_run(
    report: dict[str, Any],
    *,
    trace: Iterable[dict[str, Any]] | None = None,
    explain: Iterable[dict[str, Any]] | None = None,
) -> str:
    """One HTML document for the run ``report`` (see the module docstring); ``trace`` adds
    the slowest pods' writes, ``explain`` (a ``run --explain`` file's records) their last
    attempt's per-plugin table."""
    series: dict[str, Any] | None = report.get("series")
    parts = [_header(report)]
    if series is None:
        parts.append(
            section(
                "plots",
                "Plots",
                "Time series are collected by every run of this version.",
                note("This report carries no time series (made by an older version of the emulator): no plots."),
            )
        )
    else:
        parts += [_pods(series), _queues(series), cost_section(report, series, markers_of(series))]
        parts += [_heat(series), _timeline(series), _histograms(series)]
    parts.append(_checks(report))
    if series is not None:
        histories = None
        if trace is not None:
            histories = pod_histories(trace, [row["pod"] for row in series["slowest"]])
        parts.append(_slowest(series, histories))
        if explain is not None:
            attempts = last_attempts(explain, [row["pod"] for row in series["slowest"]])
            parts.append(
                section(
                    "explain",
                    "Per-plugin results of the slowest pods' last attempts",
                    "Nodes as rows (the selected one first, marked), each filter plugin's verdict (failures red: "
                    "hover for the reasons) and each score plugin's weighted score; as `explain` prints it.",
                    explain_section_body(attempts),
                )
            )
    parts.append(_metrics(report.get("metrics")))
    return document(f"{report.get('scenario', 'run')} · kube-emulator report", "".join(parts))


def markers_of(series: dict[str, Any]) -> list[Marker]:
    return [Marker(n=i, t=m["t"], kind=m["kind"], label=m["label"]) for i, m in enumerate(series["markers"], 1)]


def _header(report: dict[str, Any]) -> str:
    passed = report.get("passed")
    verdict = '<span class="pass">passed</span>' if passed else '<span class="fail">failed</span>'
    pods = report.get("pods") or {}
    facts = [
        ("seed", fmt_number(report.get("seed"))),
        ("simulated", esc(fmt_duration(float(report.get("simulatedSeconds") or 0.0)))),
        ("wall", f"{float(report.get('wallSeconds') or 0.0):.2f} s"),
        ("clock", esc(report.get("clock", ""))),
        ("pods", esc(", ".join(f"{v} {k}" for k, v in pods.items() if k != "total")) or "—"),
        ("API writes", fmt_number(report.get("events"))),
    ]
    digest = str(report.get("traceHash", ""))
    facts_html = "".join(f"<span>{k} <b>{v}</b></span>" for k, v in facts)
    return (
        f'<header class="top"><h1>{esc(report.get("scenario", ""))} {verdict}</h1>'
        f'<div class="facts">{facts_html}<span title="{esc(digest)}">trace hash <b>{esc(digest[:16])}</b></span></div>'
        "</header>"
    )


def _pods(series: dict[str, Any]) -> str:
    t = series["t"]
    bands = [Series(name=p, color=PHASE_COLORS[p], t=t, values=series["pods"].get(p) or [0] * len(t)) for p in PHASES]
    marks = markers_of(series)
    if any(any(b.values) for b in bands):
        body = time_chart("pods", bands, end=series["end"], unit="pods", stacked=True, markers=marks)
    else:
        body = note("No pod existed during the run.")
    body += marker_list(marks)
    if not series["markers"]:
        body += note("The scenario had no steps or faults to mark.")
    return section(
        "pods",
        "Pods by phase over time",
        "Stacked: the band heights are the pods in each phase at that time; dashed lines mark steps (grey) "
        "and faults (red), numbered as in the list below (the same numbers on every chart); hover for the counts.",
        body,
    )


def _queues(series: dict[str, Any]) -> str:
    queues, attempts = series.get("queues"), series.get("attempts")
    caption = (
        "Pods waiting in each scheduling queue at each sample, then the scheduling attempts per simulated second "
        "by their result; hover for the values."
    )
    if queues is None and attempts is None:
        return section(
            "queues", "Scheduling queue and attempts", caption, note("This run has no scheduler: no queue to plot.")
        )
    t, marks = series["t"], markers_of(series)
    body = ""
    if queues is not None:
        lines = [Series(name=q, color=QUEUE_COLORS[q], t=t, values=queues[q]) for q in QUEUE_COLORS]
        body += '<p class="plot-title">Queue sizes</p>'
        body += time_chart("queues", lines, end=series["end"], unit="pods in queue", markers=marks)
    if attempts is not None:
        interval = float(series["interval"]) or 1.0
        rates = [
            Series(name=r, color=RESULT_COLORS[r], t=t, values=[round(v / interval, 6) for v in attempts[r]])
            for r in RESULT_COLORS
        ]
        body += (
            f'<p class="plot-title">Attempts per second (counted over each {esc(fmt_duration(interval))} sample)</p>'
        )
        body += time_chart("attempts", rates, end=series["end"], unit="attempts / s", markers=marks)
    return section("queues", "Scheduling queue and attempts", caption, body)


def _heat(series: dict[str, Any]) -> str:
    nodes = series["nodes"]
    caption = (
        "Each row a node, each column a time bucket; colour = the node's allocated share of its allocatable "
        "(time-weighted over the bucket), rows sorted by mean allocation, highest first; dark hatching = "
        "the node was not Ready. Hover for a cell."
    )
    if not nodes["names"] or len(nodes["edges"]) < 2:
        return section("heatmap", "Node allocation", caption, note("No node existed during the run."))
    body = heatmap("heat", nodes)
    if "nvidia.com/gpu" not in nodes["resources"]:
        body += note("No node has nvidia.com/gpu allocatable: no GPU map.")
    return section("heatmap", "Node allocation", caption, body)


def _timeline(series: dict[str, Any]) -> str:
    caption = "One row per node, one bar per pod from its bind to its end (colour = how it ended); hover for the pod."
    timeline = series.get("timeline")
    names: list[str] = series["nodes"]["names"]
    if timeline is None:
        return section(
            "timeline",
            "Pods on nodes",
            caption,
            note(
                f"No timeline: the run had {len(names):,} nodes (the timeline is kept for at most 200); "
                "see the heat map."
            ),
        )
    if not timeline:
        return section("timeline", "Pods on nodes", caption, note("No pod was bound during the run."))
    row_of = {n: i for i, n in enumerate(names)}
    drawn = _longest(timeline, float(series["end"]), MAX_BARS)
    bars = []
    for entry in drawn:
        row = row_of.get(entry["node"])
        if row is None:
            continue
        end = entry["end"]
        until = "still there at the end" if end is None else fmt_duration(end)
        bars.append(
            Bar(
                row=row,
                start=entry["start"],
                end=end,
                color=GANTT_COLORS.get(entry["phase"], "#6b7280"),
                tip=f"{entry['pod']}\non {entry['node']}\n{fmt_duration(entry['start'])} – {until}\n{entry['phase']}",
            )
        )
    keys = "".join(f'<span class="key"><i style="background:{c}"></i>{p}</span>' for p, c in GANTT_COLORS.items())
    body = f'<div class="legend">{keys}</div>' + gantt(names, bars, end=series["end"], markers=markers_of(series))
    if len(drawn) < len(timeline):
        body += note(
            f"{len(drawn):,} of {len(timeline):,} bars drawn: the longest (a page stays a few MB); "
            "the heat map covers every pod."
        )
    return section("timeline", "Pods on nodes", caption, body)


MAX_BARS = 4000
"""Gantt bars drawn at most (each is an SVG element with a tooltip, ~170 bytes)."""


def _longest(timeline: list[dict[str, Any]], end: float, most: int) -> list[dict[str, Any]]:
    """The ``most`` longest bars (ties: the earlier in the timeline), in timeline order."""
    if len(timeline) <= most:
        return timeline

    def length(i: int) -> float:
        bar = timeline[i]
        stop = end if bar["end"] is None else float(bar["end"])
        return stop - float(bar["start"])

    keep = sorted(sorted(range(len(timeline)), key=lambda i: (-length(i), i))[:most])
    return [timeline[i] for i in keep]


def _histograms(series: dict[str, Any]) -> str:
    body = '<p class="plot-title">Pending time: creation → first bind, every bound pod</p>'
    pending = series.get("pendingSeconds")
    if pending and sum(pending["counts"]):
        body += histogram(pending["edges"], pending["counts"], color=PHASE_COLORS["Pending"], unit="pending time")
    else:
        body += note("No pod was bound: no pending times.")
    body += '<p class="plot-title">Scheduler end-to-end latency: first entry to the queue → bound</p>'
    e2e = series.get("e2eSeconds")
    if e2e is None:
        body += note("This run has no scheduler: no end-to-end latency.")
    elif not sum(e2e["counts"]):
        body += note("No pod was bound: no latencies.")
    else:
        body += histogram(e2e["edges"], e2e["counts"], color=PHASE_COLORS["Running"], unit="e2e latency")
    return section(
        "latency",
        "Pending time and scheduling latency",
        "Pods per bin of simulated time (bins may widen to the right); hover a bar for its range and count.",
        body,
    )


def _checks(report: dict[str, Any]) -> str:
    expectations = report.get("expectations") or []
    rows = [
        [("✓ " if e.get("passed") else "✗ ") + esc(e.get("name", "")), esc(e.get("detail", ""))] for e in expectations
    ]
    body = table(
        ["expectation", "detail"],
        rows,
        wrap=frozenset({0, 1}),
        classes=["" if e.get("passed") else "bad" for e in expectations],
    )
    if not expectations:
        body = note("The scenario states no expectations.")
    invariants = report.get("invariants") or []
    if invariants:
        inv_rows, inv_cls = [], []
        for inv in invariants:
            first = inv.get("first")
            if isinstance(first, dict):
                first_text = f"{fmt_duration(float(first.get('time', 0.0)))}: {first.get('detail', '')}"
            else:
                first_text = "" if first is None else json.dumps(first)
            skipped = inv.get("skipped")
            inv_rows.append(
                [
                    esc(inv.get("name", "")),
                    fmt_number(inv.get("violations")),
                    esc(f"skipped: {skipped}" if skipped else first_text),
                ]
            )
            inv_cls.append("bad" if inv.get("violations") else "")
        body += '<p class="plot-title">Invariants</p>'
        body += table(
            ["invariant", "violations", "first violation"],
            inv_rows,
            numeric=frozenset({1}),
            wrap=frozenset({2}),
            classes=inv_cls,
        )
    return section(
        "checks",
        "Expectations and invariants",
        "Red rows failed; an invariant's first violation gives its simulated time and what was seen.",
        body,
    )


def _slowest(series: dict[str, Any], histories: dict[str, list[dict[str, Any]]] | None) -> str:
    slowest = series["slowest"]
    caption = (
        "The pods that waited longest for a node (never-bound pods count until the end), with their last "
        "scheduling failure message."
    )
    if not slowest:
        return section("slowest", "Slowest pods to schedule", caption, note("No pods."))
    rows = [
        [
            esc(p["pod"]),
            esc(fmt_duration(float(p["pendingSeconds"]))),
            "yes" if p["bound"] else "<b>never</b>",
            esc(p.get("node") or "—"),
            f'<span class="msg">{esc(p.get("message") or "")}</span>',
        ]
        for p in slowest
    ]
    body = table(["pod", "pending", "bound", "node", "last message"], rows, numeric=frozenset({1}), wrap=frozenset({4}))
    if histories is None:
        body += note("Give the run's trace (report RUN.json TRACE.jsonl) to see each of these pods' writes.")
    else:
        body += '<p class="plot-title">Their writes, from the trace</p>'
        for pod, writes in histories.items():
            hrows = [
                [
                    esc(fmt_duration(float(w["t"]))),
                    esc(w["verb"]),
                    esc(w["node"]),
                    esc(w["phase"]),
                    f'<span class="msg">{esc(": ".join(x for x in (w["reason"], w["message"]) if x))}</span>',
                ]
                for w in writes
            ]
            inner = (
                table(["time", "verb", "node", "phase", "reason: message"], hrows, wrap=frozenset({4}))
                if hrows
                else note("No writes in the trace.")
            )
            body += f"<details><summary>{esc(pod)} ({len(writes)} writes)</summary>{inner}</details>"
    return section("slowest", "Slowest pods to schedule", caption, body)


def _metrics(metrics: dict[str, Any] | None) -> str:
    caption = "The run's quality metrics, over the window from the first pod's creation to the last pod's end."
    if metrics is None:
        return section("metrics", "Metrics", caption, note("This report carries no metrics (an older version)."))
    rows = []
    for key, value in metric_rows(metrics):
        text = fmt_number(value)
        if "Seconds" in key and isinstance(value, int | float):
            text += f" ({fmt_duration(float(value))})"
        elif "Allocation" in key and isinstance(value, int | float):
            text = f"{value * 100:.1f}%"
        rows.append([esc(key), esc(text)])
    return section("metrics", "Metrics", caption, table(["metric", "value"], rows, numeric=frozenset({1})))
