"""Hand-made run reports and compare documents shaped exactly as the round's contract says
(``metrics``, ``series`` version 1, compare's per-variant ``series``), for the renderer's
tests independent of the collector. ``series()`` mimics faults-demo as it was with bare
pods: three nodes, node-2 stops heartbeating at 1m and is NotReady from 1m50s, its pods are
evicted at 2m25s and nothing replaces them (the real run's refill is pinned by
tests/scenario/test_observe_runs.py and test_browser.py).
"""

from __future__ import annotations

import base64
import copy
from typing import Any


def _row(values: list[int]) -> str:
    return base64.b64encode(bytes(values)).decode()


def series(
    *,
    nodes: int = 3,
    scheduler: bool = True,
    gpu: bool = False,
    timeline: bool = True,
    end: float = 211.0,
    buckets: int = 22,
) -> dict[str, Any]:
    n = int(end) + 1
    t = [float(i) for i in range(n)]
    running = [0 if i < 1 else 6 if i < 145 else 4 if i < 181 else 5 for i in range(n)]
    pending = [6 if i < 1 else 0 if i < 180 else 1 if i < 181 else 0 for i in range(n)]
    edges = [round(end * k / buckets, 6) for k in range(buckets + 1)]
    names = [f"node-{i}" for i in range(nodes)]
    resources = ["cpu", "memory"] + (["nvidia.com/gpu"] if gpu else [])
    alloc: dict[str, list[str]] = {}
    for r, scale in zip(resources, (1.0, 0.5, 2.0), strict=False):
        rows = []
        for i in range(nodes):
            base = min(200, int((50 - 20 * (i % 3)) * scale))
            rows.append(_row([0 if (i == 2 and k >= 14) else base for k in range(buckets)]))
        alloc[r] = rows
    not_ready = [[[110.0, end]] if i == 2 else [] for i in range(nodes)]
    doc: dict[str, Any] = {
        "version": 1,
        "interval": 1.0,
        "start": 0.0,
        "end": end,
        "t": t,
        "pods": {"Pending": pending, "Running": running, "Succeeded": [0] * n, "Failed": [0] * n},
        "queues": (
            {
                "activeQ": [6 if i == 0 else 0 for i in range(n)],
                "backoffQ": [2 if 0 < i < 2 else 0 for i in range(n)],
                "unschedulablePods": [1 if 180 <= i < 181 else 0 for i in range(n)],
            }
            if scheduler
            else None
        ),
        "attempts": (
            {
                "scheduled": [4 if i == 1 else 2 if i == 3 else 1 if i == 181 else 0 for i in range(n)],
                "unschedulable": [0] * n,
                "error": [2 if i == 1 else 0 for i in range(n)],
            }
            if scheduler
            else None
        ),
        "markers": [
            {"t": 0.0, "kind": "step", "label": "steps[0].createPods web x6"},
            {"t": 3.2, "kind": "step", "label": "steps[1].waitFor podsRunning"},
            {"t": 60.0, "kind": "fault", "label": "fault nodeHeartbeatStop node-2"},
            {"t": 180.0, "kind": "step", "label": "steps[2].createPods after x1"},
        ],
        "nodes": {
            "names": names,
            "edges": edges,
            "resources": resources,
            "allocation": alloc,
            "notReady": not_ready,
            "pods": [[2 if not (i == 2 and k >= 14) else 0 for k in range(buckets)] for i in range(nodes)],
        },
        "timeline": (
            [
                {"pod": "default/web-2", "node": "node-0", "start": 0.03, "end": None, "phase": "Running"},
                {"pod": "default/web-5", "node": "node-0", "start": 0.03, "end": None, "phase": "Running"},
                {"pod": "default/web-3", "node": "node-1", "start": 0.03, "end": None, "phase": "Running"},
                {"pod": "default/web-0", "node": "node-1", "start": 2.0, "end": None, "phase": "Running"},
                {"pod": "default/web-4", "node": "node-2", "start": 0.03, "end": 145.0, "phase": "Deleted"},
                {"pod": "default/web-1", "node": "node-2", "start": 2.0, "end": 145.0, "phase": "Deleted"},
                {"pod": "default/after-0", "node": "node-1", "start": 180.01, "end": None, "phase": "Running"},
            ]
            if timeline
            else None
        ),
        "pendingSeconds": {"edges": [0.0, 0.001, 0.01, 0.1, 1.0, 10.0], "counts": [0, 5, 1, 0, 2]},
        "e2eSeconds": {"edges": [0.0, 0.001, 0.01, 0.1, 1.0, 10.0], "counts": [0, 5, 1, 0, 2]} if scheduler else None,
        "slowest": [
            {
                "pod": "default/web-0",
                "pendingSeconds": 2.0,
                "bound": True,
                "node": "node-1",
                "message": 'running Bind plugin "DefaultBinder": Operation cannot be fulfilled',
            },
            {"pod": "default/web-3", "pendingSeconds": 0.01, "bound": True, "node": "node-1", "message": ""},
        ],
    }
    return doc


METRICS: dict[str, Any] = {
    "podsScheduled": 7,
    "podsUnschedulable": 0,
    "pendingSeconds": {"p50": 0.01, "p90": 2.0, "p99": 2.0},
    "nodesUsed": {"mean": 2.4, "max": 3},
    "cpuAllocation": {"mean": 0.25, "p50": 0.25, "p90": 0.33},
    "memoryAllocation": {"mean": 0.125, "p50": 0.125, "p90": 0.16},
    "gpuAllocation": None,
    "preemptions": 0,
    "evictions": 2,
    "makespanSeconds": 211.0,
}


def run_report(**kwargs: Any) -> dict[str, Any]:
    """A run report as ``run --output json`` prints it, with ``metrics`` and ``series``."""
    return {
        "scenario": "faults-demo",
        "seed": 11,
        "clock": "virtual",
        "simulatedSeconds": 211.036,
        "wallSeconds": 0.243,
        "pods": {"total": 5, "pending": 0, "running": 5, "succeeded": 0, "failed": 0},
        "expectations": [
            {"name": "podsRunning: 4 matching 'app=web'", "passed": True, "detail": "4 of 4 pods"},
            {"name": "podsFailed: 0", "passed": False, "detail": "1 of 5 pods"},
        ],
        "events": 136,
        "traceHash": "0cc80d76f8f7e76a27ec31a1402db575ecb50080074d9d27bf2ac1eab1e270ee",
        "passed": False,
        "invariants": [
            {"name": "noOvercommit", "violations": 0, "first": None},
            {"name": "noDoubleBinding", "violations": 1, "first": {"time": 12.5, "detail": "default/x bound twice"}},
        ],
        "metrics": copy.deepcopy(METRICS),
        "series": series(**kwargs),
    }


def compare_doc(variants: int = 2) -> dict[str, Any]:
    out = []
    for i in range(variants):
        m = copy.deepcopy(METRICS)
        m["nodesUsed"] = {"mean": 2.4 - i, "max": 3 - i}
        s = series(end=211.0 + 30 * i)
        out.append(
            {
                "config": f"configs/v{i}.yaml",
                "runs": 2,
                "metrics": m,
                "spread": {
                    k: (0.0 if not isinstance(v, dict) else dict.fromkeys(v, 0.1))
                    for k, v in m.items()
                    if v is not None
                },
                "perSeed": [{"seed": 1, "metrics": m, "traceHash": "ab", "passed": True}],
                "series": s,
            }
        )
    return {"scenario": "faults-demo", "seeds": [1, 2], "variants": out}
