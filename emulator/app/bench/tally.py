"""The tally of a ``bench --file DIR`` run: per directory of upstream's scheduler_perf tree
(one ``performance-config.yaml`` each), how many workloads completed, were skipped (grouped by
reason) and failed (incomplete, or the whole file refused), with the feature gates the skipped
workloads set and whether Kubernetes 1.34 has them on (``gates.py``). As data (``tally``, the
JSON) and as text (``text``). It does not run anything (``commands/bench_dir.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from emulator.app.bench.gates import EMULATED, describe

__all__ = ["FileRun", "tally", "text"]


@dataclass(slots=True)
class FileRun:
    file: str
    """The config's path relative to DIR (``misc/performance-config.yaml``)."""
    results: list[dict[str, Any]] = field(default_factory=list)
    """Its JSON objects: runs, and ``{"workload", "skipped"}``."""
    gates: dict[str, dict[str, bool]] = field(default_factory=dict)
    """Skipped workload → the feature gates it sets."""
    error: str = ""
    """Why the whole file was refused ("" when it loaded)."""


def tally(runs: Sequence[FileRun]) -> dict[str, Any]:
    """``{directories: [...], total: {...}, skipped: [...], failed: [...], gates: [...]}``."""
    rows: list[dict[str, Any]] = []
    reasons: dict[str, list[str]] = {}
    failed: list[dict[str, Any]] = []
    gates: dict[str, dict[str, Any]] = {}
    for run in runs:
        directory = str(PurePosixPath(run.file).parent)
        ran = [r for r in run.results if "skipped" not in r]
        skipped = [r for r in run.results if "skipped" in r]
        bad = [r for r in ran if not r.get("complete")]
        row = {
            "directory": directory,
            "complete": len(ran) - len(bad),
            "skipped": len(skipped),
            "failed": len(bad) + (1 if run.error else 0),
        }
        if run.error:
            row["error"] = run.error
            failed.append({"directory": directory, "error": run.error})
        rows.append(row)
        for r in bad:
            failed.append(
                {
                    "directory": directory,
                    "workload": r["workload"],
                    "stoppedBy": r.get("stoppedBy"),
                    **({"error": r["error"]} if r.get("error") else {}),
                }
            )
        for r in skipped:
            name = f"{directory}/{r['workload']}"
            reasons.setdefault(r["skipped"], []).append(name)
            for gate, value in sorted(run.gates.get(r["workload"], {}).items()):
                g = gates.setdefault(gate, {"gate": gate, EMULATED: describe(gate), "setTrue": [], "setFalse": []})
                g["setTrue" if value else "setFalse"].append(name)
    total = {k: sum(r[k] for r in rows) for k in ("complete", "skipped", "failed")}
    return {
        "files": len(runs),
        "directories": rows,
        "total": total,
        "skipped": [
            {"reason": reason, "workloads": names}
            for reason, names in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        ],
        "failed": failed,
        "gates": [gates[g] for g in sorted(gates)],
    }


def text(t: dict[str, Any], root: str) -> str:
    """The tally as the lines printed after the runs."""
    width = max([len("directory"), *(len(r["directory"]) for r in t["directories"])])
    out = [
        f"tally of {t['files']} performance-config.yaml under {root}:",
        f"{'directory':<{width}}  complete  skipped  failed",
    ]
    for r in [*t["directories"], {"directory": "total", **t["total"]}]:
        note = "  (file refused)" if r.get("error") else ""
        out.append(f"{r['directory']:<{width}}  {r['complete']:>8}  {r['skipped']:>7}  {r['failed']:>6}{note}")
    if t["skipped"]:
        out.append("skipped, by reason:")
        for s in t["skipped"]:
            out.append(f"  {len(s['workloads'])} × {s['reason']}")
            out.append(f"      {', '.join(s['workloads'])}")
    if t["failed"]:
        out.append("failed:")
        for f in t["failed"]:
            if "workload" in f:
                why = f.get("error") or f"stopped by {f['stoppedBy']}"
                out.append(f"  {f['directory']}/{f['workload']}: {why}")
            else:
                out.append(f"  {f['directory']}: file refused: {f['error']}")
    if t["gates"]:
        out.append(f"feature gates the skipped workloads set (workloads setting true/false; {EMULATED}'s default):")
        for g in t["gates"]:
            out.append(
                f"  {g['gate']}: true {len(g['setTrue'])}, false {len(g['setFalse'])}; {EMULATED}: {g[EMULATED]}"
            )
    return "\n".join(out)
