"""The observer end to end: the shipped scenarios' metrics and series, their shapes against the
contract, the JSON report's keys, and determinism (same seed, same bytes)."""

from __future__ import annotations

import base64
import functools
from pathlib import Path
from typing import Any

import msgspec
import pytest

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, RunResult, run_scenario
from emulator.app.scenario.summary import metrics_lines, to_json

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
METRIC_KEYS = [
    "podsScheduled",
    "podsUnschedulable",
    "pendingSeconds",
    "nodesUsed",
    "cpuAllocation",
    "memoryAllocation",
    "gpuAllocation",
    "preemptions",
    "evictions",
    "makespanSeconds",
    "cost",
    "autoscaler",
]


@functools.cache
def run(name: str, seed: int | None = None) -> RunResult:
    return run_scenario(load_scenario(SCENARIOS / name), RunOptions(seed=seed))


def test_preemption_counts_victims() -> None:
    m = run("preemption.yaml").extra["metrics"]
    assert m["preemptions"] >= 1
    assert m["evictions"] == 0


def test_faults_demo() -> None:
    result = run("faults-demo.yaml")
    m, s = result.extra["metrics"], result.extra["series"]
    assert m["evictions"] == 2
    assert m["preemptions"] == 0
    assert {"t": 60.0, "kind": "fault", "label": "fault nodeHeartbeatStop node-2"} in s["markers"]
    assert any(mk["label"].startswith("steps[1].createPods after x1") for mk in s["markers"])
    nodes = s["nodes"]
    spans = nodes["notReady"][nodes["names"].index("node-2")]
    long = [(a, b) for a, b in spans if b - a > 1]
    assert len(long) == 1
    assert long[0][0] == pytest.approx(110, abs=2)
    assert long[0][1] == s["end"]
    # evicted: deleted gracefully, so the kubelet ends them Succeeded (exit 0) before they go
    deleted = [bar for bar in s["timeline"] if bar["phase"] in ("Deleted", "Succeeded")]
    assert len(deleted) == 2
    assert {bar["node"] for bar in deleted} == {"node-2"}
    # the queue refills: the ReplicaSet's two replacements wait in unschedulablePods to the end
    unschedulable = s["queues"]["unschedulablePods"]
    refill = unschedulable.index(2)
    assert s["t"][refill] == pytest.approx(146, abs=1)
    assert set(unschedulable[:refill]) == {0}
    assert set(unschedulable[refill:]) == {2}
    assert m["podsUnschedulable"] == 2
    pending = [e for e in s["slowest"] if not e["bound"]]
    assert len(pending) == 2
    assert all(e["message"].startswith("0/3 nodes are available: ") for e in pending)
    assert all("2 node(s) didn't match pod topology spread constraints" in e["message"] for e in pending)


def test_trace_replay_has_gpus() -> None:
    result = run("trace-replay.yaml")
    m, s = result.extra["metrics"], result.extra["series"]
    assert m["gpuAllocation"] is not None
    assert 0 < m["gpuAllocation"]["mean"] <= 1
    assert s["nodes"]["resources"] == ["cpu", "memory", "nvidia.com/gpu"]


@pytest.mark.parametrize("name", ["quickstart.yaml", "faults-demo.yaml", "preemption.yaml", "trace-replay.yaml"])
def test_shapes_follow_the_contract(name: str) -> None:
    result = run(name)
    m, s = result.extra["metrics"], result.extra["series"]
    assert list(m) == METRIC_KEYS
    assert s["version"] == 1
    n = len(s["t"])
    assert s["t"] == [i * s["interval"] for i in range(n)]
    assert s["t"][-1] <= s["end"] == result.simulated_seconds
    for group in ("pods", "queues", "attempts"):
        assert all(len(v) == n for v in s[group].values()), group
    markers = [mk["t"] for mk in s["markers"]]
    assert markers == sorted(markers)
    nodes = s["nodes"]
    k = len(nodes["edges"]) - 1
    assert 1 <= k <= 240
    assert nodes["edges"][0] == 0.0
    assert nodes["edges"][-1] == s["end"]
    for resource in nodes["resources"]:
        rows = nodes["allocation"][resource]
        assert len(rows) == len(nodes["names"])
        assert all(len(base64.b64decode(row)) == k for row in rows)
    assert len(nodes["notReady"]) == len(nodes["pods"]) == len(nodes["names"])
    assert all(len(p) == k for p in nodes["pods"])
    for hist in (s["pendingSeconds"], s["e2eSeconds"]):
        assert len(hist["counts"]) == len(hist["edges"]) - 1 <= 40
    assert sum(s["pendingSeconds"]["counts"]) == m["podsScheduled"]
    assert len(s["slowest"]) == min(10, m["podsScheduled"] + m["podsUnschedulable"]) or len(s["slowest"]) == 10
    waits = [e["pendingSeconds"] for e in s["slowest"]]
    assert waits == sorted(waits, reverse=True)


def test_json_report_carries_both_keys_last() -> None:
    doc = to_json(run("quickstart.yaml"))
    assert list(doc)[-2:] == ["metrics", "series"]
    msgspec.json.encode(doc)  # plain JSON-able


def test_text_block() -> None:
    lines = metrics_lines(run("faults-demo.yaml").extra["metrics"])
    assert lines[0].startswith("metrics: 7 pods scheduled, 2 unschedulable; pending p50 ")
    assert "evictions 2" in lines[1]
    assert "gpu" not in lines[1]


def encoded(result: RunResult) -> tuple[bytes, bytes]:
    extra: dict[str, Any] = result.extra
    return msgspec.json.encode(extra["metrics"]), msgspec.json.encode(extra["series"])


def test_same_seed_same_bytes() -> None:
    scenario = load_scenario(SCENARIOS / "faults-demo.yaml")
    first = run_scenario(scenario, RunOptions(seed=3))
    second = run_scenario(scenario, RunOptions(seed=3))
    assert first.trace_hash == second.trace_hash
    assert encoded(first) == encoded(second)
