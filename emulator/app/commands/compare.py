"""``python -m emulator compare FILE --config A.yaml --config B.yaml``: one scenario under several
KubeSchedulerConfigurations (or ``--variant NAME=PATCH.yaml``: under merge patches of the
scenario), N seeds each, the quality metrics side by side.

What it owns: the command line (``run``; the options are ``arguments.py``'s) and the text table. The variants, the
task of one run and the comparison document are ``emulator.app.experiments.compare``'s; the
executors (``--executor``, ``--jobs``) ``experiments.executors``'; the results table
(``--results``) ``experiments.results``'.

Everything is checked before the first run: the scenario, each ``--variant``'s patched scenario,
each ``--config`` (its scheduler built with its plugins, as ``run`` does), each ``--gpu-sharing``
mode (the scenario must have an ``alibaba-gpu-2023`` trace; ``dra``'s alpha gate is a warning on
stderr), ``--results`` and ``--html`` paths, the executor.

Text: one table, a column per variant (headed by the config file's stem), a row per metric, each
cell ``mean ± population sd`` over the seeds; the best value of a row is marked ``*`` (in green):
more pods scheduled; fewer unschedulable, less pending, fewer nodes, higher allocation, fewer
preemptions and evictions, shorter makespan, fewer dollars and node-hours (``cost``); no mark on
a tie. A last row counts the runs whose expectations passed.

Exit status: 0 every run met the scenario's expectations; 1 some run did not (or a waitFor timed
out, or an invariant was violated: the comparison is printed all the same, and a run that failed
its expectations still counts in the means); 3 a run raised or its worker process died (it is
left out of the means; ``perSeed`` has its ``error``); 2 bad input; 130 interrupted (no report).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Final

from emulator.app.commands.common import UsageError, check_scheduler
from emulator.app.commands.progress import progress_bar
from emulator.app.commands.report import write_html
from emulator.app.experiments.compare import (
    CompareError,
    Variant,
    compare_doc,
    load_variant,
    read_config,
    run_variant,
    variant_traces,
    variants_for,
)
from emulator.app.experiments.compare import variant_scenario as with_config
from emulator.app.experiments.executors import open_executor, parse_executor
from emulator.app.experiments.metrics import FIELDS, Field, best, lookup
from emulator.app.experiments.results import COMPARE_COLUMNS, check_results_path, compare_rows, write_results
from emulator.app.experiments.sweep import run_all
from emulator.app.report import render_compare
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.trace_gpus import gpu_sharing_warnings

__all__ = ["MAX_RUNS", "run"]

MAX_RUNS: Final = 100_000
"""Runs (variants × seeds) one comparison may ask for: every run's metrics are kept."""


def _check_input(args: argparse.Namespace) -> tuple[str, list[Variant]]:
    """Validate everything before running; the scenario's name and the variants."""
    if args.seeds < 1:
        raise CompareError(f"--seeds: must be at least 1, got {args.seeds}")
    if args.jobs is not None and not 1 <= args.jobs <= 256:
        raise CompareError(f"--jobs: must be between 1 and 256, got {args.jobs}")
    variants = variants_for([str(c) for c in args.config], args.gpu_sharing, args.variant)
    if args.seeds * len(variants) > MAX_RUNS:
        raise CompareError(f"--seeds: {len(variants)} configurations × {args.seeds} seeds passes {MAX_RUNS} runs")
    parse_executor(args.executor)
    if args.results is not None:
        check_results_path(args.results)
    if args.html is not None:
        _check_html_path(args.html)
    scenario = load_scenario(args.file)
    patched = {v.patch: load_variant(str(args.file), v.patch) for v in variants if v.patch is not None}
    if args.gpu_sharing and not any(
        getattr(e, "format", "") == "alibaba-gpu-2023" for e in [*scenario.nodes, *scenario.steps]
    ):
        raise CompareError(f"--gpu-sharing: {args.file} has no alibaba-gpu-2023 node list or replay")
    for mode in dict.fromkeys(v.gpu_sharing for v in variants):
        for line in gpu_sharing_warnings(variant_traces(scenario, mode, str(args.file)), str(args.file)):
            print(f"warning: {line}", file=sys.stderr)
    for v in variants:
        config = None if v.path is None else read_config(v.path)
        own = scenario if v.patch is None else patched[v.patch]
        check_scheduler(
            with_config(own, config), Path(v.patch) if v.patch else args.file if v.path is None else Path(v.path)
        )
    return scenario.name, variants


