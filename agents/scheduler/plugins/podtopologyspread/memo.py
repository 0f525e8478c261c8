"""PodTopologySpread's PreFilter counts kept across cycles (same results as ``cal_pre_filter_state``).

What this module owns: ``PreFilterMemo``, the plugin's cache of the PreFilter aggregation, and
``critical_paths_of``, a closed form of replaying ``CriticalPaths.update`` over fresh counts.

Why it is exact:

* A node's *row* (for each hard constraint: is the node eligible, its topology value, its
  matching pods) depends only on the NodeInfo's node and pods, the pod's namespace, the
  constraints, and the pod's node selector / affinity / tolerations (the inclusion policies).
  The last three form the memo key; the NodeInfo's ``generation`` names its node and pods (every
  change takes a fresh global generation, a clone keeps its original's), so rows are cached by
  position and generation.
* The totals are ``cal_pre_filter_state``'s dicts: per constraint, topology value → the sum of the
  rows, keys in order of first appearance. When only the counts of a few rows changed (same
  eligibility and values), the keys and their order are unchanged and the totals are adjusted by
  the difference; any other change recomputes the totals from the rows.
* ``critical_paths_of``: replaying ``update`` over distinct values in order leaves slot 0 the first
  minimum and slot 1 the first minimum of the others (strict ``<`` comparisons); counts of
  ``MAX_INT32`` or more take the replay itself.

``PreFilterMemo.filter_codes`` is Filter (``filter_node``) over NodeTable rows: per constraint a
derived column holds the row's topology value as a code (-1: no such label), the state's counts
become an array indexed by code, and the first failing constraint gives the row's code. States
with a domain map larger than ``MAX_VECTOR_DOMAINS`` (hostname constraints) return None: Filter
then runs per node.

What it does not own: the counting rule (``common.py``), the state and Filter (``filtering.py``).
``count_all_nodes`` (PreScore's pass over all nodes) and ``scoring.py``'s state are kept as
the reference; ``add_pre_score_counts`` gives the same counters from the same aggregation (the
per-node Score's path; the vectorised one, ``vector.py``, shares only ``code``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec
import numpy as np

from agents.scheduler.framework.interface import ALL_PASS, FilterCodes
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import SUCCESS, Code, NodeInfo, Status
from emulator.base.api.core import Pod

from .common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    Constraint,
    MatchCounts,
    NodeEligibility,
    node_labels_match_spread_constraints,
    selector_slots,
)
from .filtering import MAX_INT32, CriticalPaths, PreFilterState

__all__ = ["PreFilterMemo", "critical_paths_of"]

Row = tuple[tuple[int, str, int], ...]
"""A node's contributions: (constraint index, topology value, matching pods)."""
# The same aggregation serves PreScore's pass over all nodes (``count_all_nodes``): its counters
# hold the domains of the filtered nodes, each gets the total of its value.

MAX_KEYS: Final = 64
MAX_CHANGED: Final = 64
"""More changed rows than this: recompute the totals rather than adjust them."""
MAX_VECTOR_DOMAINS: Final = 64
"""Larger domain maps: Filter per node (building the count array would cost more)."""

_FILTER_STATUSES: Final = (
    SUCCESS,
    Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH),
    Status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH),
)


def critical_paths_of(counts: dict[str, int]) -> CriticalPaths:
    """``CriticalPaths`` after ``update(value, num)`` for each item of ``counts`` in order."""
    cp = CriticalPaths()
    if not counts:
        return cp
    keys = list(counts)
    vals = list(counts.values())
    m = min(vals)
    if max(vals) >= MAX_INT32:
        for value, num in counts.items():
            cp.update(value, num)
        return cp
    j = vals.index(m)
    cp.paths[0] = (keys[j], m)
    if len(vals) > 1:
        rest = vals[:j] + vals[j + 1 :]
        m2 = min(rest)
        k = rest.index(m2)
        if k >= j:
            k += 1
        cp.paths[1] = (keys[k], m2)
    return cp


class _Aggregate:
    __slots__ = ("counts", "gens", "rows")

    def __init__(self) -> None:
        self.gens: list[int] | None = None
        self.rows: list[Row] = []
        self.counts: list[dict[str, int]] = []


