"""``python -m emulator hunt``: one scenario under many seeds, the failing seeds and how to
replay each.

What it owns: the command line (``run``: its checks before any run, the executor, the progress
bar; the options are ``arguments.py``'s) and the text report. The seeds' runs, the failure reason of each,
the report and its JSON are ``emulator.app.experiments.hunt``'s; running them on an executor and
surviving workers that die (a dead worker's pool is replaced and its seed retried alone; a seed
whose worker dies twice alone is ``crashed``) and Ctrl-C are the sweep engine's
(``experiments.sweep``: its docstring gives the rule).

Where the seeds run is ``--executor`` (``local``: a process pool of ``--jobs`` workers;
``dask``/``dask=ADDRESS``: Dask; see ``emulator.app.experiments.executors``); ``--results
PATH.csv|.parquet`` also writes one row per seed (``experiments.results``).

Exit status: 0 every seed passed; 1 a seed failed (no seed crashed); 3 a seed crashed (its
worker died twice: the hunt is incomplete, whatever the other seeds did); 130 interrupted (the
partial report is printed); 2 bad input (``ScenarioError`` or ``HuntError``, before any run).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, Final

from emulator.app.commands.common import UsageError, check_scheduler
from emulator.app.commands.progress import progress_bar
from emulator.app.experiments.executors import default_executor, open_executor, parse_executor
from emulator.app.experiments.hunt import HuntReport, SeedOutcome, hunt_seeds, replay_command
from emulator.app.experiments.results import HUNT_COLUMNS, check_results_path, hunt_rows, write_results
from emulator.app.scenario.loader import load_scenario
from emulator.base.inputs import PlainInputError

__all__ = ["MAX_JOBS", "MAX_SEEDS", "HuntError", "run"]


class HuntError(PlainInputError):
    """Bad input to ``hunt`` (the CLI prints ``error: <message>`` and exits 2)."""


# --- the command line -----------------------------------------------------------------------


MAX_SEEDS: Final = 1_000_000
"""Seeds one hunt may run: the sweep holds every seed and its outcome in memory (10^8 seeds
took gigabytes before the first one ran)."""
MAX_JOBS: Final = 256
"""Worker processes one hunt may start (each is a whole interpreter)."""


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
    with progress_bar(len(seeds), name, "0 failed") as advance:  # stderr: stdout stays a clean report
        failed = 0

        def progress(outcome: SeedOutcome) -> None:
            nonlocal failed
            failed += not outcome.passed
            if advance is not None:
                advance(f"{failed} failed")

        return hunt_seeds(
            args.file,
            seeds,
            pool,
            args.stop_on_first,
            None if advance is None else progress,
            scenario=name,
            jobs=jobs,
            replace=replace,
        )


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
