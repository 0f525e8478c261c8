"""Per-node contributions kept across cycles, and their totals (InterPodAffinity's memo machinery).

What this module owns: ``Aggregate``, the totals of one sum over a node list — each node adds a
*row* of entries ``(map index, topology key, value, weight)`` — kept from one cycle to the next,
and ``Codes``, the interned topology values of the vectorised Filter.

What is cached, keyed by what:

* ``rows[j]`` is node ``j``'s row, valid while that NodeInfo's ``generation`` is ``gens[j]``
  (every change to a NodeInfo's node or pods takes a fresh global generation; a clone keeps its
  original's, so a row is a function of the generation — given the aggregate's key, which the
  caller makes name everything else the row reads: the incoming pod's terms, namespace, labels).
* ``counts[m]``: per map, topology pair → the sum of the rows' weights (pairs with no entry
  left are removed). ``weighted`` aggregates (PreScore's map) also count the entries per pair
  (``entries``), since a pair is present once some row names it, even if its weights sum to 0.
* ``arrays[m]`` (``vector=True`` only): per topology key, an int64 array indexed by the value's
  code holding ``counts[m][(key, value)]`` (0 elsewhere; the last slot is never a code, so the
  code -1, "no such label", reads 0). ``version`` increases with every change of the counts, so
  a holder of (aggregate, version) knows whether the arrays still match what it copied.

Invalidation: ``update(nodes, gens, row_of)`` compares the generations with the last call's. Same
length: the rows of the changed positions are recomputed and the totals adjusted by their
difference (or recomputed from the rows when more than half changed). Another length (nodes
added, removed): rows are reused by generation, the totals recomputed.

Dict order of ``counts`` may differ from the reference's order of first appearance: no reader
of these maps depends on it (Filter and Score look pairs up; emptiness is all else they ask).

It does not own: what a row is (``memo.py``), the Filter verdict over arrays (``vector.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from agents.scheduler.framework.node_table import IntArray
from agents.scheduler.framework.types import NodeInfo

__all__ = ["Aggregate", "Codes", "Entry", "Row", "changed_positions", "generations"]

Entry = tuple[int, str, str, int]
"""(map index, topology key, topology value, weight)."""
Row = tuple[Entry, ...]
Pair = tuple[str, str]

_BLOCK: Final = 256
_SUB_BLOCK: Final = 16


def generations(nodes: Sequence[NodeInfo]) -> list[int]:
    return [ni.generation for ni in nodes]


def changed_positions(gens: list[int], old: list[int]) -> list[int]:
    """Positions where two equally long generation lists differ (slices compared in C first)."""
    out: list[int] = []
    n = len(gens)
    for b in range(0, n, _BLOCK):
        e = b + _BLOCK
        if gens[b:e] == old[b:e]:
            continue
        for c in range(b, min(e, n), _SUB_BLOCK):
            f = c + _SUB_BLOCK
            if gens[c:f] != old[c:f]:
                out.extend(j for j in range(c, min(f, n)) if gens[j] != old[j])
    return out


class Codes:
    """Topology value → small int (only grows, so a code once handed out stays valid)."""

    __slots__ = ("_codes",)

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}

    def code(self, value: str) -> int:
        c = self._codes.get(value)
        if c is None:
            c = self._codes[value] = len(self._codes)
        return c

    def __len__(self) -> int:
        return len(self._codes)


class Aggregate:
    """One sum of rows over a node list, its totals, and (optionally) their code arrays."""

    __slots__ = ("arrays", "codes", "counts", "entries", "gens", "rows", "version", "weighted")

    def __init__(self, n_maps: int, *, weighted: bool = False, codes: Codes | None = None) -> None:
        self.weighted = weighted
        self.codes = codes
        self.gens: list[int] | None = None
        self.rows: list[Row] = []
        self.counts: list[dict[Pair, int]] = [{} for _ in range(n_maps)]
        self.entries: list[dict[Pair, int]] = [{} for _ in range(n_maps)]
        self.arrays: list[dict[str, IntArray]] | None = [{} for _ in range(n_maps)] if codes is not None else None
        self.version = 0

    def update(self, nodes: Sequence[NodeInfo], gens: list[int], row_of: Callable[[NodeInfo], Row]) -> None:
        """Bring the totals to ``nodes`` (whose generations are ``gens``)."""
        old = self.gens
        if old is not None and len(old) == len(gens):
            if gens == old:
                return
            changed = changed_positions(gens, old)
            new_rows = [row_of(nodes[j]) for j in changed]
            if 2 * len(changed) <= len(gens):
                self._adjust(changed, new_rows)
                self.gens = gens
                self.version += 1
                return
            rows = list(self.rows)
            for j, row in zip(changed, new_rows, strict=True):
                rows[j] = row
        else:
            by_gen = dict(zip(old, self.rows, strict=True)) if old is not None else {}
            rows = [by_gen[g] if g in by_gen else row_of(ni) for g, ni in zip(gens, nodes, strict=True)]
        self._recompute(rows)
        self.gens = gens
        self.version += 1

    def _add(self, m: int, pair: Pair, weight: int, sign: int) -> None:
        counts = self.counts[m]
        if self.weighted:
            entries = self.entries[m]
            e = entries.get(pair, 0) + sign
            if e:
                entries[pair] = e
                counts[pair] = counts.get(pair, 0) + sign * weight
            else:
                del entries[pair]
                del counts[pair]
            return
        n = counts.get(pair, 0) + sign * weight
        if n:
            counts[pair] = n
        else:
            del counts[pair]

    def _adjust(self, changed: list[int], new_rows: list[Row]) -> None:
        touched: list[Entry] = []
        for j, new in zip(changed, new_rows, strict=True):
            old = self.rows[j]
            if old == new:
                continue
            for m, key, value, w in old:
                self._add(m, (key, value), w, -1)
            for m, key, value, w in new:
                self._add(m, (key, value), w, 1)
            self.rows[j] = new
            touched += old
            touched += new
        if self.arrays is not None:
            for m, key, value, _ in touched:
                self._set(m, key, value)

    def _recompute(self, rows: list[Row]) -> None:
        self.rows = rows
        self.counts = [{} for _ in self.counts]
        self.entries = [{} for _ in self.entries]
        for row in rows:
            for m, key, value, w in row:
                self._add(m, (key, value), w, 1)
        if self.arrays is not None:
            self.arrays = [{} for _ in self.arrays]
            for m, counts in enumerate(self.counts):
                for key, value in counts:
                    self._set(m, key, value)

    def _set(self, m: int, key: str, value: str) -> None:
        assert self.codes is not None
        assert self.arrays is not None
        code = self.codes.code(value)
        arr = self.array(m, key)
        arr[code] = self.counts[m].get((key, value), 0)

    def array(self, m: int, key: str) -> IntArray:
        """Map ``m``'s counts of ``key`` by value code, long enough for every code handed out."""
        assert self.codes is not None
        assert self.arrays is not None
        arrays = self.arrays[m]
        arr = arrays.get(key)
        n = len(self.codes)
        if arr is None or len(arr) <= n:
            grown = np.zeros(max(2 * n, 64), dtype=np.int64)
            if arr is not None:
                grown[: len(arr)] = arr
            arr = arrays[key] = grown
        return arr
