"""Every subcommand's arguments: the whole command line's surface, built without running anything.

What it owns: one ``add_<command>(subparsers)`` per subcommand (its help, description, options
and their ``argparse`` types), the options a sweep of runs shares (``add_sweep_arguments``)
and the defaults the help text names (``DEFAULT_WORKLOADS``, ``DEFAULT_KUBECONFIG``,
``DEFAULT_PORT``). It does not own what a command does with them: ``emulator.app.commands.<name>``
does, in its ``run(args)``.

Why apart from the commands: ``emulator.cli`` builds the full parser (every subcommand with
its options and ``--help``) at each start but imports only the chosen command's module, so
``validate`` does not load the bench harness, ``run`` does not load aiohttp. Keep this module
light: the standard library and ``emulator.base.runtime.clock``/``emulator.app.scenario.limits``'s
duration parsers only (``tests/cli/test_cli_imports.py`` pins what ``import emulator.cli``
may load).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from emulator.app.scenario.limits import parse_simulated_duration
from emulator.base.runtime.clock import parse_duration

__all__ = [
    "DEFAULT_KUBECONFIG",
    "DEFAULT_PORT",
    "DEFAULT_WORKLOADS",
    "add_bench",
    "add_compare",
    "add_explain",
    "add_hunt",
    "add_report",
    "add_run",
    "add_serve",
    "add_sweep_arguments",
    "add_validate",
    "duration",
]

DEFAULT_WORKLOADS = Path("bench") / "workloads.yaml"
"""``bench``'s workload file, relative to the working directory (else beside the package)."""
DEFAULT_KUBECONFIG = Path("kube-emulator.kubeconfig")
"""Relative to the working directory: never the user's ``~/.kube/config``."""
DEFAULT_PORT = 6443


# --- argument types -------------------------------------------------------------------------


def duration(text: str) -> float:
    """An ``argparse`` type: a simulated time like ``30s``, ``5m``, ``1h30m``, at most a day
    (``MAX_SECONDS``, the scenario's own limit)."""
    try:
        return parse_simulated_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _wall_duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):  # NaN fails the first test, infinity the second
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


# --- the subcommands, in the order ``--help`` lists them ------------------------------------


def add_run(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "run", help="run a scenario and report", description="Run a scenario file and report."
    )
    p.add_argument("file", type=Path, help="scenario YAML file")
    p.add_argument("--seed", type=int, default=None, help="override the scenario's seed")
    p.add_argument("--real-time", action="store_true", help="run on the wall clock (uvloop) instead of virtual time")
    p.add_argument("--output", choices=("text", "json"), default="text", help="report format on stdout")
    p.add_argument("--trace", type=Path, default=None, metavar="PATH.jsonl", help="write the event trace here")
    p.add_argument("--until", type=duration, default=None, metavar="DURATION", help="stop at this simulated time")
    p.add_argument(
        "--explain",
        type=Path,
        default=None,
        metavar="PATH.jsonl",
        help="write every scheduling attempt's per-plugin, per-node results here",
    )
    p.add_argument(
        "--html", type=Path, default=None, metavar="PATH", help="write the run's self-contained HTML report here"
    )
    return p


