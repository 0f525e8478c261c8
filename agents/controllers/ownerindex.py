"""``OwnerIndex``: which pods each owner controls, kept up to date by pod handlers.

A workload controller syncs one object at a time and must not scan every pod to find its
own (a 150,000-pod run would pay that on every event). The index maps an owner's UID to the
keys (namespace, name) of the pods whose controller reference (``controller: true``) names
an owner of ``kind``; the controller reads the pods themselves from the pod informer's store.

It owns only the index. Adoption and release of pods whose labels match a selector without
an owner reference (upstream's ``ClaimPods``) are not done: the emulated controllers only
see pods they (or a manifest) made with an owner reference.
"""

from __future__ import annotations

from agents.controllers.controllerutils import controller_ref
from emulator.api.core import Pod
from emulator.api.meta import OwnerReference

__all__ = ["OwnerIndex", "PodKey"]

PodKey = tuple[str, str]


def _key(pod: Pod) -> PodKey:
    return (pod.metadata.namespace, pod.metadata.name)


class OwnerIndex:
    """Owner UID → keys of the pods it controls, for owners of one ``kind``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._by_owner: dict[str, set[PodKey]] = {}

    def __repr__(self) -> str:
        return f"<OwnerIndex {self.kind} owners={len(self._by_owner)}>"

    def _ref(self, pod: Pod) -> OwnerReference | None:
        ref = controller_ref(pod)
        return ref if ref is not None and ref.kind == self.kind else None

    def add(self, pod: Pod) -> OwnerReference | None:
        """Index ``pod``; its controller reference when the owner is of our kind."""
        ref = self._ref(pod)
        if ref is not None:
            self._by_owner.setdefault(ref.uid, set()).add(_key(pod))
        return ref

    def remove(self, pod: Pod) -> OwnerReference | None:
        ref = self._ref(pod)
        if ref is not None:
            keys = self._by_owner.get(ref.uid)
            if keys is not None:
                keys.discard(_key(pod))
                if not keys:
                    del self._by_owner[ref.uid]
        return ref

    def update(self, old: Pod, new: Pod) -> list[OwnerReference]:
        """Re-index after an update; the owners to sync (old and new, when they differ)."""
        old_ref = self.remove(old)
        new_ref = self.add(new)
        refs = [r for r in (old_ref, new_ref) if r is not None]
        if len(refs) == 2 and refs[0].uid == refs[1].uid:
            refs = refs[1:]
        return refs

    def keys(self, owner_uid: str) -> list[PodKey]:
        """The owner's pod keys, sorted."""
        return sorted(self._by_owner.get(owner_uid, ()))

    def count(self, owner_uid: str) -> int:
        return len(self._by_owner.get(owner_uid, ()))

    def forget(self, owner_uid: str) -> None:
        self._by_owner.pop(owner_uid, None)
