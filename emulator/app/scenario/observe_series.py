"""The ``series`` document (version 1) of a run, from the observer's state: pure functions.

Shapes: ``docs/architecture.md``, "Run metrics and series". What is computed here:

- ``histogram``: counts of (value, how many) pairs over the edges 0, 2^-10 s (about 1 ms),
  2^-9, ..., 2^hi, where 2^hi is the first power above the largest value; bin 0 is
  [0, 2^-10); at most ``MAX_BINS`` bins (past it the lowest edge moves up). Exponents come from
  ``math.frexp``, so every machine puts a value in the same bin.
- the nodes' allocation buckets: ``observe_nodes`` keeps and encodes them;
- the timeline: the last ended bars the observer kept, then the live pods' bars, by start;
- ``slowest``: the ten pods that waited longest from creation to their first bind (a pod never
  bound waits until it was deleted or the run ended), ties by name.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from emulator.base.runtime.stats import QuantileSketch

if TYPE_CHECKING:
    from emulator.app.scenario.observe import Observer

__all__ = ["MAX_BINS", "histogram", "series", "slowest"]

MAX_BINS: Final = 40
LOWEST_EXPONENT: Final = -10


def histogram(values: Any, counts: Any = None) -> dict[str, list[Any]]:
    """``{"edges", "counts"}`` of non-negative ``values`` (each ``counts[i]`` times, once
    without ``counts``; see the module docstring)."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    n = np.ones(len(v), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    exponents = np.frexp(v)[1]
    positive = v > 0
    hi = max(int(exponents[positive].max()) if positive.any() else LOWEST_EXPONENT, LOWEST_EXPONENT)
    lo = max(LOWEST_EXPONENT, hi - (MAX_BINS - 1))
    index = np.where(v < math.ldexp(1.0, lo), 0, np.minimum(exponents - lo, hi - lo))
    bins = np.bincount(index, weights=n, minlength=hi - lo + 1).astype(np.int64)
    edges = [0.0] + [math.ldexp(1.0, e) for e in range(lo, hi + 1)]
    return {"edges": edges, "counts": [int(c) for c in bins]}


def slowest(entries: Iterable[tuple[float, str, bool, str | None, str]], limit: int = 10) -> list[dict[str, Any]]:
    """The ``limit`` longest waits of (seconds, pod, bound, node, message), longest first."""
    ordered = sorted(entries, key=lambda e: (-e[0], e[1]))[:limit]
    return [
        {"pod": pod, "pendingSeconds": round(wait, 6), "bound": bound, "node": node, "message": message}
        for wait, pod, bound, node, message in ordered
    ]


def _pairs(counts: Sequence[tuple[float, int]]) -> tuple[Any, Any]:
    return [v for v, _ in counts], [n for _, n in counts]


def _diffs(cumulative: Sequence[int]) -> list[int]:
    return [b - a for a, b in zip([0, *cumulative[:-1]], cumulative, strict=True)]


def series(obs: Observer, end: float, faults: Sequence[tuple[float, str]] = ()) -> dict[str, Any]:
    """The ``series`` document of the run ``obs`` watched, ending at ``end``, with the
    ``faults`` markers ((start, label)); samples are filled up to ``end`` first."""
    obs.sample_until(end, inclusive=True)
    s, interval = obs.samples, obs.interval
    schedulers = obs.schedulers()
    has_scheduler = obs.has_scheduler or bool(schedulers)
    marks = list(obs.markers)
    marks += [(t, len(marks) + i, "fault", label) for i, (t, label) in enumerate(faults)]
    markers = [{"t": round(t, 6), "kind": kind, "label": label} for t, _, kind, label in sorted(marks) if t <= end]
    nodes = [n for n in obs.nodes.values() if n.existed]
    resources = ["cpu", "memory"] + (["nvidia.com/gpu"] if obs.gpu else [])
    buckets = obs.buckets
    buckets.reach(end, list(obs.nodes.values()))
    edges = buckets.edges(end)
    k = len(edges) - 1
    buckets.finish(nodes, end)
    allocation: dict[str, list[str]] = {r: [] for r in resources}
    not_ready: list[list[list[float]]] = []
    for r, rows in zip(resources, buckets.rows(nodes, k, len(resources)), strict=True):
        allocation[r] = rows
    for node in nodes:
        spans = list(node.not_ready)
        if node.not_ready_since is not None and end > node.not_ready_since:
            spans.append([node.not_ready_since, end])
        not_ready.append([[round(a, 6), round(b, 6)] for a, b in spans])
    timeline = None
    if obs.timeline is not None:
        bars: list[tuple[float, str, str, float | None, str]] = [
            (start, pod, node, stop, phase) for pod, node, start, stop, phase in obs.timeline
        ]
        bars += [(p.bound_at, p.key, p.node, None, p.phase) for p in obs.pods.values()
                 if p.node is not None and p.bound_at is not None]  # fmt: skip
        bars.sort(key=lambda bar: (bar[0], bar[1]))
        timeline = [
            {"pod": pod, "node": node, "start": round(start, 6), "end": None if stop is None else round(stop, 6),
             "phase": phase}
            for start, pod, node, stop, phase in bars
        ]  # fmt: skip
    e2e = QuantileSketch()
    for sched in schedulers:
        e2e.merge(sched.metrics.e2e_seconds)
    waiting = [(end - p.created, p.key, False, None, p.message) for p in obs.pods.values() if p.bound_at is None]
    return {
        "version": 1,
        "interval": interval,
        "start": 0.0,
        "end": round(end, 6),
        "t": [i * interval for i in range(len(s["Pending"]))],
        "pods": {phase: list(s[phase]) for phase in ("Pending", "Running", "Succeeded", "Failed")},
        "queues": {q: list(s[q]) for q in ("activeQ", "backoffQ", "unschedulablePods")} if has_scheduler else None,
        "attempts": {r: _diffs(s[r]) for r in ("scheduled", "unschedulable", "error")} if has_scheduler else None,
        "markers": markers,
        "nodes": {
            "names": [n.name for n in nodes],
            "edges": [round(e, 6) for e in edges],
            "resources": resources,
            "allocation": allocation,
            "notReady": not_ready,
            "pods": [list(n.pods_at_end[:k]) for n in nodes],
        },
        "timeline": timeline,
        "pendingSeconds": histogram(*_pairs(obs.pending.counts())),
        "e2eSeconds": histogram(*_pairs(e2e.counts())) if has_scheduler else None,
        "slowest": slowest([*obs.slowest, *waiting]),
    }
