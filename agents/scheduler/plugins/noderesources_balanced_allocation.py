"""``NodeResourcesBalancedAllocation`` (upstream ``plugins/noderesources/balanced_allocation.go``
and the ``useRequested`` half of ``resource_allocation.go``): PreScore and Score.

What this module owns: favouring nodes whose utilisation stays *balanced* across the configured
resources once the pod is placed. It does not filter (``NodeResourcesFit`` does), normalises
nothing (no ScoreExtensions: the score is already on 0..``MAX_NODE_SCORE``), and registers no
cluster events (upstream's plugin has no ``EventsToRegister``: a Score-only plugin never rejects a
pod, so the queue never asks it).

PreScore — the pod's *real* requests (``useRequested = true``: no 100m / 200Mi defaults for
containers without requests; cpu in millicores, others in base units, overhead and init/sidecar
containers included, as ``emulator.base.api.resources.pod_requests``), one per configured resource, in
configuration order, go into the CycleState. A pod whose configured requests are all 0 (best
effort) gets ``Skip`` (v1.33+, PR #130260: otherwise every best-effort pod lands on the same
"perfectly balanced" node) and the runtime leaves this plugin out of its scoring.

Score — per configured resource (``args.resources``, default cpu and memory, weights unused):

==========================================  ==============================================
resource                                    (allocatable, node requested + pod request)
==========================================  ==============================================
cpu / memory                                allocatable, node's *real* requested + request
ephemeral-storage                           allocatable, node's requested + request
scalar (extended, hugepages-*, …) not       left out (the pod does not use it)
requested by the pod
scalar the node has                         allocatable, node's requested + request
anything else (incl. scalars the node       left out
lacks, ``pods``)
==========================================  ==============================================

Resources left out or with allocatable 0 are skipped; each remaining one gives a float fraction
``min(1, requested / allocatable)``. With two fractions ``std = |(f1 - f2) / 2|``, with more the
population standard deviation (``sqrt(Σ(f - mean)² / n)``), with fewer 0. The score is
``int((1 - std) * MAX_NODE_SCORE)`` (truncated): 50..100 for two resources. The arithmetic is done
in the same order as upstream's float64 code so results match it bit for bit.

``score_all`` (vectorised over a ``NodeTable``) does the same float64 operations in the same
order on columns; it declines (None: per node) when the pod requests a scalar resource some node
may have, when some node has allocatable 0 for a configured resource (the number of fractions
would vary by node), or for amounts ≥ 2**50.

Not modelled: DRA-backed extended resources (``DRAExtendedResource``, alpha and off in v1.34) and
pod-level resources (our Pod has none).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from operator import attrgetter
from typing import Any, Final

import numpy as np

from agents.scheduler.args import NodeResourcesBalancedAllocationArgs, decode_args
from agents.scheduler.framework.interface import Handle, RowScore
from agents.scheduler.framework.node_table import (
    ALLOC_CPU,
    ALLOC_EPH,
    ALLOC_MEM,
    REQ_CPU,
    REQ_EPH,
    REQ_MEM,
    IntArray,
    NodeTable,
)
from agents.scheduler.framework.row_cache import OneRow, RowCompute
from agents.scheduler.framework.types import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    Code,
    CycleState,
    NodeInfo,
    Status,
    pod_info_of,
)
from agents.scheduler.plugins.helper import RowScoreMemo
from emulator.base.api.core import Pod
from emulator.base.api.resources import is_scalar_resource

__all__ = [
    "NAME",
    "PRE_SCORE_STATE_KEY",
    "NodeResourcesBalancedAllocation",
    "balanced_resource_scorer",
]

NAME: Final = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """Upstream ``balancedResourceScorer``: ``int((1 - std) * 100)`` over the resources with
    allocatable != 0, each fraction capped at 1."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


_COLUMNS: Final = {
    "cpu": (ALLOC_CPU, REQ_CPU),
    "memory": (ALLOC_MEM, REQ_MEM),
    "ephemeral-storage": (ALLOC_EPH, REQ_EPH),
}
"""NodeTable columns (allocatable, requested) of the resources the vectorised path reads."""


