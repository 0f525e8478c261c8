"""Weighted Score totals kept per table row across cycles, for streams of pods of one shape.

What this module owns: ``cached_totals``, the Score step's shortcut when, this cycle, every
Score plugin not skipped says its *normalized* score of a node depends on that node alone
(``RowScorePlugin.score_row`` → ``RowScore``: a key naming what else it reads, a per-node
``one`` and a vectorised ``compute``). The weighted total of a node is then a row-wise value,
kept by ``NodeTable.rows_cached`` under the key of the plugins' keys and weights, with
``node_and_images`` (a row is recomputed when its columns, Node object or image states change:
ImageLocality's image counts are re-taken by a re-clone). A pod of a shape seen before pays for the rows changed since
(the bound pod's node, a finished pod's node: ``one`` per plugin there) and one gather, instead
of every plugin's ``score_all`` and normalization over every scored node.

=====================================  ========================================================
case                                   result
=====================================  ========================================================
a plugin without ``score_row``, or     None: the runtime scores as usual (``vectorized.score``)
answering None (e.g. TaintToleration
with a tainted node), a negative
weight, or ``score_row`` raising
a row's normalized score outside       that row's total is -1; None if a scored row has it (the
[0, 100]                               usual path then reports the reference's error)
otherwise                              the totals of ``rows``: Σ weight × normalized score
=====================================  ========================================================

Exactness: each total is the reference's (``run_score_plugins``: score, normalize, weight, sum)
as long as each ``RowScore`` keeps its contract (``interface.py``); the table keeps the column
current by construction, and a key seen for the first time is computed for ``rows`` only (a
column costs a pass over every row, paid from a key's second use). The property test
``tests/scheduler/test_score_totals.py`` compares it with the reference on random clusters.

It does not own the plugins' arithmetic, the table (``node_table.py``), host selection
(``vectorized.select_host``) or PreScore (it runs first: the plugins read its CycleState).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Final

import numpy as np

from .cycle_state import CycleState
from .interface import RowScore
from .node_info import NodeInfo
from .node_table import NodeTable
from .row_cache import IntArray, OneRow, RowCompute
from .status import MAX_NODE_SCORE, MIN_NODE_SCORE

__all__ = ["MAX_WEIGHT", "cached_totals"]

MAX_WEIGHT: Final = 1 << 40
"""Weights from here on take the usual path (a total must fit an int64 exactly)."""

_KEY: Final = "ScoreTotals"


def cached_totals(
    plugins: Sequence[Any], weights: dict[str, int], state: CycleState, pod: Any, table: NodeTable, rows: IntArray
) -> IntArray | None:
    """The weighted totals of ``rows`` (what ``vectorized.score`` would return), or None."""
    parts: list[tuple[int, RowScore]] = []
    for pl in plugins:
        score_row = getattr(pl, "score_row", None)
        if score_row is None:
            return None
        w = weights[pl.name]
        if not 0 <= w < MAX_WEIGHT:
            return None
        try:
            rs = score_row(state, pod, table)
        except Exception:  # a misbehaving plugin: the usual path says what
            return None
        if rs is None:
            return None
        parts.append((w, rs))
    key, compute, one, reads_node = _assembled(table, parts)
    try:
        # None when a row's total is -1 (a score out of range): the usual path says what.
        return table.rows_cached_nonnegative(key, compute, rows, one, node_and_images=True, reads_node=reads_node)
    except Exception:  # a misbehaving plugin: the usual path says what
        return None


_MAX_ASSEMBLED: Final = 256


def _assembled(table: NodeTable, parts: list[tuple[int, RowScore]]) -> tuple[Hashable, RowCompute, OneRow, bool]:
    """(the cache key, ``compute``, ``one``) of the weighted total of ``parts``, built once per
    combination of weights and ``RowScore`` objects (the plugins memoise theirs per pod shape)
    rather than every cycle, and kept with the table (``NodeTable.memo``: gone with it). Keyed by
    the objects' ids: each entry holds its ``RowScore``s, so no id in a live key is reused.
    The last item: whether some part reads the Node object (``RowScore.reads_node``)."""
    memo: dict[Hashable, Any] = table.memo.setdefault(_KEY, {})
    ids = tuple([id(rs) for _, rs in parts] + [w for w, _ in parts])
    found = memo.get(ids)
    if found is None:
        if len(memo) >= _MAX_ASSEMBLED:
            memo.clear()
        key = (_KEY, tuple((w, rs.key) for w, rs in parts))
        reads_node = any(rs.reads_node for _, rs in parts)
        found = memo[ids] = (parts, key, _compute(parts), _one(parts), reads_node)
    return found[1], found[2], found[3], found[4]


def _one(parts: list[tuple[int, RowScore]]) -> OneRow:
    def one(info: NodeInfo) -> int:
        total = 0
        for w, rs in parts:
            v = rs.one(info)
            if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE:
                return -1
            total += w * v
        return total

    return one


def _compute(parts: list[tuple[int, RowScore]]) -> RowCompute:
    def compute(table: NodeTable, at: IntArray) -> IntArray:
        totals = np.zeros(len(at), dtype=np.int64)
        bad = np.zeros(len(at), dtype=bool)
        infos = table.infos
        for w, rs in parts:
            v = rs.compute(table, at)
            if v is None:
                v = np.fromiter((rs.one(infos[i]) for i in at.tolist()), dtype=np.int64, count=len(at))
            bad |= (v < MIN_NODE_SCORE) | (v > MAX_NODE_SCORE)
            totals += w * v
        totals[bad] = -1
        return totals

    return compute
