"""``hunt`` when workers die: a dead worker's pool is replaced and its seed retried once, a seed
whose worker dies twice alone is ``crashed`` (exit 3), innocent seeds are never charged, finished
outcomes are kept, and Ctrl-C prints what finished (exit 130).

The seed task here kills its own worker process for chosen seeds, read from marker files in a
directory passed as the task's ``path``: ``once-<seed>`` (the first run dies, the marker is
consumed) and ``always-<seed>``. Each run appends its seed to ``runs.log``. Workers import this
module by name to unpickle the task (the repository root is on ``sys.path`` under
``python -m pytest`` and the README's commands).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import BrokenExecutor, Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from emulator.commands.arguments import add_hunt
from emulator.commands.hunt import HuntReport, SeedOutcome, _print_text, default_executor, hunt_seeds, run

ROOT = Path(__file__).resolve().parents[2]


def killing_task(path: str, seed: int) -> SeedOutcome:
    """Pass for odd seeds, fail for even ones; die first as the markers in ``path`` say."""
    here = Path(path)
    with (here / "runs.log").open("a") as log:
        log.write(f"{seed}\n")
    if (here / f"always-{seed}").exists():
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        (here / f"once-{seed}").rename(here / f"died-{seed}")  # atomic: only one run dies
    except FileNotFoundError:
        pass
    else:
        os._exit(1)
    time.sleep(0.05)  # long enough for the flight to hold several seeds when one dies
    return SeedOutcome(seed, seed % 2 == 1, "" if seed % 2 else "expectation x: y", 1.0)


def markers(tmp_path: Path, *, once: tuple[int, ...] = (), always: tuple[int, ...] = ()) -> str:
    for s in once:
        (tmp_path / f"once-{s}").touch()
    for s in always:
        (tmp_path / f"always-{s}").touch()
    return str(tmp_path)


def runs(tmp_path: Path) -> Counter[int]:
    log = tmp_path / "runs.log"
    return Counter(int(line) for line in log.read_text().split()) if log.exists() else Counter()


def sweep(directory: str, seeds: range, jobs: int, **kwargs: Any) -> HuntReport:
    """``hunt_seeds`` on a process pool, replaced by fresh ones as it breaks."""
    pools: list[Executor] = []

    def fresh() -> Executor:
        pools.append(default_executor(jobs, len(seeds)))
        return pools[-1]

    first = fresh()
    try:
        return hunt_seeds(directory, seeds, first, task=killing_task, jobs=jobs, replace=fresh, **kwargs)
    finally:
        first.shutdown(wait=True, cancel_futures=True)


def accounted(report: HuntReport) -> list[int]:
    return sorted([o.seed for o in report.outcomes] + report.crashed)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("jobs", "once", "always", "crashed", "runs_of_crashed"),
    [
        pytest.param(2, (2,), (), [], 0, id="dies-once-in-a-flight-retried"),
        pytest.param(1, (2,), (), [], 0, id="dies-once-alone-retried"),
        pytest.param(2, (), (3,), [3], 3, id="always-dies-in-a-flight-crashed-after-two-alone"),
        pytest.param(1, (), (3,), [3], 2, id="always-dies-alone-crashed-after-its-retry"),
        pytest.param(2, (1, 4), (5,), [5], 3, id="two-flaky-one-crashing"),
    ],
)
def test_every_seed_is_accounted_for(
    tmp_path: Path, jobs: int, once: tuple[int, ...], always: tuple[int, ...], crashed: list[int], runs_of_crashed: int
) -> None:
    seeds = range(6)
    report = sweep(markers(tmp_path, once=once, always=always), seeds, jobs)
    assert accounted(report) == list(seeds)
    assert report.crashed == crashed
    assert [o.seed for o in report.failures] == [s for s in seeds if s % 2 == 0 and s not in crashed]
    assert report.workers_lost >= 2 * len(always) + (1 if once else 0)  # two deaths in one flight: one break
    ran = runs(tmp_path)
    for s in crashed:  # twice alone, after one run in a flight unless the flight broke before it started
        assert runs_of_crashed - (jobs > 1) <= ran[s] <= runs_of_crashed
    for s in once:
        assert ran[s] >= 2  # died once, then ran to the end
    assert report.exit_status() == (3 if crashed else 1)
    assert not report.interrupted
    assert not report.stopped_early


@pytest.mark.slow
def test_innocent_seeds_in_a_broken_flight_are_not_charged(tmp_path: Path) -> None:
    # Seed 0 dies every time with seed 1 beside it in the flight; seed 1 must still complete.
    report = sweep(markers(tmp_path, always=(0,)), range(2), 2)
    assert report.crashed == [0]
    assert [o.seed for o in report.outcomes] == [1]
    assert report.outcomes[0].passed


@pytest.mark.slow
def test_stop_on_first_still_stops(tmp_path: Path) -> None:
    report = sweep(markers(tmp_path, once=(0,)), range(40), 1, stop_on_first=True)
    assert report.stopped_early
    assert [o.seed for o in report.outcomes] == [0]  # retried after its death, then failed
    assert report.workers_lost == 1
    assert report.not_run == 39


def test_a_broken_executor_without_replace_raises(tmp_path: Path) -> None:
    pool = default_executor(1, 1)
    try:
        with pytest.raises(BrokenExecutor):
            hunt_seeds(markers(tmp_path, once=(0,)), range(1), pool, task=killing_task, jobs=1)
    finally:
        pool.shutdown(wait=True)


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


def test_a_keyboard_interrupt_in_this_process_keeps_the_outcomes() -> None:
    seen: list[int] = []

    def progress(outcome: SeedOutcome) -> None:
        seen.append(outcome.seed)
        if len(seen) == 3:
            raise KeyboardInterrupt

    def task(path: str, seed: int) -> SeedOutcome:
        return SeedOutcome(seed, seed != 1, "" if seed != 1 else "expectation x: y", 2.0)

    with ThreadPoolExecutor(max_workers=1) as pool:
        report = hunt_seeds("s.yaml", range(10), pool, progress=progress, task=task, jobs=1)
    assert report.interrupted
    assert [o.seed for o in report.outcomes] == [0, 1, 2]
    assert [o.seed for o in report.failures] == [1]
    assert report.exit_status() == 130
    assert report.to_json()["interrupted"] is True


@pytest.mark.slow
def test_crashed_seeds_in_the_json_report_and_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = scenario_file(tmp_path)
    directory = markers(tmp_path, always=(1,))
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
    proc = start_hunt(scenario_file(tmp_path, "1h"), 4)
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
    proc = start_hunt(scenario_file(tmp_path, "1h"), 6)
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


class Refusing(Executor):
    """An executor broken from the start: every submit raises."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise BrokenExecutor("refused")


def test_a_replacement_that_refuses_work_ends_the_sweep_instead_of_looping() -> None:
    with pytest.raises(BrokenExecutor, match=r"a fresh executor from replace\(\) refused work"):
        hunt_seeds("s.yaml", range(3), Refusing(), task=killing_task, jobs=2, replace=Refusing)
