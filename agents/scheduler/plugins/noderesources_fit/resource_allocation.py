"""``NodeResourcesFit``'s scoring strategies (upstream ``plugins/noderesources/
{resource_allocation,least_allocated,most_allocated,requested_to_capacity_ratio}.go``).

What this module owns: ``STRATEGIES`` (per node: ``scorer(requested, allocatable)``, weighted
integer means over the configured resources) and ``VECTOR_STRATEGIES`` (the same formulas over
NodeTable columns), and what one node contributes to a score (``alloc_and_requested``, upstream
``calculateResourceAllocatableRequest``; ``pod_score_requests``). The formulas are in the
package docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from agents.scheduler.args import ResourceSpec, ScoringStrategy
from agents.scheduler.framework.node_table import IntArray
from agents.scheduler.framework.types import MAX_NODE_SCORE, NodeInfo, PodInfo
from agents.scheduler.plugins.helper import go_div_all
from emulator.base.api.resources import is_scalar_resource

__all__ = [
    "PER_RESOURCE",
    "STRATEGIES",
    "VECTOR_STRATEGIES",
    "Scorer",
    "VectorScorer",
    "alloc_and_requested",
    "pod_score_requests",
]

_MAX_UTILIZATION: Final = 100


Scorer = Callable[[Sequence[int], Sequence[int]], int]
"""``scorer(requested, allocatable) -> score``, per configured resource (allocatable 0: skipped)."""


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _weighted_mean(resources: Sequence[ResourceSpec], per: Callable[[int, int], int]) -> Scorer:
    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for r, req, alloc in zip(resources, requested, allocatable, strict=True):
            if alloc:
                total += per(req, alloc) * r.weight
                weights += r.weight
        return total // weights if weights else 0

    return scorer


def _least(req: int, alloc: int) -> int:
    return 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc


def _most(req: int, alloc: int) -> int:
    return min(req, alloc) * MAX_NODE_SCORE // alloc


PER_RESOURCE: Final[dict[str, Callable[[int, int], int]]] = {"LeastAllocated": _least, "MostAllocated": _most}
"""The per-resource score of the strategies whose node score is the weighted integer mean of it
over the resources with allocatable (``_weighted_mean``)."""


def _least_allocated(strategy: ScoringStrategy) -> Scorer:
    return _weighted_mean(strategy.resources, _least)


def _most_allocated(strategy: ScoringStrategy) -> Scorer:
    return _weighted_mean(strategy.resources, _most)


def _requested_to_capacity_ratio(strategy: ScoringStrategy) -> Scorer:
    assert strategy.requested_to_capacity_ratio is not None
    shape = [(p.utilization, p.score * (MAX_NODE_SCORE // 10)) for p in strategy.requested_to_capacity_ratio.shape]

    def raw(p: int) -> int:  # upstream BuildBrokenLinearFunction
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return s
                u0, s0 = shape[i - 1]
                return s0 + _go_div((s - s0) * (p - u0), u - u0)
        return shape[-1][1]

    resources = strategy.resources

    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for r, req, alloc in zip(resources, requested, allocatable, strict=True):
            if not alloc:
                continue
            s = raw(_MAX_UTILIZATION if req > alloc else req * _MAX_UTILIZATION // alloc)
            if s > 0:
                total += s * r.weight
                weights += r.weight
        return (2 * total + weights) // (2 * weights) if weights else 0  # math.Round of the mean

    return scorer


VectorScorer = Callable[[Sequence[tuple[int, IntArray, IntArray]]], IntArray]
"""``scorer([(weight, requested, allocatable), ...]) -> scores`` over rows (allocatable 0: left out)."""


def _vector_weighted_mean(per: Callable[[IntArray, IntArray], IntArray]) -> VectorScorer:
    def scorer(columns: Sequence[tuple[int, IntArray, IntArray]]) -> IntArray:
        if all(alloc.min(initial=1) > 0 for _, _, alloc in columns):  # no resource left out anywhere
            acc = per(columns[0][1], columns[0][2]) * columns[0][0]
            for w, req, alloc in columns[1:]:
                acc += per(req, alloc) * w
            return acc // sum(w for w, _, _ in columns)
        m = len(columns[0][1])
        total = np.zeros(m, dtype=np.int64)
        weights = np.zeros(m, dtype=np.int64)
        for w, req, alloc in columns:
            has = alloc != 0
            total += np.where(has, per(req, np.where(has, alloc, 1)) * w, 0)
            weights += np.where(has, w, 0)
        return np.where(weights != 0, total // np.where(weights != 0, weights, 1), 0)

    return scorer


def _vector_least(strategy: ScoringStrategy) -> VectorScorer:
    # (alloc - req) clipped at 0 is the reference's "0 if req > alloc" (alloc > 0 here).
    return _vector_weighted_mean(lambda req, alloc: np.maximum(alloc - req, 0) * MAX_NODE_SCORE // alloc)


def _vector_most(strategy: ScoringStrategy) -> VectorScorer:
    return _vector_weighted_mean(lambda req, alloc: np.minimum(req, alloc) * MAX_NODE_SCORE // alloc)


def _vector_ratio(strategy: ScoringStrategy) -> VectorScorer:
    assert strategy.requested_to_capacity_ratio is not None
    shape = [(p.utilization, p.score * (MAX_NODE_SCORE // 10)) for p in strategy.requested_to_capacity_ratio.shape]

    def raw(p: IntArray) -> IntArray:
        out = np.full(len(p), shape[-1][1], dtype=np.int64)
        for i in range(len(shape) - 1, -1, -1):
            u, sc = shape[i]
            if i == 0:
                value = np.full(len(p), sc, dtype=np.int64)
            else:
                u0, s0 = shape[i - 1]
                value = s0 + go_div_all((sc - s0) * (p - u0), max(u - u0, 1))
            out = np.where(p <= u, value, out)
        return out

    def scorer(columns: Sequence[tuple[int, IntArray, IntArray]]) -> IntArray:
        m = len(columns[0][1]) if columns else 0
        total = np.zeros(m, dtype=np.int64)
        weights = np.zeros(m, dtype=np.int64)
        for w, req, alloc in columns:
            has = alloc != 0
            safe = np.where(has, alloc, 1)
            sc = raw(np.where(req > alloc, _MAX_UTILIZATION, req * _MAX_UTILIZATION // safe))
            counted = has & (sc > 0)
            total += np.where(counted, sc * w, 0)
            weights += np.where(counted, w, 0)
        nz = weights != 0
        return np.where(nz, (2 * total + weights) // np.where(nz, 2 * weights, 1), 0)

    return scorer


VECTOR_STRATEGIES: Final[dict[str, Callable[[ScoringStrategy], VectorScorer]]] = {
    "LeastAllocated": _vector_least,
    "MostAllocated": _vector_most,
    "RequestedToCapacityRatio": _vector_ratio,
}


STRATEGIES: Final[dict[str, Callable[[ScoringStrategy], Scorer]]] = {
    "LeastAllocated": _least_allocated,
    "MostAllocated": _most_allocated,
    "RequestedToCapacityRatio": _requested_to_capacity_ratio,
}


def pod_score_requests(pod_info: PodInfo, resources: Sequence[ResourceSpec]) -> tuple[int, ...]:
    """Per configured resource: the non-zero request for cpu/memory, the real one otherwise."""
    out: list[int] = []
    requests = pod_info.requests
    for r in resources:
        name = r.name
        if name == "cpu":
            out.append(pod_info.non_zero_cpu)
        elif name == "memory":
            out.append(pod_info.non_zero_memory)
        else:
            out.append(requests.get(name, 0))
    return tuple(out)


def alloc_and_requested(node_info: NodeInfo, name: str, pod_request: int) -> tuple[int, int]:
    """Upstream ``calculateResourceAllocatableRequest``; (0, 0) leaves the resource out."""
    if pod_request == 0 and is_scalar_resource(name):
        return 0, 0
    alloc = node_info.allocatable
    if name == "cpu":
        return alloc.milli_cpu, node_info.non_zero_requested.milli_cpu + pod_request
    if name == "memory":
        return alloc.memory, node_info.non_zero_requested.memory + pod_request
    if name == "ephemeral-storage":
        return alloc.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
    if name in alloc.scalar_resources:
        return alloc.scalar_resources[name], node_info.requested.scalar_resources.get(name, 0) + pod_request
    return 0, 0
