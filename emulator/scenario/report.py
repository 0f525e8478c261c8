"""Reports of a run: the JSON document (stable keys) and the terminal summary.

JSON keys: ``scenario``, ``seed``, ``clock``, ``simulatedSeconds``, ``wallSeconds``,
``pods`` {``total``, ``pending``, ``running``, ``succeeded``, ``failed``},
``expectations`` [{``name``, ``passed``, ``detail``}], ``events`` (number of API writes),
``traceHash``, ``passed``; plus whatever the agents add (``scheduling`` once the
scheduler runs); ``workloads`` when the run has workload objects: a list of
{``kind``, ``namespace``, ``name``, ``desired``, ``ready``, ``available``, ``updated``,
``restarts``} and, for Jobs, {..., ``succeeded``, ``failed``, ``completionTime``,
``durationSeconds``, ``restarts``} (``scenario.workloads`` says how each is counted).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from emulator.scenario.runner import RunResult

__all__ = ["print_summary", "to_json"]


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
    return doc


def _workload_table(entries: list[dict[str, Any]]) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, title="workloads", title_justify="left")
    for column in ("workload", "desired", "ready", "available", "updated", "restarts", "succeeded", "failed", "took"):
        table.add_column(column, justify="left" if column == "workload" else "right")
    for e in entries:

        def cell(key: str, e: dict[str, Any] = e) -> str:
            value = e.get(key)
            return "" if value is None else str(value)

        took = e.get("durationSeconds")
        table.add_row(
            f"{e['kind']} {e['namespace']}/{e['name']}",
            *(cell(k) for k in ("desired", "ready", "available", "updated", "restarts", "succeeded", "failed")),
            "" if took is None else f"{took:g}s",
        )
    return table


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
    for inv in result.extra.get("invariants", []):
        if inv.violations:
            console.print(
                f"[red]✗[/red] invariant {inv.name}: {inv.violations} violation(s); "
                f"first at t={inv.first_time:g}s: {inv.first_detail}"
            )
    if result.extra.get("workloads"):
        console.print(_workload_table(result.extra["workloads"]))
    for w in result.waits_timed_out:
        console.print(f"[red]✗[/red] {w}")
    if result.expectations:
        table = Table(show_header=True, header_style="bold", box=None)
        table.add_column("")
        table.add_column("expectation")
        table.add_column("found")
        for e in result.expectations:
            table.add_row("[green]✓[/green]" if e.passed else "[red]✗[/red]", e.name, e.detail)
        console.print(table)
    verdict = "[green]PASSED[/green]" if result.passed else "[red]FAILED[/red]"
    console.print(f"{verdict}  traceHash {result.trace_hash[:16]}")
