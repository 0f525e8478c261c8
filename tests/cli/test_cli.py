"""The command line: exit statuses, one-line errors without tracebacks, the JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _emulator(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "emulator", *args], capture_output=True, text=True, cwd=cwd, check=False, timeout=120
    )


def test_run_json_report_has_the_documented_fields(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    out = _emulator("run", "scenarios/kubelet-basics.yaml", "--output", "json", "--trace", str(trace))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    for key in (
        "scenario",
        "seed",
        "clock",
        "simulatedSeconds",
        "wallSeconds",
        "pods",
        "expectations",
        "events",
        "traceHash",
    ):
        assert key in report
    assert report["clock"] == "virtual"
    assert set(report["pods"]) == {"total", "pending", "running", "succeeded", "failed"}
    assert report["pods"]["total"] == 3
    assert all(set(e) == {"name", "passed", "detail"} for e in report["expectations"])
    lines = trace.read_text().splitlines()
    assert len(lines) == report["events"]
    first = json.loads(lines[0])
    assert list(first)[:6] == ["rv", "t", "verb", "kind", "ns", "name"]
    import hashlib

    assert hashlib.sha256(trace.read_bytes()).hexdigest() == report["traceHash"]
    rejected = [json.loads(x) for x in lines if '"OutOfcpu"' in x]
    assert rejected
    assert rejected[0]["phase"] == "Failed"
    assert rejected[0]["name"] == "too-big"


def test_failed_expectation_exits_1(tmp_path: Path) -> None:
    text = (ROOT / "scenarios" / "kubelet-basics.yaml").read_text()
    broken = tmp_path / "s.yaml"
    broken.write_text(
        text.replace("podsFailed: {count: 1, selector: app=big}", "podsFailed: {count: 0, selector: app=big}")
    )
    out = _emulator("run", str(broken))
    assert out.returncode == 1
    assert "FAILED" in out.stdout


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        pytest.param(
            ("requests: {cpu: 500m, memory: 256Mi}", "requests: {cpu: 2 cores, memory: 256Mi}"),
            'steps[0].create[0].spec.containers[0].resources.requests.cpu: Invalid value: "2 cores"',
            id="bad-quantity",
        ),
        pytest.param(("  - waitFor:", "  - waitFr:"), 'steps[1]: unknown step verb "waitFr"', id="unknown-verb"),
        pytest.param(("seed: 7", "seed: seven"), "seed: expected", id="bad-seed"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, patch: tuple[str, str], message: str) -> None:
    text = (ROOT / "scenarios" / "kubelet-basics.yaml").read_text()
    assert patch[0] in text
    broken = tmp_path / "s.yaml"
    broken.write_text(text.replace(patch[0], patch[1], 1))
    for command in ("validate", "run"):
        out = _emulator(command, str(broken))
        assert out.returncode == 2, out.stderr
        assert "Traceback" not in out.stderr
        assert out.stderr.count("\n") == 1
        assert out.stderr.startswith(f"error: {broken}: ")
        assert message in out.stderr
        assert out.stdout == ""


def test_missing_file_exits_2() -> None:
    out = _emulator("run", "no/such/scenario.yaml")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "no/such/scenario.yaml" in out.stderr


def test_help_everywhere() -> None:
    for args in (["--help"], ["run", "--help"], ["validate", "--help"]):
        out = _emulator(*args)
        assert out.returncode == 0
        assert "usage:" in out.stdout


@pytest.mark.parametrize(
    ("scheduler", "message"),
    [
        pytest.param(
            "scheduler:\n  apiVersion: kubescheduler.config.k8s.io/v1\n  kind: KubeSchedulerConfiguration\n"
            "  profiles:\n  - schedulerName: default-scheduler\n    plugins:\n      score:\n"
            "        enabled:\n        - name: NoSuchPlugin\n",
            "scheduler.profiles[0].plugins.score.enabled[0]",
            id="unknown-plugin",
        ),
        pytest.param(
            "scheduler:\n  apiVersion: kubescheduler.config.k8s.io/v1\n  kind: KubeSchedulerConfiguration\n"
            "  percentageOfNodesToScore: 150\n",
            "scheduler.percentageOfNodesToScore",
            id="bad-percentage",
        ),
        pytest.param(
            "scheduler:\n  apiVersion: kubescheduler.config.k8s.io/v2\n  kind: KubeSchedulerConfiguration\n",
            "scheduler.apiVersion",
            id="bad-api-version",
        ),
    ],
)
def test_bad_scheduler_configuration_exits_2_with_the_path(tmp_path: Path, scheduler: str, message: str) -> None:
    text = (ROOT / "scenarios" / "quickstart.yaml").read_text()
    broken = tmp_path / "s.yaml"
    broken.write_text(text.replace("latency:", scheduler + "latency:", 1))
    for command in ("validate", "run"):
        out = _emulator(command, str(broken))
        assert out.returncode == 2, (out.stdout, out.stderr)
        assert "Traceback" not in out.stderr
        assert out.stderr.startswith(f"error: {broken}: {message}"), out.stderr
