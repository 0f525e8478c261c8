"""The command line: exit statuses, one-line errors without tracebacks, the JSON report."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _emulator(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "emulator", *args], capture_output=True, text=True, cwd=cwd, check=False, timeout=120
    )


def _unlocated(message: str) -> str:
    """The message without the ``:line:column`` after the file name (pinned in tests/inputs)."""
    return re.sub(r":\d+:\d+: ", ": ", message, count=1)


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
        assert _unlocated(out.stderr).startswith(f"error: {broken}: ")
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
        assert _unlocated(out.stderr).startswith(f"error: {broken}: {message}"), out.stderr


# --- writes the API server would refuse: refused by validate and run alike -----------------

_NODES = "nodes: [{count: 2, namePrefix: n, template: {status: {capacity: {cpu: '2', memory: 4Gi, pods: '10'}}}}]\n"
_C = "[{name: c, image: busybox}]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            f"objects:\n  - {{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {{containers: {_C}}}}}\n"
            f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {{containers: {_C}}}}}\n",
            'objects[1].metadata.name: Pod "default/p" already exists (created by objects[0])',
            id="same-pod-twice",
        ),
        pytest.param(
            f"steps:\n  - createPods: {{count: 2, namePrefix: web, template: {{spec: {{containers: {_C}}}}}}}\n"
            f"  - createPods: {{count: 2, namePrefix: web, template: {{spec: {{containers: {_C}}}}}}}\n",
            'steps[1].createPods.namePrefix: Pod "default/web-0" already exists (created by steps[0].createPods)',
            id="create-pods-collide",
        ),
        pytest.param(
            "steps:\n  - createNodes: {count: 1, namePrefix: n, template: {}}\n",
            'steps[0].createNodes.namePrefix: Node "n-0" already exists (created by nodes[0])',
            id="create-nodes-collide",
        ),
        pytest.param(
            "steps:\n  - createPods: {count: 1, namePrefix: w, template: {spec: {priorityClassName: gold, "
            f"containers: {_C}}}}}}}\n",
            "steps[0].createPods.template.spec.priorityClassName: no PriorityClass with name gold was found "
            "(define it in objects or an earlier create step)",
            id="unknown-priority-class",
        ),
        pytest.param(
            "objects: [{apiVersion: v1, kind: Pod, metadata: {name: p}, "
            f"spec: {{priority: 5, containers: {_C}}}}}]\n",
            "objects[0].spec.priority: the integer value of priority (5) must not be provided in pod spec; "
            "priority admission controller computed 0 from the given PriorityClass name",
            id="priority-mismatch",
        ),
        pytest.param(
            "objects:\n"
            "  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: a}, value: 1, "
            "globalDefault: true}\n"
            "  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: b}, value: 2, "
            "globalDefault: true}\n",
            "objects[1].globalDefault: PriorityClass a is already marked as default (created by objects[0])",
            id="two-global-defaults",
        ),
        pytest.param(
            "objects: [{apiVersion: v1, kind: Binding, metadata: {name: p}, target: {name: n-0}}]\n",
            "objects[0].kind: a Binding cannot be created by a scenario: the scheduler binds pods "
            "(to place a pod yourself, set its spec.nodeName)",
            id="binding",
        ),
        pytest.param(
            "steps:\n  - cordon: {node: nope}\n",
            'steps[0].cordon.node: Node "nope" does not exist at this point',
            id="cordon-missing-node",
        ),
        pytest.param(
            "steps:\n  - delete: {kind: Namespace, name: default}\n",
            'steps[0].delete.name: namespaces "default" is forbidden: this namespace may not be deleted',
            id="delete-default-namespace",
        ),
        pytest.param(
            "steps:\n  - delete: {kind: Pod, name: ghost}\n",
            'steps[0].delete.name: Pod "default/ghost" does not exist at this point',
            id="delete-missing-pod",
        ),
        pytest.param(
            "faults: [{nodeHeartbeatStop: {node: n-7}}]\n",
            'faults[0].nodeHeartbeatStop.node: no node "n-7" in the scenario '
            "(nodes, objects, create and createNodes steps make them)",
            id="fault-unknown-node",
        ),
        pytest.param(
            "faults: [{nodePartition: {node: n-7, start: 1m}}]\n",
            'faults[0].nodePartition.node: no node "n-7" in the scenario '
            "(nodes, objects, create and createNodes steps make them)",
            id="partition-unknown-node",
        ),
        pytest.param(
            "steps:\n  - createPods: {count: 1, namePrefix: w, template: {metadata: {annotations: "
            f"{{emulator.k8s.io/run-duration: forever}}}}, spec: {{containers: {_C}}}}}}}\n",
            'steps[0].createPods.template.metadata.annotations["emulator.k8s.io/run-duration"]: '
            'expected a duration like 5ms, 1.5s, 2m or 1h30m, got "forever"',
            id="run-duration",
        ),
        pytest.param(
            "steps:\n  - createNodes: {count: 100000000000, namePrefix: m, template: {}}\n",
            "steps[0].createNodes.count: expected an integer >= 1 and <= 100000, got 100000000000",
            id="huge-count",
        ),
        pytest.param(
            "seed: 1\nseed: 2\n",
            'invalid YAML at line 4, column 1: mapping key "seed" already defined at line 3',
            id="duplicate-key",
        ),
    ],
)
def test_refused_writes_exit_2_on_validate_and_run(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(f"name: t\n{_NODES}{text}")
    for command in ("validate", "run"):
        out = _emulator(command, str(path))
        assert (out.returncode, _unlocated(out.stderr), out.stdout) == (2, f"error: {path}: {message}\n", ""), command


def test_a_write_refused_during_the_run_aborts_it_with_one_line_and_keeps_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"name: t\n{_NODES}steps:\n"
        f"  - createPods: {{count: 2, namePrefix: web, template: {{spec: {{containers: {_C}}}}}}}\n"
        "  - fault: {apiError: {verb: get, agent: runner}}\n"
        "  - cordon: {node: n-0}\n"
    )
    assert _emulator("validate", str(path)).returncode == 0
    trace = tmp_path / "trace.jsonl"
    out = _emulator("run", str(path), "--trace", str(trace))
    assert (out.returncode, out.stdout) == (2, "")
    assert (
        out.stderr
        == f"error: {path}: steps[2].cordon: InternalError: Internal error occurred: injected by steps[1].fault\n"
    )
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert [x["name"] for x in lines if x["kind"] == "Pod" and x["verb"] == "create"] == ["web-0", "web-1"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    ("option", "what"),
    [pytest.param("--trace", "trace", id="trace"), pytest.param("--explain", "explanations", id="explain")],
)
def test_an_output_file_that_cannot_be_written_exits_2_with_one_line(option: str, what: str) -> None:
    out = _emulator("run", "scenarios/quickstart.yaml", option, "/dev/full")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == f"error: /dev/full: cannot write the {what}: No space left on device\n"
