"""A run is a function of (scenario, seed): the contract ``hunt``'s replay commands and
the pinned traceHashes (``tests/scenarios/test_trace_hashes.py``) rely on.

One module for what three used to check each in its own way:

- the same scenario and seed twice in one process give the same ``traceHash`` and the
  same events (every race, the kubelet basics, the fault demo);
- another seed, with latency jitter, gives another trace (the seed is really used);
- ``python -m emulator run`` in fresh processes with different ``PYTHONHASHSEED``s gives
  the hash of the in-process run (no set or dict order of strings leaks into a run): a
  scenario at its own seed, a race with faults (watch cuts, failing lists) and jitter, and
  a failing seed of a race, which must also exit 1.

Each cross-process case starts its two subprocesses first and runs in-process while they
work, so the case costs about one run of wall time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
RACES = sorted(p.stem for p in (SCENARIOS / "races").glob("*.yaml"))


def _path(name: str) -> Path:
    race = SCENARIOS / "races" / f"{name}.yaml"
    return race if race.exists() else SCENARIOS / f"{name}.yaml"


@pytest.mark.parametrize(
    ("name", "seed"),
    [
        pytest.param("kubelet-basics", 3, id="kubelet-basics"),
        pytest.param("faults-demo", 5, id="faults-demo"),
        *(pytest.param(name, 11, id=f"races/{name}") for name in RACES),
    ],
)
def test_same_seed_same_trace_hash(name: str, seed: int) -> None:
    scenario = load_scenario(_path(name))
    assert scenario.expect, "a scenario without expectations proves nothing"
    first = run_scenario(scenario, RunOptions(seed=seed))
    second = run_scenario(load_scenario(_path(name)), RunOptions(seed=seed))
    assert (first.trace_hash, first.events) == (second.trace_hash, second.events)


def test_different_seed_with_jitter_changes_the_trace() -> None:
    scenario = load_scenario(_path("kubelet-basics"))
    assert scenario.latency.api.jitter > 0
    a = run_scenario(scenario, RunOptions(seed=1))
    b = run_scenario(scenario, RunOptions(seed=2))
    assert a.trace_hash != b.trace_hash


CROSS_PROCESS = [
    ("kubelet-basics", None, 0),  # its own seed
    ("stale-watch-relist", 8, 0),  # faults and jitter
    ("double-booking-no-assume", 0, 1),  # a failing seed: `run` exits 1
]
"""(scenario, --seed or None for the scenario's own, expected exit status of ``run``)."""

# One process per hash seed runs every case through the CLI, as ``python -m emulator run``
# would, so the cases share the interpreter's start-up (most of a case's cost).
CHILD = """
import contextlib, io, json, sys
from emulator.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(argv)
    report = json.loads(buf.getvalue())
    out.append([code, report["seed"], report["traceHash"]])
print(json.dumps(out))
"""


def _compare_with_children(argvs: list[list[str]], hashseeds: tuple[str, ...], local: Callable[[], list[Any]]) -> None:
    """Run ``argvs`` through the CLI in one child process per hash seed while ``local()``
    computes the expected ``[exit status, seed, traceHash]`` rows here; all must agree."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, json.dumps(argvs)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": hashseed},
            cwd=ROOT,
        )
        for hashseed in hashseeds
    ]
    try:
        expected = local()  # in this process, while the others run
        outs = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (stdout, stderr) in zip(procs, outs, strict=True):
        assert p.returncode == 0, stderr
        assert json.loads(stdout) == expected


def test_trace_hash_is_stable_across_processes_and_hash_seeds() -> None:
    argvs = []
    for name, seed, _ in CROSS_PROCESS:
        argv = ["run", str(_path(name)), "--output", "json"]
        argvs.append(argv + (["--seed", str(seed)] if seed is not None else []))

    def local() -> list[Any]:
        expected = []
        for name, seed, exit_status in CROSS_PROCESS:
            scenario = load_scenario(_path(name))
            assert scenario.latency.api.jitter > 0
            assert scenario.latency.watch.jitter > 0
            result = run_scenario(scenario, RunOptions(seed=seed))
            expected.append([exit_status, result.seed, result.trace_hash])
        return expected

    _compare_with_children(argvs, ("0", "12345"), local)


WORKLOADS = sorted((SCENARIOS / "workloads").glob("*.yaml"))


@pytest.mark.slow
def test_workload_runs_are_stable_across_hash_seeds() -> None:
    """The controllers (shared informers, work queues, owner indexes, the garbage collector's
    graph) keep the trace independent of string hashing: every workload scenario gives the
    same traceHash in processes with different ``PYTHONHASHSEED``s as in this one."""
    assert len(WORKLOADS) >= 5
    argvs = [["run", str(p), "--output", "json"] for p in WORKLOADS]

    def local() -> list[Any]:
        return [[0, r.seed, r.trace_hash] for r in (run_scenario(load_scenario(p)) for p in WORKLOADS)]

    _compare_with_children(argvs, ("1", "4242"), local)
