"""``python -m emulator bench --file DIR``: every ``performance-config.yaml`` under DIR
(upstream's ``test/integration/scheduler_perf`` tree, or a copy of it), in sorted path order,
each loaded and run as ``bench --file FILE`` would with the same options (``--label``,
``--workload``, ``--scale``, ...), then the tally per directory (``bench/tally.py``): complete,
skipped by reason, failed, and the feature gates of the skipped workloads with 1.34's default.

A file refused as a whole (bad input) is a failure of its directory, named in the tally; the
other files still run. ``--workload`` patterns select in every file (none matching in one file
is no error). Output ``text``: each file's table and skipped lines under a ``== <file>``
heading, then the tally; ``json``: one object ``{files: [{file, results} | {file, error}],
tally}``. Exit status: 0 when nothing failed, 1 otherwise, 2 when DIR holds no config.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from emulator.app.bench.result import WorkloadResult
from emulator.app.bench.spec import WorkloadError
from emulator.app.bench.steps import Workload
from emulator.app.bench.tally import FileRun, tally, text
from emulator.app.bench.workload_file import load_workloads

__all__ = ["CONFIG_NAME", "run_dir"]

CONFIG_NAME = "performance-config.yaml"

Play = Callable[[list[Any], argparse.Namespace, Any], tuple[list[WorkloadResult], list[dict[str, str]]]]


def run_dir(
    root: Path,
    args: argparse.Namespace,
    play: Play,
    compare: Callable[[list[WorkloadResult]], None],
    table: Callable[[list[WorkloadResult]], None],
) -> int:
    """Run every config under ``root`` with ``commands/bench.py``'s ``play``, ``compare`` and
    ``table``; the exit status."""
    files = sorted(root.rglob(CONFIG_NAME), key=lambda p: p.relative_to(root).as_posix())
    if not files:
        print(f"error: {root}: no {CONFIG_NAME} under this directory", file=sys.stderr)
        return 2
    runs: list[FileRun] = []
    docs: list[dict[str, Any]] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        run = FileRun(rel)
        runs.append(run)
        try:
            workloads = load_workloads(path, scale=args.scale)
        except WorkloadError as err:
            run.error = str(err)
            docs.append({"file": rel, "error": run.error})
            if args.output == "text":
                print(f"== {rel}\nerror: {err}")
            continue
        if args.list:
            print(f"== {rel}")
            for w in workloads:
                size = f"skipped={w.skipped}" if w.skipped else f"nodes={w.nodes}\tmeasuredPods={w.measured_pods}"
                print(f"{w.name}\t{size}\tlabels={','.join(w.labels)}")
            continue
        chosen = _chosen(workloads, args)
        run.gates = {w.name: dict(w.feature_gates) for w in chosen if w.skipped}
        results, skipped = play(chosen, args, lambda wl, profile: None)
        if args.compare:
            compare(results)
        run.results = [r.to_json() for r in results] + skipped
        docs.append({"file": rel, "results": run.results})
        if args.output == "text":
            print(f"== {rel}")
            if results:
                table(results)
            for s in skipped:
                print(f"skipped {s['workload']}: {s['skipped']}")
    if args.list:
        return 0
    t = tally(runs)
    if args.output == "json":
        sys.stdout.write(msgspec.json.encode({"files": docs, "tally": t}).decode() + "\n")
    else:
        print(text(t, str(root)))
    return 0 if t["total"]["failed"] == 0 else 1


def _chosen(workloads: list[Workload], args: argparse.Namespace) -> list[Workload]:
    """As ``select_workloads``: those carrying every ``--label``, then those a ``--workload``
    pattern names; with neither, those labelled ``short``. A pattern naming none is no error."""
    labelled = [w for w in workloads if all(label in w.labels for label in args.label)]
    if args.workload:
        return [w for w in labelled if any(_matches(w.name, p) for p in args.workload)]
    return labelled if args.label else [w for w in workloads if "short" in w.labels]


def _matches(name: str, pattern: str) -> bool:
    return name == pattern or name.split("/", 1)[0] == pattern or fnmatch.fnmatchcase(name, pattern)
