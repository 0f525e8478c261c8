"""The storage objects the scheduler's volume plugins read (upstream's shared informers for
``PersistentVolume``, ``PersistentVolumeClaim``, ``StorageClass``, ``CSINode``, ``CSIDriver``
and ``CSIStorageCapacity``), and the cluster events they raise (upstream
``eventhandlers.go``'s ``addAllEventHandlers`` for those kinds: Add, Update, Delete of each
resource becomes ``ClusterEvent(<resource>, <action>)`` handed to the queue).

What this module owns: ``VolumeListers`` — one informer per kind in ``KINDS`` (listing and
watching through their own client, as ``workload_listers`` does, so that a run's existing
traces do not move), getters by name, and ``changed`` — a ``Notifier`` the binder's PreBind
waits on (woken by every event of these kinds, never polled). With no such object in the
cluster they cost one empty list and an idle watch each, and no event is ever raised.

It does not own the plugins' logic (``plugins/volumebinding``, ``volumezone``,
``volumerestrictions``, ``nodevolumelimits``) nor the assumed objects of the binder
(``plugins/volumebinding/assume_cache.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any, Final

from agents.scheduler.framework.types import ActionType, ClusterEvent, EventResource
from agents.scheduler.informer_group import InformerGroup
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer

__all__ = ["KINDS", "Notifier", "VolumeListers", "static_volume_listers"]

KINDS: Final = (
    ("PersistentVolume", EventResource.PersistentVolume),
    ("PersistentVolumeClaim", EventResource.PersistentVolumeClaim),
    ("StorageClass", EventResource.StorageClass),
    ("CSINode", EventResource.CSINode),
    ("CSIDriver", EventResource.CSIDriver),
    ("CSIStorageCapacity", EventResource.CSIStorageCapacity),
)

EventSink = Callable[[ClusterEvent, Any, Any], None]


class Notifier:
    """Wakes every waiter at the next event of the storage kinds (a one-shot generation)."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None

    def notify(self) -> None:
        if self._event is not None:
            self._event.set()
            self._event = None

    def wait(self) -> asyncio.Event:
        """The event the next notification sets (await its ``wait()``)."""
        if self._event is None:
            self._event = asyncio.Event()
        return self._event


class VolumeListers(InformerGroup):
    """The scheduler's informers of the storage kinds and what plugins read from them."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.informers = {kind: Informer(client, kind) for kind, _ in KINDS}
        self.changed = Notifier()
        self._sink: EventSink | None = None
        for kind, resource in KINDS:
            self.informers[kind].add_handlers(*self._handlers(resource))

    def __repr__(self) -> str:
        sizes = " ".join(f"{k}={len(i.store)}" for k, i in self.informers.items())
        return f"<VolumeListers {sizes}>"

    def set_sink(self, sink: EventSink) -> None:
        """Where cluster events go (the scheduling queue's ``move_all_to_active_or_backoff``)."""
        self._sink = sink

    def _emit(self, event: ClusterEvent, old: Any, new: Any) -> None:
        self.changed.notify()
        if self._sink is not None:
            self._sink(event, old, new)

    def _handlers(
        self, resource: EventResource
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None], Callable[[Any], None]]:
        add = ClusterEvent(resource, ActionType.Add)
        update = ClusterEvent(resource, ActionType.Update)
        delete = ClusterEvent(resource, ActionType.Delete)

        def on_add(obj: Any) -> None:
            self._emit(add, None, obj)

        def on_update(old: Any, new: Any) -> None:
            if old.metadata.resource_version != new.metadata.resource_version:
                self._emit(update, old, new)

        def on_delete(obj: Any) -> None:
            self._emit(delete, obj, None)

        return on_add, on_update, on_delete

    # --- listers ------------------------------------------------------------------------

    def pvc(self, namespace: str, name: str) -> Any | None:
        return self.informers["PersistentVolumeClaim"].get(name, namespace)

    def pv(self, name: str) -> Any | None:
        return self.informers["PersistentVolume"].get(name)

    def pvs(self) -> list[Any]:
        """Every PersistentVolume, by name."""
        store = self.informers["PersistentVolume"].store
        return [store[k] for k in sorted(store)]

    def storage_class(self, name: str) -> Any | None:
        return self.informers["StorageClass"].get(name)

    def csi_node(self, name: str) -> Any | None:
        return self.informers["CSINode"].get(name)

    def csi_driver(self, name: str) -> Any | None:
        return self.informers["CSIDriver"].get(name)

    def capacities(self) -> list[Any]:
        """Every CSIStorageCapacity, by namespace/name."""
        store = self.informers["CSIStorageCapacity"].store
        return [store[k] for k in sorted(store)]


def static_volume_listers(objects: Iterable[Any]) -> VolumeListers:
    """``VolumeListers`` over fixed objects (``explain``): the storage kinds among ``objects``
    in the informer stores, nothing run."""
    listers = VolumeListers(None)  # type: ignore[arg-type]  # never listed nor watched
    for obj in objects:
        informer = listers.informers.get(obj.kind)
        if informer is not None:
            informer.store[(obj.metadata.namespace, obj.metadata.name)] = obj
    return listers
