"""Watch streams: a store ``Watcher`` written as chunked JSON lines (upstream ``watch.go``).

Owns the framing of watch events (``{"type":...,"object":...}\\n``, Table-wrapped when the
client asked for Tables, with column definitions only in the first event), the in-band
``ERROR`` events (410 ``Expired`` for a too-old resourceVersion or for a watcher dropped
because its buffer overflowed), the ``k8s.io/initial-events-end`` bookmark of
``sendInitialEvents``, and the pump that moves batches from the watcher's channel to the
socket. It does not own opening the watch (the server) nor the routing of writes to
watchers (``emulator.base.apiserver.watch``).

The pump writes one chunk per batch: every event queued while the previous write was in
flight goes out together, and each write is flushed, so a quiet stream still sees each
event at once. A client that reads too slowly makes writes wait; the store keeps queueing
into the bounded channel meanwhile, never waiting, and the channel overflows — then the
client gets what was queued, then the 410 ``ERROR``, and the stream ends. Nothing here ever
blocks a writer or another watcher.

======================  =========================================================
the channel gives       the stream
======================  =========================================================
a batch of events       one chunk: each event framed, BOOKMARKs only if asked for
``Overflow``            ``ERROR`` 410 Expired, then the end
``ChannelClosed``       the end (``stop_watch``: timeout, disconnect, shutdown)
a batch fails to frame  ``ERROR`` 500 InternalError (and logged), then the end
======================  =========================================================
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from emulator.base.api.errors import ApiError, Gone, InternalError
from emulator.base.apiserver.watcher import WatchEvent
from emulator.base.http import tables
from emulator.base.http.codec import encode, encode_object
from emulator.base.http.extras import UnmodelledFields
from emulator.base.http.resources import Resource
from emulator.base.http.status import error_status
from emulator.base.runtime.channel import ChannelClosed, Overflow

__all__ = ["EncodedObjects", "EventWriter", "error_line", "failure_line", "overflow_line"]

log = logging.getLogger(__name__)

INITIAL_EVENTS_END: Final = "k8s.io/initial-events-end"


def error_line(err: ApiError) -> bytes:
    """An in-band ``ERROR`` event carrying the Status of ``err``."""
    return b'{"type":"ERROR","object":' + encode(error_status(err)) + b"}\n"


def failure_line(exc: BaseException) -> bytes:
    """The ``ERROR`` a stream ends with when framing an event failed after the response
    started: a 500 Status in-band (a second status line inside the chunked body would
    corrupt the stream)."""
    return error_line(InternalError(f"an error on the server ({exc!r}) has prevented the request"))


def overflow_line(revision: int) -> bytes:
    """The ``ERROR`` a dropped (overflowed) watcher gets: its informer must relist."""
    return error_line(Gone(f"too old resource version: {revision} ({revision + 1})"))


class EncodedObjects:
    """The JSON of recently written objects, by identity, shared by every stream: the hub
    hands the same frozen object to every watcher of a write, so twenty watchers of all pods
    encode each write once. An entry keeps its object alive, so an id is never reused while
    cached. Bounded by count (``size`` per table) and by the encoded bytes of both tables
    together (``max_bytes``), least recently used first out; an encoding larger than a
    quarter of the byte bound is served uncached."""

    __slots__ = ("_items", "_tables", "bytes", "hits", "max_bytes", "size")

    def __init__(self, size: int = 4096, max_bytes: int = 64 << 20) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self._items: OrderedDict[int, tuple[Any, bytes, int]] = OrderedDict()
        self._tables: OrderedDict[tuple[Any, ...], tuple[Any, bytes]] = OrderedDict()
        self.bytes = 0
        """The encoded bytes held by both tables."""
        self.hits = 0

    def __repr__(self) -> str:
        n = len(self._items) + len(self._tables)
        return f"<EncodedObjects {n}/{self.size} {self.bytes}/{self.max_bytes}B hits={self.hits}>"

    def _fits(self, data: bytes) -> bool:
        return len(data) * 4 <= self.max_bytes

    def _evict(self) -> None:
        while self.bytes > self.max_bytes and (self._items or self._tables):
            # Encoded objects first: a table row is small and its object is often cached too.
            table: OrderedDict[Any, Any] = self._items if self._items else self._tables
            _, entry = table.popitem(last=False)
            self.bytes -= len(entry[1])

    def get(self, obj: Any, extras: UnmodelledFields | None = None) -> bytes:
        """``obj``'s JSON (with its unmodelled fields from ``extras``, whose generation the
        entry must match)."""
        generation = -1 if extras is None else extras.generation
        key = id(obj)
        hit = self._items.get(key)
        if hit is not None and hit[0] is obj and hit[2] == generation:
            self.hits += 1
            self._items.move_to_end(key)
            return hit[1]
        data = encode_object(obj, extras=extras)
        if hit is not None:
            del self._items[key]
            self.bytes -= len(hit[1])
        if not self._fits(data):
            return data
        if len(self._items) >= self.size:
            _, old = self._items.popitem(last=False)
            self.bytes -= len(old[1])
        self._items[key] = (obj, data, generation)
        self.bytes += len(data)
        self._evict()
        return data

    def table(self, obj: Any, key: tuple[Any, ...], build: Callable[[], bytes]) -> bytes:
        """The one-row Table of ``obj`` for ``key`` (what else shapes it: includeObject,
        headers, the second its ages are counted to, the extras' generation), built once for
        every stream that asks for the same."""
        hit = self._tables.get(key)
        if hit is not None and hit[0] is obj:
            self.hits += 1
            self._tables.move_to_end(key)
            return hit[1]
        data = build()
        if hit is not None:
            del self._tables[key]
            self.bytes -= len(hit[1])
        if not self._fits(data):
            return data
        if len(self._tables) >= self.size:
            _, old = self._tables.popitem(last=False)
            self.bytes -= len(old[1])
        self._tables[key] = (obj, data)
        self.bytes += len(data)
        self._evict()
        return data


@dataclass
class EventWriter:
    """Frames a watcher's events for one stream (its state: headers sent, initial events
    left before the initial-events-end bookmark, the last revision written)."""

    resource: Resource
    as_table: bool = False
    include_object: str = "Metadata"
    now: Callable[[], float] = field(default=lambda: 0.0)
    managed: Callable[[str], list[dict[str, Any]]] = field(default=lambda uid: [])
    cache: EncodedObjects | None = None
    extras: UnmodelledFields | None = None
    initial_left: int = -1
    """Initial ADDED events still to come before the end bookmark; -1: no such bookmark."""
    start_revision: int = 0
    last_revision: int = 0
    _headers_sent: bool = False

    def _object(self, obj: Any) -> bytes:
        if not self.as_table:
            managed = self.managed(obj.metadata.uid)
            extras = self.extras if self.extras is not None and self.extras.wants(obj) else None
            if not managed and self.cache is not None:
                return self.cache.get(obj, extras)
            return encode_object(obj, managed, extras=extras)
        now = self.now()
        headers = not self._headers_sent
        self._headers_sent = True

        def build() -> bytes:
            t = tables.table(
                self.resource,
                [obj],
                now=now,
                include_object=self.include_object,
                resource_version=obj.metadata.resource_version,
                headers=headers,
            )
            if self.extras is not None and self.include_object == "Object":
                self.extras.merge_table(t)
            return encode(t)

        if self.cache is None or self.managed(obj.metadata.uid):
            return build()
        generation = -1 if self.extras is None else self.extras.generation
        return self.cache.table(obj, (id(obj), self.include_object, headers, int(now), generation), build)

    def bookmark(self, revision: int, *, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(revision)}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        obj = {"kind": self.resource.kind, "apiVersion": self.resource.group_version, "metadata": meta}
        return b'{"type":"BOOKMARK","object":' + encode(obj) + b"}\n"

    def initial_end(self) -> bytes:
        """The end-of-initial-events bookmark, if it is due now (no initial events left)."""
        if self.initial_left == 0:
            self.initial_left = -1
            return self.bookmark(self.start_revision, initial_end=True)
        return b""

    def frame(self, batch: list[WatchEvent]) -> bytes:
        out: list[bytes] = []
        for ev in batch:
            if ev.type == "BOOKMARK":
                if self.initial_left < 0:
                    out.append(self.bookmark(ev.revision))
                continue
            self.last_revision = ev.revision
            out.append(b'{"type":"' + ev.type.encode() + b'","object":' + self._object(ev.object) + b"}\n")
            if self.initial_left > 0:
                self.initial_left -= 1
                if self.initial_left == 0:
                    out.append(self.initial_end())
        return b"".join(out)


async def pump(
    get_batch: Callable[[], Any],
    write: Callable[[bytes], Any],
    writer: EventWriter,
) -> None:
    """Move batches from ``get_batch`` (a channel's) to ``write`` until the channel ends."""
    first = writer.initial_end()
    if first:
        await write(first)
    while True:
        try:
            batch = await get_batch()
        except Overflow:
            await write(overflow_line(writer.last_revision))
            return
        except ChannelClosed:
            return
        try:
            data = writer.frame(batch)
        except Exception as exc:  # any failure ends this stream, in-band
            log.exception("watch of %s failed", writer.resource.name)
            await write(failure_line(exc))
            return
        if data:
            await write(data)
