"""What several subcommands share: the usage error, a duration argument, the scheduler
set-up check that turns a bad KubeSchedulerConfiguration into bad input."""

from __future__ import annotations

import argparse
from pathlib import Path

from agents.scheduler import SetupError, build_scheduler_setup
from emulator.inputs import PlainInputError
from emulator.scenario.limits import parse_simulated_duration
from emulator.scenario.schedulers import scheduler_settings
from emulator.scenario.schema import Scenario

__all__ = ["UsageError", "add_sweep_arguments", "check_scheduler", "duration"]


class UsageError(PlainInputError):
    """Bad input found by a command itself (an output file that cannot be written, ...)."""


def duration(text: str) -> float:
    """An ``argparse`` type: a simulated time like ``30s``, ``5m``, ``1h30m``, at most a day
    (``MAX_SECONDS``, the scenario's own limit)."""
    try:
        return parse_simulated_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def check_scheduler(scenario: Scenario, path: Path) -> None:
    """Build the scheduler set-up once before running, its plugins constructed: a bad
    configuration, a plugin module that fails at import or a plugin constructor that raises
    is bad input (exit 2, one line naming the plugin and the file/path)."""
    try:
        build_scheduler_setup(scheduler_settings(scenario, source=str(path)), construct=True)
    except SetupError as err:
        raise UsageError(str(err)) from None


def add_sweep_arguments(p: argparse.ArgumentParser, *, unit: str, seeds: int | None) -> None:
    """The options of a sweep of runs (``hunt``, ``compare``): ``--seeds`` (required when
    ``seeds`` is None, else its default), ``--seed-start``, ``--jobs``, ``--executor`` and
    ``--results``; ``unit`` names one row of the results (``seed``, ``run``)."""
    if seeds is None:
        p.add_argument("--seeds", type=int, required=True, metavar="N", help="how many seeds to run")
    else:
        p.add_argument(
            "--seeds", type=int, default=seeds, metavar="N", help=f"seeds per configuration (default {seeds})"
        )
    p.add_argument("--seed-start", type=int, default=0, metavar="S", help="first seed (default 0)")
    p.add_argument("--jobs", type=int, default=None, metavar="J", help="runs at once (default: one per core)")
    p.add_argument(
        "--executor",
        default="local",
        metavar="local|dask|dask=ADDRESS",
        help="where the runs execute: a local process pool (default), a local Dask cluster, or a Dask scheduler",
    )
    p.add_argument(
        "--results", type=Path, default=None, metavar="PATH.csv|.parquet", help=f"also write one row per {unit} here"
    )
