"""The PV controller's own caches of volumes and claims (upstream ``persistentVolumeOrderedIndex``
and the ``claims`` store, with ``storeObjectUpdate``): fed by its informers and by the
objects its own writes return, an object replaced only by a newer ``resourceVersion``, so
that a sync right after a write does not act on the informer's older copy."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

__all__ = ["VersionedStore"]

T = TypeVar("T")
Key = tuple[str, str]


def _version(obj: Any) -> int:
    rv = obj.metadata.resource_version
    return int(rv) if rv.isdigit() else 0


class VersionedStore(Generic[T]):
    """(namespace, name) → the newest object seen."""

    def __init__(self) -> None:
        self.objects: dict[Key, T] = {}

    def __len__(self) -> int:
        return len(self.objects)

    def store(self, obj: T) -> bool:
        """Keep ``obj`` unless an object of the same UID with a newer version is kept;
        returns whether ``obj`` is now the one kept."""
        meta = obj.metadata  # type: ignore[attr-defined]
        key = (meta.namespace, meta.name)
        old = self.objects.get(key)
        if old is not None and old.metadata.uid == meta.uid and _version(old) > _version(obj):  # type: ignore[attr-defined]
            return False
        self.objects[key] = obj
        return True

    def delete(self, obj: Any) -> None:
        self.objects.pop((obj.metadata.namespace, obj.metadata.name), None)

    def get(self, name: str, namespace: str = "") -> T | None:
        return self.objects.get((namespace, name))

    def keys(self) -> list[Key]:
        return sorted(self.objects)

    def values(self) -> list[T]:
        return [self.objects[k] for k in sorted(self.objects)]
