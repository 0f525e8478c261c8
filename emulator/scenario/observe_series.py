"""The ``series`` document (version 1) of a run, from the observer's state: pure functions.

Shapes: ``docs/architecture.md``, "Run metrics and series". What is computed here:

- ``histogram``: counts of (value, how many) pairs over the edges 0, 2^-10 s (about 1 ms),
  2^-9, ..., 2^hi, where 2^hi is the first power above the largest value; bin 0 is
  [0, 2^-10); at most ``MAX_BINS`` bins (past it the lowest edge moves up). Exponents come from
  ``math.frexp``, so every machine puts a value in the same bin.
- ``node_buckets``: the nodes' change points cut into ``K`` equal buckets over the run
  (``K = min(MAX_BUCKETS, ceil(span / interval))``); per resource, the time-weighted mean of
  allocated / allocatable while the node existed in the bucket, in half-percent units
  0..200 (capped at 200, rounded half to even), 255 when it did not exist at any time in the
  bucket; base64 of the K bytes. A resource a node has no allocatable of reads 0 (200 if
  something requests it).
- ``slowest``: the ten pods that waited longest from creation to their first bind (a pod never
  bound waits until it was deleted or the run ended), ties by name.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from emulator.runtime.stats import QuantileSketch

if TYPE_CHECKING:
    from emulator.scenario.observe import Observer

__all__ = ["MAX_BINS", "MAX_BUCKETS", "bucket_edges", "histogram", "node_buckets", "series", "slowest"]

MAX_BINS: Final = 40
MAX_BUCKETS: Final = 240
LOWEST_EXPONENT: Final = -10
MISSING: Final = 255
"""The byte of a bucket in which the node did not exist."""

NodePoint = tuple[float, int, int, int, int, int, int, int, bool]
"""(t, allocated cpu, memory, gpu, allocatable cpu, memory, gpu, pods, exists)."""


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


def bucket_edges(start: float, end: float, interval: float) -> list[float]:
    """K + 1 equal bucket edges over [start, end] (K = 0 for an empty run)."""
    span = end - start
    if span <= 0:
        return [start]
    k = max(1, min(MAX_BUCKETS, math.ceil(span / interval - 1e-9)))
    return [start + span * i / k for i in range(k)] + [end]


def node_buckets(
    nodes: Sequence[Sequence[NodePoint]], edges: Sequence[float], resources: int
) -> tuple[list[list[str]], list[list[int]]]:
    """Per resource (the first ``resources`` of cpu, memory, gpu), each node's base64 row; and
    each node's pods at the end of each bucket, from the nodes' change points.

    Vectorised over every node at once (a call per node cost 1 ms of numpy overhead, a second
    for 1,000 nodes): the points of all nodes in one table, node ``n``'s times shifted by
    ``n * W`` (``W`` longer than the run) so that one ``searchsorted`` finds, for every node and
    edge, the point in force; the integral of each step function at each edge is a running sum
    within the node plus the last piece; differences of integrals over the edges, divided by
    the time the node existed, give the bucket means."""
    k = len(edges) - 1
    count = len(nodes)
    if k <= 0 or count == 0:
        return [[""] * count for _ in range(resources)], [[] for _ in range(count)]
    sizes = np.array([len(points) for points in nodes], dtype=np.int64)
    table = np.array([p for points in nodes for p in points], dtype=np.float64).reshape(-1, 9)
    owner = np.repeat(np.arange(count), sizes)
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    times, exists = table[:, 0], table[:, 8]
    width = max(float(times.max(initial=0.0)), edges[-1]) - min(edges[0], 0.0) + 1.0
    shifted = times + owner * width
    at = np.asarray(edges, dtype=np.float64)[None, :] + (np.arange(count) * width)[:, None]
    index = np.searchsorted(shifted, at.ravel(), side="right").reshape(count, k + 1) - 1
    valid = index >= first[:, None]
    j = np.maximum(index, 0)
    same_node = np.append(owner[1:] == owner[:-1], False)
    length = np.where(same_node, np.append(times[1:], 0.0) - times, 0.0)

    def integral(values: Any) -> Any:
        cum = np.concatenate(([0.0], np.cumsum(values * length)))
        inside = cum[j] - cum[first][:, None] + values[j] * (at - shifted[j])
        return np.where(valid, inside, 0.0)

    alive = np.diff(integral(exists), axis=1)
    present = alive > 1e-9 * (edges[-1] - edges[0])
    rows: list[list[str]] = []
    for r in range(resources):
        allocated, allocatable = table[:, 1 + r], table[:, 4 + r]
        share = np.where(
            allocatable > 0, np.minimum(allocated / np.maximum(allocatable, 1), 1.0), (allocated > 0) * 1.0
        )
        sums = np.diff(integral(share * exists), axis=1)
        units = np.minimum(200, np.rint(200 * sums / np.where(present, alive, 1.0)))
        matrix = np.where(present, units, MISSING).astype(np.uint8)
        rows.append([base64.b64encode(row.tobytes()).decode("ascii") for row in matrix])
    end = j[:, 1:]
    live = valid[:, 1:] & (exists[end] > 0)
    pods = np.where(live, table[end, 7], 0).astype(np.int64)
    return rows, pods.tolist()


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
    edges = bucket_edges(0.0, end, interval)
    rows, node_pods = node_buckets([n.points for n in nodes], edges, len(resources))
    allocation = dict(zip(resources, rows, strict=True))
    not_ready: list[list[list[float]]] = []
    for node in nodes:
        spans = list(node.not_ready)
        if node.not_ready_since is not None and end > node.not_ready_since:
            spans.append([node.not_ready_since, end])
        not_ready.append([[round(a, 6), round(b, 6)] for a, b in spans])
    timeline = None
    if obs.timeline is not None:
        phases = {p.bar: p.phase for p in obs.pods.values() if p.bar >= 0 and p.node is not None}
        timeline = [
            {"pod": pod, "node": node, "start": round(start, 6), "end": None if stop is None else round(stop, 6),
             "phase": phases.get(i, phase) if stop is None else phase}
            for i, (pod, node, start, stop, phase) in enumerate(obs.timeline)
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
            "pods": node_pods,
        },
        "timeline": timeline,
        "pendingSeconds": histogram(np.array(obs.pending, dtype=np.float64)),
        "e2eSeconds": histogram(*_pairs(e2e.counts())) if has_scheduler else None,
        "slowest": slowest([*obs.slowest, *waiting]),
    }
