"""InterPodAffinity's Filter over NodeTable rows at once (``filter_all``), exact to ``filter_node``.

What this module owns: ``filter_codes``, the three checks of ``filtering.filter_node`` as array
operations over a window of table rows.

* Topology values become codes (``aggregate.Codes``, the plugin's own): per topology key a
  derived NodeTable column holds each row's code, -1 when the node lacks the label (re-evaluated
  only when a row's Node object changes).
* A count map becomes, per topology key, an array indexed by code (``counts[(key, value)]`` at
  the value's code, 0 elsewhere and at the last slot, which code -1 reads). The arrays are the
  memo's own (``Aggregate.arrays``) when the state was copied from an aggregate that has not
  changed since (``PreFilterState.sources`` with the aggregate's ``version``) and was not updated
  by AddPod/RemovePod; otherwise they are built from the state's map when it has at most
  ``MAX_BUILD`` pairs; otherwise ``filter_codes`` returns None and Filter runs per node.
* The checks, in the reference's order (the first failing one gives the row's code):

  1. affinity: fails where a term's key is missing, or (the map non-empty) some term's count is
     0; with an empty map it fails everywhere unless the pod matches all its own terms;
  2. anti-affinity (map non-empty): a term's count > 0 at the row's value;
  3. existing anti-affinity (map non-empty): for some key of the map, the count > 0 at the
     row's value (the reference looks up each of the node's labels: the same pairs).

It does not own: the counts (``memo.py``, ``filtering.py``), the runner (``framework/vectorized.py``).
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from agents.scheduler.framework.interface import ALL_PASS, FilterCodes
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import SUCCESS, Code, NodeInfo, Status

from .aggregate import Aggregate, Codes
from .filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    Counts,
    PreFilterState,
)
from .terms import pod_matches_all_terms

__all__ = ["MAX_BUILD", "filter_codes"]

MAX_BUILD: Final = 256
"""Larger maps not backed by an unchanged aggregate: Filter per node."""

_STATUSES: Final = (
    SUCCESS,
    Status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH),
    Status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    Status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
)

BoolArray = np.ndarray[Any, np.dtype[np.bool_]]


class _Arrays:
    """One count map as arrays by code, per topology key."""

    __slots__ = ("_agg", "_built", "_m")

    def __init__(self, agg: Aggregate | None, m: int, built: dict[str, IntArray] | None) -> None:
        self._agg, self._m, self._built = agg, m, built

    def get(self, key: str) -> IntArray | None:
        if self._built is not None:
            return self._built.get(key)
        agg = self._agg
        assert agg is not None
        assert agg.arrays is not None
        return agg.array(self._m, key) if key in agg.arrays[self._m] else None


def _usable(source: tuple[Aggregate, int] | None, codes: Codes) -> Aggregate | None:
    """The aggregate, if it has not changed since the state copied its maps and shares ``codes``."""
    if source is None or source[0].version != source[1] or source[0].codes is not codes:
        return None
    return source[0]


def _arrays(counts: Counts, source: tuple[Aggregate, int] | None, m: int, codes: Codes) -> _Arrays | None:
    agg = _usable(source, codes)
    if agg is not None:
        return _Arrays(agg, m, None)
    if len(counts) > MAX_BUILD:
        return None
    at: dict[str, tuple[list[int], list[int]]] = {}
    for (key, value), n in counts.items():
        where, nums = at.setdefault(key, ([], []))
        where.append(codes.code(value))
        nums.append(n)
    built: dict[str, IntArray] = {}
    size = len(codes) + 1
    for key, (where, nums) in at.items():
        arr = built[key] = np.zeros(size, dtype=np.int64)
        arr[where] = nums
    return _Arrays(None, m, built)


def _value_codes(table: NodeTable, codes: Codes, key: str) -> IntArray:
    def code_of(ni: NodeInfo) -> int:
        node = ni.node
        value = node.metadata.labels.get(key) if node is not None else None
        return -1 if value is None else codes.code(value)

    return table.derived((codes, "InterPodAffinity/value", key), code_of)


def filter_codes(s: PreFilterState, codes: Codes, table: NodeTable, rows: IntArray) -> FilterCodes | None:
    """``filter_node(s, info)`` for each of ``rows``, or None (then Filter runs per node)."""
    existing_src, incoming_src = s.sources if s.sources is not None else (None, None)
    aff_terms, anti_terms = s.terms.required_affinity, s.terms.required_anti_affinity
    aff_counts, anti_counts, ex_counts = s.affinity_counts, s.anti_affinity_counts, s.existing_anti_affinity_counts
    vals_cache: dict[str, IntArray] = {}

    def vals(key: str) -> IntArray:
        v = vals_cache.get(key)
        if v is None:
            v = vals_cache[key] = _value_codes(table, codes, key)[rows]
        return v

    m = len(rows)
    fails: list[tuple[int, BoolArray]] = []
    # Codes are interned while value columns are computed: an array is taken (or built) only
    # after the value codes it is indexed with.
    if aff_terms:
        missing: BoolArray = np.zeros(m, dtype=bool)
        for t in aff_terms:
            missing |= vals(t.topology_key) < 0
        if aff_counts:
            arrays = _arrays(aff_counts, incoming_src, 0, codes)
            if arrays is None:
                return None
            exist: BoolArray = np.ones(m, dtype=bool)
            for t in aff_terms:
                arr = arrays.get(t.topology_key)
                exist &= arr[vals(t.topology_key)] > 0 if arr is not None else np.zeros(m, dtype=bool)
            fails.append((1, missing | ~exist))
        elif pod_matches_all_terms(aff_terms, s.pod):
            fails.append((1, missing))
        else:
            fails.append((1, np.ones(m, dtype=bool)))
    if anti_counts and anti_terms:
        for t in anti_terms:
            vals(t.topology_key)
        arrays = _arrays(anti_counts, incoming_src, 1, codes)
        if arrays is None:
            return None
        fail: BoolArray = np.zeros(m, dtype=bool)
        for t in anti_terms:
            arr = arrays.get(t.topology_key)
            if arr is not None:
                fail |= arr[vals(t.topology_key)] > 0
        fails.append((2, fail))
    if ex_counts:
        agg = _usable(existing_src, codes)
        if agg is not None and agg.arrays is not None:
            ex_keys = list(agg.arrays[0])
        else:
            ex_keys = list(dict.fromkeys(key for key, _ in ex_counts))
        for key in ex_keys:
            vals(key)
        arrays = _arrays(ex_counts, existing_src, 0, codes)
        if arrays is None:
            return None
        fail = np.zeros(m, dtype=bool)
        for key in ex_keys:
            arr = arrays.get(key)
            if arr is not None:
                fail |= arr[vals(key)] > 0
        fails.append((3, fail))
    return _combine(fails, m)


def _combine(fails: list[tuple[int, BoolArray]], m: int) -> FilterCodes:
    if not any(f.any() for _, f in fails):
        return ALL_PASS
    out = np.zeros(m, dtype=np.int64)
    for code, f in reversed(fails):
        out[f] = code
    return FilterCodes(out, _STATUSES)
