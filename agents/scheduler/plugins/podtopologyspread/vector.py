"""PodTopologySpread's PreScore, Score and NormalizeScore over NodeTable rows (``score_all`` /
``normalize_score_all``), exact to ``scoring.py``'s per-node reference.

What this module owns: ``SpreadScorer`` (one per plugin instance) and the columns it reads.

Columns, one value per table row:

=======================  ==========================================================================
column                   kept
=======================  ==========================================================================
topology value code      per topology key, derived columns (re-evaluated when a row's Node object
                         changes) with the Filter memo's codes: the value (-1 label missing) and
                         the domain (a missing label read as ``""``); -2 no Node
matching pods            per (selector, namespace), ``MatchColumns``: counted once, then kept by
                         comparing a derived column of NodeInfo ``generation`` (re-evaluated on every
                         row update) with the generations it was counted at; rows whose generation
                         moved are recounted (through ``MatchCounts``)
inclusion policies       Honor affinity: per (nodeSelector, required node affinity), a derived column
                         of the reference predicate (all rows pass when the pod has neither); Honor
                         taints: per tolerations, likewise (all pass when no row has taints)
=======================  ==========================================================================

PreScore and Score, the reference's steps as array operations (rows: the filtered nodes):

* ignored rows (``require_all_topologies``): rows lacking some constraint's key;
* per non-hostname constraint: the domains (value codes, a missing label read as ``""``) of the
  non-ignored rows; weight ``ln(size + 2)`` with ``size`` their number (hostname: the number of
  non-ignored rows); the count of a domain sums, over *every* table row that has all keys (when
  required) and passes the constraint's inclusion policies, the row's matching pods — exact
  integer sums (``np.bincount`` with float64 weights: the sums are at most the pods in memory,
  far below 2**53);
* the raw score: for each constraint in order, where the row carries the key,
  ``float(cnt) * w + float(maxSkew - 1)`` added to a float64 sum starting at 0.0 (adding 0.0
  elsewhere leaves a sum unchanged), so every partial sum is the reference's double; Go's
  ``math.Round`` elementwise; ignored rows 0.
* NormalizeScore: the reference's integer formula over the same rows, with the ignored mask the
  Score recorded in the state.

Declines (``score_all`` returns None and the per-node reference runs): a state built whole (no
PreScore inputs), a table that is not the PreScore's node list, a row without a Node, a raw
score of 2**50 or more (a row without a Node is noticed when a column is computed: that
table is declined from then on). ``normalize_score_all`` raises ``LookupError`` (the runner then
normalises per node) when Score ran per node and some filtered node is ignored: it cannot tell
which rows those are.

It does not own: the reference (``scoring.py``), the counting rule (``common.py``), the codes and
the Filter columns (``memo.py``), running plugins over the table (``framework/vectorized.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import msgspec
import numpy as np

from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import MAX_NODE_SCORE, NodeInfo
from emulator.base.api.core import Pod
from emulator.base.api.nodeaffinity import pod_matches_node_selector_and_affinity

from .common import HONOR, LABEL_HOSTNAME, MatchCounts, Selector, tolerates_no_schedule_taints
from .memo import PreFilterMemo
from .scoring import BoolArray, PreScoreState, topology_normalizing_weight

__all__ = ["LIMIT", "MatchColumns", "SpreadScorer", "go_round_all"]

LIMIT: Final = 1 << 50
"""Raw scores from here on make ``score_all`` decline (NormalizeScore's int64 products)."""
_NO_NODE: Final = -2
_GENERATION_KEY: Final = "PodTopologySpread/generation"
FloatArray = np.ndarray[tuple[int], np.dtype[np.float64]]


def _generation(ni: NodeInfo) -> int:
    return ni.generation


def go_round_all(x: FloatArray) -> IntArray:
    """``scoring.go_round`` elementwise (Go ``math.Round``: halves away from zero)."""
    t = np.trunc(x)
    away = np.abs(x - t) >= 0.5
    return (t + np.where(away, np.copysign(1.0, x), 0.0)).astype(np.int64)


class _MatchColumn:
    __slots__ = ("gens", "values")

    def __init__(self, gens: IntArray, values: IntArray) -> None:
        self.gens = gens
        self.values = values


class MatchColumns:
    """Per (selector, namespace): each table row's matching pods (``MatchCounts.count``), kept
    across cycles for the table the plugin last saw (a new table drops them all)."""

    MAX_KEYS: Final = 64

    __slots__ = ("_columns", "_match_counts", "_table")

    def __init__(self, match_counts: MatchCounts) -> None:
        self._match_counts = match_counts
        self._columns: OrderedDict[tuple[Selector, str], _MatchColumn] = OrderedDict()
        self._table: NodeTable | None = None

    def column(self, table: NodeTable, selector: Selector, namespace: str) -> IntArray:
        """The column itself (read it, never write it)."""
        if table is not self._table:
            self._columns.clear()
            self._table = table
        gens = table.derived(_GENERATION_KEY, _generation, "info")
        key = (selector, namespace)
        count = self._match_counts.count
        infos = table.infos
        col = self._columns.get(key)
        if col is None:
            values = np.fromiter((count(ni, selector, namespace) for ni in infos), dtype=np.int64, count=table.size)
            self._columns[key] = _MatchColumn(gens.copy(), values)
            if len(self._columns) > self.MAX_KEYS:
                self._columns.popitem(last=False)
            return values
        self._columns.move_to_end(key)
        changed = np.flatnonzero(gens != col.gens)
        if len(changed):
            values = col.values
            for i in changed.tolist():
                values[i] = count(infos[i], selector, namespace)
            col.gens[changed] = gens[changed]
        return col.values


class SpreadScorer:
    """The vectorised PreScore + Score + NormalizeScore of one plugin instance."""

    __slots__ = ("_codes", "_matches", "_no_node")

    def __init__(self, codes: PreFilterMemo, match_counts: MatchCounts) -> None:
        self._codes = codes
        self._matches = MatchColumns(match_counts)
        self._no_node: NodeTable | None = None
        """A table one of whose rows had no Node when a column was computed: declined."""

    def _values(self, table: NodeTable, key: str) -> IntArray:
        """Per row: the code of the node's value for ``key``; -1 label missing, -2 no Node."""
        code = self._codes.code

        def value_code(ni: NodeInfo) -> int:
            node = ni.node
            if node is None:
                self._no_node = table
                return _NO_NODE
            value = node.metadata.labels.get(key)
            return -1 if value is None else code(value)

        return table.derived((self, "PodTopologySpread/score-value", key), value_code)

    def _domains(self, table: NodeTable, key: str) -> IntArray:
        """Per row: the code of the node's value for ``key``, a missing label read as ``""``."""
        code = self._codes.code

        def domain_code(ni: NodeInfo) -> int:
            node = ni.node
            if node is None:
                self._no_node = table
                return _NO_NODE
            return code(node.metadata.labels.get(key, ""))

        return table.derived((self, "PodTopologySpread/score-domain", key), domain_code)

    def _affinity(self, table: NodeTable, pod: Pod) -> BoolArray | None:
        """Rows passing the pod's nodeSelector and required node affinity (None: all)."""
        spec = pod.spec
        na = spec.affinity.node_affinity if spec.affinity is not None else None
        required = na.required_during_scheduling_ignored_during_execution if na is not None else None
        if not spec.node_selector and required is None:
            return None
        key = (self, "PodTopologySpread/affinity", msgspec.json.encode((spec.node_selector, required)))
        fn: Callable[[NodeInfo], int] = lambda ni: int(  # noqa: E731
            ni.node is not None and pod_matches_node_selector_and_affinity(pod, ni.node)
        )
        passing: BoolArray = table.derived(key, fn) != 0
        return passing

    def _tolerated(self, table: NodeTable, pod: Pod) -> BoolArray | None:
        """Rows whose NoSchedule/NoExecute taints the pod tolerates (None: all)."""
        if not table.any_taints:
            return None
        tolerations = pod.spec.tolerations
        key = (self, "PodTopologySpread/tolerated", msgspec.json.encode(tolerations))
        fn: Callable[[NodeInfo], int] = lambda ni: int(  # noqa: E731
            ni.node is not None and tolerates_no_schedule_taints(ni.node, tolerations)
        )
        passing: BoolArray = table.derived(key, fn) != 0
        return passing

    def score_all(self, s: PreScoreState, table: NodeTable, rows: IntArray) -> IntArray | None:
        """``score_node`` of each of ``rows`` (the PreScore's filtered nodes, in order), or None."""
        inputs = s.inputs
        if inputs is None or table.infos is not inputs.all_nodes or len(rows) != len(inputs.filtered):
            return None
        pod = inputs.pod
        namespace = pod.metadata.namespace
        constraints = s.constraints
        m = len(rows)
        values = [self._values(table, c.topology_key) for c in constraints]
        domains = [
            None if c.topology_key == LABEL_HOSTNAME else self._domains(table, c.topology_key) for c in constraints
        ]
        if self._no_node is table:
            return None
        has_all: BoolArray | None = None
        ignored: BoolArray | None = None
        n_kept = m
        if inputs.require_all_topologies:
            has_all = np.logical_and.reduce([v >= 0 for v in values])
            ignored = ~has_all[rows]
            n_ignored = int(np.count_nonzero(ignored))
            n_kept = m - n_ignored
            if not n_ignored:
                ignored = None
        affinity = tolerated = None
        if any(c.node_affinity_policy == HONOR for c in constraints):
            affinity = self._affinity(table, pod)
        if any(c.node_taints_policy == HONOR for c in constraints):
            tolerated = self._tolerated(table, pod)
        total: FloatArray = np.zeros(m, dtype=np.float64)
        columns: dict[Selector, IntArray] = {}
        n_codes = len(self._codes)
        for c, v, domain in zip(constraints, values, domains, strict=True):
            matches = columns.get(c.selector)
            if matches is None:
                matches = columns[c.selector] = self._matches.column(table, c.selector, namespace)
            if domain is None:
                weight = topology_normalizing_weight(n_kept)
                cnt = matches[rows]
            else:
                domain_rows = domain[rows]
                kept = domain_rows if ignored is None else domain_rows[~ignored]
                eligible = has_all
                if affinity is not None and c.node_affinity_policy == HONOR:
                    eligible = affinity if eligible is None else eligible & affinity
                if tolerated is not None and c.node_taints_policy == HONOR:
                    eligible = tolerated if eligible is None else eligible & tolerated
                # Float64 sums of integers are exact: they are at most the pods in memory (< 2**53).
                if eligible is None:
                    sums = np.bincount(domain, weights=matches, minlength=n_codes)
                else:
                    sums = np.bincount(domain[eligible], weights=matches[eligible], minlength=n_codes)
                present = np.zeros(n_codes, dtype=bool)
                present[kept] = True
                weight = topology_normalizing_weight(int(np.count_nonzero(present)))
                cnt = sums.astype(np.int64)[domain_rows]
            term = cnt.astype(np.float64) * weight + float(c.max_skew - 1)
            total = total + np.where(v[rows] >= 0, term, 0.0)
        if m and not float(np.maximum.reduce(np.abs(total))) < LIMIT:
            return None
        raw = go_round_all(total)
        if ignored is not None:
            raw[ignored] = 0
        s.scored_ignored = ignored
        s.vector_scored = True
        return raw

    @staticmethod
    def normalize_score_all(s: PreScoreState, scores: IntArray) -> IntArray:
        """``normalize_scores`` over the rows ``score_all`` (or the per-node Score) scored."""
        ignored = s.scored_ignored
        if not s.vector_scored and s.ignored_nodes:  # Score ran per node: rows unknown
            raise LookupError("PodTopologySpread: ignored nodes without their rows")
        valid = scores if ignored is None else scores[~ignored]
        min_score = int(np.minimum.reduce(valid)) if len(valid) else 0
        max_score = max(0, int(np.maximum.reduce(valid))) if len(valid) else 0
        if max_score == 0:
            out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
        else:
            if max_score >= LIMIT or min_score <= -LIMIT:
                raise LookupError("PodTopologySpread: scores too large for int64 normalisation")
            out = MAX_NODE_SCORE * (max_score + min_score - scores) // max_score
        if ignored is not None:
            out[ignored] = 0
        return out