def run(args: argparse.Namespace) -> int:
    name, variants = _check_input(args)
    seeds = list(range(args.seed_start, args.seed_start + args.seeds))
    keep_series = args.html is not None
    calls = [
        ((i, s), (str(args.file), v.path, s, keep_series and s == seeds[0], v.gpu_sharing, v.patch))
        for i, v in enumerate(variants)
        for s in seeds
    ]
    with (
        open_executor(parse_executor(args.executor), args.jobs, len(calls)) as pool,
        progress_bar(len(calls), name, "runs") as advance,  # stderr: stdout stays a clean report
    ):
        outcomes = run_all(pool, run_variant, calls, None if advance is None else lambda _k, _o: advance(None))
    doc = compare_doc(name, seeds, variants, outcomes, series=keep_series)
    if args.results is not None:
        write_results(args.results, COMPARE_COLUMNS, compare_rows(doc))
    if args.html is not None:
        write_html(args.html, render_compare(doc))
        doc = {**doc, "variants": [{k: x for k, x in v.items() if k != "series"} for v in doc["variants"]]}
    if args.output == "json":
        import msgspec

        sys.stdout.write(msgspec.json.encode(doc).decode() + "\n")
    else:
        from rich.console import Console

        print_table(doc, variants, Console(highlight=False, soft_wrap=True))
    return exit_status(doc)


def exit_status(doc: dict[str, Any]) -> int:
    """3 a run raised or crashed, else 1 a run failed its expectations, else 0."""
    entries = [e for v in doc["variants"] for e in v["perSeed"]]
    if any("error" in e for e in entries):
        return 3
    return 0 if all(e["passed"] for e in entries) else 1


def _check_html_path(path: Path) -> None:
    """The ``--html`` file's directory exists: checked before the runs, not after them."""
    if not path.parent.is_dir():
        raise UsageError(f"--html {path}: no such directory: {path.parent}")


# --- the text table --------------------------------------------------------------------------

_UNITS: Final = {
    "pendingSeconds": "s",
    "makespanSeconds": "s",
    "cost.total": "$",
    "cost.nodeHours": "h",
    "cost.perHour.mean": "$/h",
    "cost.perHour.max": "$/h",
}


def _label(f: Field) -> str:
    arrow = "↑" if f.better == "higher" else "↓"
    head = f.name.split(".")[0]
    unit = _UNITS.get(f.name) or _UNITS.get(head, "%" if head.endswith("Allocation") else "")
    return f"{f.name}{f' ({unit})' if unit else ''} {arrow}"


def _decimals(x: float) -> int:
    """Decimals to show ``x`` with: none for an integer, three significant digits below 1
    (pending times of a few ms), two below 100, else one."""
    if float(x).is_integer():
        return 0
    if abs(x) < 1:
        return 2 - math.floor(math.log10(abs(x)))
    return 2 if abs(x) < 100 else 1


def _fmt(mean: float | None, sd: float | None, percent: bool) -> str:
    """``mean ± sd``, both with the mean's decimals (the sd's when the mean is a whole number);
    allocations in percent with one decimal."""
    if mean is None:
        return "-"
    sd = sd or 0.0
    if percent:
        return f"{mean * 100:.1f} ± {sd * 100:.1f}"
    d = _decimals(mean) or (_decimals(sd) and 2)
    return f"{mean:,.{d}f} ± {sd:,.{d}f}"


def print_table(doc: dict[str, Any], variants: list[Variant], out: Any) -> None:
    """The comparison as one table (see the module docstring)."""
    from rich.markup import escape
    from rich.table import Table

    seeds = doc["seeds"]
    span = f"seeds {seeds[0]}..{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}"
    out.print(f"[bold]{escape(doc['scenario'])}[/bold]: {len(variants)} configurations × {len(seeds)} runs ({span})")
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("metric (mean ± sd)  ↑/↓ better", no_wrap=True)
    for v in variants:
        table.add_column(escape(v.header), justify="right", no_wrap=True)
    docs = doc["variants"]
    for f in FIELDS:
        means = [lookup(d["metrics"], f.name) for d in docs]
        if all(m is None for m in means) and f.name.startswith("gpuAllocation"):
            continue  # no GPU in this cluster
        sds = [lookup(d["spread"], f.name) for d in docs]
        top = best(means, f)
        percent = f.name.split(".")[0].endswith("Allocation")
        cells = [_fmt(m, s, percent) for m, s in zip(means, sds, strict=True)]
        cells = [f"[green]{c} *[/green]" if i == top else f"{c}  " for i, c in enumerate(cells)]
        table.add_row(_label(f), *cells)
    passed = [sum(bool(e["passed"]) for e in d["perSeed"]) for d in docs]
    table.add_row("expectations passed", *(f"{p}/{len(d['perSeed'])}" for p, d in zip(passed, docs, strict=True)))
    out.print(table)
    out.print("[dim]* best (↑ higher is better, ↓ lower is better); allocation in % of allocatable[/dim]")
    for d in docs:
        for e in d["perSeed"]:
            if "error" in e:
                out.print(f"[red]{escape(d['config'])} seed {e['seed']}: {escape(e['error'])}[/red]")
