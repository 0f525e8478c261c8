"""``NodeResourcesFit`` (upstream ``plugins/noderesources/fit.go``): PreFilter, Filter,
PreScore, Score, its events and queueing hints.

What this module owns: whether a pod's requests fit a node (``fits``, also the kubelet-style
admission's and preemption's check), the Filter over NodeTable rows (a bit set of failures
indexing pre-built statuses), and the plugin, which scores with a strategy of
``resource_allocation.py``. The rules are in the package docstring.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Any, Final

import numpy as np

from agents.scheduler.args import NodeResourcesFitArgs, decode_args
from agents.scheduler.framework.interface import ALL_PASS, FilterCodes, Handle, RowScore
from agents.scheduler.framework.node_table import (
    ALLOC_CPU,
    ALLOC_EPH,
    ALLOC_MEM,
    FREE_CPU,
    FREE_EPH,
    FREE_MEM,
    FREE_PODS,
    NZ_CPU,
    NZ_MEM,
    REQ_EPH,
    IntArray,
    NodeTable,
)
from agents.scheduler.framework.row_cache import OneRow, RowCompute
from agents.scheduler.framework.types import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
    Resource,
    Status,
    pod_info_of,
)
from agents.scheduler.plugins.helper import RowScoreMemo
from emulator.base.api.core import Node, Pod
from emulator.base.api.resources import is_extended_resource, is_scalar_resource, node_allocatable, pod_requests

from .resource_allocation import (
    PER_RESOURCE,
    STRATEGIES,
    VECTOR_STRATEGIES,
    alloc_and_requested,
    pod_score_requests,
)

__all__ = [
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "InsufficientResource",
    "NodeResourcesFit",
    "fits",
    "fits_request",
]

NAME: Final = "NodeResourcesFit"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """Why a pod does not fit: upstream's ``InsufficientResource`` (plus ``unresolvable``)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False
    """The request exceeds the node's allocatable itself (v1.34)."""


def _fits(
    req: Resource, alloc: Resource, used: Resource, n_pods: int, ignored: frozenset[str], groups: frozenset[str]
) -> list[InsufficientResource]:
    out: list[InsufficientResource] = []
    if n_pods + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource("pods", "Too many pods", 1, n_pods, alloc.allowed_pod_number))
    scalars = sorted(n for n, v in req.scalar_resources.items() if v and is_scalar_resource(n))
    if not (req.milli_cpu or req.memory or req.ephemeral_storage or scalars):
        return out
    for name in ("cpu", "memory", "ephemeral-storage", *scalars):
        if name in scalars and is_extended_resource(name) and (name in ignored or name.split("/")[0] in groups):
            continue
        want, have, taken = req.get(name), alloc.get(name), used.get(name)
        if want > 0 and want > have - taken:
            out.append(InsufficientResource(name, f"Insufficient {name}", want, taken, have, want > have))
    return out


def fits_request(
    req: Resource, node_info: NodeInfo, ignored: frozenset[str] = frozenset(), groups: frozenset[str] = frozenset()
) -> list[InsufficientResource]:
    """Upstream ``fitsRequest``: every way ``req`` does not fit ``node_info``, in check order."""
    return _fits(req, node_info.allocatable, node_info.requested, len(node_info.pods), ignored, groups)


def fits(
    pod_info: PodInfo, node_info: NodeInfo, args: NodeResourcesFitArgs | None = None
) -> list[InsufficientResource]:
    """Upstream ``Fits``: the pod's real requests against the node (empty: it fits)."""
    ignored = frozenset(args.ignored_resources) if args else frozenset()
    groups = frozenset(args.ignored_resource_groups) if args else frozenset()
    return fits_request(pod_info.resource, node_info, ignored, groups)


def _fits_empty_node(pod: Pod, node: Node) -> bool:
    """Upstream ``isFit``: does the pod fit ``node`` with nothing on it?"""
    return not _fits(
        Resource.from_amounts(pod_requests(pod)),
        Resource.from_amounts(node_allocatable(node)),
        Resource(),
        0,
        frozenset(),
        frozenset(),
    )


def _fit_statuses() -> list[Status]:
    """Filter statuses by code: bits 1 too many pods, 2 cpu, 4 memory, 8 ephemeral, 16 unresolvable."""
    out = [SUCCESS]
    names = ("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage")
    for code in range(1, 32):
        reasons = [r for bit, r in enumerate(names) if code & (1 << bit)]
        out.append(Status(Code.UnschedulableAndUnresolvable if code & 16 else Code.Unschedulable, *reasons))
    return out


