"""``experiments.sweep``, the engine under ``compare`` (``run_all``) and ``hunt`` (``hunt_seeds``):
outcomes by key, exceptions kept as findings (never retried), a dead worker's pool replaced and
its runs retried alone, a run whose worker dies twice alone crashed (innocent runs never
charged), Dask's ``KilledWorker`` retried alone then crashed, stop on the first failure, Ctrl-C,
and an executor that breaks for good (no ``replace``, or a replacement that refuses work).

Where both front ends share a rule, one test runs it through each (``FRONTS``). The tasks are
``sweepkit``'s. The command-level tests (reports, exit status, Ctrl-C of the command, a real
``kill -9``) are ``tests/hunt``'s and ``test_compare``'s.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import BrokenExecutor, Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

from emulator.app.experiments.executors import ExecutorSpec, Pool, default_executor, open_executor, workers_for
from emulator.app.experiments.hunt import HuntReport, SeedOutcome, hunt_seeds
from emulator.app.experiments.sweep import DIED_TWICE, Outcome, run_all, sweep
from tests.experiments.sweepkit import LOST, killed_worker_task, killing_task, marked, runs, task

# --- the two front ends ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ran:
    """What a sweep through either front end came to, by key."""

    completed: list[int]
    crashed: list[int]
    errors: dict[int, str] = field(default_factory=dict)
    """``compare``'s error line of each run that has one (a hunt's report keeps none)."""
    status: int | None = None
    """A hunt's exit status (``compare``'s is the command's)."""


class Front(Protocol):
    def __call__(
        self,
        executor: Executor,
        fn: Callable[[str, int], Any],
        path: str,
        keys: Sequence[int],
        *,
        jobs: int,
        replace: Callable[[], Executor] | None = None,
    ) -> Ran: ...


def via_hunt(
    executor: Executor,
    fn: Callable[[str, int], Any],
    path: str,
    keys: Sequence[int],
    *,
    jobs: int,
    replace: Callable[[], Executor] | None = None,
) -> Ran:
    report = hunt_seeds(path, keys, executor, task=fn, jobs=jobs, replace=replace)
    return Ran([o.seed for o in report.outcomes], report.crashed, status=report.exit_status())


def via_compare(
    executor: Executor,
    fn: Callable[[str, int], Any],
    path: str,
    keys: Sequence[int],
    *,
    jobs: int,
    replace: Callable[[], Executor] | None = None,
) -> Ran:
    got = run_all(Pool(executor, workers_for(jobs, len(keys)), replace), fn, [(k, (path, k)) for k in keys])
    errors = {k: o.error for k, o in got.items() if o.error is not None}
    return Ran(
        sorted(k for k, o in got.items() if not o.crashed), sorted(k for k, o in got.items() if o.crashed), errors
    )


FRONTS = [pytest.param(via_hunt, id="hunt"), pytest.param(via_compare, id="compare")]


@pytest.fixture
def lost() -> Iterator[None]:
    LOST.clear()
    yield
    LOST.clear()


# --- outcomes -------------------------------------------------------------------------------


def test_results_by_key_and_exceptions_kept(tmp_path: Path) -> None:
    directory = marked(tmp_path, **{"raise": (2,)})
    with ThreadPoolExecutor(2) as ex:
        got = run_all(Pool(ex, 2, None), task, [(n, (directory, n)) for n in range(4)])
    assert got == {0: Outcome(0), 1: Outcome(1), 2: Outcome(error="ValueError: run 2 is wrong"), 3: Outcome(9)}
    assert runs(tmp_path) == Counter(range(4))  # never retried


def test_an_exception_group_is_described_by_its_first_leaf() -> None:
    def raise_group(n: int) -> int:
        raise ExceptionGroup("unhandled errors in a TaskGroup", [KeyError(n)])

    with ThreadPoolExecutor(1) as ex:
        got = run_all(Pool(ex, 1, None), raise_group, [(0, (0,))])
    assert got == {0: Outcome(error="KeyError: 0")}


def test_counters_and_call_order(lost: None) -> None:
    """Seeds 1 and 2 come back ``KilledWorker`` in a flight of two: each re-run alone once."""
    pytest.importorskip("distributed")
    seen: list[int] = []
    with ThreadPoolExecutor(2) as ex:
        swept = sweep(
            Pool(ex, 2, None),
            killed_worker_task,
            [(n, ("", n)) for n in range(4)],
            progress=lambda k, _o: seen.append(k),
        )
    assert list(swept.outcomes) == [0, 1, 2, 3]  # call order, whatever order they ended in
    assert sorted(seen) == [0, 1, 2, 3]
    c = swept.counters
    assert (c.runs, c.reruns, c.workers_lost, c.stopped_early, c.interrupted) == (6, 2, 0, False, False)


