"""``python -m emulator hunt``: one scenario under many seeds, the failing seeds and how to
replay each.

What it owns: the sweep (``hunt_seeds``), the per-seed task (``run_seed``, a top-level function
so a process pool can pickle it), the one-line failure reason of a run (``failure_of``) and the
command-line glue (``add_parser``, ``run``). It does not own running a scenario (the runner),
the invariants (``invariants.py``) or the ``run`` command a replay line names (``cli.py``).

The execution layer is any ``concurrent.futures.Executor``: ``hunt_seeds`` only submits
``task(path, seed)`` and reads futures as they complete, so a thread pool (tests), the default
process pool or a distributed engine's executor run the same hunt. A seed's outcome depends
only on the scenario and the seed, so the failures found do not depend on the executor.

Failure reason of one run, the first that applies: the violated invariant whose first
violation came earliest (``t`` = that time); the first failed expectation; the first timed-out
``waitFor`` (``t`` = the run's end); an exception out of the run (``t`` unknown, ``null``).

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

``--stop-on-first`` stops submitting seeds once a failure arrives; seeds already running finish
in their workers, and the report covers the seeds that completed. Ctrl-C (``KeyboardInterrupt``
in this process, or sent back by a worker that received the terminal's SIGINT) ends the sweep:
the report of the seeds that finished is printed, marked interrupted.

JSON: ``{"scenario", "seeds" (seeds completed), "failures": [{"seed", "reason", "t",
"replay"}], "crashed": [{"seed", "replay"}]}`` (by seed), plus ``"workersLost": n`` when the
executor broke, ``"stoppedEarly": true`` when seeds were left unrun at the first failure and
``"interrupted": true`` after Ctrl-C. Every requested seed is completed, crashed, or not run
(``stoppedEarly``/``interrupted``).

Exit status: 0 every seed passed; 1 a seed failed (no seed crashed); 3 a seed crashed (its
worker died twice: the hunt is incomplete, whatever the other seeds did); 130 interrupted (the
partial report is printed); 2 bad input (``ScenarioError`` or ``HuntError``, before any run).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shlex
import sys
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "HuntError",
    "HuntReport",
    "SeedOutcome",
    "add_parser",
    "default_executor",
    "failure_of",
    "hunt_seeds",
    "replay_command",
    "run",
    "run_seed",
    "workers_for",
]

Task = Callable[[str, int], "SeedOutcome"]


class HuntError(Exception):
    """Bad input to ``hunt`` (the CLI prints ``error: <message>`` and exits 2)."""


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


# --- one seed -------------------------------------------------------------------------------


def _violations(items: Iterable[Any]) -> list[tuple[float, int, str]]:
    """(first time, position, "invariant <name>: <detail>") of each violated invariant; items are
    ``InvariantResult``s or their JSON form."""
    out: list[tuple[float, int, str]] = []
    for i, inv in enumerate(items):
        doc = inv if isinstance(inv, Mapping) else inv.to_json()
        if not doc.get("violations"):
            continue
        first = doc.get("first") or {}
        detail = first.get("detail", "")
        t = first.get("time")
        out.append((float("inf") if t is None else float(t), i, f"invariant {doc['name']}: {detail}".rstrip(": ")))
    return sorted(out)


def failure_of(result: Any) -> tuple[str, float] | None:
    """``(reason, t)`` of a failed ``RunResult``, or None if it passed (see the docstring)."""
    found = _violations(result.extra.get("invariants", ()))
    if found:
        t, _, reason = found[0]
        return reason, (result.simulated_seconds if t == float("inf") else t)
    for e in result.expectations:
        if not e.passed:
            return f"expectation {e.name} failed ({e.detail})", result.simulated_seconds
    if result.waits_timed_out:
        return result.waits_timed_out[0], result.simulated_seconds
    if not result.passed:
        return "failed", result.simulated_seconds
    return None


def _leaf(err: BaseException) -> BaseException:
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err


def run_seed(path: str, seed: int) -> SeedOutcome:
    """Run the scenario at ``path`` with ``seed`` (in whatever process calls this)."""
    from emulator.scenario.loader import load_scenario
    from emulator.scenario.runner import RunOptions, run_scenario

    try:
        result = run_scenario(load_scenario(path), RunOptions(seed=seed))
    except Exception as err:
        leaf = _leaf(err)
        return SeedOutcome(seed, False, f"crash: {type(leaf).__name__}: {leaf}", None)
    failure = failure_of(result)
    if failure is None:
        return SeedOutcome(seed, True)
    return SeedOutcome(seed, False, failure[0], round(failure[1], 6))


# --- the sweep ------------------------------------------------------------------------------


def workers_for(jobs: int | None, seeds: int) -> int:
    """``--jobs``, else one per core; never more than there are seeds."""
    return max(1, min(jobs or os.cpu_count() or 1, seeds))


def default_executor(jobs: int | None, seeds: int) -> ProcessPoolExecutor:
    """A process pool (forkserver where available, else spawn: safe under pytest and threads)."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return ProcessPoolExecutor(max_workers=workers_for(jobs, seeds), mp_context=ctx)


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