_FIT_STATUSES: Final = _fit_statuses()

_AMOUNT_GETTERS: Final = {
    "cpu": (attrgetter("allocatable.milli_cpu"), attrgetter("non_zero_requested.milli_cpu")),
    "memory": (attrgetter("allocatable.memory"), attrgetter("non_zero_requested.memory")),
    "ephemeral-storage": (attrgetter("allocatable.ephemeral_storage"), attrgetter("requested.ephemeral_storage")),
}
"""(allocatable, requested) of a NodeInfo as ``alloc_and_requested`` reads them, for the
resources the vectorised score reads."""

_FIT_CHECKS: Final = ((2, ALLOC_CPU, FREE_CPU), (4, ALLOC_MEM, FREE_MEM), (8, ALLOC_EPH, FREE_EPH))
"""Per resource (cpu, memory, ephemeral-storage): its status bit and NodeTable columns."""


@lru_cache(maxsize=256)
def _vector_fit_codes(wants: tuple[int, int, int]) -> RowCompute:
    """The Filter codes (``_FIT_STATUSES``) of table rows for requests ``wants`` (cpu, memory,
    ephemeral-storage); scalar resources are not requested (``filter_all`` declines then)."""

    def compute(table: NodeTable, at: IntArray) -> IntArray:
        data = table.data
        code: IntArray = (data[FREE_PODS][at] < 1).astype(np.int64)
        unresolvable = np.zeros(len(at), dtype=bool)
        for (bit, alloc_col, free_col), want in zip(_FIT_CHECKS, wants, strict=True):
            if want > 0:  # a request of 0 never fails
                short = data[free_col][at] < want
                code |= short * bit
                unresolvable |= short & (want > data[alloc_col][at])
        code |= unresolvable * 16
        return code

    return compute


@lru_cache(maxsize=256)
def _fit_code(wants: tuple[int, int, int]) -> OneRow:
    """``_vector_fit_codes`` for one NodeInfo."""

    def one(info: NodeInfo) -> int:
        a, r = info.allocatable, info.requested
        code = 1 if a.allowed_pod_number - len(info.pods) < 1 else 0
        unresolvable = False
        for bit, want, alloc, used in (
            (2, wants[0], a.milli_cpu, r.milli_cpu),
            (4, wants[1], a.memory, r.memory),
            (8, wants[2], a.ephemeral_storage, r.ephemeral_storage),
        ):
            if want > 0 and alloc - used < want:
                code |= bit
                unresolvable = unresolvable or want > alloc
        return code | 16 if unresolvable else code

    return one


# --- the plugin -------------------------------------------------------------------------------


class _PreFilterState:
    """Read-only once written (a plain slotted class: a frozen dataclass's ``__init__`` costs
    two ``object.__setattr__`` calls, every cycle)."""

    __slots__ = ("request",)

    def __init__(self, request: Resource) -> None:
        self.request = request

    def clone(self) -> _PreFilterState:
        return self


