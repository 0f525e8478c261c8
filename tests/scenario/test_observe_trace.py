"""The sampled series against the run's own trace: replaying a run's trace lines (one per API
write: verb, kind, name, and the nodeName/phase a write changed) must give the pod counts by
phase at every sample time, the pod timeline's bars, the count of pods scheduled and of pods
left unbound, and the histogram's total that the observer reported for the same run."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import msgspec
import pytest

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, RunResult, run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
PHASES = ("Pending", "Running", "Succeeded", "Failed")


def traced_run(name: str) -> tuple[RunResult, list[dict[str, Any]]]:
    buffer = io.BytesIO()
    result = run_scenario(load_scenario(SCENARIOS / name), RunOptions(trace=buffer))
    lines = [msgspec.json.decode(line) for line in buffer.getvalue().splitlines()]
    return result, [line for line in lines if line["kind"] == "Pod"]


def final_deletes(lines: list[dict[str, Any]]) -> set[int]:
    """The indexes of the delete lines that removed their pod. A graceful delete is a line too
    (it sets deletionTimestamp; the pod stays, terminating, in its phase) followed by the final
    one: a delete is final unless another delete of the same pod comes before its next create."""
    final: set[int] = set()
    later_delete: dict[str, bool] = {}
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        key = f"{line['ns']}/{line['name']}"
        if line["verb"] == "create":
            later_delete.pop(key, None)
        elif line["verb"] == "delete":
            if not later_delete.get(key):
                final.add(i)
            later_delete[key] = True
    return final


def phases_at(lines: list[dict[str, Any]], times: list[float]) -> dict[str, list[int]]:
    """Existing pods by phase after every write at or before each time (the trace's view)."""
    final = final_deletes(lines)
    phase: dict[str, str] = {}
    out: dict[str, list[int]] = {p: [] for p in PHASES}
    i = 0
    for t in times:
        while i < len(lines) and lines[i]["t"] <= t:
            line = lines[i]
            key = f"{line['ns']}/{line['name']}"
            if i in final:
                phase.pop(key, None)
            elif "phase" in line:
                phase[key] = line["phase"]
            i += 1
        for p in PHASES:
            out[p].append(sum(1 for v in phase.values() if v == p))
    return out


def binds(lines: list[dict[str, Any]]) -> list[tuple[str, str, float]]:
    return [(f"{x['ns']}/{x['name']}", x["nodeName"], x["t"]) for x in lines if x["verb"] == "bind"]


SCENARIO_NAMES = ["quickstart.yaml", "faults-demo.yaml", "preemption.yaml", "trace-replay.yaml"]


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_pods_by_phase_match_the_trace(name: str) -> None:
    result, lines = traced_run(name)
    series = result.extra["series"]
    assert series["pods"] == phases_at(lines, series["t"])
    assert sum(series["pods"]["Running"]) > 0  # the comparison is not between empty series


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_scheduled_unbound_and_timeline_match_the_trace(name: str) -> None:
    result, lines = traced_run(name)
    metrics, series = result.extra["metrics"], result.extra["series"]
    bound = binds(lines)
    assert metrics["podsScheduled"] == len({pod for pod, _, _ in bound})
    assert sum(series["pendingSeconds"]["counts"]) == metrics["podsScheduled"]
    existing: dict[str, bool] = {}
    final = final_deletes(lines)
    for i, line in enumerate(lines):
        key = f"{line['ns']}/{line['name']}"
        if i in final:
            existing.pop(key, None)
        elif line["verb"] == "create":
            existing[key] = False
        elif line["verb"] == "bind":
            existing[key] = True
    assert metrics["podsUnschedulable"] == sum(1 for was_bound in existing.values() if not was_bound)
    bars = sorted((bar["pod"], bar["node"], bar["start"]) for bar in series["timeline"])
    assert [(pod, node) for pod, node, _ in bars] == [(pod, node) for pod, node, _ in sorted(bound)]
    assert all(abs(a[2] - b[2]) <= 1e-6 for a, b in zip(bars, sorted(bound), strict=True))  # the trace's µs
