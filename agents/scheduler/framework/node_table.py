"""A columnar view of a snapshot's NodeInfos, for vectorised Filter and Score (NumPy).

What this module owns: ``NodeTable``, one row per NodeInfo of a ``Snapshot`` in the snapshot's
``node_info_list`` order, with int64 columns for what the resource plugins read, and *derived
columns*: per-row values a plugin computes with its own per-node reference code once, which
the table then keeps current.

=====================  ===========================================================================
row of ``data``        from
=====================  ===========================================================================
ALLOC_CPU / _MEM /     ``NodeInfo.allocatable`` (milli-cpu, bytes, bytes, ``pods``)
ALLOC_EPH / ALLOC_PODS
REQ_CPU / _MEM / _EPH  ``NodeInfo.requested`` (real requests, assumed pods included)
NUM_PODS               ``len(NodeInfo.pods)``
NZ_CPU / NZ_MEM        ``NodeInfo.non_zero_requested`` (scoring's 100m / 200Mi defaults)
FREE_PODS / _CPU /     allocatable − requested (pods: − pods on the node)
FREE_MEM / _EPH
=====================  ===========================================================================

``data`` is one int64 matrix with a contiguous row per column above (``data[ALLOC_CPU]`` is
every node's allocatable cpu); ``alloc_cpu`` etc. are those rows by name. A plugin picks its
rows' values column by column (``table.alloc_cpu[rows]``): on this machine gathering one
contiguous column costs a fraction of gathering whole node records.

Flags over all rows (kept on every update; they only ever turn on until the next rebuild, so a
``False`` is always true): ``any_taints``, ``any_unschedulable``, ``any_images``, ``any_ports``,
``any_scalars`` (a node with scalar allocatable or requests) and ``huge`` (an amount ≥ 2**50,
where vectorised integer arithmetic could overflow int64: plugins then decline).

Overflow: validation bounds each quantity's milli-value to an int64, but a node's sums are
not bounded (pods given ``spec.nodeName`` bypass the fit check; allocatable − requested can
go below −2**63). Such a value is stored saturated at ±(2**63 − 1): it is ≥ ``HUGE``, so
``huge`` is set and no vectorised path reads it; the plugins' per-node code uses the
NodeInfo's exact Python ints. A derived value past int64 (ImageLocality's scaled size of an
image reported at int64's maximum: upstream's ``sizeBytes`` is an int64, but float rounding
takes its scaled score one past it) is clamped likewise.

Derived columns (``derived(key, fn, depends)``): ``fn(node_info) -> int`` evaluated on every row
the first time ``key`` is asked for, then re-evaluated for a row only when that row changes —
every change for ``depends="info"``, only a new Node object for ``depends="node"`` (labels,
taints), a new Node object or image states that differ by value for ``depends="images"``
(ImageLocality: a bound pod re-clones its node without changing its images, so the column is
not re-evaluated; ``update_row`` visits only the columns a change can reach). ``key`` must name
everything ``fn`` reads besides the NodeInfo (e.g. the pod's tolerations), so two pods asking
with equal keys get the same answers. At most ``MAX_DERIVED`` are kept (least recently used
dropped). Because the values come from the plugins' reference code, a derived column is exact
by construction.

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
passes) it answers None without gathering the rows asked. ``row_ids`` is ``0 … size-1`` twice,
read-only: the vectorised search's windows (from any start index, wrapping) are slices of it.

Maintenance (``cache/snapshot.py``): ``update_row(i, info)`` when the snapshot puts a fresh
clone at row ``i``; a new table when the rows are rebuilt (nodes added, removed or reordered).

What it does not own: the snapshot and its order, the plugins' arithmetic (each plugin's
``filter_all`` / ``score_all`` in its own module), running them (``vectorized.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from .node_info import NodeInfo

__all__ = [
    "ALLOC_CPU",
    "ALLOC_EPH",
    "ALLOC_MEM",
    "ALLOC_PODS",
    "FREE_CPU",
    "FREE_EPH",
    "FREE_MEM",
    "FREE_PODS",
    "HUGE",
    "MAX_DERIVED",
    "MAX_ROW_CACHES",
    "NUM_PODS",
    "NZ_CPU",
    "NZ_MEM",
    "REQ_CPU",
    "REQ_EPH",
    "REQ_MEM",
    "Depends",
    "IntArray",
    "NodeTable",
    "OneRow",
    "RowCompute",
]

IntArray = npt.NDArray[np.int64]
INT64_MAX: Final = 2**63 - 1
HUGE: Final = 1 << 50
"""Amounts from here on make the vectorised paths decline (int64 products could overflow)."""
MAX_DERIVED: Final = 64
MAX_ROW_CACHES: Final = 32
MAX_ROW_KEYS_SEEN: Final = 256
MAX_ROW_MEMO: Final = 4096
"""Answers of ``one`` kept per row cache, by row state (emptied when full)."""

ALLOC_CPU, ALLOC_MEM, ALLOC_EPH, ALLOC_PODS = 0, 1, 2, 3
REQ_CPU, REQ_MEM, REQ_EPH, NUM_PODS = 4, 5, 6, 7
NZ_CPU, NZ_MEM = 8, 9
FREE_PODS, FREE_CPU, FREE_MEM, FREE_EPH = 10, 11, 12, 13
"""Column indices of ``NodeTable.data`` (the free ones: allocatable − requested, pods − pods on it)."""
_WIDTH: Final = 14


def _values(info: NodeInfo) -> tuple[int, ...]:
    a, r, nz = info.allocatable, info.requested, info.non_zero_requested
    n = len(info.pods)
    return (
        a.milli_cpu,
        a.memory,
        a.ephemeral_storage,
        a.allowed_pod_number,
        r.milli_cpu,
        r.memory,
        r.ephemeral_storage,
        n,
        nz.milli_cpu,
        nz.memory,
        a.allowed_pod_number - n,
        a.milli_cpu - r.milli_cpu,
        a.memory - r.memory,
        a.ephemeral_storage - r.ephemeral_storage,
    )


def _saturated(values: tuple[int, ...]) -> tuple[int, ...]:
    """``values`` clamped to ±``INT64_MAX``: a row the vectorised paths will decline (``huge``)."""
    return tuple(max(-INT64_MAX, min(INT64_MAX, v)) for v in values)


def _clamp(value: int) -> int:
    """A derived value clamped to ±``INT64_MAX`` (an image of 2**63 − 1 bytes scales past it)."""
    return value if -INT64_MAX <= value <= INT64_MAX else max(-INT64_MAX, min(INT64_MAX, value))


Depends = Literal["node", "info", "images"]
"""What a derived column reads besides the Node object: nothing more, the whole NodeInfo, or
its image states."""


class _Derived:
    __slots__ = ("depends", "fn", "values")

    def __init__(self, fn: Callable[[NodeInfo], int], depends: Depends, values: IntArray) -> None:
        self.fn = fn
        self.depends = depends
        self.values = values


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
        """``one``'s answers by row state (see ``NodeTable._refresh``), or None: not memoised."""
        self.by_images = wide
        """The memo's key: the row's columns and image states (True) or its columns alone."""
        self.negative = bool(len(values)) and bool(np.minimum.reduce(values) < 0)
        """Has a negative value ever been written (never reset: a True only costs a check)."""
        self.nonzero = int(np.count_nonzero(values)) if count_nonzero else -1
        """How many values are not 0 (kept by every update), or -1: not counted."""


