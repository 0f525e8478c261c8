"""``Indices``: an informer's secondary indexes, client-go's ``Indexers``/``ByIndex``
(``tools/cache/index.go``, ``thread_safe_store.go``'s ``storeIndex``), and the standard
controller-UID index the workload controllers share.

An index is a name and an *index function*: an object → the values it is filed under (a
list: an object may be filed under several values, or none). ``Indices`` keeps, per index,
value → the keys of the objects filed there, and is told of every change of the store
(``update(key, old, new)``, with ``None`` for "absent"), before any handler runs, so a
handler that reads an index sees the object it is called for.

Order: ``keys`` returns the keys sorted by (namespace, name), whatever the order of the
events that filed them: the controllers that read an index feed its order into their
decisions (which pod to delete first), and a sorted order is the same in every run.

It owns the indexes only, not the store (``Informer``), nor what an index means to a
controller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

__all__ = ["CONTROLLER_UID_INDEX", "ORPHAN", "IndexFunc", "Indices", "controller_uid"]

Key = tuple[str, str]
IndexFunc = Callable[[Any], list[str]]

CONTROLLER_UID_INDEX: Final = "controllerUID"
"""The index of objects by their controller's UID (upstream ``PodControllerUIDIndex``)."""
ORPHAN: Final = "_ORPHAN"
"""The value an object without a controller is filed under (upstream ``OrphanPodIndexKey``)."""


def controller_uid(obj: Any) -> list[str]:
    """The index function of ``CONTROLLER_UID_INDEX``: the UID of the owner reference with
    ``controller: true`` (upstream ``GetControllerOf``), ``ORPHAN`` when there is none."""
    for ref in obj.metadata.owner_references:
        if ref.controller:
            return [ref.uid]
    return [ORPHAN]


class Indices:
    """Index name → value → keys of the objects filed under it."""

    def __init__(self) -> None:
        self._funcs: dict[str, IndexFunc] = {}
        self.funcs = self._funcs
        """Index name → function, read-only: empty while there is no index (a test without
        the call ``bool(indices)`` makes: the informers ask it for every event)."""
        self._values: dict[str, dict[str, set[Key]]] = {}

    def __repr__(self) -> str:
        return f"<Indices {sorted(self._funcs)}>"

    def __bool__(self) -> bool:
        return bool(self._funcs)

    def names(self) -> list[str]:
        return sorted(self._funcs)

    def add(self, indexers: Mapping[str, IndexFunc], objects: Iterable[tuple[Key, Any]]) -> None:
        """Add indexes and file ``objects`` (the store's items) in them. A name already
        there with the same function is left as it is (several controllers ask for the
        standard one); with another function it is an error, as client-go's."""
        fresh: dict[str, IndexFunc] = {}
        for name, fn in indexers.items():
            have = self._funcs.get(name)
            if have is None:
                fresh[name] = fn
            elif have is not fn:
                raise ValueError(f"indexer conflict: {name}")
        if not fresh:
            return
        items = list(objects)
        for name, fn in fresh.items():
            self._funcs[name] = fn
            index: dict[str, set[Key]] = {}
            for key, obj in items:
                for value in fn(obj):
                    index.setdefault(value, set()).add(key)
            self._values[name] = index

    def update(self, key: Key, old: Any | None, new: Any | None) -> None:
        """Re-file ``key``: ``old`` was in the store (``None``: absent), ``new`` is now."""
        for name, fn in self._funcs.items():
            was = fn(old) if old is not None else []
            now = fn(new) if new is not None else []
            if was == now:
                continue
            index = self._values[name]
            for value in was:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
            for value in now:
                index.setdefault(value, set()).add(key)

    def keys(self, name: str, value: str) -> list[Key]:
        """The keys filed under ``value`` in index ``name``, sorted (client-go ``IndexKeys``)."""
        index = self._values.get(name)
        if index is None:
            raise KeyError(f"no index {name!r}")
        return sorted(index.get(value, ()))

    def values(self, name: str) -> list[str]:
        """The values index ``name`` holds objects under, sorted (client-go ``ListIndexFuncValues``)."""
        index = self._values.get(name)
        if index is None:
            raise KeyError(f"no index {name!r}")
        return sorted(index)
