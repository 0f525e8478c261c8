"""``EventRecorder``: how a component writes core/v1 Events about the objects it acts on.

This module owns the shape of an Event (involved object, reason, type, message, action,
source, reporting controller and instance, timestamps), its name and namespace, the note length
limit, and the repeat handling; one recorder per component (or per kubelet). It does not
decide *when* an Event is due or what it says: callers do. Recording is best effort, as
upstream's recorders are: a failed write is handed to ``on_error`` (or dropped), never
raised.

Names, as each component has always written them (``naming``):

============  =========================================================================
naming        ``metadata``
============  =========================================================================
"clock"       ``name: <object>.<hex of the clock time in Unix nanoseconds>`` (the
              legacy ``record`` package's ``fmt.Sprintf("%v.%x", name, t.UnixNano())``)
"random"      ``name: <object>.<16 hex digits>`` from the recorder's seeded rng
"generated"   ``generateName: <object>.``: the API server picks the suffix
============  =========================================================================

The namespace is the involved object's, ``default`` for a cluster-scoped object. A message
longer than ``NOTE_LENGTH_LIMIT`` is cut to it, ending in `` ...`` (upstream's events/v1
recorder does the same before the API server's validation refuses longer notes).

Modes (``mode``):

``legacy`` (``k8s.io/client-go/tools/record``; the kubelet and the controllers): ``source``,
``firstTimestamp``/``lastTimestamp``. With ``aggregate=True`` a second Event with the same
involved UID, reason and message bumps ``count`` and ``lastTimestamp`` of the first (a get,
then an update) instead of adding an object, as the legacy ``EventCorrelator`` does; like
its LRU cache, the recorder remembers the last ``LRU_CACHE_ENTRIES`` (4,096) such Events.

``series`` (``k8s.io/client-go/tools/events``, the events/v1 recorder the scheduler uses):
``eventTime`` instead of the legacy timestamps, and repeats folded by an *isomorphic key*
(type, action, reason, reporting controller and instance, regarding object: not the note, so
a repeat keeps the first Event's message, as upstream). The recorder's cache drives the writes:

=====================================  ================================================
what happens                           write
=====================================  ================================================
first Event of a key                   create (series unset)
second                                 ``series: {count: 2, lastObservedTime}`` (an
                                       update; a create if the Event is gone)
third and later                        none: the cached series counts them
every ``REFRESH_TIME`` (30 min)        each cached series is written (its count now),
                                       so it outlives the API server's event TTL
every ``FINISH_TIME`` (6 min)          a series not seen for 6 min: final write, then
                                       dropped from the cache; a singleton older than
                                       6 min: dropped (its next repeat starts afresh)
=====================================  ================================================

The two periodic passes run in ``run()`` (one task per recorder, on the injected clock),
finish before refresh when both fall due at once; without ``run()`` only the first two rows
apply. They also bound the cache by time, as upstream's (which has no size limit): a key not
seen for 6 minutes is gone by the next pass, so the cache holds the keys of the last 12
minutes at most.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final, Literal

from msgspec.structs import replace

from emulator.base.api.core import Event, EventSeries, EventSource
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.client.client import Client
from emulator.base.runtime.clock import Clock, calendar_epoch, format_timestamp

__all__ = [
    "EVENT_TYPES",
    "FINISH_TIME",
    "LRU_CACHE_ENTRIES",
    "NOTE_LENGTH_LIMIT",
    "REFRESH_TIME",
    "EventMode",
    "EventNaming",
    "EventRecorder",
    "micro_time",
]

NOTE_LENGTH_LIMIT: Final = 1024
"""Upstream's ``NoteLengthLimit``: the longest message an Event may carry."""

EVENT_TYPES: Final = ("Normal", "Warning")

LRU_CACHE_ENTRIES: Final = 4096
"""Upstream ``maxLruCacheEntries``: the legacy correlator remembers this many Events to
aggregate (least recently used forgotten first; a forgotten one's repeat is a new Event)."""

EventNaming = Literal["clock", "random", "generated"]
EventMode = Literal["legacy", "series"]

REFRESH_TIME: Final = 30 * 60.0
"""Upstream ``refreshTime``: how often the events/v1 recorder rewrites its cached series."""
FINISH_TIME: Final = 6 * 60.0
"""Upstream ``finishTime``: a series idle this long is finished; a singleton this old is forgotten."""

_IsoKey = tuple[str, str, str, ObjectReference]
"""(type, action, reason, regarding): the reporting controller and instance are the recorder's own."""


