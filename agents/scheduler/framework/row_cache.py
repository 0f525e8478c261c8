"""The ``NodeTable``'s row-wise cached results (``rows_cached``, ``rows_cached_nonnegative``,
``rows_cached_codes``), mixed into ``node_table.NodeTable`` as ``RowCaches``.

Row-wise cached results (``rows_cached(key, compute, rows)``): for a vectorised computation
``compute(table, rows) -> values`` whose value on a row depends only on that row's ``data``
columns and on what ``key`` names (the plugin, its arguments, the pod's requests), e.g. a
resource score. The first time a key is seen the values are computed for ``rows`` only; from
the second time on the table keeps the whole column and recomputes only the rows whose columns
changed since (``update_row`` logs them; a new clone with the same amounts, e.g. a bound pod
confirming its assumed copy or a node status update, is not logged), so a stream of pods of the
same shape pays for the few nodes the last bindings changed.
At most ``MAX_ROW_CACHES`` columns are kept (least recently used dropped); when the log of updated
rows outgrows the table, the columns are dropped and rebuilt on their next use. The values are
those ``compute`` gives, so a cached column is exact as long as ``compute`` is row-wise.
``rows_cached(..., node_and_images=True)`` is the same for a value that may also read the row's
Node object and image states (ImageLocality's image counts, frozen in each clone): such a column
follows a second log, of the updates that changed the columns, the Node object or the image
states (compared by value: a re-clone re-takes the counts; the cache hands a node's clones one
frozen dict while no count moved, which compares by identity).

``rows_cached_codes`` is ``rows_cached`` for a column of Filter codes: the column counts its
non-zero values as it is kept current (both update paths), so when none is left (every node
passes) it answers None without gathering the rows asked. Up to ``FEW_ROWS`` updated rows are
recomputed one by one with the plugin's per-node ``one``, whose answers are memoised by row
state (``_refresh``).

What this module owns: the caches' state (``_RowCache``), how a key becomes a kept column, how a
column catches up with the logs, and the memo of ``one``'s answers. What it does not own: the
table's columns, flags and derived columns, and writing the logs (``NodeTable.update_row``,
which appends a changed row to ``_log`` / ``_touched`` and drops the caches when a log outgrows
the table); the computations themselves (the plugins' ``compute`` and ``one``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from .node_info import ImageStateSummary, NodeInfo

if TYPE_CHECKING:
    from .node_table import NodeTable

__all__ = [
    "FEW_ROWS",
    "MAX_ROW_CACHES",
    "MAX_ROW_KEYS_SEEN",
    "MAX_ROW_MEMO",
    "IntArray",
    "OneRow",
    "RowCaches",
    "RowCompute",
]

IntArray = npt.NDArray[np.int64]
"""A NumPy column of int64 (the table's columns, row indices, a plugin's values)."""
MAX_ROW_CACHES: Final = 32
MAX_ROW_KEYS_SEEN: Final = 256
MAX_ROW_MEMO: Final = 4096
"""Answers of ``one`` kept per row cache, by row state (emptied when full)."""

RowCompute = Callable[["NodeTable", IntArray], IntArray]
"""``compute(table, rows)``: one value per row of ``rows``, each a function of that row alone."""
OneRow = Callable[[NodeInfo], int]
"""``one(info)``: the same value for one row, from its NodeInfo (the plugin's reference code)."""
FEW_ROWS: Final = 16
"""Up to this many updated rows are recomputed one by one with ``one`` (NumPy's fixed cost per
operation makes a vectorised pass over one row slower than Python over its NodeInfo)."""


class _RowCache:
    __slots__ = ("by_images", "memo", "negative", "nonzero", "seen", "values", "wide")

    def __init__(self, values: IntArray, seen: int, wide: bool, count_nonzero: bool, memo: bool) -> None:
        self.values = values
        self.seen = seen
        """How much of the table's update log ``values`` already reflects."""
        self.wide = wide
        """Which log: ``_touched`` (True) or ``_log`` (the columns alone)."""
        self.memo: dict[Hashable, int] | None = {} if memo else None
        """``one``'s answers by row state (see ``RowCaches._refresh``), or None: not memoised."""
        self.by_images = wide
        """The memo's key: the row's columns and image states (True) or its columns alone."""
        self.negative = bool(len(values)) and bool(np.minimum.reduce(values) < 0)
        """Has a negative value ever been written (never reset: a True only costs a check)."""
        self.nonzero = int(np.count_nonzero(values)) if count_nonzero else -1
        """How many values are not 0 (kept by every update), or -1: not counted."""


class RowCaches:
    """``NodeTable``'s row-wise cached results (a mixin: ``NodeTable`` sets the state declared
    here in its ``__init__`` and appends to the logs in ``update_row``). ``self`` is always a
    ``NodeTable``: it goes to ``compute`` as the table (hence the ``type: ignore[arg-type]``)."""

    __slots__ = ()

    size: int
    infos: Sequence[NodeInfo]
    _row_caches: OrderedDict[Hashable, _RowCache]
    _row_keys_seen: OrderedDict[Hashable, None]
    _log: list[int]
    _touched: list[int]
    _row_values: list[tuple[int, ...]]
    _row_gens: list[int]
    _images: list[dict[str, ImageStateSummary]]
    _image_keys: list[Hashable | None]

    def rows_cached(
        self,
        key: Hashable,
        compute: RowCompute,
        rows: IntArray,
        one: OneRow | None = None,
        *,
        node_and_images: bool = False,
        reads_node: bool = True,
    ) -> IntArray:
        """``compute(self, rows)``, from a column kept current per ``key`` once the key recurs.

        ``compute`` may read only the rows' ``data`` columns, and ``one`` (which must agree with
        it) only the NodeInfo fields those columns hold; ``key`` must name everything else they
        read. With ``node_and_images`` they may also read the row's Node object and image states:
        the row is then recomputed after an ``update_row`` that changed either, or the columns;
        ``reads_node=False`` says they read the image states but not the Node object (``one``'s
        answers are then memoised by columns and image states, see ``_refresh``).
        Without ``node_and_images``, ``one``'s answers are always memoised by the row's columns:
        rows in the same state share them, so a ``one`` reading anything else (labels, taints,
        scalar resources) would be answered for another row.
        The returned array is a fresh one (``values[rows]``)."""
        return self._cached(key, compute, rows, one, node_and_images, reads_node)[0]

    def rows_cached_nonnegative(
        self,
        key: Hashable,
        compute: RowCompute,
        rows: IntArray,
        one: OneRow | None = None,
        *,
        node_and_images: bool = False,
        reads_node: bool = True,
    ) -> IntArray | None:
        """``rows_cached``, or None when one of the returned values is negative. A column that
        never held a negative value skips the check."""
        values, maybe_negative = self._cached(key, compute, rows, one, node_and_images, reads_node)
        if maybe_negative and len(values) and np.minimum.reduce(values) < 0:
            return None
        return values

    def rows_cached_codes(
        self, key: Hashable, compute: RowCompute, rows: IntArray, one: OneRow | None = None
    ) -> IntArray | None:
        """``rows_cached`` for a column of Filter codes, or None when every returned value is 0
        (every row passes). The column counts its non-zero values as it is kept current, so a
        column of zeros (every node fits) answers without a look at ``rows``."""
        c = self._row_caches.get(key)
        if c is not None and c.nonzero >= 0:
            self._row_caches.move_to_end(key)
            self._refresh(c, compute, one)
            if not c.nonzero:
                return None
            codes = c.values[rows]
        else:
            codes = self._cached(key, compute, rows, one, False, False, count_nonzero=True)[0]
        return codes if np.count_nonzero(codes) else None

    def _cached(
        self,
        key: Hashable,
        compute: RowCompute,
        rows: IntArray,
        one: OneRow | None,
        node_and_images: bool,
        reads_node: bool,
        *,
        count_nonzero: bool = False,
    ) -> tuple[IntArray, bool]:
        """(``rows_cached``'s values, whether the column may hold a negative value)."""
        c = self._row_caches.get(key)
        if c is None:
            if key not in self._row_keys_seen:
                self._row_keys_seen[key] = None
                if len(self._row_keys_seen) > MAX_ROW_KEYS_SEEN:
                    self._row_keys_seen.popitem(last=False)
                return compute(self, rows), True  # type: ignore[arg-type]  # (self: the NodeTable)
            values = compute(self, np.arange(self.size, dtype=np.int64))  # type: ignore[arg-type]  # (self: the NodeTable)
            seen = len(self._touched if node_and_images else self._log)
            memo = not (node_and_images and reads_node)
            c = self._row_caches[key] = _RowCache(values, seen, node_and_images, count_nonzero, memo)
            if len(self._row_caches) > MAX_ROW_CACHES:
                self._row_caches.popitem(last=False)
            return values[rows], c.negative
        self._row_caches.move_to_end(key)
        self._refresh(c, compute, one)
        return c.values[rows], c.negative

    def _refresh(self, c: _RowCache, compute: RowCompute, one: OneRow | None) -> None:
        """Recompute the rows of ``c`` changed since it last read its log."""
        log = self._touched if c.wide else self._log
        if c.seen >= len(log):
            return
        pending = log[c.seen :]
        counted = c.nonzero >= 0
        if one is not None and len(pending) <= FEW_ROWS:
            values, infos, memo, states, gens = c.values, self.infos, c.memo, self._row_values, self._row_gens
            for i in dict.fromkeys(pending):
                if counted and values[i]:
                    c.nonzero -= 1
                info = infos[i]
                if memo is None or info.generation != gens[i]:
                    # (a row edited in place since its ``update_row``: its state is not the key's)
                    v = one(info)
                else:
                    # ``one`` reads nothing of a row but what this key holds (the contract of
                    # ``rows_cached``): rows in the same state share the answer.
                    k = (states[i], self._image_key(i)) if c.by_images else states[i]
                    got = memo.get(k)
                    if got is None:
                        if len(memo) >= MAX_ROW_MEMO:
                            memo.clear()
                        got = memo[k] = one(info)
                    v = got
                values[i] = v
                if v:
                    if counted:
                        c.nonzero += 1
                    if v < 0:
                        c.negative = True
        else:
            changed = np.unique(np.array(pending, dtype=np.int64))
            if counted:
                c.nonzero -= int(np.count_nonzero(c.values[changed]))
            fresh = c.values[changed] = compute(self, changed)  # type: ignore[arg-type]  # (self: the NodeTable)
            if counted:
                c.nonzero += int(np.count_nonzero(fresh))
            if len(fresh) and np.minimum.reduce(fresh) < 0:
                c.negative = True
        c.seen = len(log)

    def _image_key(self, i: int) -> Hashable:
        """Row ``i``'s image states as a value: (image, size, number of nodes) for each."""
        key = self._image_keys[i]
        if key is None:
            key = self._image_keys[i] = frozenset([(name, s.size, s.num_nodes) for name, s in self._images[i].items()])
        return key
