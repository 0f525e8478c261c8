"""The shipped diurnal day under each autoscaler (``bench/scenarios/diurnal-{ca,karpenter}-24h.yaml``,
issue 28), its first half hour: the day curve's load makes the HPA ask for about 400 pods, which
go pending, and the autoscaler buys the nodes for them (two pods a node); the same seed gives
the same trace twice. The whole day is a bench (``bench/README.md``, "A day under each
autoscaler"), too long for the suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["diurnal-ca-24h", "diurnal-karpenter-24h"])
def test_the_day_starts_the_same_way_twice(name: str) -> None:
    scenario = load_scenario(ROOT / "bench" / "scenarios" / f"{name}.yaml")
    first, second = (run_scenario(scenario, RunOptions(until=1800.0)) for _ in range(2))
    assert first.trace_hash == second.trace_hash
    assert first.pods["pending"] == 0
    assert first.pods["running"] >= 400
    metrics = first.extra["metrics"]
    assert metrics["autoscaler"]["nodesCreated"] >= 200
    assert metrics["cost"]["total"] > 0
    assert metrics["cost"] == second.extra["metrics"]["cost"]
