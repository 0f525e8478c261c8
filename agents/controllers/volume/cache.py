"""The PV controller's own caches of volumes and claims (upstream ``persistentVolumeOrderedIndex``
and the ``claims`` store, with ``storeObjectUpdate``): fed by its informers and by the
objects its own writes return, an object replaced only by a newer ``resourceVersion``, so
that a sync right after a write does not act on the informer's older copy."""

from __future__ import annotations

import bisect
from typing import Any, Generic, TypeVar

from agents.controllers.volume.pvutil import (
    access_modes_match,
    claim_class,
    claim_request,
    find_matching_volume,
    storage_of,
    volume_class,
)
from emulator.base.api.storage import PersistentVolumeClaim

__all__ = ["VersionedStore", "VolumeStore"]

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


class VolumeStore(VersionedStore[Any]):
    """The volumes, also indexed as binding searches them: by the claim their ``claimRef``
    names (pre-bound or bound, ``namespace/name``), and the unclaimed ones by class and set
    of access modes, each group sorted by (size, name): upstream's access-mode index
    (``persistentVolumeOrderedIndex``), so that a claim's search reads the groups that may
    serve it from its request's size up instead of every volume of the cluster."""

    def __init__(self) -> None:
        super().__init__()
        self.by_claim: dict[Key, dict[str, None]] = {}
        self.unclaimed: dict[tuple[str, tuple[str, ...]], list[tuple[int, str]]] = {}

    @staticmethod
    def _group(obj: Any) -> tuple[tuple[str, tuple[str, ...]], tuple[int, str]]:
        return (volume_class(obj), tuple(sorted(set(obj.spec.access_modes)))), (storage_of(obj), obj.metadata.name)

    def _unindex(self, obj: Any) -> None:
        name = obj.metadata.name
        ref = obj.spec.claim_ref
        if ref is None:
            group, entry = self._group(obj)
            entries = self.unclaimed.get(group)
            if entries is not None:
                i = bisect.bisect_left(entries, entry)
                if i < len(entries) and entries[i] == entry:
                    del entries[i]
                if not entries:
                    del self.unclaimed[group]
            return
        names = self.by_claim.get((ref.namespace, ref.name))
        if names is not None:
            names.pop(name, None)
            if not names:
                del self.by_claim[(ref.namespace, ref.name)]

    def _index(self, obj: Any) -> None:
        ref = obj.spec.claim_ref
        if ref is None:
            group, entry = self._group(obj)
            bisect.insort(self.unclaimed.setdefault(group, []), entry)
        else:
            self.by_claim.setdefault((ref.namespace, ref.name), {})[obj.metadata.name] = None

    def store(self, obj: Any) -> bool:
        old = self.objects.get((obj.metadata.namespace, obj.metadata.name))
        if not super().store(obj):
            return False
        if old is not None:
            self._unindex(old)
        self._index(obj)
        return True

    def delete(self, obj: Any) -> None:
        old = self.objects.get((obj.metadata.namespace, obj.metadata.name))
        super().delete(obj)
        if old is not None:
            self._unindex(old)

    def prebound(self, namespace: str, name: str) -> list[Any]:
        """The volumes whose claimRef names the claim, by name."""
        return [self.objects[("", n)] for n in sorted(self.by_claim.get((namespace, name), ()))]

    def find(self, claim: PersistentVolumeClaim, *, delay_binding: bool) -> Any | None:
        """``findBestMatchForClaim`` over the index: a volume pre-bound to the claim offering
        its access modes; else (not ``delay_binding``) in each unclaimed group of its class
        offering its modes, fewest modes first, the smallest (then first by name) that
        ``find_matching_volume`` accepts."""
        m = claim.metadata
        pre = [v for v in self.prebound(m.namespace, m.name) if access_modes_match(claim, v)]
        if pre and (found := find_matching_volume(claim, pre, delay_binding=delay_binding)) is not None:
            return found
        if delay_binding:
            return None
        cls = claim_class(claim)
        want = set(claim.spec.access_modes)
        groups = sorted(g for g in self.unclaimed if g[0] == cls and want <= set(g[1]))
        request = claim_request(claim)
        for group in sorted(groups, key=lambda g: (len(g[1]), g[1])):
            entries = self.unclaimed[group]
            for _size, name in entries[bisect.bisect_left(entries, (request, "")) :]:
                found = find_matching_volume(claim, [self.objects[("", name)]], delay_binding=False)
                if found is not None:
                    return found
        return None
