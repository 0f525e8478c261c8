"""The per-plugin table of a scheduling attempt, for a run recorded with ``--explain``: for
each of the slowest pods, its last attempt (the one that bound it, or its last failure),
nodes as rows (feasible ones first, by total score, highest first; then the rest by name),
filter plugins then score plugins as columns, as ``python -m emulator explain`` shows one.

A filter cell shows the status code (a failure in red, its reasons on hover), a score cell
the weighted score (raw and normalized on hover). At most ``MAX_NODES`` rows per table.
Owns the choice of attempts and the table; reading the file is ``load.read_explain``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from emulator.app.report.fmt import esc, fmt_duration
from emulator.app.report.page import note, table

__all__ = ["MAX_NODES", "explain_section_body", "last_attempts"]

MAX_NODES = 50

_CODE = {"Success": "ok", "Skip": "skip"}


def last_attempts(records: Iterable[dict[str, Any]], pods: list[str]) -> dict[str, dict[str, Any]]:
    """For each pod of ``pods``, its last recorded attempt (records in file order)."""
    wanted = set(pods)
    last: dict[str, dict[str, Any]] = {}
    for rec in records:
        pod = rec.get("pod")
        if isinstance(pod, str) and pod in wanted:
            last[pod] = rec
    return {p: last[p] for p in pods if p in last}


def _rows(nodes: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    feasible = sorted(
        ((n, v) for n, v in nodes.items() if v.get("feasible")), key=lambda nv: (-(nv[1].get("total") or 0), nv[0])
    )
    rest = sorted((n, v) for n, v in nodes.items() if not v.get("feasible"))
    return feasible + rest


def attempt_table(rec: dict[str, Any]) -> str:
    """One attempt's nodes × plugins table (pre-escaped HTML)."""
    nodes: dict[str, Any] = rec.get("nodes") or {}
    filters: list[str] = []
    scores: list[str] = []
    for v in nodes.values():
        filters += [p for p in v.get("filter", {}) if p not in filters]
        scores += [p for p in v.get("score", {}) if p not in scores]
    rows = []
    classes = []
    selected = rec.get("selected")
    for name, v in _rows(nodes)[:MAX_NODES]:
        cells = [esc(name) + (" ◀ selected" if name == selected else ""), "yes" if v.get("feasible") else "no"]
        for p in filters:
            status = v.get("filter", {}).get(p)
            if status is None:
                cells.append("")
                continue
            code = str(status.get("code", ""))
            reasons = "; ".join(str(r) for r in status.get("reasons", []))
            text = esc(_CODE.get(code, code))
            if code not in _CODE:
                tip = f"{p}: {code}" + (f": {reasons}" if reasons else "")
                text = f'<span class="failed" data-tip="{esc(tip)}">{text}</span>'
            cells.append(text)
        for p in scores:
            score = v.get("score", {}).get(p)
            if score is None:
                cells.append("")
                continue
            tip = f"{p}: raw {score.get('raw')}, normalized {score.get('normalized')}, weighted {score.get('weighted')}"
            cells.append(f'<span data-tip="{esc(tip)}">{esc(score.get("weighted", ""))}</span>')
        cells.append(esc(v.get("total", "")))
        rows.append(cells)
        classes.append("sel" if name == selected else "")
    head = ["node", "feasible"] + [esc(p) for p in filters] + [esc(p) + " (score)" for p in scores] + ["total"]
    numeric = frozenset(range(2 + len(filters), len(head)))
    out = table(head, rows, numeric=numeric, classes=classes)
    if len(nodes) > MAX_NODES:
        out += note(f"{MAX_NODES} of {len(nodes):,} nodes shown: the feasible ones with the highest totals first.")
    return out


def explain_section_body(attempts: dict[str, dict[str, Any]]) -> str:
    """The tables, one ``<details>`` per pod, the first open."""
    if not attempts:
        return note("The explanations file has no attempt of the slowest pods.")
    parts = []
    for i, (pod, rec) in enumerate(attempts.items()):
        outcome = f"bound to {rec['selected']}" if rec.get("selected") else (rec.get("message") or "no node selected")
        summary = f"{pod}: attempt {rec.get('attempt', '?')} at {fmt_duration(float(rec.get('t', 0.0)))}, {outcome}"
        parts.append(
            f"<details{' open' if i == 0 else ''}><summary>{esc(summary)}</summary>"
            f'<div class="scroll">{attempt_table(rec)}</div></details>'
        )
    return "".join(parts)
