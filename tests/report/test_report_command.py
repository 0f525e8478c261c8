"""``python -m emulator report RUN.json [TRACE.jsonl] --html PATH``: its bad inputs (exit
2, one line naming the file and what was expected) and what it writes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from emulator.cli import main
from tests.report.fixtures import run_report


def write(path: Path, doc: Any) -> Path:
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def older() -> dict[str, Any]:
    doc = run_report()
    del doc["series"], doc["metrics"]
    return doc


def missing(key: str) -> dict[str, Any]:
    doc = run_report()
    del doc[key]
    return doc


def bad_version() -> dict[str, Any]:
    doc = run_report()
    doc["series"]["version"] = 2
    return doc


def bad_row() -> dict[str, Any]:
    doc = run_report()
    doc["series"]["nodes"]["allocation"]["cpu"][0] = "not base64!"
    return doc


def bad_cost() -> dict[str, Any]:
    doc = run_report()
    n = len(doc["series"]["t"])
    group = {"name": "small", "kind": "nodeGroup", "nodes": [1] * n, "perHour": [0.1] * (n - 1)}
    doc["series"]["cost"] = {"groups": [group], "nodes": [1] * n, "perHour": [0.1] * n}
    return doc


def bad_nodes() -> dict[str, Any]:
    doc = run_report()
    doc["series"]["nodes"]["edges"] = "0,1"
    return doc


@pytest.mark.parametrize(
    ("report", "message"),
    [
        pytest.param(None, r"^error: {dir}/run\.json: no such file$", id="missing-file"),
        pytest.param("{not json", r"^error: {dir}/run\.json:1:2: not JSON: Expecting property name", id="not-json"),
        pytest.param([1, 2], r"^error: {dir}/run\.json: expected a run report \(a JSON object", id="not-an-object"),
        pytest.param(
            missing("traceHash"),
            r"^error: {dir}/run\.json: not a run report: key 'traceHash' is missing "
            r"\(expected what `run --output json` prints\)$",
            id="missing-key",
        ),
        pytest.param(
            {"hello": 1},
            r"^error: {dir}/run\.json: not a run report: key 'scenario' is missing",
            id="other-json",
        ),
        pytest.param(
            older(),
            r"^error: {dir}/run\.json: no 'series': the report was made by an older version of the emulator",
            id="older-version",
        ),
        pytest.param(
            bad_version(),
            r"^error: {dir}/run\.json: series\.version: expected 1 "
            r"\(this version of the emulator reads series version 1\), got 2$",
            id="series-version",
        ),
        pytest.param(
            bad_nodes(), r"^error: {dir}/run\.json: series\.nodes\.edges: expected a list$", id="series-shape"
        ),
        pytest.param(
            bad_cost(),
            r"^error: {dir}/run\.json: series\.cost\.groups\[0\]\.perHour: expected a list of 212 numbers "
            r"\(one per series\.t\)$",
            id="series-cost-shape",
        ),
        pytest.param(
            bad_row(),
            r"^error: {dir}/run\.json: series: not in the shape of series version 1 \(ValueError: not base64: ",
            id="series-value",
        ),
    ],
)
def test_bad_report_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], report: Any, message: str
) -> None:
    path = tmp_path / "run.json"
    if report is not None:
        write(path, report)
    assert main(["report", str(path), "--html", str(tmp_path / "out.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert re.match(message.replace("{dir}", re.escape(str(tmp_path))), err.strip())
    assert not (tmp_path / "out.html").exists()


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        pytest.param(None, r"trace\.jsonl: no such file$", id="missing-trace"),
        pytest.param('{"t": 0}\n\n{"t": oops}\n', r"trace\.jsonl:3: not JSON: Expecting value$", id="line-not-json"),
        pytest.param(
            '{"t": 0}\n[1]\n', r"trace\.jsonl:2: expected a JSON object \(a trace record\)$", id="line-not-object"
        ),
    ],
)
def test_bad_trace_exits_2_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trace: str | None, message: str
) -> None:
    report = write(tmp_path / "run.json", run_report())
    path = tmp_path / "trace.jsonl"
    if trace is not None:
        path.write_text(trace)
    assert main(["report", str(report), str(path), "--html", str(tmp_path / "out.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}")
    assert re.search(message, err.strip())


def test_unwritable_html_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "run.json", run_report())
    out = tmp_path / "no-such-dir" / "out.html"
    assert main(["report", str(report), "--html", str(out)]) == 2
    assert capsys.readouterr().err == f"error: {out}: cannot write the HTML report: No such file or directory\n"


def test_writes_the_page_with_the_trace_histories(tmp_path: Path) -> None:
    report = write(tmp_path / "run.json", run_report())
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        json.dumps(
            {"rv": 3, "t": 2.0, "verb": "bind", "kind": "Pod", "ns": "default", "name": "web-0", "nodeName": "node-1"}
        )
        + "\n"
    )
    out = tmp_path / "out.html"
    assert main(["report", str(report), str(trace), "--html", str(out)]) == 0
    html = out.read_text()
    assert "<summary>default/web-0 (1 writes)</summary>" in html
    assert '<canvas class="heat"' in html


FAULTS_DEMO = str(Path(__file__).parents[2] / "scenarios" / "faults-demo.yaml")


def test_run_html_with_trace_shows_the_slow_pods_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, trace = tmp_path / "r.html", tmp_path / "t.jsonl"
    assert main(["run", FAULTS_DEMO, "--html", str(out), "--trace", str(trace), "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    html = out.read_text()
    assert html == (tmp_path / "r.html").read_text()
    slowest = report["series"]["slowest"][0]["pod"]
    assert f"<summary>{slowest} (" in html
    assert "injected by faults[0]" in html
    assert html.count("2 node(s) didn&#x27;t match pod topology spread constraints") >= 2  # the 2 replacements
    # report on the saved JSON and trace gives the same page
    saved = write(tmp_path / "run.json", report)
    again = tmp_path / "again.html"
    assert main(["report", str(saved), str(trace), "--html", str(again)]) == 0
    assert again.read_text() == html


def test_run_html_unwritable_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "missing" / "r.html"
    assert main(["run", FAULTS_DEMO, "--html", str(out)]) == 2
    assert capsys.readouterr().err.endswith(f"error: {out}: cannot write the HTML report: No such file or directory\n")


def test_report_with_explanations_and_a_bad_explain_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "run.json", run_report())
    explain = tmp_path / "explain.jsonl"
    explain.write_text('{"pod": "default/web-0", "attempt": 1, "t": 0.5, "nodes": {}, "selected": null}\n7\n')
    out = tmp_path / "out.html"
    assert main(["report", str(report), "--html", str(out), "--explain", str(explain)]) == 2
    assert capsys.readouterr().err == f"error: {explain}:2: expected a JSON object (an explained scheduling attempt)\n"
    explain.write_text('{"pod": "default/web-0", "attempt": 1, "t": 0.5, "nodes": {}, "selected": null}\n')
    assert main(["report", str(report), "--html", str(out), "--explain", str(explain)]) == 0
    assert "default/web-0: attempt 1 at 500ms, no node selected" in out.read_text()
