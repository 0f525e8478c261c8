"""``render_compare`` on compare's contract-shaped dict with per-variant series."""

from __future__ import annotations

import re

from emulator.app.report import render_compare
from emulator.app.report.compare_page import bucket_lines
from tests.report.fixtures import compare_doc, series


def test_metric_table_has_variants_as_columns_and_marks_the_best() -> None:
    html = render_compare(compare_doc())
    table = re.search(r'<section id="metrics">(.*?)</section>', html, re.S)
    assert table is not None
    body = table.group(1)
    assert '<th class="num">A: configs/v0.yaml</th><th class="num">B: configs/v1.yaml</th>' in body
    row = re.search(r"<tr><td>nodesUsed.mean ↓</td>(.*?)</tr>", body)
    assert row is not None
    assert row.group(1) == (
        '<td class="num"><span class="">2.4 ± 0.1</span></td>'
        '<td class="num best"><span class="bestv">1.4 ± 0.1</span></td>'
    )
    tie = re.search(r"<tr><td>evictions ↓</td>(.*?)</tr>", body)
    assert tie is not None
    assert "best" not in tie.group(1)
    assert '<tr><td>passed</td><td class="num">1 of 1</td>' in body


def test_each_series_overlaid_per_variant() -> None:
    html = render_compare(compare_doc(3))
    for chart in ("cmp-running", "cmp-pending", "cmp-queue", "cmp-nodes", "cmp-cpu"):
        m = re.search(rf'<section id="series-{chart[4:]}">(.*?)</section>', html, re.S)
        assert m is not None, chart
        assert m.group(1).count('<path class="line"') == 3, chart


def test_a_variant_without_series_is_named() -> None:
    doc = compare_doc(2)
    del doc["variants"][1]["series"]
    html = render_compare(doc)
    assert "Without series: B: configs/v1.yaml." in html


def test_no_series_at_all_says_so() -> None:
    doc = compare_doc(2)
    for v in doc["variants"]:
        del v["series"]
    assert "No variant carries its series: nothing to overlay." in render_compare(doc)


def test_bucket_lines_count_used_nodes_and_mean_cpu() -> None:
    s = series(nodes=3, buckets=22)
    mids, used, cpu = bucket_lines(s)
    assert len(mids) == len(used) == len(cpu) == 22
    assert used[0] == 3.0
    assert used[-1] == 2.0  # node-2 drained
    assert cpu[0] == round((50 + 30 + 10) / 3 / 2, 2)