# --- workers that die -----------------------------------------------------------------------


def test_local_pool_survives_a_death_and_crashes_a_poison_run(tmp_path: Path) -> None:
    directory = marked(tmp_path, once=(1,), always=(4,))
    seen: list[int] = []
    with open_executor(ExecutorSpec("local"), 2, 6) as pool:
        got = run_all(pool, task, [(n, (directory, n)) for n in range(6)], lambda k, _o: seen.append(k))
    assert {k: o.value for k, o in got.items() if o.error is None} == {0: 0, 1: 1, 2: 4, 3: 9, 5: 25}
    assert got[4] == Outcome(error=DIED_TWICE, crashed=True)
    assert got[4] == Outcome(error="the worker process died twice running it alone", crashed=True)
    assert sorted(seen) == list(range(6))
    assert runs(tmp_path)[4] >= 2


def hunt_on_pools(directory: str, seeds: range, jobs: int, **kwargs: Any) -> HuntReport:
    """``hunt_seeds`` of ``killing_task`` on a process pool, replaced by fresh ones as it breaks."""
    pools: list[Executor] = []

    def fresh() -> Executor:
        pools.append(default_executor(jobs, len(seeds)))
        return pools[-1]

    first = fresh()
    try:
        return hunt_seeds(directory, seeds, first, task=killing_task, jobs=jobs, replace=fresh, **kwargs)
    finally:
        first.shutdown(wait=True, cancel_futures=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("jobs", "seeds", "once", "always", "crashed", "runs_of_crashed"),
    [
        pytest.param(2, 6, (2,), (), [], 0, id="dies-once-in-a-flight-retried"),
        pytest.param(1, 6, (2,), (), [], 0, id="dies-once-alone-retried"),
        pytest.param(2, 6, (), (3,), [3], 3, id="always-dies-in-a-flight-crashed-after-two-alone"),
        pytest.param(1, 6, (), (3,), [3], 2, id="always-dies-alone-crashed-after-its-retry"),
        pytest.param(2, 6, (1, 4), (5,), [5], 3, id="two-flaky-one-crashing"),
        # seed 0 dies every time with seed 1 beside it in the flight; seed 1 must still complete
        pytest.param(2, 2, (), (0,), [0], 3, id="innocent-seed-in-a-broken-flight-not-charged"),
    ],
)
def test_every_seed_is_accounted_for(
    tmp_path: Path,
    jobs: int,
    seeds: int,
    once: tuple[int, ...],
    always: tuple[int, ...],
    crashed: list[int],
    runs_of_crashed: int,
) -> None:
    report = hunt_on_pools(marked(tmp_path, once=once, always=always), range(seeds), jobs)
    assert sorted([o.seed for o in report.outcomes] + report.crashed) == list(range(seeds))
    assert report.crashed == crashed
    assert [o.seed for o in report.failures] == [s for s in range(seeds) if s % 2 == 0 and s not in crashed]
    assert all(o.passed for o in report.outcomes if o.seed % 2)  # the innocent odd seeds passed
    assert report.workers_lost >= 2 * len(always) + (1 if once else 0)  # two deaths in one flight: one break
    ran = runs(tmp_path)
    for s in crashed:  # twice alone, after one run in a flight unless the flight broke before it started
        assert runs_of_crashed - (jobs > 1) <= ran[s] <= runs_of_crashed
    for s in once:
        assert ran[s] >= 2  # died once, then ran to the end
    assert report.exit_status() == (3 if crashed else 1)
    assert not report.interrupted
    assert not report.stopped_early


@pytest.mark.usefixtures("lost")
@pytest.mark.parametrize(
    ("front", "status", "error"),
    [
        pytest.param(via_hunt, 3, None, id="hunt"),
        pytest.param(
            via_compare, None, "KilledWorker: Attempted to run task 'run_seed-1' on 4 different workers", id="compare"
        ),
    ],
)
def test_a_killed_worker_is_retried_alone_then_crashed(front: Front, status: int | None, error: str | None) -> None:
    pytest.importorskip("distributed")
    with ThreadPoolExecutor(2) as ex:
        ran = front(ex, killed_worker_task, "s.yaml", range(4), jobs=2)
    assert ran.crashed == [1]
    assert ran.completed == [0, 2, 3]
    assert ran.status == status
    if error is not None:
        assert ran.errors[1].startswith(error)


