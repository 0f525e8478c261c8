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

Row-wise cached results (``rows_cached``, ``rows_cached_nonnegative``, ``rows_cached_codes``):
a vectorised computation's column kept current row by row, from the logs ``update_row``
writes; the caches themselves are ``row_cache.RowCaches``, mixed in (see its docstring).
``row_ids`` is ``0 … size-1`` twice, read-only: the vectorised search's windows (from any start
index, wrapping) are slices of it.

Maintenance (``cache/snapshot.py``): ``update_row(i, info)`` when the snapshot puts a fresh
clone at row ``i``; a new table when the rows are rebuilt (nodes added, removed or reordered).

What it does not own: the row-wise caches' state and refresh (``row_cache.py``), the snapshot
and its order, the plugins' arithmetic (each plugin's ``filter_all`` / ``score_all`` in its own
module), running them (``vectorized.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Final, Literal

import numpy as np

from .node_info import NodeInfo
from .row_cache import IntArray, RowCaches

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
    "NUM_PODS",
    "NZ_CPU",
    "NZ_MEM",
    "REQ_CPU",
    "REQ_EPH",
    "REQ_MEM",
    "Depends",
    "IntArray",
    "NodeTable",
]

INT64_MAX: Final = 2**63 - 1
HUGE: Final = 1 << 50
"""Amounts from here on make the vectorised paths decline (int64 products could overflow)."""
MAX_DERIVED: Final = 64

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


class NodeTable(RowCaches):
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
        self._row_caches = OrderedDict()  # (typed in ``RowCaches``)
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

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"<NodeTable rows={self.size} derived={len(self._derived)} row_caches={len(self._row_caches)}>"