class PreFilterMemo:
    """Per (namespace, constraints, inclusion inputs): the rows and totals of the last PreFilter."""

    __slots__ = ("_aggregates", "_codes", "_match_counts")

    def __init__(self, match_counts: MatchCounts) -> None:
        self._match_counts = match_counts
        self._aggregates: dict[tuple[bool, str, tuple[Constraint, ...], bytes], _Aggregate] = {}
        self._codes: dict[str, int] = {}
        """Topology value → code of the derived columns (only grows: codes stay valid)."""

    def __len__(self) -> int:
        """The number of codes handed out (every code is below it)."""
        return len(self._codes)

    def code(self, value: str) -> int:
        """The code of a topology value (shared by the Filter and Score columns)."""
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self._codes)
        return code

    def filter_codes(self, s: PreFilterState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        """``filter_node(s, pod, info)`` for each of ``rows``, or None (per node)."""
        if any(len(m) > MAX_VECTOR_DOMAINS for m in s.tp_value_to_match_num):
            return None
        codes = np.zeros(len(rows), dtype=np.int64)
        pod_labels = pod.metadata.labels
        for i, c in enumerate(s.constraints):
            key = c.topology_key

            def value_code(ni: NodeInfo, key: str = key) -> int:
                value = ni.node.metadata.labels.get(key) if ni.node is not None else None
                return -1 if value is None else self.code(value)

            vals = table.derived((self, "PodTopologySpread/value", key), value_code)[rows]
            domains = s.tp_value_to_match_num[i]
            at = [self.code(value) for value in domains]  # interned before sizing the array
            counts = np.zeros(len(self._codes) + 1, dtype=np.int64)  # the last: "no label" (-1)
            counts[at] = list(domains.values())
            self_match = 1 if c.selector.matches(pod_labels) else 0
            skew = counts[vals] + (self_match - s.min_match_num(i, c.min_domains))
            verdict = np.where(vals < 0, 1, np.where(skew > c.max_skew, 2, 0))
            codes = np.where(codes == 0, verdict, codes)
        return FilterCodes(codes, _FILTER_STATUSES) if codes.any() else ALL_PASS

    def state(self, pod: Pod, nodes: Sequence[NodeInfo], constraints: list[Constraint]) -> PreFilterState:
        """``cal_pre_filter_state(pod, nodes, constraints)``, from the memo where it can."""
        return _state(constraints, self.totals(pod, nodes, constraints, require_all=True))

    def add_pre_score_counts(
        self,
        counters: list[dict[str, int]],
        pod: Pod,
        nodes: Sequence[NodeInfo],
        constraints: list[Constraint],
        *,
        require_all: bool,
    ) -> None:
        """``count_all_nodes``: add to each counter's (pre-set) values the matching pods of the
        eligible nodes of that value (hostname counters are empty: nothing to add)."""
        totals = self.totals(pod, nodes, constraints, require_all=require_all)
        for counter, total in zip(counters, totals, strict=True):
            for value in counter:
                counter[value] += total.get(value, 0)

    def totals(
        self, pod: Pod, nodes: Sequence[NodeInfo], constraints: list[Constraint], *, require_all: bool
    ) -> list[dict[str, int]]:
        """Per constraint: topology value → matching pods of the eligible nodes, keys in order of
        first appearance (the memo's own dicts: read them, never write them). ``require_all``:
        nodes lacking a topology key count for no constraint; else a missing value is ``""``."""
        spec = pod.spec
        inputs = msgspec.json.encode((spec.node_selector, spec.affinity, spec.tolerations))
        key = (require_all, pod.metadata.namespace, tuple(constraints), inputs)
        agg = self._aggregates.get(key)
        if agg is None:
            if len(self._aggregates) >= MAX_KEYS:
                self._aggregates.clear()
            agg = self._aggregates[key] = _Aggregate()
        gens = [ni.generation for ni in nodes]
        row_of = _RowFn(pod, constraints, self._match_counts, require_all)
        old = agg.gens
        if old is not None and len(gens) == len(old):
            changed = [j for j, (a, b) in enumerate(zip(gens, old, strict=True)) if a != b]
            if not changed:
                return agg.counts
            if len(changed) <= MAX_CHANGED and _adjust(agg, changed, [row_of(nodes[j]) for j in changed]):
                agg.gens = gens
                return agg.counts
            rows = list(agg.rows)
            for j in changed:
                rows[j] = row_of(nodes[j])
        else:
            rows = [row_of(ni) for ni in nodes]
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for row in rows:
            for i, value, got in row:
                c = counts[i]
                c[value] = c.get(value, 0) + got
        agg.gens, agg.rows, agg.counts = gens, rows, counts
        return counts


def _adjust(agg: _Aggregate, changed: list[int], new_rows: list[Row]) -> bool:
    """Apply the changed rows' count differences, if no eligibility or value changed."""
    for j, new in zip(changed, new_rows, strict=True):
        old = agg.rows[j]
        if len(old) != len(new) or any(o[0] != n[0] or o[1] != n[1] for o, n in zip(old, new, strict=True)):
            return False
    for j, new in zip(changed, new_rows, strict=True):
        for (i, value, before), (_, _, after) in zip(agg.rows[j], new, strict=True):
            agg.counts[i][value] += after - before
        agg.rows[j] = new
    return True


def _state(constraints: list[Constraint], counts: list[dict[str, int]]) -> PreFilterState:
    copies = [dict(c) for c in counts]
    return PreFilterState(constraints, [critical_paths_of(c) for c in copies], copies)


class _RowFn:
    """One node's row for one incoming pod (``cal_pre_filter_state``'s / ``count_all_nodes``'s loop
    body)."""

    __slots__ = ("_constraints", "_count", "_eligibility", "_n_slots", "_namespace", "_require_all", "_slot_of")

    def __init__(self, pod: Pod, constraints: list[Constraint], match_counts: MatchCounts, require_all: bool) -> None:
        self._require_all = require_all
        self._constraints = constraints
        self._eligibility = NodeEligibility(pod)
        self._namespace = pod.metadata.namespace
        self._count = match_counts.count
        self._slot_of, self._n_slots = selector_slots(constraints)

    def __call__(self, node_info: NodeInfo) -> Row:
        node = node_info.node
        if node is None:
            return ()
        labels = node.metadata.labels
        constraints = self._constraints
        if self._require_all and not node_labels_match_spread_constraints(labels, constraints):
            return ()
        per_slot: list[int | None] = [None] * self._n_slots
        out: list[tuple[int, str, int]] = []
        for i, c in enumerate(constraints):
            if not self._eligibility.includes(c, node):
                continue
            got = per_slot[self._slot_of[i]]
            if got is None:
                got = per_slot[self._slot_of[i]] = self._count(node_info, c.selector, self._namespace)
            out.append((i, labels.get(c.topology_key, ""), got))
        return tuple(out)