@pytest.mark.slow
def test_dask_reruns_a_dead_workers_task_and_crashes_a_poison_one(tmp_path: Path) -> None:
    """Two sweeps on one cluster that tolerates one death per task: run 1 dies once and is rerun;
    then the poison run 3, alone (Dask may hold two tasks on a one-thread worker, and a death
    counts against both: alone, no innocent run is charged), dies twice: ``KilledWorker``."""
    dask = pytest.importorskip("dask")
    directory = marked(tmp_path, once=(1,), always=(3,))
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 1}),
        open_executor(ExecutorSpec("dask"), 2, 4) as pool,
    ):
        assert pool.width == 2
        assert pool.replace is None
        got = run_all(pool, task, [(n, (directory, n)) for n in range(3)])
        poison = run_all(pool, task, [(3, (directory, 3))])
    assert [got[n] for n in range(3)] == [Outcome(0), Outcome(1), Outcome(4)]
    assert runs(tmp_path)[1] == 2
    assert poison[3].crashed
    assert poison[3].error is not None
    assert poison[3].error.startswith("KilledWorker: ")


# --- an executor that breaks for good -------------------------------------------------------


@pytest.mark.parametrize("front", FRONTS)
def test_a_broken_executor_without_replace_raises(tmp_path: Path, front: Front) -> None:
    pool = default_executor(1, 1)
    try:
        with pytest.raises(BrokenExecutor, match=r"^the executor broke and cannot be replaced \(runs \[0\]\)$"):
            front(pool, killing_task, marked(tmp_path, once=(0,)), range(1), jobs=1)
    finally:
        pool.shutdown(wait=True)


class Refusing(Executor):
    """An executor broken from the start: every submit raises."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise BrokenExecutor("refused")


@pytest.mark.parametrize("front", FRONTS)
def test_a_replacement_that_refuses_work_ends_the_sweep_instead_of_looping(front: Front) -> None:
    """``compare``'s own copy of the sweep replaced such an executor forever: the factory here
    fails the test on its tenth call instead of hanging."""
    made: list[Executor] = []

    def fresh() -> Executor:
        assert len(made) < 10, "replace() called again and again: the sweep loops"
        made.append(Refusing())
        return made[-1]

    with pytest.raises(BrokenExecutor, match="the executor broke, and a fresh one refused work too"):
        front(Refusing(), killing_task, "s.yaml", range(3), jobs=2, replace=fresh)
    assert len(made) == 1


# --- stop on the first failure --------------------------------------------------------------


def test_stop_on_first_cancels_seeds_not_started() -> None:
    release = threading.Event()
    calls: list[int] = []

    def task(path: str, seed: int) -> SeedOutcome:
        calls.append(seed)
        if seed == 0:
            return SeedOutcome(0, False, "invariant noOvercommit: x", 1.0)
        release.wait(10)
        return SeedOutcome(seed, True)

    with ThreadPoolExecutor(max_workers=1) as pool:
        report = hunt_seeds("s.yaml", range(6), pool, stop_on_first=True, task=task)
        release.set()
    assert report.stopped_early
    assert report.outcomes == [SeedOutcome(0, False, "invariant noOvercommit: x", 1.0)]
    assert calls[0] == 0
    assert set(calls) <= {0, 1}  # seed 1 may have started before the cancellation
    assert report.to_json()["stoppedEarly"] is True


def test_without_stop_on_first_every_seed_runs() -> None:
    def task(path: str, seed: int) -> SeedOutcome:
        return SeedOutcome(seed, seed % 2 == 1, "" if seed % 2 else "expectation x: y", 2.0)

    with ThreadPoolExecutor(max_workers=2) as pool:
        report = hunt_seeds("s.yaml", range(4, 8), pool, task=task)
    assert [o.seed for o in report.outcomes] == [4, 5, 6, 7]
    assert [o.seed for o in report.failures] == [4, 6]
    assert "stoppedEarly" not in report.to_json()


@pytest.mark.slow
def test_stop_on_first_still_stops_after_a_death(tmp_path: Path) -> None:
    report = hunt_on_pools(marked(tmp_path, once=(0,)), range(40), 1, stop_on_first=True)
    assert report.stopped_early
    assert [o.seed for o in report.outcomes] == [0]  # retried after its death, then failed
    assert report.workers_lost == 1
    assert report.not_run == 39


# --- Ctrl-C ---------------------------------------------------------------------------------


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


def test_run_all_propagates_a_keyboard_interrupt_and_marks_the_pool() -> None:
    def progress(key: int, outcome: Outcome) -> None:
        raise KeyboardInterrupt

    with ThreadPoolExecutor(max_workers=1) as ex:
        pool = Pool(ex, 1, None)
        with pytest.raises(KeyboardInterrupt):
            run_all(pool, abs, [(n, (n,)) for n in range(5)], progress)
    assert pool.interrupted