def hunt_seeds(
    path: str | Path,
    seeds: Iterable[int],
    executor: Executor,
    stop_on_first: bool = False,
    progress: Callable[[SeedOutcome], None] | None = None,
    *,
    scenario: str = "",
    task: Task = run_seed,
    jobs: int | None = None,
    replace: Callable[[], Executor] | None = None,
) -> HuntReport:
    """Run ``task(path, seed)`` for every seed on ``executor``, at most ``jobs`` (default: one
    per core) at a time; outcomes as they complete go to ``progress``. The caller owns (and
    shuts down) ``executor``; ``replace`` makes a fresh one each time an executor breaks (those
    are this function's to shut down); without it a broken executor raises ``BrokenExecutor``.
    Ctrl-C (``KeyboardInterrupt``) ends the sweep with ``interrupted`` set on the report."""
    seed_list = list(seeds)
    file = str(path)
    report = HuntReport(scenario or Path(file).stem, file, len(seed_list))
    width = workers_for(jobs, len(seed_list))
    sweep = _Sweep(report, seed_list, executor, _Options(width, task, stop_on_first, progress, replace))
    try:
        sweep.run()
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        sweep.close(interrupted=report.interrupted)
        report.outcomes = [sweep.done[s] for s in sorted(sweep.done)]
        report.crashed = sorted(sweep.crashed)
    return report


# --- the command line -----------------------------------------------------------------------


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``hunt`` command to ``subparsers`` (from ``ArgumentParser.add_subparsers``)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "hunt",
        help="run a scenario under many seeds and list the failing ones",
        description="Run a scenario under N seeds in parallel; list the failures and how to replay each.",
    )
    p.add_argument("file", type=Path, help="scenario YAML file")
    p.add_argument("--seeds", type=int, required=True, metavar="N", help="how many seeds to run")
    p.add_argument("--seed-start", type=int, default=0, metavar="S", help="first seed (default 0)")
    p.add_argument("--jobs", type=int, default=None, metavar="J", help="parallel processes (default: one per core)")
    p.add_argument("--stop-on-first", action="store_true", help="stop at the first failing seed")
    p.add_argument("--output", choices=("text", "json"), default="text", help="report format on stdout")
    return p


def _check_input(args: argparse.Namespace) -> str:
    """Validate the arguments and the scenario (as ``run`` would); the scenario's name."""
    from emulator.scenario.loader import load_scenario

    if args.seeds < 1:
        raise HuntError(f"--seeds: must be at least 1, got {args.seeds}")
    if args.jobs is not None and args.jobs < 1:
        raise HuntError(f"--jobs: must be at least 1, got {args.jobs}")
    scenario = load_scenario(args.file)
    try:
        from agents.scheduler.setup import SetupError, build_scheduler_setup
    except ImportError:  # pragma: no cover - the scheduler agent is part of the package
        return scenario.name
    try:
        build_scheduler_setup(scenario, source=str(args.file))
    except SetupError as err:
        raise HuntError(str(err)) from None
    return scenario.name