def micro_time(t: float) -> str:
    """Clock time ``t`` as a Kubernetes MicroTime, e.g. ``2026-01-01T00:00:07.250000Z``."""
    micros = min(999_999, round((t - math.floor(t)) * 1e6))
    return f"{format_timestamp(t)[:-1]}.{micros:06d}Z"


@dataclass(slots=True)
class _Cached:
    """One isomorphic key's Event as first written, and its series so far (count 1: none)."""

    event: Event
    seen_at: float
    count: int = 1
    last_observed: float = 0.0


class EventRecorder:
    """Writes the Events of one component through its ``client``.

    ``component`` is the reporting controller (``reportingComponent``, and
    ``source.component`` unless ``legacy_source`` is off); ``instance`` the reporting
    instance; ``host`` goes to ``source.host``.
    """

    def __init__(
        self,
        client: Client,
        clock: Clock,
        component: str,
        *,
        instance: str = "",
        host: str = "",
        legacy_source: bool = True,
        naming: EventNaming = "clock",
        rng: random.Random | None = None,
        aggregate: bool = False,
        mode: EventMode = "legacy",
        on_error: Callable[[ApiError], None] | None = None,
    ) -> None:
        if naming == "random" and rng is None:
            raise ValueError('EventRecorder(naming="random") needs the seeded random.Random to draw names from')
        self._client = client
        self._clock = clock
        self.component = component
        self.instance = instance
        self._source = EventSource(component=component, host=host) if legacy_source else EventSource()
        self._naming = naming
        self._rng = rng
        self._aggregate = aggregate
        self._on_error = on_error
        self._seen: dict[tuple[str, str, str], tuple[str, int]] = {}
        self.mode: EventMode = mode
        self._cache: dict[_IsoKey, _Cached] = {}
        self.recorded = 0
        self.repeats = 0
        self.failed = 0
        self._instant = -1
        self._named: dict[tuple[str, str], int] = {}
        """The names given at the current instant: the last nanosecond used for each."""

    def __repr__(self) -> str:
        return (
            f"<EventRecorder {self.component}{'/' + self.instance if self.instance else ''} "
            f"recorded={self.recorded} repeats={self.repeats} failed={self.failed}>"
        )

    async def event(
        self, involved: ObjectReference, type_: str, reason: str, message: str, *, action: str = ""
    ) -> None:
        """Record an Event of ``type_`` (``Normal`` or ``Warning``) about ``involved``;
        ``action`` is what the component did or failed to do (events/v1's ``action``)."""
        if type_ not in EVENT_TYPES:
            raise ValueError(f"Event type must be one of {', '.join(EVENT_TYPES)}, got {type_!r}")
        if len(message) > NOTE_LENGTH_LIMIT:
            message = message[: NOTE_LENGTH_LIMIT - 4] + " ..."
        if self.mode == "series":
            pending = self._series_event(involved, type_, reason, message, action)
            if pending is not None:
                await pending
            return
        now = self._clock.timestamp()
        namespace = involved.namespace or "default"
        key = (involved.uid, reason, message)
        try:
            seen = self._seen.get(key) if self._aggregate else None
            if seen is not None:
                await self._repeat(key, seen, namespace, now)
                return
            metadata = self._metadata(involved.name, namespace)
            if self._aggregate:
                self._seen[key] = (metadata.name, 1)
                if len(self._seen) > LRU_CACHE_ENTRIES:
                    del self._seen[next(iter(self._seen))]
            await self._client.create(
                Event(
                    metadata=metadata,
                    involved_object=involved,
                    reason=reason,
                    message=message,
                    type=type_,
                    source=self._source,
                    first_timestamp=now,
                    last_timestamp=now,
                    reporting_component=self.component,
                    reporting_instance=self.instance,
                    action=action,
                )
            )
            self.recorded += 1
        except ApiError as err:
            self._failed(err)

    async def _repeat(self, key: tuple[str, str, str], seen: tuple[str, int], namespace: str, now: str) -> None:
        """The same Event again: one more on the first one's ``count``."""
        name, count = seen
        del self._seen[key]  # most recently used last
        self._seen[key] = (name, count + 1)
        current: Event = await self._client.get("Event", name, namespace)
        await self._client.update(replace(current, count=count + 1, last_timestamp=now))
        self.repeats += 1

    # --- events/v1 series ---------------------------------------------------------------

    def _series_event(
        self, involved: ObjectReference, type_: str, reason: str, message: str, action: str
    ) -> Coroutine[Any, Any, None] | None:
        """An events/v1 Event: what needs no API call done at once, the write left to await
        (None: nothing left, the first Event of a key created at once when the client's
        calls cannot suspend: ``Client.instant``, the scheduler's ``Scheduled`` Event of every
        pod; ``tests/client/test_events_direct.py`` compares it with the awaited create)."""
        now = self._clock.now()
        key: _IsoKey = (type_, action, reason, involved)
        cached = self._cache.get(key)
        if cached is not None:
            cached.count += 1
            cached.last_observed = now
            self.repeats += 1
            if cached.count == 2:  # the series starts: written now; later repeats wait for a pass
                return self._write_series(cached)
            return None
        event = Event(
            metadata=self._metadata(involved.name, involved.namespace or "default"),
            involved_object=involved,
            reason=reason,
            message=message,
            type=type_,
            source=self._source,
            event_time=micro_time(now),
            reporting_component=self.component,
            reporting_instance=self.instance,
            action=action,
        )
        self._cache[key] = _Cached(event, now)
        client = self._client
        if not client.instant("Event"):
            return self._create(event)
        try:
            client.create_now(event)
            self.recorded += 1
        except ApiError as err:
            self._failed(err)
        return None

    async def _create(self, event: Event) -> None:
        """The first Event of a series key, created through the awaited call."""
        try:
            await self._client.create(event)
            self.recorded += 1
        except ApiError as err:
            self._failed(err)

    async def _write_series(self, cached: _Cached) -> None:
        """Upstream ``recordEvent`` for a series: patch ``series`` onto the Event, or create
        it (series included) when it is gone (the TTL removed it)."""
        series = EventSeries(count=cached.count, last_observed_time=micro_time(cached.last_observed))
        event = cached.event
        try:
            try:
                current: Event = await self._client.get("Event", event.metadata.name, event.metadata.namespace)
            except NotFound:
                await self._client.create(replace(event, series=series))
                return
            await self._client.update(replace(current, series=series))
        except ApiError as err:
            self._failed(err)

    async def finish_series(self) -> None:
        """Upstream ``finishSeries``: write and forget idle series, forget old singletons."""
        horizon = self._clock.now() - FINISH_TIME
        for key, cached in list(self._cache.items()):
            if cached.count > 1:
                if cached.last_observed < horizon:
                    await self._write_series(cached)
                    del self._cache[key]
            elif cached.seen_at < horizon:
                del self._cache[key]

    async def refresh_series(self) -> None:
        """Upstream ``refreshExistingEventSeries``: rewrite every cached series."""
        for cached in list(self._cache.values()):
            if cached.count > 1:
                await self._write_series(cached)

    async def run(self) -> None:
        """The periodic passes of the ``series`` mode, until cancelled (returns at once in
        ``legacy`` mode). Ticks at multiples of ``FINISH_TIME`` / ``REFRESH_TIME`` from the
        start, as upstream's ``wait.Until`` loops."""
        if self.mode != "series":
            return
        start = self._clock.now()
        tick = 0
        refresh_every = round(REFRESH_TIME / FINISH_TIME)
        while True:
            tick += 1
            await self._clock.sleep_until(start + tick * FINISH_TIME)
            await self.finish_series()
            if tick % refresh_every == 0:
                await self.refresh_series()

    def _failed(self, err: ApiError) -> None:
        self.failed += 1
        if self._on_error is not None:
            self._on_error(err)

    def _metadata(self, name: str, namespace: str) -> ObjectMeta:
        if self._naming == "generated":
            return ObjectMeta(generate_name=f"{name}.", namespace=namespace)
        if self._naming == "random":
            assert self._rng is not None
            return ObjectMeta(name=f"{name}.{self._rng.getrandbits(64):016x}", namespace=namespace)
        unix_ns = int(calendar_epoch().timestamp()) * 10**9 + round(self._clock.now() * 1e9)
        # two Events at one virtual instant (a kubelet's Unhealthy then Killing): a nanosecond
        # apart, as they would be on a real clock, rather than one name twice (AlreadyExists)
        if unix_ns != self._instant:
            self._instant = unix_ns
            self._named.clear()
        key = (name, namespace)
        taken = self._named.get(key)
        if taken is not None:
            unix_ns = taken + 1
        self._named[key] = unix_ns
        return ObjectMeta(name=f"{name}.{unix_ns:x}", namespace=namespace)
