"""``Informer``: list, then watch from the listed revision, keep a local store, call
handlers; relist when the watch ends with Gone or an overflow.

Handlers are plain synchronous callables (``on_add(obj)``, ``on_update(old, new)``,
``on_delete(obj)``): the agents' pure logic runs inside them, the informer only moves
data. They are called in the order of the watch events, one batch at a time.

State machine of ``run``:

==========  ==================================  ====================================
state       on                                  next
==========  ==================================  ====================================
listing     list returns (items, revision)      replace store (diff → handlers), watching
watching    batch of events                     apply each (store + handler), watching
watching    BOOKMARK                            remember its revision, watching
watching    watch closed normally (stream cut)  re-watch from last revision, watching
watching    Overflow / Gone on re-watch         listing (relist)
any         other ApiError on list / watch      back off (0.8 s doubling to 30 s), listing
==========  ==================================  ====================================

BOOKMARKs come lazily (``Channel.put_lazy``): one does not wake the informer by itself, it is
taken with the next batch or before the stream's end, and ``revision`` counts a bookmark
waiting so from the moment it is sent, as if it had been taken at once (1,000 kubelets' two
informers each are not woken every minute for nothing else). With a watch delay that has
jitter (a random draw per event) they come eagerly, as before.

Delivery in place. Where the stream hands the channel's batches over as they are
(``WatchStream.direct``: no watch latency, no watch faults, nothing pending), an informer
waiting for its next batch is not woken: once the write is complete (stored, recorded, its
listeners called) the API server hands the queued batch to ``_deliver``
(``ApiServer.deliver_in_place``, ``WatchHub.settle``, ``Channel.settle``), which applies it
there, in the writer's code, exactly as ``run`` would once woken, so an event costs no
wake-up and no task switch. Handlers are synchronous, so they cannot tell; they
may wake other tasks. The events of one informer are applied in revision order and never
re-entered: what its handlers cause to be written meanwhile is queued and handed to
``_deliver`` after. A handler that raises does not raise into the writer: the exception is kept,
the stream closed, and ``run`` raises it from the informer's own task, as if it had been
raised there. With a watch latency or watch faults, every batch goes through ``next_batch``
and a wake-up, as before. ``Informer.deliver_in_place = False`` turns it off (the tests'
oracle: a wake-up per batch).

``synced`` is set once the first list has been applied (readiness by handshake: agents
wait on it instead of sleeping).

Indexes (client-go's ``AddIndexers``/``ByIndex``, kept by ``indexer.Indices``): every change
of the store, by a watch event or a relist, re-files the object before any handler runs.
Indexers may be added while the informer runs (client-go allows it only before ``Run``;
here the index is built from the store at once, so a controller that starts late still
finds every object).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from emulator.base.api.errors import ApiError, Gone
from emulator.base.apiserver.watcher import WatchEvent
from emulator.base.client.client import Client
from emulator.base.client.indexer import IndexFunc, Indices
from emulator.base.client.watchstream import WatchStream
from emulator.base.runtime.channel import ChannelClosed, Overflow

__all__ = ["Handler", "Informer"]

Key = tuple[str, str]
Handler = Callable[..., None]


def _key(obj: Any) -> Key:
    return (obj.metadata.namespace, obj.metadata.name)


class Informer:
    """A cached, handler-driven view of one kind (optionally filtered)."""

    deliver_in_place = True
    """Events of a direct stream are applied by the writer's code, without a wake-up (see the
    module docstring); False: every batch wakes ``run`` (the tests' oracle)."""

    def __init__(
        self,
        client: Client,
        kind: str,
        *,
        namespace: str | None = None,
        label_match: Callable[[Mapping[str, str]], bool] | None = None,
        fields: Mapping[str, str] | None = None,
        standing_aware: bool = False,
    ) -> None:
        self.client = client
        self.standing_aware = standing_aware
        """Its owner reads the server's standing Lease renewals itself (``ApiServer.watch``)."""
        self.kind = kind
        self.namespace = namespace
        self.label_match = label_match
        self.fields = dict(fields or {})
        self.store: dict[Key, Any] = {}
        self.synced = asyncio.Event()
        self._revision = 0
        self.relists = 0
        self.errors = 0
        self._on_add: list[Callable[[Any], None]] = []
        self._on_update: list[Callable[[Any, Any], None]] = []
        self._on_delete: list[Callable[[Any], None]] = []
        self._add_one: Callable[[Any], None] | None = None
        self._update_one: Callable[[Any, Any], None] | None = None
        """The handler when there is exactly one (an agent's informer has one of each): ``_deliver``
        calls it without iterating the list; None: iterate the list (none, or several)."""
        self._stream: WatchStream | None = None
        self._indices = Indices()
        self._failure: BaseException | None = None
        """A handler's exception (any, a ``CancelledError`` too) raised while applying in
        place, for ``run`` to raise."""

    def __repr__(self) -> str:
        return (
            f"<Informer {self.client.name}/{self.kind} objects={len(self.store)} "
            f"rev={self.revision} relists={self.relists}>"
        )

    @property
    def revision(self) -> int:
        """The revision the informer has seen: its last event's or bookmark's (one waiting
        lazily included), or its last list's."""
        stream = self._stream
        if stream is not None:
            mark = stream.watcher.channel.lazy
            if mark is not None and mark.revision > self._revision:
                return mark.revision
        return self._revision

    @revision.setter
    def revision(self, value: int) -> None:
        self._revision = value

    def add_handlers(
        self,
        on_add: Callable[[Any], None] | None = None,
        on_update: Callable[[Any, Any], None] | None = None,
        on_delete: Callable[[Any], None] | None = None,
    ) -> None:
        if on_add:
            self._on_add.append(on_add)
        if on_update:
            self._on_update.append(on_update)
        if on_delete:
            self._on_delete.append(on_delete)
        self._add_one = self._on_add[0] if len(self._on_add) == 1 else None
        self._update_one = self._on_update[0] if len(self._on_update) == 1 else None

    def get(self, name: str, namespace: str = "") -> Any | None:
        return self.store.get((namespace, name))

    def objects(self) -> list[Any]:
        """Every object in the local store."""
        return list(self.store.values())

    # --- indexes (client-go's Indexer) --------------------------------------------------

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes (name → index function), built at once from the store; a name already
        added with the same function is kept, with another one is a ``ValueError``."""
        self._indices.add(indexers, self.store.items())

    def index_keys(self, name: str, value: str) -> list[Key]:
        """Keys of the objects index ``name`` files under ``value``, by (namespace, name)."""
        return self._indices.keys(name, value)

    def by_index(self, name: str, value: str) -> list[Any]:
        """The objects index ``name`` files under ``value``, by (namespace, name)."""
        store = self.store
        return [store[k] for k in self._indices.keys(name, value)]

    def index_values(self, name: str) -> list[str]:
        """The values index ``name`` files objects under, sorted."""
        return self._indices.values(name)

    # --- applying changes ---------------------------------------------------------------

    def _upsert(self, obj: Any) -> None:
        key = _key(obj)
        old = self.store.get(key)
        self.store[key] = obj
        if self._indices:
            self._indices.update(key, old, obj)
        if old is None:
            for fn in self._on_add:
                fn(obj)
        else:
            for fu in self._on_update:
                fu(old, obj)

    def _deleted(self, obj: Any) -> None:
        key = _key(obj)
        old = self.store.pop(key, None)
        if old is not None:
            if self._indices:
                self._indices.update(key, old, None)
            for fn in self._on_delete:
                fn(obj)

    def _apply(self, batch: list[WatchEvent]) -> None:
        """Apply a batch of watch events: ``_upsert`` and ``_deleted`` per event, ``_upsert``
        inlined (every event of every informer goes through here); the plain loop is the
        oracle of ``tests/client/test_informer_apply.py``."""
        store = self.store
        indices = self._indices
        indexed = indices.funcs
        on_add = self._on_add
        on_update = self._on_update
        for ev in batch:
            etype = ev.type
            if etype == "MODIFIED" or etype == "ADDED":
                obj = ev.object
                meta = obj.metadata
                key = (meta.namespace, meta.name)
                old = store.get(key)
                store[key] = obj
                if indexed:
                    indices.update(key, old, obj)
                if old is None:
                    for fn in on_add:
                        fn(obj)
                else:
                    for fu in on_update:
                        fu(old, obj)
            elif etype == "DELETED":
                self._deleted(ev.object)
            self._revision = ev.revision

    def _replace(self, items: list[Any], revision: int) -> None:
        """Upstream ``Replace``: deletes for vanished objects, then adds/updates."""
        fresh = {_key(o): o for o in items}
        for key in [k for k in self.store if k not in fresh]:
            self._deleted(self.store[key])
        for key, obj in fresh.items():
            old = self.store.get(key)
            if old is None or old.metadata.resource_version != obj.metadata.resource_version:
                self._upsert(obj)
        self._revision = revision

    # --- the loop -----------------------------------------------------------------------

    async def _list(self) -> None:
        items, rev = await self.client.list(
            self.kind, namespace=self.namespace, label_match=self.label_match, fields=self.fields
        )
        self._replace(items, rev)

    def _open(self) -> WatchStream:
        stream = self.client.watch(
            self.kind,
            namespace=self.namespace,
            label_match=self.label_match,
            fields=self.fields,
            resource_version=self._revision,
            allow_bookmarks=True,
            lazy_bookmarks=True,
            standing_aware=self.standing_aware,
        )
        if self.deliver_in_place and stream.direct():
            self.client.server.deliver_in_place(stream.watcher, self._deliver)
        return stream

    def _deliver(self, batch: list[WatchEvent]) -> bool:
        """What ``run`` does once woken, done in the writer's code: apply ``batch`` (False,
        nothing done, where ``next_batch`` would not hand it straight over: ``WatchStream.direct``,
        read here from the client's flag and the stream's pending events). A handler's
        exception, a ``BaseException`` too (the writer's write is complete: it must neither
        see it nor have the batch put back and applied again), is kept for ``run`` and the
        stream closed, so that the informer's task wakes to raise it.

        ``_apply``'s loop is written out here (ten events a churn pod come this way, mostly
        one a batch): the same store, indexes, handler calls and revision;
        ``tests/client/test_informer_in_place.py`` compares in-place delivery with ``run``'s."""
        stream = self._stream
        if stream is None or not self.client.watch_direct or stream.pending:
            return False
        try:
            store = self.store
            indices = self._indices
            indexed = indices.funcs
            for ev in batch:
                etype = ev.type
                if etype == "MODIFIED" or etype == "ADDED":
                    obj = ev.object
                    meta = obj.metadata
                    key = (meta.namespace, meta.name)
                    old = store.get(key)
                    store[key] = obj
                    if indexed:
                        indices.update(key, old, obj)
                    if old is not None:
                        update = self._update_one
                        if update is not None:
                            update(old, obj)
                        else:
                            for fu in self._on_update:
                                fu(old, obj)
                    else:
                        add = self._add_one
                        if add is not None:
                            add(obj)
                        else:
                            for fn in self._on_add:
                                fn(obj)
                elif etype == "DELETED":
                    self._deleted(ev.object)
                self._revision = ev.revision
        except BaseException as exc:  # raised from ``run``, not into the writer
            self._failure = exc
            stream.watcher.channel.close()
        return True

    async def run(self) -> None:
        """List and watch until cancelled; API errors are retried with backoff (as client-go's
        reflector: 800 ms doubling up to 30 s), never fatal."""
        need_list = True
        failures = 0
        try:
            while True:
                try:
                    if need_list:
                        await self._list()
                        self.synced.set()
                        need_list = False
                    self._stream = self._open()
                    failures = 0
                except Gone:
                    self.relists += 1
                    need_list = True
                    continue
                except ApiError:
                    self.errors += 1
                    failures += 1
                    need_list = True
                    # the exponent capped: past 2**6 the wait is the 30 s cap anyway, and a
                    # kind that is never served must not overflow the float after 1,000 tries
                    await self.client.clock.sleep(min(0.8 * 2 ** min(failures - 1, 6), 30.0))
                    continue
                try:
                    while True:
                        batch = await self._stream.next_batch()
                        if self._failure is not None:
                            break
                        self._apply(batch)
                except Overflow:
                    self.relists += 1
                    need_list = True
                except ChannelClosed:
                    pass  # stream cut: resume from the last revision seen
                finally:
                    self._stream.close()
                    self._stream = None
                failure, self._failure = self._failure, None
                if failure is not None:
                    raise failure  # a handler's, applied in place: raised from this task
        finally:
            if self._stream is not None:
                self._stream.close()

    def cut(self) -> None:
        """Fault injection: end the current watch stream (the informer resumes or relists)."""
        if self._stream is not None:
            self._stream.watcher.channel.close()
