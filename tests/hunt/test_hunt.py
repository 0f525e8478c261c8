"""``hunt``: the seeds that fail found on any Executor, failure reasons, the JSON and text
reports, bad input, and the default process pool. The sweep itself (``--stop-on-first``, workers
that die) is ``tests/experiments/test_sweep.py``'s."""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from emulator.app.commands.arguments import add_hunt
from emulator.app.commands.hunt import HuntError, run
from emulator.app.experiments.hunt import failure_of, hunt_seeds, run_seed
from emulator.app.scenario.expectations import ExpectationResult
from emulator.app.scenario.invariants import InvariantResult
from emulator.app.scenario.loader import ScenarioError, load_scenario
from emulator.app.scenario.runner import RunOptions, RunResult, run_scenario

# Two identical nodes, one pod: which node it lands on is the seeded tie-break, so the
# expectation holds for some seeds only.
TIE = """\
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
  - podOnNode: {pod: default/web-0, node: node-0}
settle: 5s
"""


def scenario(tmp_path: Path, expect: str = "  - podOnNode: {pod: default/web-0, node: node-0}\n") -> Path:
    path = tmp_path / "tie.yaml"
    path.write_text(TIE.replace("  - podOnNode: {pod: default/web-0, node: node-0}\n", expect))
    return path


IMPOSSIBLE = "  - podsRunning: {count: 5}\n"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_hunt(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["hunt", *argv])


def result(
    *,
    expectations: tuple[tuple[str, bool, str], ...] = (),
    waits: tuple[str, ...] = (),
    invariants: list[Any] | None = None,
) -> RunResult:
    return RunResult(
        scenario="s",
        seed=0,
        clock="virtual",
        simulated_seconds=60.0,
        wall_seconds=0.1,
        pods={},
        expectations=[ExpectationResult(n, p, d) for n, p, d in expectations],
        events=1,
        trace_hash="",
        waits_timed_out=list(waits),
        extra={"invariants": invariants or []},
    )


OK = ("podsRunning: all", True, "3 of 3 pods")
BAD = ("podsScheduled: all", False, "2 of 3 pods")
LATE = InvariantResult("noOvercommit", 2, 9.5, "node n1: cpu requested 1200m > allocatable 1000m")
EARLY = InvariantResult("everyPodResolved", 1, 3.25, "pod default/p is pending")
CLEAN = InvariantResult("noDoubleBinding", 0)


@pytest.mark.parametrize(
    ("run_result", "expected"),
    [
        pytest.param(result(expectations=(OK,), invariants=[CLEAN]), None, id="passed"),
        pytest.param(
            result(expectations=(OK, BAD), invariants=[CLEAN, LATE, EARLY]),
            ("invariant everyPodResolved: pod default/p is pending", 3.25),
            id="earliest-invariant-first",
        ),
        pytest.param(
            result(invariants=[LATE.to_json(), CLEAN.to_json()]),
            ("invariant noOvercommit: node n1: cpu requested 1200m > allocatable 1000m", 9.5),
            id="invariants-as-json",
        ),
        pytest.param(
            result(expectations=(OK, BAD), waits=("waitFor podsRunning timed out after 300s",)),
            ("expectation podsScheduled: all failed (2 of 3 pods)", 60.0),
            id="expectation-before-wait",
        ),
        pytest.param(
            result(waits=("waitFor podsRunning timed out after 300s",)),
            ("waitFor podsRunning timed out after 300s", 60.0),
            id="timed-out-wait",
        ),
    ],
)
def test_failure_reason(run_result: RunResult, expected: tuple[str, float] | None) -> None:
    assert failure_of(run_result) == expected


def test_hunt_finds_exactly_the_seeds_that_fail(tmp_path: Path) -> None:
    path = scenario(tmp_path)
    seeds = range(8)
    failing = [s for s in seeds if not run_scenario(load_scenario(path), RunOptions(seed=s)).passed]
    assert 0 < len(failing) < len(seeds)  # the tie-break really depends on the seed
    seen: list[int] = []
    with ThreadPoolExecutor(max_workers=3) as pool:
        report = hunt_seeds(path, seeds, pool, progress=lambda o: seen.append(o.seed))
    assert sorted(seen) == list(seeds)
    assert [o.seed for o in report.outcomes] == list(seeds)
    assert [o.seed for o in report.failures] == failing
    for o in report.failures:
        assert o.reason == "expectation podOnNode: default/web-0 on node-0 failed (pod is on node-1 (Running))"
        assert o.t is not None
        assert o.t > 0
    assert not report.stopped_early


