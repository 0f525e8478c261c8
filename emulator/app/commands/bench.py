"""``python -m emulator bench``: choose workloads, run them, print a table or JSON.

::

    python -m emulator bench [--workload NAME ...] [--output text|json] [--profile default|noop]
                             [--kubelets on|off] [--compare] [--repeat N] [--scale F] [--file PATH]
                             [--stall-timeout DURATION] [--time-limit DURATION] [--seed N] [--list]
                             [--label LABEL ...]

``--workload`` takes ``<testCase>/<workload>``, a test case name (all its workloads) or a glob,
and may be repeated; without it the workloads labelled ``short`` run. ``--compare`` runs each
workload with the ``default`` profile and then with ``noop`` in this one process and adds the
ratio of their average throughputs (``default / noop``: how much of the pipeline's own ceiling
the plugins leave). ``--repeat N`` runs each workload N times (with ``--compare``: default, noop,
default, noop, …, so both profiles see the same machine load) and each object says which run it
is (``run``); the compare object then also holds every pair's ratio (``ratios``) and their
median (``median``), the figure to quote on a noisy machine. Output ``json`` is one array with
one object per run; ``text`` is a table, with a live progress bar when stdout is a terminal.

``--file`` also takes upstream's own ``performance-config.yaml`` (``emulator/app/bench/upstream.py``);
``--label`` keeps the workloads carrying every given label. A workload such a file needs but
the emulator cannot run as upstream does is reported, not run: ``{"workload", "skipped"}`` in
the JSON, a ``skipped <name>: <reason>`` line after the table; it does not change the exit status.
``--file DIR`` runs every ``performance-config.yaml`` under DIR and tallies them
(``commands/bench_dir.py``).

Exit status: 0 every workload completed; 1 a workload stalled or hit ``--time-limit``
(``complete: false``; e.g. its pods need a plugin the registry lacks); 2 bad input (one line
on stderr naming the file and the path inside it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from emulator.app.bench.dra import honoured as gate_honoured
from emulator.app.bench.harness import run_workload
from emulator.app.bench.instruments import Profile, ProgressHook
from emulator.app.bench.result import BenchOptions, WorkloadResult
from emulator.app.bench.spec import WorkloadError
from emulator.app.bench.steps import Workload
from emulator.app.bench.workload_file import load_workloads, select_workloads
from emulator.app.commands.arguments import DEFAULT_WORKLOADS
from emulator.app.commands.bench_dir import run_dir

__all__ = ["compare", "run"]


def _workload_file(arg: Path | None) -> Path:
    if arg is not None:
        return arg
    if DEFAULT_WORKLOADS.exists():
        return DEFAULT_WORKLOADS
    return Path(__file__).resolve().parents[3] / DEFAULT_WORKLOADS


def run(args: argparse.Namespace) -> int:
    """Run the ``bench`` command; the exit status."""
    path = _workload_file(args.file)
    if path.is_dir():
        return run_dir(path, args, play, compare, lambda results: _table(results, _console()))
    try:
        workloads = load_workloads(path, scale=args.scale)
        if args.list:
            for w in workloads:
                size = f"skipped={w.skipped}" if w.skipped else f"nodes={w.nodes}\tmeasuredPods={w.measured_pods}"
                print(f"{w.name}\t{size}\tlabels={','.join(w.labels)}")
            return 0
        chosen = select_workloads(workloads, args.workload, source=str(path), labels=args.label)
    except WorkloadError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    tty = args.output == "text" and sys.stdout.isatty()
    with _progress(tty) as hook_for:
        results, skipped = play(chosen, args, hook_for)
    if args.compare:
        compare(results)
    if args.output == "json":
        sys.stdout.write(msgspec.json.encode([r.to_json() for r in results] + skipped).decode() + "\n")
    else:
        _table(results, _console())
        for s in skipped:
            print(f"skipped {s['workload']}: {s['skipped']}")
    return 0 if all(r.complete for r in results) else 1


def _console() -> Console:
    return Console(highlight=False, width=None if sys.stdout.isatty() else 220)


def play(
    chosen: list[Workload], args: argparse.Namespace, hook_for: Any
) -> tuple[list[WorkloadResult], list[dict[str, str]]]:
    """Run the chosen workloads as the options say; their results and the skipped ones
    (``{"workload", "skipped"}``)."""
    profiles: list[Profile] = ["default", "noop"] if args.compare else [args.profile]
    results: list[WorkloadResult] = []
    skipped = [{"workload": wl.name, "skipped": wl.skipped} for wl in chosen if wl.skipped]
    for wl in chosen:
        if wl.skipped:
            continue
        for run_no in range(1, args.repeat + 1):
            for profile in profiles:
                options = BenchOptions(
                    profile=profile,
                    kubelets=args.kubelets == "on",
                    seed=args.seed,
                    stall_timeout=args.stall_timeout,
                    time_limit=args.time_limit,
                )
                result = run_workload(wl, options, hook_for(wl, profile))
                if args.repeat > 1:
                    result.extra["run"] = run_no
                honoured = {g: on for g, on in wl.feature_gates if gate_honoured(g, on)}
                if honoured:
                    result.extra["featureGatesHonoured"] = honoured
                if not_honoured := {g: on for g, on in wl.feature_gates if g not in honoured}:
                    result.extra["featureGatesNotHonoured"] = not_honoured
                if wl.metrics is not None:
                    _collected(result, *wl.metrics)
                results.append(result)
    return results, skipped


_LATENCIES = {"attemptMs": "attempt_ms", "e2eMs": "e2e_ms", "filterMs": "filter_ms", "scoreMs": "score_ms"}


def _collected(
    result: WorkloadResult, fields: tuple[str, ...], collected: tuple[str, ...], lacking: tuple[str, ...]
) -> None:
    """Honour upstream's ``metricsCollectorConfig``: only the latencies of the metrics it
    collects are reported (the others' percentiles are null); it lists what was collected and
    what the emulator does not collect."""
    for name, attr in _LATENCIES.items():
        if name not in fields:
            latencies = getattr(result, attr)
            for k in latencies:
                latencies[k] = None
    result.extra["metricsCollected"] = list(collected)
    result.extra["metricsNotCollected"] = list(lacking)


def compare(results: list[WorkloadResult]) -> None:
    """Add ``compare`` {default, noop, ratio, basis} to each default/noop pair of one workload
    (the i-th default run with the i-th noop run): the average sampled throughputs, or when any
    run of the workload was too short to sample, the overall rates (pods bound / measured
    seconds) of all its runs. With several pairs, also ``ratios`` (every pair's) and ``median``."""
    runs: dict[tuple[str, str], list[WorkloadResult]] = {}
    for r in results:
        runs.setdefault((r.workload, r.profile), []).append(r)
    for (workload, profile), defaults in runs.items():
        noops = runs.get((workload, "noop"))
        if profile != "default" or not noops:
            continue
        pairs = list(zip(defaults, noops, strict=False))
        every = [r for pair in pairs for r in pair]
        basis = "average" if all(r.throughput.get("average") for r in every) else "overall"
        ratios: list[float | None] = []
        for d, n in pairs:
            dr, nr = d.throughput.get(basis), n.throughput.get(basis)
            ratios.append(round(dr / nr, 4) if dr is not None and nr else None)
        known = sorted(x for x in ratios if x is not None)
        median = round(statistics.median(known), 4) if known else None
        for (d, n), ratio in zip(pairs, ratios, strict=True):
            cmp: dict[str, Any] = {
                "default": d.throughput.get(basis),
                "noop": n.throughput.get(basis),
                "ratio": ratio,
                "basis": basis,
            }
            if len(pairs) > 1:
                cmp["ratios"] = ratios
                cmp["median"] = median
            d.extra["compare"] = n.extra["compare"] = cmp


class _progress:
    """A rich progress bar on a terminal; nothing otherwise. Refreshed at most 10 times a second."""

    def __init__(self, enabled: bool) -> None:
        self.bar: Progress | None = None
        if enabled:
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(),
                auto_refresh=False,
                transient=True,
            )
        self.last = 0.0

    def __enter__(self) -> Any:
        if self.bar is not None:
            self.bar.start()
        return self.hook_for

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def hook_for(self, wl: Workload, profile: str) -> ProgressHook | None:
        bar = self.bar
        if bar is None:
            return None
        task = bar.add_task(f"{wl.name} [{profile}]", total=None)

        def hook(stage: str, done: int, total: int) -> None:
            bar.update(task, description=f"{wl.name} [{profile}] {stage}", completed=done, total=total or None)
            now = time.perf_counter()
            if now - self.last >= 0.1 or done >= total:
                self.last = now
                bar.refresh()

        return hook


def _fmt(v: Any, digits: int = 1) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def _table(results: list[WorkloadResult], out: Console) -> None:
    t = Table(title="scheduler benchmark (real clock, uvloop)")
    for col in ("workload", "profile", "nodes", "pods", "pods/s avg", "p50/p90/p99"):
        t.add_column(col, justify="left" if col in ("workload", "profile") else "right")
    for col in ("attempt ms p50/p99", "e2e ms p50/p99", "Filter/Score ms p50", "RSS MiB", "wall s", "notes"):
        t.add_column(col, justify="left" if col == "notes" else "right")
    last_noop = {r.workload: r for r in results if r.profile == "noop"}
    for r in results:
        th = r.throughput
        notes = []
        if not r.complete:
            notes.append(f"INCOMPLETE ({r.stopped_by}) {r.scheduled_pods}/{r.measured_pods}")
        if th.get("average") is None:
            notes.append(f"too short to sample: {_fmt(th.get('overall'))} pods/s overall")
        if r.plugins_missing:
            notes.append("missing: " + ", ".join(r.plugins_missing))
        if phases := r.extra.get("phases"):
            each = ", ".join(_fmt(p["throughput"]["overall"]) for p in phases)
            notes.append(f"{len(phases)} measured phases, pooled; overall pods/s each: {each}")
        cmp = r.extra.get("compare")
        if cmp is not None and r.profile == "noop" and cmp["ratio"] is not None:
            notes.append(f"default/noop = {cmp['ratio']:.3f}")
            if cmp.get("median") is not None and r is last_noop.get(r.workload):
                notes.append(f"median of {len(cmp['ratios'])} = {cmp['median']:.3f}")
        t.add_row(
            r.workload,
            r.profile + (" +kubelets" if r.kubelets else ""),
            f"{r.nodes:,}",
            f"{r.measured_pods:,}",
            _fmt(th.get("average")),
            "/".join(_fmt(th.get(k), 0) for k in ("p50", "p90", "p99")),
            f"{_fmt(r.attempt_ms['p50'], 2)}/{_fmt(r.attempt_ms['p99'], 2)}",
            f"{_fmt(r.e2e_ms['p50'], 0)}/{_fmt(r.e2e_ms['p99'], 0)}",
            f"{_fmt(r.filter_ms['p50'], 2)}/{_fmt(r.score_ms['p50'], 2)}",
            _fmt(r.peak_rss_mib, 0),
            _fmt(r.wall_seconds, 1),
            "; ".join(notes),
        )
    out.print(t)
