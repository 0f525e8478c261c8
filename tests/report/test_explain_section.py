"""The per-plugin tables of the slowest pods' last attempts (``render_run(..., explain=)``)."""

from __future__ import annotations

import re
from typing import Any

from emulator.app.report import render_run
from emulator.app.report.explain import MAX_NODES, attempt_table, last_attempts
from tests.report.fixtures import run_report


def attempt(pod: str, n: int, selected: str | None, nodes: dict[str, Any]) -> dict[str, Any]:
    message = None if selected else "0/2 nodes are available"
    return {"t": float(n), "attempt": n, "pod": pod, "nodes": nodes, "selected": selected, "message": message}


def node(feasible: bool, total: int | None, *, fail: str = "") -> dict[str, Any]:
    filt = {
        "NodeResourcesFit": {"code": "Unschedulable", "reasons": [fail]} if fail else {"code": "Success", "reasons": []}
    }
    out: dict[str, Any] = {"filter": filt, "feasible": feasible}
    if total is not None:
        out["score"] = {"NodeResourcesFit": {"raw": total, "normalized": total, "weighted": total}}
        out["total"] = total
    return out


NO_CPU = node(False, None, fail="Insufficient cpu")
RECORDS = [
    attempt("default/web-0", 1, None, {"node-0": NO_CPU, "node-1": NO_CPU}),
    attempt("default/other", 1, "node-0", {"node-0": node(True, 10)}),
    attempt(
        "default/web-0",
        2,
        "node-1",
        {"node-0": node(True, 40), "node-1": node(True, 90), "node-2": node(False, None, fail="<b>x</b>")},
    ),
]


def test_last_attempt_of_each_slow_pod_in_their_order() -> None:
    chosen = last_attempts(RECORDS, ["default/web-3", "default/web-0"])
    assert list(chosen) == ["default/web-0"]
    assert chosen["default/web-0"]["attempt"] == 2


def test_table_rows_feasible_by_total_then_the_rest_with_failures_red_and_escaped() -> None:
    html = attempt_table(RECORDS[2])
    assert re.findall(r"<tr(?: class=\"sel\")?><td>(node-\d)", html) == ["node-1", "node-0", "node-2"]
    assert '<tr class="sel"><td>node-1 ◀ selected</td>' in html
    assert 'data-tip="NodeResourcesFit: Unschedulable: &lt;b&gt;x&lt;/b&gt;"' in html
    assert "<b>x</b>" not in html


def test_section_present_only_with_explanations() -> None:
    assert '<section id="explain">' not in render_run(run_report())
    html = render_run(run_report(), explain=RECORDS)
    body = html.split('<section id="explain">')[1].split("</section>")[0]
    assert "<details open><summary>default/web-0: attempt 2 at 2s, bound to node-1</summary>" in body


def test_many_nodes_are_cut_with_a_note() -> None:
    many = attempt("p", 1, "n-000", {f"n-{i:03}": node(True, i) for i in range(MAX_NODES + 5)})
    html = attempt_table(many)
    assert html.count("<tr") == MAX_NODES + 1
    assert f"{MAX_NODES} of {MAX_NODES + 5} nodes shown" in html