def test_json_report_and_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = scenario(tmp_path, IMPOSSIBLE)
    with ThreadPoolExecutor(max_workers=2) as pool:
        status = run(parse(str(path), "--seeds", "3", "--seed-start", "10", "--output", "json"), executor=pool)
    assert status == 1
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["scenario", "seeds", "failures", "crashed"]
    assert doc["crashed"] == []
    assert (doc["scenario"], doc["seeds"]) == ("tie", 3)
    assert [f["seed"] for f in doc["failures"]] == [10, 11, 12]
    for f in doc["failures"]:
        assert list(f) == ["seed", "reason", "t", "replay"]
        assert f["reason"] == "expectation podsRunning: 5 failed (1 of 1 pods)"
        assert isinstance(f["t"], float)
        assert f["replay"] == f"python -m emulator run {path} --seed {f['seed']} --trace out.jsonl"


def test_text_report_lists_failures_and_replay_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = scenario(tmp_path, IMPOSSIBLE)
    with ThreadPoolExecutor(max_workers=2) as pool:
        status = run(parse(str(path), "--seeds", "2"), executor=pool)
    out = capsys.readouterr().out
    assert status == 1
    assert "tie: 2 of 2 seeds failed" in out
    assert "expectation podsRunning: 5 failed (1 of 1 pods)" in out
    assert f"  python -m emulator run {path} --seed 0 --trace out.jsonl\n" in out
    assert f"  python -m emulator run {path} --seed 1 --trace out.jsonl\n" in out


def test_all_seeds_pass_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = scenario(tmp_path, "  - podsRunning: {count: all}\n")
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)  # the progress-bar path
    with ThreadPoolExecutor(max_workers=2) as pool:
        status = run(parse(str(path), "--seeds", "3"), executor=pool)
    assert status == 0
    captured = capsys.readouterr()
    assert "tie: all 3 seeds passed" in captured.out
    assert "3/3" in captured.err  # the bar, on stderr


def test_a_crashing_run_is_a_failure_without_time(tmp_path: Path) -> None:
    outcome = run_seed(str(tmp_path / "missing.yaml"), 4)
    assert (outcome.seed, outcome.passed, outcome.t) == (4, False, None)
    assert outcome.reason.startswith("crash: ScenarioError: ")


@pytest.mark.parametrize(
    ("argv", "error", "match"),
    [
        pytest.param(("--seeds", "0"), HuntError, "--seeds: must be at least 1, got 0", id="no-seeds"),
        pytest.param(("--seeds", "2", "--jobs", "0"), HuntError, "--jobs: must be at least 1, got 0", id="no-jobs"),
        pytest.param(
            ("--seeds", "100000000"), HuntError, r"--seeds: must be at most 1000000 .*got 100000000", id="seeds-1e8"
        ),
        pytest.param(
            ("--seeds", "2", "--jobs", "257"), HuntError, r"--jobs: must be at most 256 .*got 257", id="jobs-257"
        ),
        pytest.param(("--seeds", "2", "--seed-start", "1"), ScenarioError, "missing.yaml", id="missing-file"),
    ],
)
def test_bad_input(tmp_path: Path, argv: tuple[str, ...], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        run(parse(str(tmp_path / "missing.yaml") if error is ScenarioError else str(scenario(tmp_path)), *argv))


def test_bad_scheduler_configuration_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    config = "{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration, profiles: [%s]}"
    profile = "{plugins: {score: {enabled: [{name: NoSuchPlugin}]}}}"
    path.write_text(TIE + f"scheduler: {config % profile}\n")
    with pytest.raises(HuntError, match="NoSuchPlugin"):
        run(parse(str(path), "--seeds", "1"))


def test_process_pool_runs_the_seeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = scenario(tmp_path, IMPOSSIBLE)
    status = run(parse(str(path), "--seeds", "2", "--jobs", "2", "--output", "json"))
    assert status == 1
    doc = json.loads(capsys.readouterr().out)
    assert [f["seed"] for f in doc["failures"]] == [0, 1]


def test_a_pool_that_breaks_and_whose_replacement_refuses_is_one_error_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the command line: the sweep engine's refusal is one ``error: --executor:`` line
    and exit status 1, not a traceback."""
    import contextlib
    from collections.abc import Callable, Iterator
    from concurrent.futures import BrokenExecutor, Executor, Future

    from emulator import cli
    from emulator.app.commands import hunt as hunt_command
    from emulator.app.experiments.executors import Pool

    class Refusing(Executor):
        def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
            raise BrokenExecutor("refused")

    @contextlib.contextmanager
    def refusing_pool(*_: Any) -> Iterator[Pool]:
        yield Pool(Refusing(), 2, Refusing)

    monkeypatch.setattr(hunt_command, "open_executor", refusing_pool)
    code = cli.main(["hunt", "scenarios/quickstart.yaml", "--seeds", "3", "--jobs", "2"])
    err = capsys.readouterr().err
    assert code == 1
    assert err == "error: --executor: the executor broke, and a fresh one refused work too\n"
