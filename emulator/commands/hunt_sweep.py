"""The sweep under ``python -m emulator hunt``: seeds run on an executor, outcomes kept, workers
that die survived.

What it owns: ``sweep`` (every seed through ``task(path, seed)`` on any
``concurrent.futures.Executor``, at most ``jobs`` in flight), the report of a hunt
(``SeedOutcome``, ``HuntReport``: outcomes, crashed seeds, JSON, exit status) and the replay
line (``replay_command``). The executors themselves (the default process pool, Dask) are
``emulator.experiments.executors``'. It does not own
what one seed does (``hunt.run_seed``) or the command line (``hunt``). The executor is a seam:
a thread pool in tests, a process pool by default, a distributed engine's executor later; a
broken one is recognised by ``BrokenExecutor`` on its futures and replaced through ``replace``.

Workers that die. A worker process killed mid-run (``kill -9``, the OOM killer, a plugin
calling ``os._exit``) breaks a ``ProcessPoolExecutor``: every future still pending then fails
with ``BrokenProcessPool`` (any ``concurrent.futures.BrokenExecutor``), the innocent seeds as
well as the one whose worker died, and the pool takes no more work. The sweep keeps at most
``jobs`` seeds in flight, keeps every outcome that arrived, and then:

===========================================  =================================================
the executor broke while ...                 then
===========================================  =================================================
several seeds were in flight                 no seed is charged; each unfinished one becomes a
                                             *suspect*, re-run alone
one seed was in flight alone (a suspect, or  that seed is charged one death; at its first it is
``--jobs 1``)                                re-run alone (the retry), at its second it is
                                             ``crashed`` and not run again
===========================================  =================================================

A death counts against a seed only when that seed was the only one running, so an innocent
seed is never reported crashed because another one killed the pool; the price is that
suspects run one at a time. A seed that kills its worker every time thus runs three times
(once with others, twice alone). Each break replaces the executor (``replace``, a fresh pool).
A Dask executor does not break: Dask reruns a dead worker's task itself, and a seed whose
workers died too often comes back as ``KilledWorker``. Dask counts a death against every task
the worker held, so a seed that comes back so while others were in flight becomes a suspect
(re-run alone); one that comes back so alone is ``crashed``.

``--stop-on-first`` stops submitting seeds once a failure arrives; seeds already running finish
in their workers, and the report covers the seeds that completed. Ctrl-C (``KeyboardInterrupt``
in this process, or sent back by a worker that received the terminal's SIGINT) ends the sweep:
the report of the seeds that finished is printed, marked interrupted.
"""

from __future__ import annotations

import shlex
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Executor, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulator.experiments.executors import default_executor, worker_lost, workers_for

__all__ = [
    "HuntReport",
    "SeedOutcome",
    "Task",
    "default_executor",
    "replay_command",
    "sweep",
    "workers_for",
]

Task = Callable[[str, int], "SeedOutcome"]


@dataclass(frozen=True, slots=True)
class SeedOutcome:
    seed: int
    passed: bool
    reason: str = ""
    t: float | None = None


@dataclass(slots=True)
class HuntReport:
    scenario: str
    file: str
    requested: int
    outcomes: list[SeedOutcome] = field(default_factory=list)
    """Completed seeds, in seed order."""
    crashed: list[int] = field(default_factory=list)
    """Seeds whose worker process died twice while running them alone, in seed order."""
    stopped_early: bool = False
    interrupted: bool = False
    workers_lost: int = 0
    """How many times the executor broke (a worker process died) and was replaced."""

    @property
    def failures(self) -> list[SeedOutcome]:
        return [o for o in self.outcomes if not o.passed]

    @property
    def not_run(self) -> int:
        return self.requested - len(self.outcomes) - len(self.crashed)

    def exit_status(self) -> int:
        """130 interrupted, else 3 a seed crashed, else 1 a seed failed, else 0."""
        if self.interrupted:
            return 130
        if self.crashed:
            return 3
        return 1 if self.failures else 0

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "scenario": self.scenario,
            "seeds": len(self.outcomes),
            "failures": [
                {"seed": o.seed, "reason": o.reason, "t": o.t, "replay": replay_command(self.file, o.seed)}
                for o in self.failures
            ],
            "crashed": [{"seed": s, "replay": replay_command(self.file, s)} for s in self.crashed],
        }
        if self.workers_lost:
            doc["workersLost"] = self.workers_lost
        if self.stopped_early:
            doc["stoppedEarly"] = True
        if self.interrupted:
            doc["interrupted"] = True
        return doc


def replay_command(file: str, seed: int) -> str:
    return f"python -m emulator run {shlex.quote(file)} --seed {seed} --trace out.jsonl"


# --- the sweep ------------------------------------------------------------------------------


