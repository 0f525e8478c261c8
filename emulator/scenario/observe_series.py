"""The ``series`` document (version 1) of a run, from the observer's state: pure functions.

Shapes: ``docs/architecture.md``, "Run metrics and series". What is computed here:

- ``histogram``: counts of (value, how many) pairs over the edges 0, 2^-10 s (about 1 ms),
  2^-9, ..., 2^hi, where 2^hi is the first power above the largest value; bin 0 is
  [0, 2^-10); at most ``MAX_BINS`` bins (past it the lowest edge moves up). Exponents come from
  ``math.frexp``, so every machine puts a value in the same bin.
- ``node_buckets``: each node's change points cut into ``K`` equal buckets over the run
  (``K = min(MAX_BUCKETS, ceil(span / interval))``); per resource, the time-weighted mean of
  allocated / allocatable while the node existed in the bucket, in half-percent units
  0..200 (capped at 200), 255 when it did not exist at any time in the bucket; base64 of the
  K bytes. A resource a node has no allocatable of reads 0 (200 if something requests it).
- ``slowest``: the ten pods that waited longest from creation to their first bind (a pod never
  bound waits until it was deleted or the run ended), ties by name.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

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


def histogram(counts: Iterable[tuple[float, int]]) -> dict[str, list[Any]]:
    """``{"edges", "counts"}`` of non-negative (value, how many) pairs (see the docstring)."""
    pairs = [(v, n) for v, n in counts if n > 0]
    top = max((math.frexp(v)[1] for v, _ in pairs if v > 0), default=LOWEST_EXPONENT)
    hi = max(top, LOWEST_EXPONENT)
    lo = max(LOWEST_EXPONENT, hi - (MAX_BINS - 1))
    bins = [0] * (hi - lo + 1)
    for v, n in pairs:
        i = 0 if v < math.ldexp(1.0, lo) else math.frexp(v)[1] - lo
        bins[min(i, len(bins) - 1)] += n
    edges = [0.0] + [math.ldexp(1.0, e) for e in range(lo, hi + 1)]
    return {"edges": edges, "counts": bins}


def bucket_edges(start: float, end: float, interval: float) -> list[float]:
    """K + 1 equal bucket edges over [start, end] (K = 0 for an empty run)."""
    span = end - start
    if span <= 0:
        return [start]
    k = max(1, min(MAX_BUCKETS, math.ceil(span / interval - 1e-9)))
    return [start + span * i / k for i in range(k)] + [end]


def _share(allocated: int, allocatable: int) -> float:
    if allocatable > 0:
        return min(allocated / allocatable, 1.0)
    return 1.0 if allocated > 0 else 0.0


def node_buckets(points: Sequence[NodePoint], edges: Sequence[float], resources: int) -> tuple[list[str], list[int]]:
    """(base64 row per resource (the first ``resources`` of cpu, memory, gpu), pods at the end
    of each bucket) of one node's change points."""
    k = len(edges) - 1
    sums = [[0.0] * k for _ in range(resources)]
    alive = [0.0] * k
    pods = [0] * k
    state: NodePoint | None = None
    n, j = len(points), 0
    for b in range(k):
        lo, hi = edges[b], edges[b + 1]
        t = lo
        while True:
            nxt = points[j][0] if j < n else math.inf
            seg_end = min(nxt, hi)
            if state is not None and state[8] and seg_end > t:
                width = seg_end - t
                alive[b] += width
                for r in range(resources):
                    sums[r][b] += width * _share(int(state[1 + r]), int(state[4 + r]))
            t = max(t, seg_end)
            if nxt <= hi and j < n:
                state = points[j]
                j += 1
                continue
            break
        pods[b] = state[7] if state is not None and state[8] else 0
    rows: list[str] = []
    for r in range(resources):
        row = bytes(MISSING if alive[b] <= 0 else min(200, round(200 * sums[r][b] / alive[b])) for b in range(k))
        rows.append(base64.b64encode(row).decode("ascii"))
    return rows, pods


def slowest(entries: Iterable[tuple[float, str, bool, str | None, str]], limit: int = 10) -> list[dict[str, Any]]:
    """The ``limit`` longest waits of (seconds, pod, bound, node, message), longest first."""
    ordered = sorted(entries, key=lambda e: (-e[0], e[1]))[:limit]
    return [
        {"pod": pod, "pendingSeconds": round(wait, 6), "bound": bound, "node": node, "message": message}
        for wait, pod, bound, node, message in ordered
    ]


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
    allocation: dict[str, list[str]] = {r: [] for r in resources}
    node_pods: list[list[int]] = []
    not_ready: list[list[list[float]]] = []
    for node in nodes:
        rows, pods = node_buckets(node.points, edges, len(resources))
        for r, row in zip(resources, rows, strict=True):
            allocation[r].append(row)
        node_pods.append(pods)
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
        "pendingSeconds": histogram((v, 1) for v in obs.pending),
        "e2eSeconds": histogram(e2e.counts()) if has_scheduler else None,
        "slowest": slowest([*obs.slowest, *waiting]),
    }
