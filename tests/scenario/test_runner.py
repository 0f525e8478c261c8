"""The runner's own writes: namespaces, manifests pasted from ``kubectl get -o yaml``,
retries on injected errors, the ``StepError`` that aborts a run, and ``waitFor``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, RunResult, StepError, run_scenario

NODE = "nodes: [{count: 1, namePrefix: n, template: {status: {capacity: {cpu: '4', memory: 8Gi, pods: '10'}}}}]\n"
CONTAINERS = "[{name: c, image: busybox}]"
TEAM_POD = f"{{apiVersion: v1, kind: Pod, metadata: {{name: p, namespace: team}}, spec: {{containers: {CONTAINERS}}}}}"


def run(text: str, trace: io.BytesIO | None = None, *, standing_renewals: bool = True) -> RunResult:
    scenario = load_scenario_text(text, source="s.yaml", base_dir=Path("."))
    return run_scenario(scenario, RunOptions(source="s.yaml", trace=trace, standing_renewals=standing_renewals))


def failures(result: RunResult) -> list[str]:
    return [f"{e.name}: {e.detail}" for e in result.expectations if not e.passed] + result.waits_timed_out


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            "objects:\n  - {apiVersion: v1, kind: Namespace, metadata: {name: team, labels: {tier: gold}}}\n"
            f"  - {TEAM_POD}\n",
            id="namespace-before-its-pod-in-objects",
        ),
        pytest.param(
            f"objects:\n  - {TEAM_POD}\n  - {{apiVersion: v1, kind: Namespace, metadata: {{name: team}}}}\n",
            id="namespace-after-its-pod-in-objects",
        ),
        pytest.param(
            "steps:\n  - create:\n      - {apiVersion: v1, kind: Namespace, metadata: {name: team}}\n"
            f"      - {TEAM_POD}\n",
            id="namespace-in-a-create-step",
        ),
        pytest.param(
            f"objects:\n  - {{apiVersion: v1, kind: Namespace, metadata: {{name: default}}}}\n  - {TEAM_POD}\n",
            id="precreated-namespace-written-explicitly",
        ),
    ],
)
def test_namespaces_the_scenario_creates_are_not_created_twice(text: str) -> None:
    result = run(f"name: x\nsettle: 5s\n{NODE}{text}expect:\n  - podsRunning: {{count: 1}}\n")
    assert not failures(result)


def test_manifests_pasted_from_kubectl_get_are_created_as_new_objects() -> None:
    dump = (
        "{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: default, resourceVersion: '4711', "
        "uid: 0b5a1e4c-1111-2222-3333-444455556666, creationTimestamp: '2024-05-01T10:00:00Z', "
        "deletionTimestamp: '2024-05-01T11:00:00Z', deletionGracePeriodSeconds: 30}, "
        f"spec: {{containers: {CONTAINERS}}}, status: {{phase: Running, hostIP: 10.0.0.1}}}}"
    )
    trace = io.BytesIO()
    result = run(f"name: x\nsettle: 5s\n{NODE}objects: [{dump}]\nexpect:\n  - podsRunning: {{count: 1}}\n", trace)
    assert not failures(result)
    created = next(json.loads(x) for x in trace.getvalue().splitlines() if b'"name":"p"' in x)
    assert (created["verb"], created["phase"]) == ("create", "Pending")


def _error(text: str) -> StepError:
    with pytest.raises(StepError) as info:
        run(text)
    return info.value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            f"name: x\n{NODE}steps:\n  - fault: {{apiError: {{verb: get, agent: runner}}}}\n"
            "  - cordon: {node: n-0}\n",
            "s.yaml: steps[1].cordon: InternalError: Internal error occurred: injected by steps[0].fault",
            id="fault-outlasts-the-retries",
        ),
        pytest.param(
            f"name: x\n{NODE}faults: [{{apiError: {{verb: create, agent: runner, kind: Namespace}}}}]\n",
            "s.yaml: objects: InternalError: Internal error occurred: injected by faults[0]",
            id="initial-objects",
        ),
        pytest.param(
            f"name: x\n{NODE}faults: [{{apiError: {{verb: create, agent: runner, kind: Node, error: NotFound}}}}]\n",
            "s.yaml: nodes[0]: NotFound: nodes not found: injected by faults[0]",
            id="nodes-not-retried-on-not-found",
        ),
        pytest.param(
            f"name: x\n{NODE}steps:\n  - delete: {{kind: Lease, name: nope, namespace: kube-node-lease}}\n",
            's.yaml: steps[0].delete: NotFound: leases.coordination.k8s.io "nope" not found',
            id="delete-a-missing-lease",
        ),
        pytest.param(
            f"name: x\n{NODE}steps:\n"
            f"  - create: [{{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {{containers: {CONTAINERS}}}}}]\n"
            "  - waitFor: {condition: podsRunning, timeout: 1m}\n"
            "  - delete: {kind: Pod, name: p}\n"
            f"  - create: [{{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {{containers: {CONTAINERS}}}}}]\n",
            's.yaml: steps[3].create: AlreadyExists: pods "p" already exists',
            id="name-reused-while-the-pod-terminates",
        ),
    ],
)
def test_a_refused_write_aborts_the_run_at_its_step(text: str, message: str) -> None:
    assert str(_error(text)) == message


def test_injected_errors_on_the_runners_own_calls_are_retried() -> None:
    text = (
        f"name: x\nsettle: 5s\n{NODE}faults:\n"
        "  - apiError: {verb: get, agent: runner, count: 3}\n"
        "  - apiError: {verb: update, agent: runner, count: 2}\n"
        "  - apiError: {verb: delete, agent: runner, count: 2}\n"
        "  - apiError: {verb: update, agent: runner, error: Conflict, count: 2, start: 100s}\n"
        "steps:\n"
        "  - cordon: {node: n-0}\n"
        f"  - createPods: {{count: 2, namePrefix: web, template: {{spec: {{containers: {CONTAINERS}}}}}}}\n"
        "  - delete: {kind: Pod, name: web-1}\n"
        "  - at: 100s\n    uncordon: {node: n-0}\n"
        "expect:\n  - podsRunning: {count: 1}\n  - podsPending: {count: 0}\n"
    )
    result = run(text)
    assert not failures(result)
    assert result.pods["total"] == 1
    acted = {f["fault"]: f["injected"] for a in result.extra["agents"] for f in a.get("faults", [])}
    assert acted == {"faults[0]": 3, "faults[1]": 2, "faults[2]": 2, "faults[3]": 2}


def _trace(result_trace: io.BytesIO) -> list[dict[str, Any]]:
    return [json.loads(x) for x in result_trace.getvalue().splitlines()]


def test_wait_for_continues_at_the_write_that_meets_the_condition() -> None:
    text = (
        f"name: x\nsettle: 1s\nkubelet: {{containerStart: {{mean: 3s, jitter: 2s}}}}\n{NODE}steps:\n"
        f"  - createPods: {{count: 3, namePrefix: web, template: {{metadata: {{labels: {{app: web}}}}, spec: "
        f"{{containers: {CONTAINERS}}}}}}}\n"
        f"  - createPods: {{count: 1, namePrefix: db, template: {{metadata: {{labels: {{app: db}}}}, spec: "
        f"{{containers: {CONTAINERS}}}}}}}\n"
        "  - waitFor: {condition: podsRunning, selector: app=web, timeout: 1m}\n"
        f"  - create: [{{apiVersion: v1, kind: Pod, metadata: {{name: after}}, spec: {{containers: {CONTAINERS}}}}}]\n"
        "  - waitFor: {condition: podsRunning, selector: app=web, count: 4, timeout: 10s}\n"
    )
    trace = io.BytesIO()
    result = run(text, trace)
    lines = _trace(trace)
    running = [x["t"] for x in lines if x["name"].startswith("web-") and x.get("phase") == "Running"]
    (after,) = [x["t"] for x in lines if x["name"] == "after" and x["verb"] == "create"]
    assert len(running) == 3
    assert after == max(running)
    assert result.waits_timed_out == ["waitFor podsRunning timed out after 10s"]


@pytest.mark.parametrize(
    ("kubelet", "posts"),
    [
        # upstream's default nodeStatusReportFrequency (5m): an unchanged status is re-posted
        # once it is due, on the next heartbeat; the Lease is renewed every 10 s regardless
        pytest.param("", [0.0, 300.0], id="upstream-default-5m"),
        # upstream defaults.go: an explicit nodeStatusUpdateFrequency is also the report frequency
        pytest.param("kubelet: {heartbeatInterval: 10s}\n", [10.0 * i for i in range(37)], id="explicit-heartbeat"),
        pytest.param("kubelet: {nodeStatusReportFrequency: 2m}\n", [0.0, 120.0, 240.0, 360.0], id="explicit-2m"),
    ],
)
@pytest.mark.parametrize("standing", [True, False], ids=["renewals-held", "renewals-written"])
def test_node_status_posts_follow_the_report_frequency(kubelet: str, posts: list[float], standing: bool) -> None:
    trace = io.BytesIO()
    run(f"name: x\nsettle: 0s\n{kubelet}{NODE}steps:\n  - sleep: 6m\n", trace, standing_renewals=standing)
    records = [json.loads(line) for line in trace.getvalue().splitlines()]
    assert [r["t"] for r in records if r["kind"] == "Node" and r["verb"] == "updateStatus"] == posts
    leases = [r["t"] for r in records if r["kind"] == "Lease"]
    if not standing:
        assert leases == [10.0 * i for i in range(37)]  # every renewal written
    elif kubelet.startswith("kubelet: {heartbeatInterval"):
        assert leases == [10.0 * i for i in range(37)]  # never quiet: a post every beat
    else:  # created, renewed until a beat finds the status quiet; then held by the server
        assert leases[0] == 0.0
        assert len(leases) < 5
