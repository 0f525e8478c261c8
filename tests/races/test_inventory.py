"""Every race is reproducible from its seed: the same scenario and seed give the same
``traceHash`` run after run, and in another process with another ``PYTHONHASHSEED`` -- the
contract ``hunt``'s replay commands rely on. The cross-process check uses a race with
faults (watch cuts, failing lists) and latency jitter, and a failing seed of race 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from emulator.scenario.loader import load_scenario
from emulator.scenario.runner import RunOptions, run_scenario
from tests.races.racekit import RACES, ROOT, load, path

SCENARIOS = sorted(p.stem for p in RACES.glob("*.yaml"))


def test_every_race_has_a_scenario_and_a_test() -> None:
    here = ROOT / "tests" / "races"
    assert len(SCENARIOS) == 8
    missing = [n for n in SCENARIOS if not (here / f"test_{n.replace('-', '_')}.py").exists()]
    assert not missing


@pytest.mark.parametrize("name", SCENARIOS)
def test_same_seed_same_trace_hash(name: str) -> None:
    scenario = load(name)
    assert scenario.expect, "a race scenario without expectations proves nothing"
    first = run_scenario(scenario, RunOptions(seed=11))
    second = run_scenario(load(name), RunOptions(seed=11))
    assert (first.trace_hash, first.events) == (second.trace_hash, second.events)


@pytest.mark.parametrize(
    ("name", "seed", "exit_status"),
    [
        pytest.param("stale-watch-relist", 8, 0, id="stale-watch-relist"),
        pytest.param("double-booking-no-assume", 0, 1, id="double-booking-failing-seed"),
    ],
)
def test_trace_hash_is_stable_across_processes_and_hash_seeds(name: str, seed: int, exit_status: int) -> None:
    scenario = load_scenario(path(name))
    assert scenario.latency.api.jitter > 0
    assert scenario.latency.watch.jitter > 0
    local = run_scenario(scenario, RunOptions(seed=seed))
    hashes = []
    for hashseed in ("0", "4242"):
        out = subprocess.run(
            [sys.executable, "-m", "emulator", "run", str(path(name)), "--seed", str(seed), "--output", "json"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": hashseed},
            cwd=ROOT,
            check=False,
            timeout=120,
        )
        assert out.returncode == exit_status, out.stderr
        report = json.loads(out.stdout)
        assert report["seed"] == seed
        hashes.append(report["traceHash"])
    assert hashes == [local.trace_hash, local.trace_hash]
