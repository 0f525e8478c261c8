"""A keyed binary heap: upstream ``pkg/scheduler/backend/heap`` with a deterministic tie-break.

This module owns ``KeyedHeap``, the data structure under activeQ and both backoff heaps: items
are addressed by a string key (the pod's ``namespace/name``, as upstream's ``podInfoKeyFunc``),
ordered by a caller-supplied ``less(a, b)``, and can be updated in place (re-sifted, upstream
``heap.Fix``) or deleted from the middle in O(log n). It does not own what the order means
(``scheduling_queue.py`` and ``backoff_queue.py`` supply the ``less`` functions).

Determinism: Go's heap leaves the order of ``less``-equal items to the shape of the array. Here
every key gets a sequence number when it is first added, and items that neither ``less`` orders
come out first-added first. Updating an item in place keeps its sequence number.

Speed: ``rank(item)``, when given, must order items exactly as ``less`` does (``rank(a) <
rank(b)`` iff ``less(a, b)``, e.g. PrioritySort's ``(-priority, timestamp)``). Each entry then
keeps ``(rank(item), seq)``, computed when the item is added or updated, and a comparison is
one tuple comparison instead of up to two ``less`` calls: the same order, the same sift steps.
An item's ranked fields must only change through ``add_or_update``.

An index (key -> array position) rather than lazy deletion because items are mutable: a pod
update may change what ``less`` says, and a stale tombstone compared through its live item would
break the heap invariant.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["KeyedHeap"]

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("item", "key", "rank", "seq")

    def __init__(self, key: str, item: T, seq: int, rank: tuple[Any, int] | None = None) -> None:
        self.key = key
        self.item = item
        self.seq = seq
        self.rank = rank


class KeyedHeap(Generic[T]):
    """A min-heap by ``less`` whose items are addressed by ``key(item)``."""

    __slots__ = ("_entries", "_index", "_key", "_less", "_lt", "_rank", "_seq")

    def __init__(
        self, key: Callable[[T], str], less: Callable[[T, T], bool], rank: Callable[[T], Any] | None = None
    ) -> None:
        self._key = key
        self._less = less
        self._rank = rank
        self._lt: Callable[[_Entry[T], _Entry[T]], bool] = self._by_less if rank is None else _by_rank
        self._entries: list[_Entry[T]] = []
        self._index: dict[str, int] = {}
        self._seq = itertools.count()

    # --- queries -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def get(self, key: str) -> T | None:
        i = self._index.get(key)
        return None if i is None else self._entries[i].item

    def peek(self) -> T | None:
        return self._entries[0].item if self._entries else None

    def __iter__(self) -> Iterator[T]:
        """Items in array order (cheap; not the pop order)."""
        return iter([e.item for e in self._entries])

    def ordered(self) -> list[T]:
        """Items in the order ``pop`` would return them (sorts a copy: for debugging and tests)."""
        clone: KeyedHeap[T] = KeyedHeap(self._key, self._less, self._rank)
        clone._entries = [_Entry(e.key, e.item, e.seq, e.rank) for e in self._entries]
        clone._index = dict(self._index)
        out: list[T] = []
        while (item := clone.pop()) is not None:
            out.append(item)
        return out

    # --- mutations -----------------------------------------------------------------------

    def add_or_update(self, item: T) -> None:
        """Insert ``item``, or replace the item with the same key and restore the order."""
        key = self._key(item)
        i = self._index.get(key)
        if i is not None:
            entry = self._entries[i]
            entry.item = item
            if self._rank is not None:
                entry.rank = (self._rank(item), entry.seq)
            self._fix(i)
            return
        seq = next(self._seq)
        self._entries.append(_Entry(key, item, seq, None if self._rank is None else (self._rank(item), seq)))
        i = len(self._entries) - 1
        self._index[key] = i
        self._up(i)

    def delete(self, key: str) -> T | None:
        """Remove and return the item with ``key`` (``None`` if absent)."""
        i = self._index.get(key)
        if i is None:
            return None
        return self._remove_at(i)

    def pop(self) -> T | None:
        """Remove and return the least item (``None`` if empty)."""
        entries, index = self._entries, self._index
        if not entries:
            return None
        root = entries[0]
        last = entries.pop()
        del index[root.key]
        if last is root:
            return root.item
        # Bottom-up (as CPython's heapq): walk the hole down along the lesser children to a leaf,
        # one comparison per level, then sift the last entry up from there.
        n = len(entries)
        pos, child = 0, 1
        while child < n:
            right = child + 1
            if right < n and not self._lt(entries[child], entries[right]):
                child = right
            c = entries[child]
            entries[pos] = c
            index[c.key] = pos
            pos, child = child, 2 * child + 1
        entries[pos] = last
        index[last.key] = pos
        self._up(pos)
        return root.item

    # --- internals -----------------------------------------------------------------------

    def _by_less(self, a: _Entry[T], b: _Entry[T]) -> bool:
        if self._less(a.item, b.item):
            return True
        if self._less(b.item, a.item):
            return False
        return a.seq < b.seq

    def _remove_at(self, i: int) -> T:
        entries = self._entries
        entry = entries[i]
        last = entries.pop()
        del self._index[entry.key]
        if last is not entry:
            entries[i] = last
            self._index[last.key] = i
            self._fix(i)
        return entry.item

    def _fix(self, i: int) -> None:
        if not self._down(i):
            self._up(i)

    def _up(self, i: int) -> None:
        entries, index = self._entries, self._index
        entry = entries[i]
        while i > 0:
            parent = (i - 1) >> 1
            p = entries[parent]
            if not self._lt(entry, p):
                break
            entries[i] = p
            index[p.key] = i
            i = parent
        entries[i] = entry
        index[entry.key] = i

    def _down(self, i: int) -> bool:
        """Sift down from ``i``; True if the entry moved."""
        entries, index = self._entries, self._index
        n = len(entries)
        entry = entries[i]
        start = i
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            right = child + 1
            if right < n and self._lt(entries[right], entries[child]):
                child = right
            c = entries[child]
            if not self._lt(c, entry):
                break
            entries[i] = c
            index[c.key] = i
            i = child
        entries[i] = entry
        index[entry.key] = i
        return i != start

    def __repr__(self) -> str:
        return f"<KeyedHeap len={len(self._entries)}>"


def _by_rank(a: _Entry[Any], b: _Entry[Any]) -> bool:
    return a.rank < b.rank  # type: ignore[operator]