def add_serve(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="serve the Kubernetes HTTP API (kubectl, client libraries) for a running scenario",
        description=(
            "Run a scenario (default: three worker nodes across zones) on a clock paced to wall time, "
            "serve the Kubernetes HTTP API and write a kubeconfig for it; Ctrl-C or SIGTERM stops and reports."
        ),
    )
    p.add_argument("file", type=Path, nargs="?", default=None, help="scenario YAML file (default: 3 nodes)")
    p.add_argument("--address", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", default=str(DEFAULT_PORT), help="port to listen on; 0 picks a free one (default: 6443)")
    p.add_argument(
        "--kubeconfig",
        type=Path,
        default=DEFAULT_KUBECONFIG,
        metavar="PATH",
        help="kubeconfig to write while serving (default: ./kube-emulator.kubeconfig)",
    )
    p.add_argument("--speed", default="1", help="simulated seconds per wall second (default: 1)")
    p.add_argument(
        "--token",
        default="auto",
        help="bearer token clients must send: auto (random), none (no authentication), or the token itself",
    )
    p.add_argument(
        "--token-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="read the bearer token from this file (kept out of the process list)",
    )
    p.add_argument("--seed", type=int, default=None, help="override the scenario's seed")
    p.add_argument("--trace", type=Path, default=None, metavar="PATH.jsonl", help="write the event trace here")
    p.add_argument("--until", type=duration, default=None, metavar="DURATION", help="stop at this simulated time")
    p.add_argument("--output", choices=("text", "json"), default="text", help="report format on stdout")
    return p


def add_validate(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "validate", help="check a scenario file", description="Check a scenario file; run nothing."
    )
    p.add_argument("file", type=Path, help="scenario YAML file")
    return p


def add_explain(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "explain",
        help="explain one scheduling cycle for a pod",
        description="Run one scheduling cycle for a pod against manifests and show every plugin's verdict per node.",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="manifests: Nodes, Pods, PriorityClasses")
    p.add_argument("--pod", default=None, metavar="NAMESPACE/NAME", help="the pod to explain")
    p.add_argument("--config", type=Path, default=None, metavar="FILE", help="a KubeSchedulerConfiguration")
    p.add_argument("--output", choices=("text", "json"), default="text", help="output format on stdout")
    return p


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


def add_hunt(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "hunt",
        help="run a scenario under many seeds and list the failing ones",
        description="Run a scenario under N seeds in parallel; list the failures and how to replay each.",
    )
    p.add_argument("file", type=Path, help="scenario YAML file")
    add_sweep_arguments(p, unit="seed", seeds=None)
    p.add_argument("--stop-on-first", action="store_true", help="stop at the first failing seed")
    p.add_argument("--output", choices=("text", "json"), default="text", help="report format on stdout")
    return p


def add_compare(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "compare",
        help="run a scenario under several scheduler configurations and compare quality metrics",
        description=(
            "Run a scenario under each KubeSchedulerConfiguration given (with one --config: against the "
            "scenario's own), N seeds each, and compare pods scheduled, pending time, nodes used, allocation, "
            "preemptions, evictions and makespan."
        ),
    )
    p.add_argument("file", type=Path, help="scenario YAML file")
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="PATH.yaml",
        help="a KubeSchedulerConfiguration file replacing the scenario's (repeat; one: compared with the scenario's)",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=PATCH.yaml",
        help="a variant: the scenario with this JSON merge patch applied (repeat; one: compared with the scenario)",
    )
    p.add_argument(
        "--gpu-sharing",
        action="append",
        default=[],
        metavar="device-plugin|dra",
        help="run each configuration with the scenario's alibaba-gpu-2023 traces in this gpuSharing mode (repeat)",
    )
    add_sweep_arguments(p, unit="run", seeds=5)
    p.add_argument("--output", choices=("text", "json"), default="text", help="report format on stdout")
    p.add_argument("--html", type=Path, default=None, metavar="PATH", help="also write an HTML report here")
    return p


def add_bench(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "bench",
        help="run scheduler_perf-style benchmark workloads",
        description="Run scheduler_perf-style workloads on the real clock (uvloop) and report throughput.",
    )
    p.add_argument("--workload", action="append", default=[], metavar="NAME", help="Case/Workload, a case, or a glob")
    p.add_argument("--output", choices=("text", "json"), default="text", help="report format on stdout")
    p.add_argument("--profile", choices=("default", "noop"), default="default", help="scheduler profile")
    p.add_argument(
        "--kubelets", choices=("on", "off"), default="off", help="run a kubelet per node (pods reach Running)"
    )
    p.add_argument("--compare", action="store_true", help="run default and noop profiles and print the ratio")
    p.add_argument("--repeat", type=_count, default=1, metavar="N", help="run each workload N times")
    p.add_argument("--scale", type=_scale, default=1.0, help="multiply every workload parameter (e.g. 0.01)")
    p.add_argument("--file", type=Path, default=None, help=f"workload definitions (default: {DEFAULT_WORKLOADS})")
    p.add_argument(
        "--stall-timeout", type=_wall_duration, default=60.0, metavar="DURATION", help="give up a wait after"
    )
    p.add_argument(
        "--time-limit", type=_wall_duration, default=None, metavar="DURATION", help="cut each workload short"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    p.add_argument(
        "--label", action="append", default=[], metavar="LABEL", help="only workloads with this label (repeatable)"
    )
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    return p


def add_report(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help="write the HTML report of a finished run",
        description="Write the self-contained HTML report of a run from its JSON report (and trace).",
    )
    p.add_argument("report", type=Path, metavar="RUN.json", help="the run's report, from `run --output json`")
    p.add_argument("trace", type=Path, nargs="?", default=None, metavar="TRACE.jsonl", help="the run's trace (--trace)")
    p.add_argument("--html", type=Path, required=True, metavar="PATH", help="write the HTML report here")
    p.add_argument(
        "--explain",
        type=Path,
        default=None,
        metavar="PATH.jsonl",
        help="the run's --explain file: adds the slowest pods' per-plugin tables",
    )
    return p
