"""Every scenario in scenarios/ runs to completion with its expectations met, and runs are
deterministic: the same scenario and seed give the same trace hash, in this process and in
another one with a different PYTHONHASHSEED."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from emulator.scenario.loader import load_scenario
from emulator.scenario.runner import RunOptions, run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p for p in (ROOT / "scenarios").rglob("*.yaml") if "races" not in p.parts)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_meets_its_expectations(path: Path) -> None:
    result = run_scenario(load_scenario(path))
    failed = [f"{e.name}: {e.detail}" for e in result.expectations if not e.passed]
    assert not failed, failed
    assert not result.waits_timed_out
    assert result.passed
    assert result.expectations, "a scenario without expectations proves nothing"


def test_same_seed_same_trace_hash() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "kubelet-basics.yaml")
    first = run_scenario(scenario, RunOptions(seed=3))
    second = run_scenario(scenario, RunOptions(seed=3))
    assert first.trace_hash == second.trace_hash
    assert first.events == second.events


def test_different_seed_with_jitter_changes_the_trace() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "kubelet-basics.yaml")
    assert scenario.latency.api.jitter > 0
    a = run_scenario(scenario, RunOptions(seed=1))
    b = run_scenario(scenario, RunOptions(seed=2))
    assert a.trace_hash != b.trace_hash


def test_trace_hash_is_stable_across_processes_and_hash_seeds(tmp_path: Path) -> None:
    path = ROOT / "scenarios" / "kubelet-basics.yaml"
    local = run_scenario(load_scenario(path)).trace_hash
    hashes = []
    for hashseed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        out = subprocess.run(
            [sys.executable, "-m", "emulator", "run", str(path), "--output", "json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            check=False,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        hashes.append(json.loads(out.stdout)["traceHash"])
    assert hashes == [local, local]
