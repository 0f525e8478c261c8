"""The nodes-and-cost section of the run page and the cost overlays and columns of the compare
page, on the shipped autoscaler scenarios' real reports: the charts carry the series of
``series.cost`` (one band per group, one line per variant), the tables the totals and counters."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from emulator.app.report import render_compare, render_run
from emulator.app.report.cost_section import fmt_dollars
from emulator.app.scenario.loader import load_scenario, load_scenario_patched
from emulator.app.scenario.runner import run_scenario
from tests.report.fixtures import compare_doc, run_report

ROOT = Path(__file__).resolve().parents[2]
CA_BURST = ROOT / "scenarios" / "cluster-autoscaler-burst.yaml"
KARPENTER_BURST = ROOT / "scenarios" / "karpenter-burst.yaml"
PRIORITY = "autoscaling: {clusterAutoscaler: {expander: priority, priorities: {10: [large]}}}\n"
"""The README's second row: the priority expander prefers the large group."""


def _report(scenario: Any) -> dict[str, Any]:
    result = run_scenario(scenario)
    return {
        "scenario": result.scenario,
        "seed": result.seed,
        "passed": result.passed,
        "metrics": result.extra["metrics"],
        "series": result.extra["series"],
    }


@pytest.fixture(scope="module")
def ca_report() -> dict[str, Any]:
    return _report(load_scenario(CA_BURST))


@pytest.fixture(scope="module")
def karpenter_report() -> dict[str, Any]:
    return _report(load_scenario(KARPENTER_BURST))


def section(html: str, anchor: str) -> str:
    m = re.search(rf'<section id="{anchor}">(.*?)</section>', html, re.S)
    assert m is not None, f"no section {anchor}"
    return m.group(1)


def chart_data(html: str, chart: str) -> dict[str, Any]:
    m = re.search(rf'<script type="application/json" id="data-{chart}">(.*?)</script>', html, re.S)
    assert m is not None, f"no data for {chart}"
    data: dict[str, Any] = json.loads(m.group(1))
    return data


@pytest.mark.parametrize("which", ["ca_report", "karpenter_report"])
def test_run_page_stacks_a_band_per_group(which: str, request: pytest.FixtureRequest) -> None:
    report = request.getfixturevalue(which)
    html = render_run(report)
    body = section(html, "cost")
    groups = report["series"]["cost"]["groups"]
    for chart, field in (("cost-nodes", "nodes"), ("cost-rate", "perHour")):
        assert f'data-chart="{chart}"' in body
        data = chart_data(html, chart)
        assert [s["name"] for s in data["series"]] == [g["name"] for g in groups]
        assert [s["v"] for s in data["series"]] == [g[field] for g in groups]
        assert data["ts"] == [report["series"]["t"]]
    assert body.count('<path class="area"') == 2 * sum(1 for g in groups if any(g["nodes"]))
    cost = report["metrics"]["cost"]
    assert f'<td>total cost</td><td class="num">{fmt_dollars(cost["total"])}</td>' in body
    assert f"{fmt_dollars(cost['perHour']['max'])}</td>" in body
    for label, key in (("scale-ups", "scaleUps"), ("nodes removed", "nodesRemoved")):
        assert f'<td>autoscaler: {label}</td><td class="num">{report["metrics"]["autoscaler"][key]}</td>' in body
    for g in groups:
        assert f"{g['name']}</span></td>" in body


def test_ca_groups_are_the_scenarios_node_groups(ca_report: dict[str, Any]) -> None:
    body = section(render_run(ca_report), "cost")
    assert "<td>node group</td>" in body
    assert re.search(r"small</span></td><td>node group</td><td class=\"num\">6</td>", body)
    assert re.search(r"large</span></td><td>node group</td><td class=\"num\">0</td>", body)
    assert "100.0%" in body  # small's share: large never ran


def test_no_autoscaler_no_price_gets_a_note_and_the_totals() -> None:
    report = run_report()
    report["metrics"]["cost"] = {"total": 0.0, "nodeHours": 0.17, "perHour": {"mean": 0.0, "max": 0.0}}
    report["metrics"]["autoscaler"] = dict.fromkeys(("scaleUps", "scaleDowns", "nodesCreated"), 0)
    n = len(report["series"]["t"])
    unmanaged = {"name": "unmanaged", "kind": "unmanaged", "nodes": [3] * n, "perHour": [0.0] * n}
    report["series"]["cost"] = {"groups": [unmanaged], "nodes": [3] * n, "perHour": [0.0] * n}
    body = section(render_run(report), "cost")
    assert "No autoscaler and no priced node in this run" in body
    assert "data-chart" not in body
    assert "<td>total cost</td>" in body


def test_an_older_report_says_what_it_lacks() -> None:
    report = run_report()
    report["metrics"].pop("cost", None)
    assert "This report carries no cost (an older version)." in section(render_run(report), "cost")
    report["metrics"]["cost"] = {"total": 1.0, "nodeHours": 2.0, "perHour": {"mean": 0.5, "max": 1.0}}
    body = section(render_run(report), "cost")
    assert "no cost series" in body
    assert "$1.0000" in body


def test_compare_overlays_cost_per_variant_and_marks_the_cheapest(ca_report: dict[str, Any], tmp_path: Path) -> None:
    patch = tmp_path / "priority.yaml"
    patch.write_text(PRIORITY)
    priority = _report(load_scenario_patched(str(CA_BURST), str(patch)))
    variants = []
    for name, report in (("least-waste", ca_report), ("priority", priority)):
        variants.append(
            {
                "config": "scenario",
                "variant": name,
                "patch": f"{name}.yaml",
                "runs": 1,
                "metrics": report["metrics"],
                "spread": {},
                "perSeed": [{"seed": 7, "metrics": report["metrics"], "traceHash": "x", "passed": True}],
                "series": report["series"],
            }
        )
    html = render_compare({"scenario": "cluster-autoscaler-burst", "seeds": [7], "variants": variants})
    for chart, field in (("cost-nodes", "nodes"), ("cost-rate", "perHour")):
        body = section(html, f"series-{chart}")
        assert body.count('<path class="line"') == 2
        data = chart_data(html, f"cmp-{chart}")
        assert [s["name"] for s in data["series"]] == ["A: least-waste", "B: priority"]
        assert [s["v"] for s in data["series"]] == [v["series"]["cost"][field] for v in variants]
    table = section(html, "metrics")
    row = re.search(r"<tr><td>cost.total ↓</td>(.*?)</tr>", table)
    assert row is not None
    cheap, dear = ca_report["metrics"]["cost"]["total"], priority["metrics"]["cost"]["total"]
    assert cheap < dear
    assert row.group(1) == (
        f'<td class="num best"><span class="bestv">{fmt_dollars(cheap)}</span></td>'
        f'<td class="num"><span class="">{fmt_dollars(dear)}</span></td>'
    )
    assert "<tr><td>autoscaler.scaleUps</td>" in table


def test_compare_without_autoscalers_draws_no_cost_chart() -> None:
    html = render_compare(compare_doc(2))
    assert 'id="series-cost-rate"' not in html


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.149704, "$0.1497"), (0, "$0.0000"), (1234.5, "$1,234.50"), (None, "—"), (True, "—")],
)
def test_fmt_dollars(value: Any, text: str) -> None:
    assert fmt_dollars(value) == text
