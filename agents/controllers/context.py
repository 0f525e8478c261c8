"""What kube-controller-manager gives each of its workload controllers: the clock, a
client per controller, shared informers, and an Event recorder.

``SharedInformers`` is upstream's ``SharedInformerFactory``: one informer per kind for every
controller, watching through one client, ``controller:shared-informers`` (upstream's
``shared-informers`` user agent). Two differences, both for cost:

- an informer starts on first use, not for every kind up front, so a run with no workloads
  never opens the full pod watch (that watch would cost as much as the scheduler's own in a
  150,000-pod run). Controllers ask for the pod informer once they see their first object;
- ``handlers`` replays the objects already in the store as adds to a handler registered
  late, as upstream's ``AddEventHandler`` does, so a controller that starts watching pods
  after they were listed sees them all.

``ControllerContext.client(name)`` makes the client ``controller:<name>`` through which a
controller writes (its writes appear under that agent in the trace). This module does not
decide which controllers run (``manager``) or what they do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.client.indexer import IndexFunc
from emulator.base.client.informer import Informer
from emulator.base.runtime.clock import Clock

__all__ = ["SHARED_INFORMERS", "ControllerContext", "SharedInformers"]

SHARED_INFORMERS = "controller:shared-informers"


class SharedInformers:
    """One lazily started informer per kind, shared by every controller."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._informers: dict[str, Informer] = {}
        self._tg: asyncio.TaskGroup | None = None
        self._on_start: dict[str, list[Callable[[], None]]] = {}

    def __repr__(self) -> str:
        return f"<SharedInformers {sorted(self._informers)}>"

    def start(self, tg: asyncio.TaskGroup) -> None:
        self._tg = tg

    def started(self, kind: str) -> bool:
        return kind in self._informers

    def when_started(self, kind: str, callback: Callable[[], None]) -> None:
        """Call ``callback`` once ``kind``'s informer is started (now if it is): a controller
        that follows a kind only when some other controller already pays for its watch."""
        if kind in self._informers:
            callback()
        else:
            self._on_start.setdefault(kind, []).append(callback)

    def informer(self, kind: str) -> Informer:
        """The informer of ``kind``, started (in the task group given to ``start``) if new."""
        informer = self._informers.get(kind)
        if informer is None:
            assert self._tg is not None, "SharedInformers.start() first"
            informer = Informer(self.client, kind)
            self._informers[kind] = informer
            self._tg.create_task(informer.run(), name=f"{self.client.name}:{kind}")
            for callback in self._on_start.pop(kind, []):
                callback()
        return informer

    def handlers(
        self,
        kind: str,
        on_add: Callable[[Any], None] | None = None,
        on_update: Callable[[Any, Any], None] | None = None,
        on_delete: Callable[[Any], None] | None = None,
        *,
        indexers: Mapping[str, IndexFunc] | None = None,
    ) -> Informer:
        """Register handlers on ``kind``'s informer; objects already cached are replayed
        to ``on_add`` now, in namespace/name order. ``indexers`` are added first (kept if
        already there), so the replayed objects are found in them."""
        informer = self.informer(kind)
        if indexers:
            informer.add_indexers(indexers)
        informer.add_handlers(on_add, on_update, on_delete)
        if on_add is not None:
            for key in sorted(informer.store):
                on_add(informer.store[key])
        return informer


@dataclass(slots=True)
class ControllerContext:
    """The controller manager as one controller sees it."""

    clock: Clock
    new_client: Callable[[str], Client]
    informers: SharedInformers
    clients: dict[str, Client] = field(default_factory=dict)

    def client(self, name: str) -> Client:
        """The client ``controller:<name>`` (one per controller; made once)."""
        c = self.clients.get(name)
        if c is None:
            c = self.clients[name] = self.new_client(f"controller:{name}")
        return c

    def recorder(self, name: str, component: str) -> EventRecorder:
        """An Event recorder writing through ``controller:<name>`` as ``component``
        (upstream's source component, e.g. ``replicaset-controller``).

        Named by the API server (``generateName: <object>.``), not by the clock as the
        legacy recorder names them: a controller records several Events about one object
        in one instant of virtual time (one per pod it creates), and clock names collide."""
        return EventRecorder(self.client(name), self.clock, component, naming="generated")
