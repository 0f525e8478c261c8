"""``render_run`` on hand-made reports shaped as the contract says: every section present in
the order of issue 15, or its absence explained; hostile text escaped."""

from __future__ import annotations

import re
from typing import Any

import pytest

from emulator.app.report import render_run
from emulator.app.report.heatmap import sort_order
from tests.report.fixtures import run_report

SECTIONS = ["pods", "queues", "cost", "heatmap", "timeline", "latency", "checks", "slowest", "metrics"]


def section(html: str, anchor: str) -> str:
    m = re.search(rf'<section id="{anchor}">(.*?)</section>', html, re.S)
    assert m is not None, f"no section {anchor}"
    return m.group(1)


def test_every_section_in_order_with_a_heading_and_caption() -> None:
    html = render_run(run_report())
    assert html.startswith("<!DOCTYPE html>")
    positions = [html.index(f'<section id="{s}">') for s in SECTIONS]
    assert positions == sorted(positions)
    assert html.index('<header class="top">') < positions[0]
    for s in SECTIONS:
        body = section(html, s)
        assert re.search(r'<h2>[^<]+</h2><p class="caption">[^<]+</p>', body), s


def test_self_contained_no_network() -> None:
    html = render_run(run_report())
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html


def test_header_names_scenario_seed_times_verdict_and_hash() -> None:
    head = render_run(run_report()).split("</header>")[0]
    for text in (
        "faults-demo",
        '<span class="fail">failed</span>',
        "seed <b>11</b>",
        "3m31s",
        "0.24 s",
        "0cc80d76f8f7e76a",
    ):
        assert text in head


@pytest.mark.parametrize(
    ("kwargs", "anchor", "present", "absent"),
    [
        pytest.param({}, "queues", ['data-chart="queues"', 'data-chart="attempts"'], ["no scheduler"], id="queues"),
        pytest.param(
            {"scheduler": False},
            "queues",
            ["This run has no scheduler: no queue to plot."],
            ['data-chart="queues"'],
            id="no-scheduler-no-queue",
        ),
        pytest.param(
            {"scheduler": False},
            "latency",
            ["This run has no scheduler: no end-to-end latency."],
            [],
            id="no-scheduler-no-e2e",
        ),
        pytest.param({}, "timeline", ['class="pod"', "default/web-4"], ["No timeline"], id="timeline"),
        pytest.param(
            {"nodes": 201, "timeline": False},
            "timeline",
            ["No timeline: the run had 201 nodes (the timeline is kept for at most 200); see the heat map."],
            ['class="pod"'],
            id="many-nodes-no-timeline",
        ),
        pytest.param(
            {},
            "heatmap",
            ['<canvas class="heat"', 'data-res="cpu"', 'data-res="memory"', "No node has nvidia.com/gpu allocatable"],
            ['data-res="nvidia.com/gpu"'],
            id="no-gpu-no-gpu-map",
        ),
        pytest.param(
            {"gpu": True},
            "heatmap",
            ['data-res="nvidia.com/gpu"', "GPU (nvidia.com/gpu)"],
            ["No node has nvidia.com/gpu"],
            id="gpu-map",
        ),
        pytest.param(
            {},
            "pods",
            ['class="marker fault"', "fault nodeHeartbeatStop node-2", 'class="area"', '<ol class="markers">'],
            [],
            id="pods-with-markers",
        ),
    ],
)
def test_sections_present_or_explained(
    kwargs: dict[str, Any], anchor: str, present: list[str], absent: list[str]
) -> None:
    body = section(render_run(run_report(**kwargs)), anchor)
    for text in present:
        assert text in body
    for text in absent:
        assert text not in body


def test_report_without_series_says_so() -> None:
    report = run_report()
    del report["series"], report["metrics"]
    html = render_run(report)
    assert "This report carries no time series (made by an older version of the emulator): no plots." in html
    assert "This report carries no metrics" in html
    assert '<section id="checks">' in html


def test_checks_mark_failures_and_first_violation() -> None:
    body = section(render_run(run_report()), "checks")
    assert '<tr class="bad"><td class="wrap">✗ podsFailed: 0</td>' in body
    assert "12.5s: default/x bound twice" in body


def test_metrics_table_shows_durations_and_percentages() -> None:
    body = section(render_run(run_report()), "metrics")
    assert '<td>pendingSeconds.p90</td><td class="num">2 (2s)</td>' in body
    assert '<td>cpuAllocation.mean</td><td class="num">25.0%</td>' in body
    assert '<td>gpuAllocation</td><td class="num">—</td>' in body


HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def hostile_report() -> dict[str, Any]:
    report = run_report()
    series = report["series"]
    report["scenario"] = HOSTILE
    series["nodes"]["names"][0] = HOSTILE
    series["timeline"][0]["pod"] = "default/" + HOSTILE
    series["slowest"][0]["pod"] = "default/" + HOSTILE
    series["slowest"][0]["message"] = HOSTILE
    series["markers"][0]["label"] = HOSTILE
    report["expectations"][0]["name"] = HOSTILE
    return report


def test_hostile_names_and_messages_are_escaped() -> None:
    html = render_run(
        hostile_report(),
        trace=[{"kind": "Pod", "ns": "default", "name": HOSTILE, "verb": "create", "t": 0.0, "message": HOSTILE}],
    )
    assert HOSTILE not in html
    assert "<script>window" not in html
    assert "<img" not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    # the JSON blocks hold it too, unable to close their element
    assert "\\u003cscript\\u003ewindow.__pwned=1" in html
    assert html.count("<script") == html.count("</script>")


def test_trace_adds_each_slow_pods_writes() -> None:
    trace = [
        {"rv": 1, "t": 0.01, "verb": "create", "kind": "Pod", "ns": "default", "name": "web-0", "phase": "Pending"},
        {
            "rv": 2,
            "t": 0.02,
            "verb": "updateStatus",
            "kind": "Pod",
            "ns": "default",
            "name": "web-0",
            "reason": "SchedulerError",
            "message": "injected",
        },
        {"rv": 3, "t": 2.0, "verb": "bind", "kind": "Pod", "ns": "default", "name": "web-0", "nodeName": "node-1"},
        {"rv": 4, "t": 2.1, "verb": "bind", "kind": "Pod", "ns": "default", "name": "other", "nodeName": "node-1"},
        {"rv": 5, "t": 2.2, "verb": "create", "kind": "Event", "ns": "default", "name": "web-0.1"},
    ]
    body = section(render_run(run_report(), trace=trace), "slowest")
    assert "<summary>default/web-0 (3 writes)</summary>" in body
    assert (
        "<td>20ms</td><td>updateStatus</td><td></td><td></td>"
        '<td class="wrap"><span class="msg">SchedulerError: injected</span></td>' in body
    )
    assert "<td>2s</td><td>bind</td><td>node-1</td>" in body
    assert "<summary>default/web-3 (0 writes)</summary>" in body
    assert "other" not in body


def test_without_trace_the_page_says_how_to_get_histories() -> None:
    assert "Give the run&#x27;s trace" in section(render_run(run_report()), "slowest")


@pytest.mark.parametrize(
    ("rows", "order"),
    [
        pytest.param([bytes([10, 10]), bytes([100, 100]), bytes([50, 255])], [1, 2, 0], id="by-mean-of-existing"),
        pytest.param([bytes([255, 255]), bytes([0, 0])], [1, 0], id="never-existed-last"),
        pytest.param([bytes([20]), bytes([20])], [0, 1], id="ties-keep-creation-order"),
    ],
)
def test_heat_rows_sorted_by_mean_allocation(rows: list[bytes], order: list[int]) -> None:
    assert sort_order(rows) == order


def test_a_long_series_is_decimated_but_keeps_its_spike() -> None:
    report = run_report(end=3600.0)
    report["series"]["pods"]["Pending"][1234] = 99
    body = section(render_run(report), "pods")
    assert len(body) < 100_000
    spike = re.search(r'<path class="area" fill="#f59e0b"[^>]* d="([^"]+)"', body)
    assert spike is not None
    tops = [float(p.split(",")[1]) for p in spike.group(1).lstrip("M").rstrip("Z").split("L")]
    assert min(tops) < 100  # the one-sample spike of 99 pending pods survives (6 pods sit at y≈180)


def test_a_crowded_timeline_draws_the_longest_bars_within_its_cap() -> None:
    report = run_report(nodes=200)
    timeline = [
        {"pod": f"p-{i}", "node": f"node-{i % 200}", "start": i % 100, "end": i % 100 + 1 + i % 7, "phase": "Succeeded"}
        for i in range(10_000)
    ]
    report["series"]["timeline"] = timeline
    body = section(render_run(report), "timeline")
    assert body.count('class="pod"') == 4000
    assert "4,000 of 10,000 bars drawn: the longest" in body
    (height,) = re.findall(r'<svg class="chart gantt" viewBox="0 0 \d+ (\d+)"', body)
    assert int(height) < 1000


def test_a_run_without_pods_says_so_instead_of_an_empty_chart() -> None:
    report = run_report()
    pods = report["series"]["pods"]
    for phase in pods:
        pods[phase] = [0] * len(pods[phase])
    body = section(render_run(report), "pods")
    assert "No pod existed during the run." in body
    assert 'class="area"' not in body
    assert '<ol class="markers">' in body
