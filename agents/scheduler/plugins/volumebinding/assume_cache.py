"""The binder's assume caches of PersistentVolumes and PersistentVolumeClaims (upstream
``pkg/scheduler/util/assumecache`` with ``PVAssumeCache`` / ``PVCAssumeCache``).

An assumed object is the binder's own version (a PV with its new ``claimRef``, a claim with
``selected-node``) shown instead of the informer's until the informer holds a different
resourceVersion than the one it was assumed over — i.e. until the API write (or anybody's)
arrived, upstream's "newer version replaces the assumed one". The check is lazy (on read),
so the cache holds no handler and costs nothing while nothing is assumed.

``get`` / ``list`` give the latest view (assumed first), ``get_api`` the informer's,
``assume`` / ``restore`` add and drop an assumption.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["AssumeCache", "AssumeError"]

Key = tuple[str, str]


class AssumeError(Exception):
    pass


class AssumeCache:
    """Assumed versions over one informer's store (``store()`` gives it, keyed (ns, name))."""

    __slots__ = ("_assumed", "_kind", "_store")

    def __init__(self, kind: str, store: Callable[[], dict[Key, Any] | None]) -> None:
        self._kind = kind
        self._store = store
        self._assumed: dict[Key, tuple[Any, str]] = {}

    def __len__(self) -> int:
        return len(self._assumed)

    def _api(self, key: Key) -> Any | None:
        store = self._store()
        return store.get(key) if store is not None else None

    def get_api(self, name: str, namespace: str = "") -> Any | None:
        return self._api((namespace, name))

    def get(self, name: str, namespace: str = "") -> Any | None:
        key = (namespace, name)
        api = self._api(key)
        held = self._assumed.get(key)
        if held is None:
            return api
        obj, base = held
        if api is None or api.metadata.resource_version != base:
            del self._assumed[key]  # the informer moved on: its object replaces ours
            return api
        return obj

    def list(self) -> list[Any]:
        """Every object, latest view, in key order."""
        store = self._store() or {}
        if not self._assumed:
            return [store[k] for k in sorted(store)]
        return [self.get(name, ns) for ns, name in sorted(store)]

    def assume(self, obj: Any) -> None:
        key = (obj.metadata.namespace, obj.metadata.name)
        api = self._api(key)
        if api is None:
            raise AssumeError(f'{self._kind} "{obj.metadata.name}" not found')
        if api.metadata.resource_version != obj.metadata.resource_version:
            raise AssumeError(
                f"couldn't assume object {obj.metadata.name}: the {self._kind} has resourceVersion "
                f"{api.metadata.resource_version}, not {obj.metadata.resource_version}"
            )
        self._assumed[key] = (obj, api.metadata.resource_version)

    def restore(self, name: str, namespace: str = "") -> None:
        self._assumed.pop((namespace, name), None)
