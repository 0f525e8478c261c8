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

``--stop-on-first`` cancels the seeds not started yet once a failure arrives; seeds already
running finish in their workers, and the report covers the seeds that completed.
JSON: ``{"scenario", "seeds" (seeds completed), "failures": [{"seed", "reason", "t",
"replay"}]}`` (failures by seed), plus ``"stoppedEarly": true`` when seeds were cancelled.
Exit status 1 if any seed failed, else 0; bad input raises ``ScenarioError`` or ``HuntError``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulator.inputs import PlainInputError

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
]

Task = Callable[[str, int], "SeedOutcome"]


class HuntError(PlainInputError):
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
    stopped_early: bool = False

    @property
    def failures(self) -> list[SeedOutcome]:
        return [o for o in self.outcomes if not o.passed]

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "scenario": self.scenario,
            "seeds": len(self.outcomes),
            "failures": [
                {"seed": o.seed, "reason": o.reason, "t": o.t, "replay": replay_command(self.file, o.seed)}
                for o in self.failures
            ],
        }
        if self.stopped_early:
            doc["stoppedEarly"] = True
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


def default_executor(jobs: int | None, seeds: int) -> ProcessPoolExecutor:
    """A process pool (forkserver where available, else spawn: safe under pytest and threads)."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    workers = max(1, min(jobs or os.cpu_count() or 1, seeds))
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def hunt_seeds(
    path: str | Path,
    seeds: Iterable[int],
    executor: Executor,
    stop_on_first: bool = False,
    progress: Callable[[SeedOutcome], None] | None = None,
    *,
    scenario: str = "",
    task: Task = run_seed,
) -> HuntReport:
    """Run ``task(path, seed)`` for every seed on ``executor``; outcomes as they complete go to
    ``progress``. The caller owns (and shuts down) the executor."""
    seed_list = list(seeds)
    file = str(path)
    report = HuntReport(scenario or Path(file).stem, file, len(seed_list))
    futures: list[Future[SeedOutcome]] = [executor.submit(task, file, s) for s in seed_list]
    done: dict[int, SeedOutcome] = {}
    try:
        for fut in as_completed(futures):
            outcome = fut.result()
            done[outcome.seed] = outcome
            if progress is not None:
                progress(outcome)
            if stop_on_first and not outcome.passed:
                cancelled = [f.cancel() for f in futures]  # every one: no short-circuit
                report.stopped_early = any(cancelled)
                for f in futures:  # finished meanwhile: report them too
                    if f.done() and not f.cancelled() and f.exception() is None:
                        done.setdefault(f.result().seed, f.result())
                break
    finally:
        for f in futures:
            f.cancel()
    report.outcomes = [done[s] for s in sorted(done)]
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
        from emulator.scenario.schedulers import scheduler_settings
    except ImportError:  # pragma: no cover - the scheduler agent is part of the package
        return scenario.name
    try:
        build_scheduler_setup(scheduler_settings(scenario, source=str(args.file)), construct=True)
    except SetupError as err:
        raise HuntError(str(err)) from None
    return scenario.name


def run(args: argparse.Namespace, *, executor: Executor | None = None) -> int:
    """The ``hunt`` command: 1 if any seed failed, else 0. ``executor`` defaults to a process
    pool of ``--jobs`` workers."""
    from rich.console import Console

    name = _check_input(args)
    seeds = range(args.seed_start, args.seed_start + args.seeds)
    out = Console(highlight=False, soft_wrap=True)
    own = executor is None
    pool = default_executor(args.jobs, len(seeds)) if executor is None else executor
    finished = False
    try:
        if sys.stderr.isatty():  # the bar goes to stderr: stdout stays a clean report
            report = _with_progress_bar(args, pool, seeds, name)
        else:
            report = hunt_seeds(args.file, seeds, pool, args.stop_on_first, scenario=name)
        finished = True
    finally:
        if own:  # interrupted: do not wait for the seeds still running
            pool.shutdown(wait=finished, cancel_futures=True)
    if args.output == "json":
        import msgspec

        sys.stdout.write(msgspec.json.encode(report.to_json()).decode() + "\n")
    else:
        _print_text(report, out)
    return 1 if report.failures else 0


def _with_progress_bar(args: argparse.Namespace, pool: Executor, seeds: range, name: str) -> HuntReport:
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    failed = 0
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"{escape(name)}: 0 failed", total=len(seeds))

        def advance(outcome: SeedOutcome) -> None:
            nonlocal failed
            failed += not outcome.passed
            bar.update(task, advance=1, description=f"{escape(name)}: {failed} failed")

        return hunt_seeds(args.file, seeds, pool, args.stop_on_first, advance, scenario=name)


def _print_text(report: HuntReport, out: Any) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    failures = report.failures
    ran = len(report.outcomes)
    name = escape(report.scenario)
    stopped = f" (stopped at the first failure; {report.requested - ran} not run)" if report.stopped_early else ""
    if not failures:
        out.print(f"[bold]{name}[/bold]: all {ran} seeds passed{stopped}")
        return
    out.print(f"[bold]{name}[/bold]: [red]{len(failures)} of {ran} seeds failed[/red]{stopped}")
    table = Table(show_header=True, header_style="bold", box=None)
    table.add_column("seed", justify="right")
    table.add_column("t (s)", justify="right")
    table.add_column("violated invariant or failed expectation")
    for o in failures:
        table.add_row(str(o.seed), "-" if o.t is None else f"{o.t:g}", Text(o.reason))
    out.print(table)
    out.print("replay:")
    for o in failures:
        out.print(f"  {replay_command(report.file, o.seed)}", markup=False)