@lru_cache(maxsize=256)
def _vector_scores(spec: tuple[tuple[int, int, int], ...]) -> RowCompute:
    """``balanced_resource_scorer`` over table rows for the resources of ``spec`` (-1 on a row
    where one of their allocatables is <= 0)."""

    def compute(table: NodeTable, at: IntArray) -> IntArray:
        data = table.data
        m = len(at)
        fractions: list[np.ndarray[Any, np.dtype[np.float64]]] = []
        bad = np.zeros(m, dtype=bool)
        for alloc_col, req_col, want in spec:
            alloc = data[alloc_col][at]
            ok = alloc > 0
            bad |= ~ok
            used = data[req_col][at] + want
            fractions.append(np.minimum(used.astype(np.float64) / np.where(ok, alloc, 1).astype(np.float64), 1.0))
        if len(fractions) == 2:
            std = np.abs((fractions[0] - fractions[1]) / 2)
        elif len(fractions) > 2:
            total = np.zeros(m)
            for f in fractions:
                total = total + f
            mean = total / len(fractions)
            acc = np.zeros(m)
            for f in fractions:
                acc = acc + (f - mean) * (f - mean)
            std = np.sqrt(acc / len(fractions))
        else:
            std = np.zeros(m)
        out = ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
        out[bad] = -1
        return out

    return compute


_AMOUNTS: Final = {"cpu": "milli_cpu", "memory": "memory", "ephemeral-storage": "ephemeral_storage"}
"""The ``Resource`` attribute of each resource the vectorised path reads."""


@lru_cache(maxsize=256)
def _scalar_scores(counted: tuple[tuple[str, int], ...]) -> OneRow:
    """``_vector_scores`` for one NodeInfo: the reference ``score`` over the ``counted``
    (resource, request) pairs (the others, left out on every node, are not read), in order."""
    getters = [(attrgetter(_AMOUNTS[name]), want) for name, want in counted]

    def one(info: NodeInfo) -> int:
        alloc, used = info.allocatable, info.requested
        allocatable = [get(alloc) for get, _ in getters]
        if min(allocatable, default=1) <= 0:
            return -1
        return balanced_resource_scorer([get(used) + want for get, want in getters], allocatable)

    return one


def _row_score(counted: tuple[tuple[str, int], ...]) -> OneRow:
    """``_score_node`` for a node without scalar resources (``score_row``'s case): over the
    ``counted`` (resource, request) pairs of the non-scalar resources, each left out where the
    node's allocatable is 0; a resource the table has no amount of is left out everywhere."""
    getters = [(attrgetter(_AMOUNTS[name]), want) for name, want in counted if name in _AMOUNTS]
    if len(getters) == 2:
        (get0, want0), (get1, want1) = getters

        def two(info: NodeInfo) -> int:
            alloc, used = info.allocatable, info.requested
            a0, a1 = get0(alloc), get1(alloc)
            if a0 and a1:  # balanced_resource_scorer's two-resource case, inline
                f0 = min(float(get0(used) + want0) / float(a0), 1.0)
                f1 = min(float(get1(used) + want1) / float(a1), 1.0)
                return int((1 - abs((f0 - f1) / 2)) * float(MAX_NODE_SCORE))
            if a0:
                return balanced_resource_scorer([get0(used) + want0], [a0])
            if a1:
                return balanced_resource_scorer([get1(used) + want1], [a1])
            return balanced_resource_scorer([], [])

        return two

    def one(info: NodeInfo) -> int:
        alloc, used = info.allocatable, info.requested
        requested: list[int] = []
        allocatable: list[int] = []
        for get, want in getters:
            a = get(alloc)
            if a:
                allocatable.append(a)
                requested.append(get(used) + want)
        return balanced_resource_scorer(requested, allocatable)

    return one


class _PreScoreState:
    """Read-only once written (a plain slotted class: cheaper to build than a frozen dataclass)."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: tuple[int, ...]) -> None:
        self.pod_requests = pod_requests
        """The pod's real request per configured resource, in ``args.resources`` order."""

    def clone(self) -> _PreScoreState:
        return self  # read-only after PreScore, as upstream


