"""``hunt`` when workers die, at the command: a crashed seed in the JSON and text reports (exit
3), Ctrl-C prints what finished (exit 130), and a real ``python -m emulator hunt`` survives a
``kill -9`` of a worker and SIGINT. The rule itself (seeds retried alone, innocent seeds never
charged, stop on the first failure) is the sweep engine's: ``tests/experiments/test_sweep.py``.
The tasks are ``tests/experiments/sweepkit``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

import pytest
from rich.console import Console

from emulator.app.commands.arguments import add_hunt
from emulator.app.commands.hunt import _print_text, run
from emulator.app.experiments.executors import default_executor
from emulator.app.experiments.hunt import HuntReport, SeedOutcome
from tests.experiments.sweepkit import killing_task, marked

ROOT = Path(__file__).resolve().parents[2]


# --- the command line -----------------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_hunt(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["hunt", *argv])


SCENARIO = """\
name: tie
nodes:
  - count: 2
    namePrefix: node
    template:
      status:
        capacity: {cpu: "2", memory: 4Gi, pods: "10"}
steps:
  - createPods:
      count: 1
      namePrefix: web
      template:
        spec:
          containers:
            - name: c
              image: busybox:1.36
              resources: {requests: {cpu: 100m, memory: 64Mi}}
expect:
  - podsRunning: {count: all}
settle: SETTLE
"""


LONG: Final = "24h"
"""A settle that keeps a seed running for seconds of wall time (2 nodes' heartbeats: ~0.08 s a
simulated hour on a 2-vCPU EPYC guest), so that a signal sent a second after the workers
appear finds seeds still running; at "1h" a fast machine had finished the whole hunt by then."""


def scenario_file(tmp_path: Path, settle: str = "5s") -> Path:
    path = tmp_path / "tie.yaml"
    path.write_text(SCENARIO.replace("SETTLE", settle))
    return path


class Redirect(ThreadPoolExecutor):
    """A thread pool that runs ``fn`` for most seeds and ``special`` for the chosen ones."""

    def __init__(self, special: Callable[[str, int], SeedOutcome], seeds: set[int]) -> None:
        super().__init__(max_workers=1)
        self.special, self.seeds = special, seeds

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if args[1] in self.seeds:
            fn = self.special
        return super().submit(fn, *args, **kwargs)


def interrupt(path: str, seed: int) -> SeedOutcome:
    raise KeyboardInterrupt


@pytest.mark.parametrize("output", [pytest.param("text", id="text"), pytest.param("json", id="json")])
def test_ctrl_c_prints_what_finished_and_exits_130(
    tmp_path: Path, output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = scenario_file(tmp_path)
    with Redirect(interrupt, {2}) as pool:
        status = run(parse(str(path), "--seeds", "5", "--jobs", "1", "--output", output), executor=pool)
    assert status == 130
    out = capsys.readouterr().out
    if output == "json":
        doc = json.loads(out)
        assert (doc["seeds"], doc["failures"], doc["crashed"], doc["interrupted"]) == (2, [], [], True)
    else:
        assert out == "tie: all 2 seeds passed (interrupted; 3 not run)\n"


def test_ctrl_c_before_any_seed_completed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = scenario_file(tmp_path)
    with Redirect(interrupt, {0}) as pool:
        status = run(parse(str(path), "--seeds", "3", "--jobs", "1"), executor=pool)
    assert status == 130
    assert capsys.readouterr().out == "tie: no seed completed (interrupted; 3 not run)\n"


@pytest.mark.slow
def test_crashed_seeds_in_the_json_report_and_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = scenario_file(tmp_path)
    directory = marked(tmp_path, always=(1,))
    status = run(
        parse(str(path), "--seeds", "3", "--jobs", "2", "--output", "json"),
        new_executor=lambda: _KillingPool(directory),
    )
    assert status == 3
    doc = json.loads(capsys.readouterr().out)
    assert (doc["seeds"], doc["failures"], doc["workersLost"]) == (2, [], 3)
    assert doc["crashed"] == [{"seed": 1, "replay": f"python -m emulator run {path} --seed 1 --trace out.jsonl"}]


def test_crashed_seeds_in_the_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    report = HuntReport("tie", "tie.yaml", 4, [SeedOutcome(0, True), SeedOutcome(3, False, "expectation x: y", 2.5)])
    report.crashed, report.workers_lost = [1, 2], 5
    _print_text(report, Console(highlight=False, soft_wrap=True, width=200))
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "tie: 1 of 2 seeds failed",
        "2 crashed (their worker process died twice): 1, 2",
        "5 worker process death(s): the pool was replaced and the seeds re-run",
    ]
    assert [line.split()[:2] for line in lines[4:7]] == [["1", "-"], ["2", "-"], ["3", "2.5"]]
    assert lines[4].rstrip().endswith("crashed: the worker process died twice")
    replays = [f"  python -m emulator run tie.yaml --seed {s} --trace out.jsonl" for s in (1, 2, 3)]
    assert lines[7:] == ["replay:", *replays]


class _KillingPool(Executor):
    """A process pool whose task for seeds marked in ``directory`` kills the worker first."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.pool = default_executor(2, 3)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        path, seed = args
        if (Path(self.directory) / f"always-{seed}").exists():
            return self.pool.submit(killing_task, self.directory, seed)
        return self.pool.submit(fn, path, seed)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)


# --- a real run of ``python -m emulator hunt`` ----------------------------------------------


def descendants(pid: int) -> Iterator[int]:
    """Process ids below ``pid`` (Linux ``/proc``): the forkserver, the workers, the tracker."""
    parent: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    for child, ppid in parent.items():
        p = ppid
        while p in parent and p != pid:
            p = parent[p]
        if p == pid:
            yield child


def workers(pid: int) -> list[int]:
    """The pool's workers: descendants that are grandchildren (children of the forkserver)."""
    below = set(descendants(pid))
    out = []
    for child in below:
        fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        if int(fields[1]) in below:
            out.append(child)
    return sorted(out)


def start_hunt(path: Path, seeds: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    argv = [sys.executable, "-m", "emulator", "hunt", str(path), "--seeds", str(seeds), "--jobs", "2"]
    argv += ["--output", "json"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def wait_for_workers(proc: subprocess.Popen[str], count: int) -> list[int]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = workers(proc.pid)
        if len(found) >= count:
            return found
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"no {count} workers under pid {proc.pid}: {proc.communicate()}")


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


@pytest.mark.real_time
@pytest.mark.slow
@needs_proc
def test_kill_9_of_a_worker_loses_no_seed(tmp_path: Path) -> None:
    proc = start_hunt(scenario_file(tmp_path, LONG), 4)
    victim = wait_for_workers(proc, 1)[0]
    # Let it take a seed first: a worker killed while it still reads the call queue can leave
    # CPython 3.11's pool waiting forever on the queue's lock (gh-94777), which is not what
    # this test is about (a worker dying mid-run: OOM killer, kill -9), and which hung CI once.
    time.sleep(1.0)
    os.kill(victim, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    doc = json.loads(out)
    assert (doc["seeds"], doc["failures"], doc["crashed"]) == (4, [], [])
    assert doc["workersLost"] == 1


@pytest.mark.real_time
@pytest.mark.slow
@needs_proc
def test_sigint_prints_the_partial_report_and_exits_130(tmp_path: Path) -> None:
    proc = start_hunt(scenario_file(tmp_path, LONG), 6)
    wait_for_workers(proc, 2)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C, minus the workers
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    doc = json.loads(out)
    assert doc["interrupted"] is True
    assert doc["seeds"] < 6
    assert doc["crashed"] == []