class NodeTable:
    """Columns over a snapshot's NodeInfos; row ``i`` is ``infos[i]``."""

    __slots__ = (
        "_derived",
        "_derived_on_images",
        "_derived_on_info",
        "_image_keys",
        "_images",
        "_log",
        "_nodes",
        "_row_caches",
        "_row_gens",
        "_row_ids",
        "_row_keys_seen",
        "_row_values",
        "_touched",
        "alloc_cpu",
        "alloc_eph",
        "alloc_mem",
        "alloc_pods",
        "any_images",
        "any_ports",
        "any_scalars",
        "any_taints",
        "any_unschedulable",
        "data",
        "free_cpu",
        "free_eph",
        "free_mem",
        "free_pods",
        "huge",
        "index",
        "infos",
        "memo",
        "names",
        "num_pods",
        "nz_cpu",
        "nz_mem",
        "req_cpu",
        "req_eph",
        "req_mem",
        "size",
        "unschedulable",
    )

    def __init__(self, infos: Sequence[NodeInfo]) -> None:
        self.infos: Sequence[NodeInfo] = infos
        """The snapshot's list itself (the snapshot replaces entries and calls ``update_row``)."""
        n = self.size = len(infos)
        self.index: dict[str, int] = {info.name: i for i, info in enumerate(infos)}
        self.names: list[str] = [info.name for info in infos]
        """Row -> node name (a row keeps its node: ``update_row`` puts a clone of the same node)."""
        self._nodes = [info.node for info in infos]
        rows = self._row_values = [_values(info) for info in infos]
        self._row_gens = [info.generation for info in infos]
        """Each row's NodeInfo generation as ``_row_values`` read it: a row whose info has moved
        on since (changed in place, no ``update_row`` yet) is recomputed outside the memo."""
        try:
            data = np.array(rows, dtype=np.int64).reshape(n, _WIDTH) if n else np.zeros((0, _WIDTH), np.int64)
        except OverflowError:  # a sum beyond int64 (see the docstring): saturate, ``huge`` is then set
            data = np.array([_saturated(row) for row in rows], dtype=np.int64).reshape(n, _WIDTH)
        data = self.data = np.ascontiguousarray(data.T)
        """``data[COLUMN]``: that column over every node (rows ``ALLOC_CPU`` … ``FREE_EPH``)."""
        self.alloc_cpu: IntArray = data[ALLOC_CPU]
        self.alloc_mem: IntArray = data[ALLOC_MEM]
        self.alloc_eph: IntArray = data[ALLOC_EPH]
        self.alloc_pods: IntArray = data[ALLOC_PODS]
        self.req_cpu: IntArray = data[REQ_CPU]
        self.req_mem: IntArray = data[REQ_MEM]
        self.req_eph: IntArray = data[REQ_EPH]
        self.nz_cpu: IntArray = data[NZ_CPU]
        self.nz_mem: IntArray = data[NZ_MEM]
        self.num_pods: IntArray = data[NUM_PODS]
        self.free_pods: IntArray = data[FREE_PODS]
        self.free_cpu: IntArray = data[FREE_CPU]
        self.free_mem: IntArray = data[FREE_MEM]
        self.free_eph: IntArray = data[FREE_EPH]
        self.unschedulable = np.array([bool(nd is not None and nd.spec.unschedulable) for nd in self._nodes], bool)
        self.huge = bool(n) and int(np.abs(data).max()) >= HUGE
        self.any_unschedulable = bool(self.unschedulable.any())
        self.any_taints = self.any_images = self.any_ports = self.any_scalars = False
        for info in infos:
            self._flag(info)
        self._derived: OrderedDict[Hashable, _Derived] = OrderedDict()
        self._derived_on_info: dict[Hashable, _Derived] = {}
        """The derived columns with ``depends="info"`` (a subset of ``_derived``)."""
        self._derived_on_images: dict[Hashable, _Derived] = {}
        """The derived columns with ``depends="images"`` (a subset of ``_derived``)."""
        self._row_caches: OrderedDict[Hashable, _RowCache] = OrderedDict()
        self._row_keys_seen: OrderedDict[Hashable, None] = OrderedDict()
        self._log: list[int] = []
        """Rows whose columns changed (``update_row``), in order; the row caches remember how far
        they read."""
        self._touched: list[int] = []
        """Rows whose columns, Node object or image states changed, in order (``node_and_images``)."""
        self._images = [info.image_states for info in infos]
        """Each row's image states, to tell a re-clone that changed them."""
        self._image_keys: list[Hashable | None] = [None] * n
        """Each row's image states as a hashable value (``_image_key``), computed when first asked."""
        self._row_ids: IntArray | None = None
        self.memo: dict[Hashable, Any] = {}
        """Callers' own per-table memos, by a key of theirs (e.g. ``score_totals``)."""

    @property
    def row_ids(self) -> IntArray:
        """``0 … size-1`` twice (``row_ids[k] == k % size``), read-only: any ``size`` rows in
        visiting order from a start index, wrapping past the last row, are one slice of it, a
        window of rows that nobody can write."""
        ids = self._row_ids
        if ids is None:
            once = np.arange(self.size, dtype=np.int64)
            ids = self._row_ids = np.concatenate((once, once))
            ids.flags.writeable = False
        return ids

    def _flag(self, info: NodeInfo) -> None:
        node = info.node
        if node is not None and node.spec.taints:
            self.any_taints = True
        if info.image_states:
            self.any_images = True
        if info.used_ports:  # (``HostPortInfo.__bool__``: no count to sum)
            self.any_ports = True
        if info.allocatable.scalar_resources or info.requested.scalar_resources:
            self.any_scalars = True

    def update_row(self, i: int, info: NodeInfo) -> None:
        """Row ``i`` now holds ``info`` (a fresh clone of the same node)."""
        values = _values(info)
        self._row_gens[i] = info.generation
        columns_changed = values != self._row_values[i]
        if columns_changed:
            self._row_values[i] = values
            try:
                self.data[:, i] = values
            except OverflowError:
                self.data[:, i] = _saturated(values)
            if max(values) >= HUGE or min(values) <= -HUGE:
                self.huge = True
        node_changed = info.node is not self._nodes[i]
        if node_changed:
            self._nodes[i] = info.node
            unschedulable = bool(info.node is not None and info.node.spec.unschedulable)
            self.unschedulable[i] = unschedulable
            self.any_unschedulable = self.any_unschedulable or unschedulable
        # ``_flag(info)`` inline (every changed row; ``used_ports._ports``: its ``__bool__``)
        node = info.node
        if node is not None and node.spec.taints:
            self.any_taints = True
        if info.image_states:
            self.any_images = True
        if info.used_ports._ports:
            self.any_ports = True
        if info.allocatable.scalar_resources or info.requested.scalar_resources:
            self.any_scalars = True
        images = info.image_states
        images_changed = False
        # (the cache hands successive clones of a node the same frozen dict while no count moved)
        if images is not self._images[i]:
            images_changed = images != self._images[i]
            self._images[i] = images  # (an equal dict: its key stays, the next compare is by identity)
            if images_changed:
                self._image_keys[i] = None
        if self._row_caches:
            if columns_changed:
                log = self._log
                log.append(i)
                if len(log) > max(self.size, 1024):
                    self._row_caches.clear()  # rebuilt on their next use
                    log.clear()
                    self._touched.clear()
            if columns_changed or node_changed or images_changed:
                touched = self._touched
                touched.append(i)
                if len(touched) > max(self.size, 1024):
                    caches = self._row_caches
                    for key in [k for k, c in caches.items() if c.wide]:
                        del caches[key]
                    touched.clear()
        if node_changed:
            for d in self._derived.values():
                d.values[i] = _clamp(d.fn(info))
        else:
            for d in self._derived_on_info.values():
                d.values[i] = _clamp(d.fn(info))
            if images_changed:
                for d in self._derived_on_images.values():
                    d.values[i] = _clamp(d.fn(info))

    def derived(self, key: Hashable, fn: Callable[[NodeInfo], int], depends: Depends = "node") -> IntArray:
        """The column ``fn(info)`` over every row, computed once per ``key`` and kept current.

        The returned array is the table's own: read it, never write it."""
        d = self._derived.get(key)
        if d is not None:
            self._derived.move_to_end(key)
            return d.values
        values = np.fromiter((_clamp(fn(info)) for info in self.infos), dtype=np.int64, count=self.size)
        d = self._derived[key] = _Derived(fn, depends, values)
        if depends == "info":
            self._derived_on_info[key] = d
        elif depends == "images":
            self._derived_on_images[key] = d
        if len(self._derived) > MAX_DERIVED:
            old, _ = self._derived.popitem(last=False)
            self._derived_on_info.pop(old, None)
            self._derived_on_images.pop(old, None)
        return values

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
                return compute(self, rows), True
            values = compute(self, np.arange(self.size, dtype=np.int64))
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
            fresh = c.values[changed] = compute(self, changed)
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

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"<NodeTable rows={self.size} derived={len(self._derived)} row_caches={len(self._row_caches)}>"
