"""Reports of a run: the JSON document (stable keys) and the terminal summary.

JSON keys: ``scenario``, ``seed``, ``clock``, ``simulatedSeconds``, ``wallSeconds``,
``pods`` {``total``, ``pending``, ``running``, ``succeeded``, ``failed``},
``expectations`` [{``name``, ``passed``, ``detail``}], ``events`` (number of API writes),
``traceHash``, ``passed``; plus whatever the agents add (``scheduling`` once the
scheduler runs); ``workloads`` when the run has workload objects: a list of
{``kind``, ``namespace``, ``name``, ``desired``, ``ready``, ``available``, ``updated``,
``restarts``} and, for Jobs, {..., ``succeeded``, ``failed``, ``completionTime``,
``durationSeconds``, ``restarts``} (``scenario.workloads`` says how each is counted);
then ``metrics`` and ``series``, the run's own quality metrics and time series
(``scenario.observe``; shapes in ``docs/architecture.md``, "Run metrics and series").

The terminal summary prints the workloads as two kubectl-like tables, ``workloads`` (the
controllers) and ``jobs``, made to fit 80 columns (``_workload_tables``).
"""

from __future__ import annotations

from typing import Any, Final

from rich.console import Console
from rich.table import Table

from emulator.app.scenario.runner import RunResult

__all__ = ["metrics_lines", "print_summary", "to_json"]


def to_json(result: RunResult) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "scenario": result.scenario,
        "seed": result.seed,
        "clock": result.clock,
        "simulatedSeconds": result.simulated_seconds,
        "wallSeconds": round(result.wall_seconds, 3),
        "pods": dict(result.pods),
        "expectations": [{"name": e.name, "passed": e.passed, "detail": e.detail} for e in result.expectations],
        "events": result.events,
        "traceHash": result.trace_hash,
        "passed": result.passed,
    }
    if result.waits_timed_out:
        doc["waitsTimedOut"] = list(result.waits_timed_out)
    for extra in result.extra.get("agents", []):
        doc.update(extra)
    doc["invariants"] = [r.to_json() for r in result.extra.get("invariants", [])]
    if result.extra.get("workloads"):
        doc["workloads"] = result.extra["workloads"]
    for key in ("metrics", "series"):
        if key in result.extra:
            doc[key] = result.extra[key]
    return doc


_CONTROLLER_COLUMNS: Final = (("desired", "desired"), ("ready", "ready"), ("available", "avail"),
                               ("updated", "updated"), ("restarts", "restarts"))  # fmt: skip
_JOB_COLUMNS: Final = (("succeeded", "succeeded"), ("failed", "failed"), ("restarts", "restarts"))


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def _workload_tables(entries: list[dict[str, Any]]) -> list[Table]:
    """The ``workloads`` entries as kubectl-like tables that fit 80 columns: one for the
    controllers (Deployment, ReplicaSet, StatefulSet, DaemonSet), one for the Jobs; kind,
    namespace and name in their own columns, the namespace only when some entry is outside
    ``default`` (as ``kubectl get`` shows it only across namespaces); a long name folds rather
    than being cut."""
    controllers = [e for e in entries if e["kind"] != "Job"]
    jobs = [e for e in entries if e["kind"] == "Job"]
    tables: list[Table] = []
    for title, rows, columns in (("workloads", controllers, _CONTROLLER_COLUMNS), ("jobs", jobs, _JOB_COLUMNS)):
        if not rows:
            continue
        table = Table(box=None, header_style="bold", title=title, title_justify="left", pad_edge=False)
        with_kind = title == "workloads"
        with_namespace = any(e["namespace"] != "default" for e in rows)
        if with_kind:
            table.add_column("kind", no_wrap=True)
        if with_namespace:
            table.add_column("namespace", no_wrap=True)
        table.add_column("name", overflow="fold")
        if not with_kind:
            table.add_column("status", overflow="fold")
        for _, header in columns:
            table.add_column(header, justify="right", no_wrap=True, min_width=len(header))
        if not with_kind:
            table.add_column("took", justify="right", no_wrap=True)
        for e in rows:
            cells = [e["kind"]] if with_kind else []
            cells += [e["namespace"]] if with_namespace else []
            cells.append(e["name"])
            if not with_kind:
                cells.append(f"{e['status']} ({e['reason']})" if e.get("reason") else e.get("status", ""))
            cells += [_cell(e.get(key)) for key, _ in columns]
            if not with_kind:
                took = e.get("durationSeconds")
                cells.append("" if took is None else f"{took:g}s")
            table.add_row(*cells)
        tables.append(table)
    return tables