class _PreScoreState:
    """Read-only once written (see ``_PreFilterState``)."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: tuple[int, ...]) -> None:
        self.pod_requests = pod_requests

    def clone(self) -> _PreScoreState:
        return self


class NodeResourcesFit:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.args = decode_args(NodeResourcesFitArgs, args)
        assert self.args.scoring_strategy is not None  # defaulted
        self._ignored = frozenset(self.args.ignored_resources)
        self._groups = frozenset(self.args.ignored_resource_groups)
        self.strategy = self.args.scoring_strategy
        self._scorer = STRATEGIES[self.strategy.type](self.strategy)
        self._vector_scorer = VECTOR_STRATEGIES[self.strategy.type](self.strategy)
        self._filter_fns: dict[tuple[int, int, int], tuple[Hashable, RowCompute, OneRow]] = {}
        """The Filter's row cache key, ``compute`` and ``one`` per requests, built once."""
        self._row_fns: dict[tuple[tuple[int, int, int, int], ...], tuple[RowCompute, OneRow]] = {}
        """The row cache's (compute, one) per score spec, built once rather than every cycle."""
        self._row_scores = RowScoreMemo()
        """``score_row``'s answer per pod score requests."""

    # PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        pi = state.pod_info  # ``pod_info_of`` inline: the cycle's PodInfo when it is this pod's
        if pi is None or pi.pod is not pod:
            pi = pod_info_of(state, pod)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pi.resource))
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        try:
            s: _PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return Status(Code.Error, f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        insufficient = fits_request(s.request, node_info, self._ignored, self._groups)
        if not insufficient:
            return SUCCESS
        unresolvable = any(r.unresolvable for r in insufficient)
        code = Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable
        return Status(code, *(r.reason for r in insufficient))

    def filter_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        try:
            s: _PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return None
        req = s.request
        scalars = req.scalar_resources
        if table.huge or (scalars and any(v and is_scalar_resource(n) for n, v in scalars.items())):
            return None
        wants = (req.milli_cpu, req.memory, req.ephemeral_storage)
        fns = self._filter_fns.get(wants)
        if fns is None:
            if len(self._filter_fns) >= 256:
                self._filter_fns.clear()
            fns = self._filter_fns[wants] = ((self, "filter", wants), _vector_fit_codes(wants), _fit_code(wants))
        codes = table.rows_cached_codes(fns[0], fns[1], rows, fns[2])
        return ALL_PASS if codes is None else FilterCodes(codes, _FIT_STATUSES)

    # PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        pi = state.pod_info  # ``pod_info_of`` inline: the cycle's PodInfo when it is this pod's
        if pi is None or pi.pod is not pod:
            pi = pod_info_of(state, pod)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(pod_score_requests(pi, self.strategy.resources)))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        try:
            requests = state.read(PRE_SCORE_STATE_KEY).pod_requests
        except KeyError:
            requests = pod_score_requests(pod_info_of(state, pod), self.strategy.resources)
        return self._score_node(node_info, requests), SUCCESS

    def _score_node(self, node_info: NodeInfo, requests: tuple[int, ...]) -> int:
        allocatable: list[int] = []
        requested: list[int] = []
        for r, pod_request in zip(self.strategy.resources, requests, strict=True):
            alloc, req = alloc_and_requested(node_info, r.name, pod_request)
            allocatable.append(alloc)
            requested.append(req if alloc else 0)
        return self._scorer(requested, allocatable)

    def score_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        try:
            requests = state.read(PRE_SCORE_STATE_KEY).pod_requests
        except KeyError:
            return None
        return self._score_rows(requests, table, rows, cached=True)

    def _score_rows(
        self, requests: tuple[int, ...], table: NodeTable, rows: IntArray, *, cached: bool
    ) -> IntArray | None:
        """``score_all`` for these requests (``cached``: through the table's row cache)."""
        if table.huge:
            return None
        picked: list[tuple[int, int, int, int]] = []  # weight, requested and allocatable columns, request
        effective = [0] * len(requests)  # the requests the vectorised path reads; 0: left out
        for i, (r, pod_request) in enumerate(zip(self.strategy.resources, requests, strict=True)):
            name = r.name
            if name == "cpu":
                picked.append((r.weight, NZ_CPU, ALLOC_CPU, pod_request))
            elif name == "memory":
                picked.append((r.weight, NZ_MEM, ALLOC_MEM, pod_request))
            elif name == "ephemeral-storage":
                picked.append((r.weight, REQ_EPH, ALLOC_EPH, pod_request))
            elif (pod_request == 0 and is_scalar_resource(name)) or not table.any_scalars:
                continue  # left out on every node (no node has it)
            else:
                return None
            effective[i] = pod_request
        if not picked:
            return np.zeros(len(rows), dtype=np.int64)
        spec = tuple(picked)
        fns = self._row_fns.get(spec)
        if fns is None:
            if len(self._row_fns) >= 256:
                self._row_fns.clear()
            fns = self._row_fns[spec] = (self._vector_rows(spec), self._one_row(tuple(effective)))
        if not cached:
            return fns[0](table, rows)
        # A node's score depends on its own columns, the strategy and ``spec`` (the requests read).
        return table.rows_cached((self, spec), fns[0], rows, fns[1])

    def score_row(self, state: CycleState, pod: Pod, table: NodeTable) -> RowScore | None:
        """No NormalizeScore: the score of a node is a function of its amounts and the requests;
        None when a node has scalar resources (their amounts are not table columns)."""
        if table.any_scalars:
            return None
        try:
            requests: tuple[int, ...] = state.read(PRE_SCORE_STATE_KEY).pod_requests
        except KeyError:
            return None
        kept = self._row_scores.peek(requests)
        if kept is not None:
            return kept
        return self._row_scores.get(
            requests,
            lambda: RowScore(
                (self, requests),
                # ``_score_node`` with the amounts read directly: with no scalar resources on any
                # node, the resources it reads are the ones ``_one_row`` reads.
                self._one_row(requests),
                lambda t, at: self._score_rows(requests, t, at, cached=False),
                reads_node=False,  # the amounts only
            ),
        )

    def _vector_rows(self, spec: tuple[tuple[int, int, int, int], ...]) -> RowCompute:
        """The vectorised score of table rows for ``spec`` (weight, requested and allocatable
        columns, request per resource read)."""
        scorer = self._vector_scorer

        def compute(t: NodeTable, at: IntArray) -> IntArray:
            data = t.data
            return scorer([(w, data[req][at] + want, data[alloc][at]) for w, req, alloc, want in spec])

        return compute

    def _one_row(self, reads: tuple[int, ...]) -> OneRow:
        """``_score_node(info, reads)`` for the row caches, with the amounts read directly: the
        requests left out (0 in ``reads``: scalar ones, which the reference then leaves out on
        any node) are not read, so the scorer depends on nothing its cache key does not name."""
        resources = self.strategy.resources
        n = len(resources)
        getters = [
            (i, _AMOUNT_GETTERS[r.name], want)
            for i, (r, want) in enumerate(zip(resources, reads, strict=True))
            if r.name in _AMOUNT_GETTERS
        ]
        per = PER_RESOURCE.get(self.strategy.type)
        if per is not None:
            # A weighted mean of ``per`` (``_weighted_mean``): the resources without allocatable
            # on this node, or not read at all, drop out of the sum and of the weights.
            read = [(get_alloc, get_used, want, resources[i].weight) for i, (get_alloc, get_used), want in getters]

            def mean(info: NodeInfo) -> int:
                total = weights = 0
                for get_alloc, get_used, want, weight in read:
                    alloc = get_alloc(info)
                    if alloc:
                        total += per(get_used(info) + want, alloc) * weight
                        weights += weight
                return total // weights if weights else 0

            return mean
        scorer = self._scorer

        def one(info: NodeInfo) -> int:
            allocatable = [0] * n
            requested = [0] * n
            for i, (get_alloc, get_used), want in getters:
                alloc = get_alloc(info)
                if alloc:
                    allocatable[i] = alloc
                    requested[i] = get_used(info) + want
            return scorer(requested, allocatable)

        return one

    def score_extensions(self) -> None:
        return None

    # queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown),
                self.is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
                self.is_schedulable_after_node_change,
            ),
        ]

    @staticmethod
    def is_schedulable_after_pod_event(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        if new is None:  # deleted: an assigned pod frees room, a nominated one its reservation
            held = old is not None and (old.spec.node_name or old.status.nominated_node_name)
            return QueueingHint.Queue if held else QueueingHint.QueueSkip
        if new.metadata.uid == pod.metadata.uid:
            return QueueingHint.Queue
        if not new.spec.node_name or old is None:
            return QueueingHint.QueueSkip
        before, after = pod_requests(old), pod_requests(new)
        for name, want in pod_requests(pod).items():
            relevant = name in ("cpu", "memory", "ephemeral-storage") or is_scalar_resource(name)
            if want and relevant and before.get(name, 0) > after.get(name, 0):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        if new is None or not _fits_empty_node(pod, new):
            return QueueingHint.QueueSkip
        if old is None:
            return QueueingHint.Queue
        return QueueingHint.Queue if _requested_allocatable_grew(pod, old, new) else QueueingHint.QueueSkip

    def __repr__(self) -> str:
        return f"<NodeResourcesFit {self.strategy.type} {[(r.name, r.weight) for r in self.strategy.resources]}>"


def _requested_allocatable_grew(pod: Pod, old: Node, new: Node) -> bool:
    """Upstream ``haveAnyRequestedResourcesIncreased``."""
    req = Resource.from_amounts(pod_requests(pod))
    before, after = Resource.from_amounts(node_allocatable(old)), Resource.from_amounts(node_allocatable(new))
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    names = ["cpu", "memory", "ephemeral-storage", *(n for n, v in req.scalar_resources.items() if v)]
    return any(req.get(n) > 0 and after.get(n) > before.get(n) for n in names)