class _Sweep:
    """One hunt in progress: seeds not yet submitted (``todo``), seeds waiting for a run alone
    (``suspects``), the flight, the outcomes, and each seed's attributable deaths."""

    def __init__(self, report: HuntReport, seeds: list[int], executor: Executor, options: _Options) -> None:
        self.report = report
        self.options = options
        self.todo: deque[int] = deque(seeds)
        self.suspects: deque[int] = deque()
        self.deaths: dict[int, int] = {}
        self.done: dict[int, SeedOutcome] = {}
        self.crashed: list[int] = []
        self.executor = executor
        self.owned: list[Executor] = []
        self.flight: dict[Future[SeedOutcome], int] = {}
        self.alone = False
        """The flight is one seed on its own: a death in it is that seed's."""
        self.fresh = False
        """The executor was just replaced and no future of it has finished yet."""
        self.failed = False
        """A seed has failed (``--stop-on-first`` stops here)."""

    def run(self) -> None:
        while self.todo or self.suspects or self.flight:
            if not self._fill():
                if self.fresh and not self.flight:
                    raise BrokenExecutor("a fresh executor from replace() refused work")
                self._recover([])
                continue
            finished, _ = wait(self.flight, return_when=FIRST_COMPLETED)
            broken: list[int] = []
            for fut in sorted(finished, key=self.flight.__getitem__):
                self._settle(fut, self.flight.pop(fut), broken)
            if broken and not (self.failed and self.options.stop_on_first):
                self._recover(broken)
            if self.failed and self.options.stop_on_first:
                self.report.stopped_early = bool(self.todo or self.suspects or self.flight or broken)
                return

    def _fill(self) -> bool:
        """Top the flight up: a suspect flies alone, other seeds ``width`` at a time. False if
        the executor turned out to be broken (the seed goes back where it came from)."""
        if self.suspects:
            if self.flight:
                return True
            queue, self.alone = self.suspects, True
        else:
            queue, self.alone = self.todo, self.options.width == 1
        while queue and len(self.flight) < (1 if queue is self.suspects else self.options.width):
            seed = queue.popleft()
            try:
                self.flight[self.executor.submit(self.options.task, self.report.file, seed)] = seed
            except BrokenExecutor:
                queue.appendleft(seed)
                return False
        return True

    def _settle(self, fut: Future[SeedOutcome], seed: int, broken: list[int]) -> None:
        """Record one finished future (its seed in ``broken`` if its executor broke)."""
        self.fresh = False
        err = fut.exception()
        if isinstance(err, BrokenExecutor):
            broken.append(seed)
            return
        if isinstance(err, KeyboardInterrupt):  # a worker got the terminal's Ctrl-C
            raise err
        if worker_lost(err):  # Dask restarted the dead workers and gave up on this seed
            if self.alone:
                self.crashed.append(seed)
            else:  # a death counts against every task its worker held: retry it alone
                self.suspects.append(seed)
            return
        outcome = fut.result() if err is None else SeedOutcome(seed, False, f"crash: {type(err).__name__}: {err}")
        self.done[seed] = outcome
        self.failed |= not outcome.passed
        if self.options.progress is not None:
            self.options.progress(outcome)

    def _recover(self, broken: list[int]) -> None:
        """The executor broke: settle the rest of the flight (every future of a broken pool
        fails), charge the death to a seed that flew alone, queue the others to fly alone, and
        carry on with a fresh executor."""
        if self.flight:
            wait(self.flight)
            for fut in sorted(self.flight, key=self.flight.__getitem__):
                self._settle(fut, self.flight[fut], broken)  # a finished result is kept
            self.flight.clear()
        self.report.workers_lost += 1
        if self.alone and len(broken) == 1:
            seed = broken[0]
            self.deaths[seed] = self.deaths.get(seed, 0) + 1
            if self.deaths[seed] >= 2:
                self.crashed.append(seed)
            else:
                self.suspects.appendleft(seed)
        else:
            self.suspects.extend(sorted(broken))
        if self.options.replace is None:
            raise BrokenExecutor(f"the executor broke and hunt_seeds was given no replace (seeds {broken})")
        self._shutdown(self.executor, wait_for_workers=False)
        self.executor = self.options.replace()
        self.owned.append(self.executor)
        self.fresh = True

    def _shutdown(self, executor: Executor, *, wait_for_workers: bool) -> None:
        if executor in self.owned:
            executor.shutdown(wait=wait_for_workers, cancel_futures=True)

    def close(self, *, interrupted: bool) -> None:
        for fut in self.flight:
            fut.cancel()
        for executor in self.owned:
            executor.shutdown(wait=not interrupted, cancel_futures=True)


@dataclass(frozen=True, slots=True)
class _Options:
    width: int
    task: Task
    stop_on_first: bool
    progress: Callable[[SeedOutcome], None] | None
    replace: Callable[[], Executor] | None


def sweep(
    path: str | Path,
    seeds: Iterable[int],
    executor: Executor,
    stop_on_first: bool = False,
    progress: Callable[[SeedOutcome], None] | None = None,
    *,
    scenario: str = "",
    task: Task,
    jobs: int | None = None,
    replace: Callable[[], Executor] | None = None,
) -> HuntReport:
    """Run ``task(path, seed)`` for every seed on ``executor``, at most ``jobs`` (default: one per
    core) at a time; ``task`` must pickle (a top-level function) for a process pool. Outcomes as
    they complete go to ``progress``. The caller owns (and
    shuts down) ``executor``; ``replace`` makes a fresh one each time an executor breaks (those
    are this function's to shut down); without it a broken executor raises ``BrokenExecutor``.
    Ctrl-C (``KeyboardInterrupt``) ends the sweep with ``interrupted`` set on the report."""
    seed_list = list(seeds)
    file = str(path)
    report = HuntReport(scenario or Path(file).stem, file, len(seed_list))
    width = workers_for(jobs, len(seed_list))
    state = _Sweep(report, seed_list, executor, _Options(width, task, stop_on_first, progress, replace))
    try:
        state.run()
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        state.close(interrupted=report.interrupted)
        report.outcomes = [state.done[s] for s in sorted(state.done)]
        report.crashed = sorted(state.crashed)
    return report
