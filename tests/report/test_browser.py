"""The HTML reports in a real headless browser (Debian's ``chromium``, driven through the
DevTools protocol by ``tests.report.cdp``): loaded from a ``file://`` URL, no console error
or exception, every plot drawn (each SVG chart has paths or bars, the heat-map canvas has
coloured pixels, and faults-demo's silent node shows dark), hover works, hostile names do
not run; a screenshot of each page is saved in the test's tmp dir.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from emulator.app.report import render_compare, render_run
from emulator.cli import main
from tests.report.cdp import CHROMIUM, open_page
from tests.report.test_render_run import hostile_report

pytestmark = [
    pytest.mark.real_time,
    pytest.mark.skipif(
        CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium): browser tests skipped"
    ),
]

CHECKS = (Path(__file__).parent / "checks.js").read_text()
FAULTS_DEMO = str(Path(__file__).parents[2] / "scenarios" / "faults-demo.yaml")
HOVER = """
(() => {
  const el = document.querySelector('rect.hover[data-chart="pods"]');
  el.scrollIntoView({block: "center"});
  const r = el.getBoundingClientRect();
  return [r.left + r.width * 0.5, r.top + r.height * 0.5];
})()
"""
HEAT_CORNER = """
(() => {
  const el = document.querySelector("canvas.heat");
  el.scrollIntoView({block: "center"});
  const r = el.getBoundingClientRect();
  const s = r.width / el.width;  // CSS pixels per canvas pixel
  return [r.left + (el.width - 40) * s, r.top + (6 + 22 * 2.5) * s];  // the third 22 px row, near the end
})()
"""
TIP = "(() => { const t = document.getElementById('tip'); return [t.style.display, t.textContent]; })()"


async def inspect(html: Path, shot: Path, *, hover: bool = False) -> dict[str, Any]:
    """``html`` (an absolute path) loaded in a fresh browser: the checks' results, the console
    errors, the hover tooltip when asked; the screenshot written to ``shot``."""
    async with open_page(shot.parent / f"profile-{shot.stem}") as page:
        await page.goto(html.as_uri())
        result: dict[str, Any] = await page.evaluate(CHECKS)
        if hover:
            x, y = await page.evaluate(HOVER)
            await page.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
            result["tip"] = await page.evaluate(TIP)
            x, y = await page.evaluate(HEAT_CORNER)
            await page.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
            result["heat_tip"] = await page.evaluate(TIP)
            await page.evaluate("document.querySelector('button.res[data-res=\"memory\"]').click()")
            result["memory"] = await page.evaluate(CHECKS)
            result["slowest"] = await page.evaluate("document.getElementById('slowest').innerText")
        await page.screenshot(shot)
        result["errors"] = page.errors
    return result


def assert_drawn(result: dict[str, Any]) -> None:
    assert result["errors"] == []
    assert result["svgs"], "no SVG chart"
    for svg in result["svgs"]:
        assert svg["drawn"] > 0, f"empty chart {svg['label']}"


def run_report_of(tmp_path: Path, scenario: str, seed: int, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main(["run", scenario, "--seed", str(seed), "--output", "json"])
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_faults_demo_report_draws_and_node_2_goes_dark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "faults-demo.html"
    assert main(["run", FAULTS_DEMO, "--html", str(html), "--output", "json"]) == 0
    shot = tmp_path / "faults-demo.png"
    result = asyncio.run(inspect(html, shot, hover=True))
    assert_drawn(result)
    assert result["sections"] == [
        "pods",
        "queues",
        "cost",
        "heatmap",
        "timeline",
        "latency",
        "checks",
        "slowest",
        "metrics",
    ]
    assert [s["label"] for s in result["svgs"]] == [
        "pods",
        "pods in queue",
        "attempts / s",
        "pods on nodes",
        "pending time",
        "e2e latency",
    ]
    (heat,) = result["canvases"]
    assert heat["coloured"] > 0
    assert heat["dark"] > 500, "node-2's notReady interval is not drawn dark"
    display, text = result["tip"]
    assert display == "block"
    assert "simulated" in text
    assert "Running: " in text
    display, text = result["heat_tip"]
    assert display == "block"
    assert text.startswith("node-2")  # the least allocated row, at the bottom
    assert "not Ready" in text
    (memory,) = result["memory"]["canvases"]
    assert memory["coloured"] > 0
    assert memory["dark"] > 500
    # the queue refills: the ReplicaSet's replacements stay Pending, and the table says why
    assert result["slowest"].count("didn't match pod topology spread constraints") == 2
    assert shot.stat().st_size > 10_000


def test_hostile_names_do_not_run(tmp_path: Path) -> None:
    html = tmp_path / "hostile.html"
    html.write_text(render_run(hostile_report()))
    result = asyncio.run(inspect(html, tmp_path / "hostile.png"))
    assert_drawn(result)
    assert result["pwned"] is None


def test_compare_page_of_two_real_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    variants = []
    for name, seed in (("seed-11", 11), ("seed-12", 12)):
        report = run_report_of(tmp_path, FAULTS_DEMO, seed, capsys)
        variants.append(
            {
                "config": name,
                "runs": 1,
                "metrics": report["metrics"],
                "spread": {},
                "perSeed": [
                    {
                        "seed": seed,
                        "metrics": report["metrics"],
                        "traceHash": report["traceHash"],
                        "passed": report["passed"],
                    }
                ],
                "series": report["series"],
            }
        )
    html = tmp_path / "compare.html"
    html.write_text(render_compare({"scenario": "faults-demo", "seeds": [11, 12], "variants": variants}))
    result = asyncio.run(inspect(html, tmp_path / "compare.png"))
    assert_drawn(result)
    assert len(result["svgs"]) == 5
    assert result["canvases"] == []


CA_BURST = str(Path(__file__).parents[2] / "scenarios" / "cluster-autoscaler-burst.yaml")
KARPENTER_BURST = str(Path(__file__).parents[2] / "scenarios" / "karpenter-burst.yaml")
PRIORITY = "autoscaling: {clusterAutoscaler: {expander: priority, priorities: {10: [large]}}}\n"


async def hover_chart(html: Path, shot: Path, chart: str, at: float) -> dict[str, Any]:
    """``html`` loaded, the pointer over chart ``chart`` at ``at`` of its width, the tooltip read;
    the page's checks and a screenshot of the chart's section."""
    where = f"""
    (() => {{
      const el = document.querySelector('rect.hover[data-chart="{chart}"]');
      el.scrollIntoView({{block: "center"}});
      const r = el.getBoundingClientRect();
      return [r.left + r.width * {at}, r.top + r.height * 0.5];
    }})()
    """
    async with open_page(shot.parent / f"profile-{shot.stem}") as page:
        await page.goto(html.as_uri())
        result: dict[str, Any] = await page.evaluate(CHECKS)
        x, y = await page.evaluate(where)
        await page.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        result["tip"] = await page.evaluate(TIP)
        await page.screenshot(shot)
        result["errors"] = page.errors
    return result


@pytest.mark.parametrize(
    ("scenario", "band"),
    [
        pytest.param(CA_BURST, "small: ", id="cluster-autoscaler"),
        pytest.param(KARPENTER_BURST, "/spot: ", id="karpenter"),
    ],
)
def test_autoscaler_report_draws_nodes_and_cost(tmp_path: Path, scenario: str, band: str) -> None:
    html = tmp_path / "run.html"
    assert main(["run", scenario, "--html", str(html), "--output", "json"]) == 0
    shot = tmp_path / "run.png"
    result = asyncio.run(hover_chart(html, shot, "cost-rate", 0.3))
    assert_drawn(result)
    assert result["sections"][:4] == ["pods", "queues", "cost", "heatmap"]
    labels = [s["label"] for s in result["svgs"]]
    assert labels[:5] == ["pods", "pods in queue", "attempts / s", "nodes", "$ / h"]
    display, text = result["tip"]
    assert display == "block"
    assert band in text
    assert "/h" in text  # dollars per hour
    assert shot.stat().st_size > 10_000


def test_compare_of_two_autoscaler_variants_overlays_cost(tmp_path: Path) -> None:
    patch = tmp_path / "priority.yaml"
    patch.write_text(PRIORITY)
    html = tmp_path / "compare.html"
    args = ["compare", CA_BURST, "--variant", f"priority={patch}", "--seeds", "1", "--html", str(html)]
    assert main([*args, "--output", "json"]) == 0
    shot = tmp_path / "compare.png"
    result = asyncio.run(hover_chart(html, shot, "cmp-cost-rate", 0.3))
    assert_drawn(result)
    assert result["sections"][-2:] == ["series-cost-nodes", "series-cost-rate"]
    display, text = result["tip"]
    assert display == "block"
    assert "A: scenario: " in text
    assert "B: priority: $" in text
