"""Race 1, double booking without the assume cache (``scenarios/races/double-booking-no-assume.yaml``).

Two 2-CPU pods, 12 ms apart; `big-0` (3 CPUs) is preferred and has room for one. With
``assumeCache: false`` the second cycle runs before the first binding's watch event for
some seeds (seed 0: both bound to `big-0`, the kubelet rejects `web-1` with OutOfcpu) and
after it for others (seed 1). With the assume cache no seed double-books. The catch is the
``podsFailed: {count: 0}`` expectation (and ``podsRunning: all``); the kubelet's admission
keeps the node within its allocatable, so the noOvercommit invariant holds either way.
``hunt`` finds the race and prints the replay command of each failing seed.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ThreadPoolExecutor

import pytest

from emulator.app.commands import hunt
from emulator.app.commands.arguments import add_hunt
from emulator.app.experiments.hunt import hunt_seeds
from tests.races.racekit import assert_invariants_hold, assert_passes, load, path, play, with_options

pytestmark = pytest.mark.slow

NAME = "double-booking-no-assume"
DOUBLE_BOOKED_SEED = 0
"""With assume off, seed 0 double-books `big-0`."""
LUCKY_SEED = 1
"""With assume off, seed 1's first binding is seen in time: no double booking."""
HUNT_SEEDS = range(10)
FAILING_IN_HUNT = [0, 2, 8, 9]
"""The seeds of ``HUNT_SEEDS`` that fail with assume off (about 30 % of all seeds do)."""


def test_the_scenario_ships_with_the_assume_cache_off() -> None:
    assert load(NAME).scheduler_options.assume_cache is False


def test_assume_off_double_books_and_the_kubelet_rejects_the_loser() -> None:
    run = play(load(NAME), DOUBLE_BOOKED_SEED)
    assert [(pod, node) for _, pod, node in run.binds()] == [("web-0", "big-0"), ("web-1", "big-0")]
    # The second bind reached the server before the scheduler saw the first one.
    rejected = run.first(lambda w: w.kind == "Pod" and w.new is not None and w.new.status.phase == "Failed")
    assert (rejected.obj.metadata.name, rejected.new.status.reason) == ("web-1", "OutOfcpu")
    assert rejected.new.status.message.startswith("Pod was rejected: Node didn't have enough resource: cpu")
    assert run.failed_expectations() == ["podsFailed: 0", "podsRunning: all matching 'app=web'"]
    assert run.result.pods["failed"] == 1
    # The kubelet's admission settled the race: no overcommit, no double binding.
    assert_invariants_hold(run)


def test_assume_off_is_a_race_not_a_certainty() -> None:
    run = play(load(NAME), LUCKY_SEED)
    assert sorted(node for _, _, node in run.binds()) == ["big-0", "small-0"]
    assert_passes(run)


@pytest.mark.parametrize("seed", range(20), ids=lambda s: f"seed{s}")
def test_assume_on_never_double_books(seed: int) -> None:
    run = play(with_options(load(NAME), assume_cache=True), seed)
    assert sorted(node for _, _, node in run.binds()) == ["big-0", "small-0"]
    assert_passes(run)


def test_hunt_finds_the_planted_race_and_prints_replay_commands(capsys: pytest.CaptureFixture[str]) -> None:
    file = str(path(NAME))
    with ThreadPoolExecutor(max_workers=2) as pool:
        report = hunt_seeds(file, HUNT_SEEDS, pool)
    assert [o.seed for o in report.failures] == FAILING_IN_HUNT
    assert all(o.reason == "expectation podsFailed: 0 failed (1 of 2 pods)" for o in report.failures)

    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_hunt(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["hunt", file, "--seeds", str(len(HUNT_SEEDS)), "--stop-on-first"])
    with ThreadPoolExecutor(max_workers=1) as pool:
        status = hunt.run(args, executor=pool)
    out = capsys.readouterr().out
    assert status == 1
    assert f"python -m emulator run {file} --seed 0 --trace out.jsonl" in out