def _seconds(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}s"


def metrics_lines(m: dict[str, Any]) -> list[str]:
    """The run's ``metrics`` as two short lines of the terminal summary (a third with cost and the
    autoscaler's counters when nodes had prices or an autoscaler acted)."""
    pend = m["pendingSeconds"]
    used = m["nodesUsed"]
    alloc = [("cpu", m["cpuAllocation"]), ("memory", m["memoryAllocation"]), ("gpu", m["gpuAllocation"])]
    shares = ", ".join(f"{name} {a['mean']:.1%}" for name, a in alloc if a is not None)
    lines = [
        f"metrics: {m['podsScheduled']} pods scheduled, {m['podsUnschedulable']} unschedulable; pending "
        f"p50 {_seconds(pend['p50'])} p90 {_seconds(pend['p90'])} p99 {_seconds(pend['p99'])}; "
        f"makespan {m['makespanSeconds']:g}s",
        f"  nodes used mean {used['mean']:.4g} max {used['max']}; allocation (mean) {shares}; "
        f"preemptions {m['preemptions']}, evictions {m['evictions']}",
    ]
    cost, auto = m.get("cost"), m.get("autoscaler")
    if cost and auto and (cost["total"] or any(auto.values())):  # a third line only with prices or an autoscaler
        per_hour = cost["perHour"]
        lines.append(
            f"  cost ${cost['total']:.4f} over {cost['nodeHours']:.4g} node-hours "
            f"(mean ${per_hour['mean']:.4g}/h, max ${per_hour['max']:.4g}/h); autoscaler: {auto['scaleUps']} "
            f"scale-ups, {auto['scaleDowns']} scale-downs, nodes +{auto['nodesCreated']} -{auto['nodesRemoved']}, "
            f"{auto['podsDisrupted']} pods disrupted"
        )
    return lines


def print_summary(result: RunResult, console: Console) -> None:
    ratio = result.simulated_seconds / result.wall_seconds if result.wall_seconds > 0 else 0.0
    console.print(
        f"[bold]{result.scenario}[/bold]  seed={result.seed}  clock={result.clock}  "
        f"simulated {result.simulated_seconds:g}s in {result.wall_seconds:.2f}s wall ({ratio:,.0f}x)"
    )
    p = result.pods
    console.print(
        f"pods: {p['total']} total, {p['pending']} pending, {p['running']} running, "
        f"{p['succeeded']} succeeded, {p['failed']} failed   API writes: {result.events}"
    )
    for extra in result.extra.get("agents", []):
        sched = extra.get("scheduling")
        if sched:
            console.print("scheduling: " + ", ".join(f"{k} {v}" for k, v in sched.items() if not isinstance(v, dict)))
    if "metrics" in result.extra:
        for line in metrics_lines(result.extra["metrics"]):
            console.print(line, highlight=False)
    for inv in result.extra.get("invariants", []):
        if inv.violations:
            console.print(
                f"[red]✗[/red] invariant {inv.name}: {inv.violations} violation(s); "
                f"first at t={inv.first_time:g}s: {inv.first_detail}"
            )
    if result.extra.get("workloads"):
        for table in _workload_tables(result.extra["workloads"]):
            # Two spaces between columns when the widest row fits, else one (kubectl's
            # columns are single tokens: one space still reads).
            wide = console.options.update_width(10_000)
            table.collapse_padding = console.measure(table, options=wide).maximum > console.width
            console.print(table)
    for w in result.waits_timed_out:
        console.print(f"[red]✗[/red] {w}")
    if result.expectations:
        table = Table(show_header=True, header_style="bold", box=None)
        table.add_column("")
        table.add_column("expectation", overflow="fold")
        table.add_column("found", overflow="fold")
        for e in result.expectations:
            table.add_row("[green]✓[/green]" if e.passed else "[red]✗[/red]", e.name, e.detail)
        console.print(table)
    verdict = "[green]PASSED[/green]" if result.passed else "[red]FAILED[/red]"
    console.print(f"{verdict}  traceHash {result.trace_hash[:16]}")