def run(
    args: argparse.Namespace,
    *,
    executor: Executor | None = None,
    new_executor: Callable[[], Executor] | None = None,
) -> int:
    """The ``hunt`` command; its exit status is ``HuntReport.exit_status``. ``new_executor``
    makes the first executor and each replacement of a broken one (default: a process pool of
    ``--jobs`` workers); an ``executor`` passed in is used first and left to its owner."""
    from rich.console import Console

    name = _check_input(args)
    seeds = range(args.seed_start, args.seed_start + args.seeds)
    out = Console(highlight=False, soft_wrap=True)
    factory = new_executor or (lambda: default_executor(args.jobs, len(seeds)))
    own = executor is None
    pool = factory() if executor is None else executor
    replace = factory if own or new_executor is not None else None
    report: HuntReport | None = None
    try:

        def sweep(progress: Callable[[SeedOutcome], None] | None) -> HuntReport:
            return hunt_seeds(
                args.file, seeds, pool, args.stop_on_first, progress, scenario=name, jobs=args.jobs, replace=replace
            )

        if sys.stderr.isatty():  # the bar goes to stderr: stdout stays a clean report
            report = _with_progress_bar(sweep, len(seeds), name)
        else:
            report = sweep(None)
    finally:
        if own:  # interrupted: do not wait for the seeds still running
            pool.shutdown(wait=report is not None and not report.interrupted, cancel_futures=True)
    if args.output == "json":
        import msgspec

        sys.stdout.write(msgspec.json.encode(report.to_json()).decode() + "\n")
    else:
        _print_text(report, out)
    return report.exit_status()


def _with_progress_bar(
    sweep: Callable[[Callable[[SeedOutcome], None]], HuntReport], total: int, name: str
) -> HuntReport:
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    failed = 0
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"{escape(name)}: 0 failed", total=total)

        def advance(outcome: SeedOutcome) -> None:
            nonlocal failed
            failed += not outcome.passed
            bar.update(task, advance=1, description=f"{escape(name)}: {failed} failed")

        return sweep(advance)


def _print_text(report: HuntReport, out: Any) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    failures = report.failures
    ran = len(report.outcomes)
    name = escape(report.scenario)
    if report.interrupted:
        stopped = f" (interrupted; {report.not_run} not run)"
    elif report.stopped_early:
        stopped = f" (stopped at the first failure; {report.not_run} not run)"
    else:
        stopped = ""
    if not failures:
        out.print(f"[bold]{name}[/bold]: all {ran} seeds passed{stopped}")
    else:
        out.print(f"[bold]{name}[/bold]: [red]{len(failures)} of {ran} seeds failed[/red]{stopped}")
    if report.crashed:
        seeds = ", ".join(map(str, report.crashed))
        out.print(f"[red]{len(report.crashed)} crashed[/red] (their worker process died twice): {seeds}")
    if report.workers_lost:
        out.print(f"{report.workers_lost} worker process death(s): the pool was replaced and the seeds re-run")
    if not failures and not report.crashed:
        return
    table = Table(show_header=True, header_style="bold", box=None)
    table.add_column("seed", justify="right")
    table.add_column("t (s)", justify="right")
    table.add_column("violated invariant or failed expectation")
    rows = [(o.seed, "-" if o.t is None else f"{o.t:g}", o.reason) for o in failures]
    rows += [(s, "-", "crashed: the worker process died twice") for s in report.crashed]
    for seed, t, reason in sorted(rows):
        table.add_row(str(seed), t, Text(reason))
    out.print(table)
    out.print("replay:")
    for seed, _, _ in sorted(rows):
        out.print(f"  {replay_command(report.file, seed)}", markup=False)
