"""``python -m emulator hunt``: one scenario under many seeds, the failing seeds and how to
replay each.

What it owns: ``hunt_seeds`` (``hunt_sweep.sweep`` with ``run_seed`` as the task), the per-seed
task (``run_seed``, a top-level function so a process pool can pickle it), the one-line failure
reason of a run (``failure_of``) and the command-line glue (``run``; the options are ``arguments.py``'s). It does
not own running a scenario (the runner), the invariants (``invariants.py``) or the ``run``
command a replay line names (``cli.py``).

The execution layer is any ``concurrent.futures.Executor``: ``hunt_seeds`` only submits
``task(path, seed)`` and reads futures as they complete, so a thread pool (tests), the default
process pool or a distributed engine's executor run the same hunt. A seed's outcome depends
only on the scenario and the seed, so the failures found do not depend on the executor.

Failure reason of one run, the first that applies: the violated invariant whose first
violation came earliest (``t`` = that time); the first failed expectation; the first timed-out
``waitFor`` (``t`` = the run's end); an exception out of the run (``t`` unknown, ``null``).

Where the seeds run is ``--executor`` (``local``: a process pool of ``--jobs`` workers;
``dask``/``dask=ADDRESS``: Dask; see ``emulator.experiments.executors``); ``--results
PATH.csv|.parquet`` also writes one row per seed (``experiments.results``).

Running the seeds (at most ``--jobs`` at a time), surviving workers that die (a dead worker's
pool is replaced and its seed retried alone; a seed whose worker dies twice alone is
``crashed``) and Ctrl-C are ``hunt_sweep``'s; its docstring gives the rule.

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
import sys
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, Final

from emulator.commands.common import UsageError, check_scheduler
from emulator.commands.hunt_sweep import (
    HuntReport,
    SeedOutcome,
    Task,
    default_executor,
    replay_command,
    sweep,
    workers_for,
)
from emulator.experiments.executors import open_executor, parse_executor
from emulator.experiments.results import HUNT_COLUMNS, check_results_path, hunt_rows, write_results
from emulator.inputs import PlainInputError
from emulator.scenario.loader import load_scenario

__all__ = [
    "MAX_JOBS",
    "MAX_SEEDS",
    "HuntError",
    "HuntReport",
    "SeedOutcome",
    "default_executor",
    "failure_of",
    "hunt_seeds",
    "replay_command",
    "run",
    "run_seed",
    "workers_for",
]


class HuntError(PlainInputError):
    """Bad input to ``hunt`` (the CLI prints ``error: <message>`` and exits 2)."""


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


MAX_SEEDS: Final = 1_000_000
"""Seeds one hunt may run: the sweep holds every seed and its outcome in memory (10^8 seeds
took gigabytes before the first one ran)."""
MAX_JOBS: Final = 256
"""Worker processes one hunt may start (each is a whole interpreter)."""


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
    """``hunt_sweep.sweep`` with ``run_seed`` as the default task."""
    return sweep(
        path, seeds, executor, stop_on_first, progress, scenario=scenario, task=task, jobs=jobs, replace=replace
    )


# --- the command line -----------------------------------------------------------------------


def _check_input(args: argparse.Namespace) -> str:
    """Validate the arguments and the scenario (as ``run`` would); the scenario's name."""
    if args.seeds < 1:
        raise HuntError(f"--seeds: must be at least 1, got {args.seeds}")
    if args.seeds > MAX_SEEDS:
        raise HuntError(f"--seeds: must be at most {MAX_SEEDS} (a hunt keeps every seed's outcome), got {args.seeds}")
    if args.jobs is not None and args.jobs < 1:
        raise HuntError(f"--jobs: must be at least 1, got {args.jobs}")
    if args.jobs is not None and args.jobs > MAX_JOBS:
        raise HuntError(f"--jobs: must be at most {MAX_JOBS} (one process each), got {args.jobs}")
    parse_executor(args.executor)
    if args.results is not None:
        check_results_path(args.results)
    scenario = load_scenario(args.file)
    try:
        check_scheduler(scenario, args.file)
    except UsageError as err:
        raise HuntError(str(err)) from None
    return scenario.name


def run(
    args: argparse.Namespace,
    *,
    executor: Executor | None = None,
    new_executor: Callable[[], Executor] | None = None,
) -> int:
    """The ``hunt`` command; its exit status is ``HuntReport.exit_status``. ``new_executor``
    makes the first executor and each replacement of a broken one (default: ``--executor``'s,
    a process pool of ``--jobs`` workers unless told otherwise); an ``executor`` passed in is
    used first and left to its owner."""
    from rich.console import Console

    name = _check_input(args)
    seeds = range(args.seed_start, args.seed_start + args.seeds)
    out = Console(highlight=False, soft_wrap=True)
    if executor is None and new_executor is None:
        with open_executor(parse_executor(args.executor), args.jobs, len(seeds)) as opened:
            report = _sweep(args, name, seeds, opened.executor, opened.replace, opened.width)
            opened.interrupted = report.interrupted
    else:
        own = executor is None
        factory = new_executor or (lambda: default_executor(args.jobs, len(seeds)))
        pool = factory() if executor is None else executor
        replace = factory if own or new_executor is not None else None
        done: HuntReport | None = None
        try:
            done = _sweep(args, name, seeds, pool, replace, args.jobs)
        finally:
            if own:  # interrupted: do not wait for the seeds still running
                pool.shutdown(wait=done is not None and not done.interrupted, cancel_futures=True)
        report = done
    if args.results is not None:
        write_results(args.results, HUNT_COLUMNS, hunt_rows(report))
    if args.output == "json":
        import msgspec

        sys.stdout.write(msgspec.json.encode(report.to_json()).decode() + "\n")
    else:
        _print_text(report, out)
    return report.exit_status()


def _sweep(
    args: argparse.Namespace,
    name: str,
    seeds: range,
    pool: Executor,
    replace: Callable[[], Executor] | None,
    jobs: int | None,
) -> HuntReport:
    def hunt(progress: Callable[[SeedOutcome], None] | None) -> HuntReport:
        return hunt_seeds(
            args.file, seeds, pool, args.stop_on_first, progress, scenario=name, jobs=jobs, replace=replace
        )

    if sys.stderr.isatty():  # the bar goes to stderr: stdout stays a clean report
        return _with_progress_bar(hunt, len(seeds), name)
    return hunt(None)


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
    if not ran:
        out.print(f"[bold]{name}[/bold]: no seed completed{stopped}")
    elif not failures:
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