class NodeResourcesBalancedAllocation:
    """Score nodes by how evenly the pod leaves their configured resources used."""

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.args = decode_args(NodeResourcesBalancedAllocationArgs, args)
        self.handle = handle
        self._names: tuple[str, ...] = tuple(r.name for r in self.args.resources)
        self._scalar: tuple[bool, ...] = tuple(is_scalar_resource(n) for n in self._names)
        self._row_scores = RowScoreMemo()
        """``score_row``'s answer per pod requests."""

    # PreScore

    def _pod_request_list(self, state: CycleState, pod: Pod) -> tuple[int, ...]:
        """Upstream ``calculatePodResourceRequestList`` with ``useRequested``: real requests."""
        pi = state.pod_info  # ``pod_info_of`` inline: the cycle's PodInfo when it is this pod's
        reqs = (pi if pi is not None and pi.pod is pod else pod_info_of(state, pod)).requests
        return tuple([reqs.get(n, 0) for n in self._names])

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        requests = self._pod_request_list(state, pod)
        if not any(requests):  # best effort: skip (issue #129138)
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests))
        return SUCCESS

    # Score

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        try:
            requests: tuple[int, ...] = state.read(PRE_SCORE_STATE_KEY).pod_requests
        except KeyError:  # PreScore did not run: compute here, as upstream
            requests = self._pod_request_list(state, pod)
            if not any(requests):
                return 0, SUCCESS
        if not self._names:
            return 0, Status(Code.Error, "resources not found")
        return self._score_node(node_info, requests), SUCCESS

    def _score_node(self, node_info: NodeInfo, requests: tuple[int, ...]) -> int:
        n = len(self._names)
        requested = [0] * n
        allocatable = [0] * n
        for i in range(n):
            alloc, req = self._allocatable_and_requested(node_info, i, requests[i])
            if alloc:
                allocatable[i] = alloc
                requested[i] = req
        return balanced_resource_scorer(requested, allocatable)

    def _allocatable_and_requested(self, node_info: NodeInfo, i: int, pod_request: int) -> tuple[int, int]:
        """Upstream ``calculateResourceAllocatableRequest`` (real requested); (0, 0) leaves it out."""
        name = self._names[i]
        if self._scalar[i]:
            if pod_request == 0:
                return 0, 0
            have = node_info.allocatable.scalar_resources
            if name not in have:
                return 0, 0
            return have[name], node_info.requested.scalar_resources.get(name, 0) + pod_request
        alloc, used = node_info.allocatable, node_info.requested
        if name == "cpu":
            return alloc.milli_cpu, used.milli_cpu + pod_request
        if name == "memory":
            return alloc.memory, used.memory + pod_request
        if name == "ephemeral-storage":
            return alloc.ephemeral_storage, used.ephemeral_storage + pod_request
        return 0, 0

    def score_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        try:
            requests: tuple[int, ...] = state.read(PRE_SCORE_STATE_KEY).pod_requests
        except KeyError:
            return None
        return self._score_rows(requests, table, rows, cached=True)

    def _score_rows(
        self, requests: tuple[int, ...], table: NodeTable, rows: IntArray, *, cached: bool
    ) -> IntArray | None:
        """``score_all`` for these requests (``cached``: through the table's row cache)."""
        if not self._names or table.huge:
            return None
        picked: list[tuple[int, int, int]] = []  # allocatable column, requested column, request
        counted: list[int] = []  # their indices in ``_names``
        for i, name in enumerate(self._names):
            if self._scalar[i]:
                if requests[i] == 0 or not table.any_scalars:
                    continue  # left out on every node
                return None
            columns = _COLUMNS.get(name)
            if columns is not None:
                picked.append((*columns, requests[i]))
                counted.append(i)
        spec = tuple(picked)
        if cached:
            # A node's score depends on its own columns and the pod's requests of the counted
            # resources; -1 marks a node with a counted allocatable <= 0 (the reference path's case).
            one = _scalar_scores(tuple((self._names[i], requests[i]) for i in counted))
            values = table.rows_cached((self, spec), _vector_scores(spec), rows, one)
        else:
            values = _vector_scores(spec)(table, rows)
        if len(values) and np.minimum.reduce(values) < 0:
            return None
        return values

    def score_row(self, state: CycleState, pod: Pod, table: NodeTable) -> RowScore | None:
        """No NormalizeScore: the score of a node is a function of its amounts and the requests;
        None when a node has scalar resources (their amounts are not table columns)."""
        if table.any_scalars:
            return None
        try:
            requests: tuple[int, ...] = state.read(PRE_SCORE_STATE_KEY).pod_requests
        except KeyError:
            return None
        if not self._names:
            return None  # ``score`` fails
        kept = self._row_scores.peek(requests)
        if kept is not None:
            return kept
        return self._row_scores.get(
            requests,
            lambda: RowScore(
                (self, requests),
                _row_score(tuple((n, r) for n, r, s in zip(self._names, requests, self._scalar, strict=True) if not s)),
                lambda t, at: self._score_rows(requests, t, at, cached=False),
                reads_node=False,  # the amounts only
            ),
        )

    def score_extensions(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"<NodeResourcesBalancedAllocation {list(self._names)}>"
