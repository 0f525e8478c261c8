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

Repeats (``aggregate=True``): a second Event with the same involved UID, reason and
message bumps ``count`` and ``lastTimestamp`` of the first (a get, then an update) instead
of adding an object, as the legacy ``EventCorrelator`` does. Its successor, the events/v1
``series`` (``series.count``, ``series.lastObservedTime``), is not modelled yet;
``_repeat`` is the one place it will grow.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Final, Literal

from msgspec.structs import replace

from emulator.api.core import Event, EventSource
from emulator.api.errors import ApiError
from emulator.api.meta import ObjectMeta, ObjectReference
from emulator.client.client import Client
from emulator.runtime.clock import EPOCH, Clock

__all__ = ["EVENT_TYPES", "NOTE_LENGTH_LIMIT", "EventNaming", "EventRecorder"]

NOTE_LENGTH_LIMIT: Final = 1024
"""Upstream's ``NoteLengthLimit``: the longest message an Event may carry."""

EVENT_TYPES: Final = ("Normal", "Warning")

EventNaming = Literal["clock", "random", "generated"]

_EPOCH_NS: Final = int(EPOCH.timestamp()) * 10**9


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
        self.recorded = 0
        self.repeats = 0
        self.failed = 0

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
            self.failed += 1
            if self._on_error is not None:
                self._on_error(err)

    async def _repeat(self, key: tuple[str, str, str], seen: tuple[str, int], namespace: str, now: str) -> None:
        """The same Event again: one more on the first one's ``count``."""
        name, count = seen
        self._seen[key] = (name, count + 1)
        current: Event = await self._client.get("Event", name, namespace)
        await self._client.update(replace(current, count=count + 1, last_timestamp=now))
        self.repeats += 1

    def _metadata(self, name: str, namespace: str) -> ObjectMeta:
        if self._naming == "generated":
            return ObjectMeta(generate_name=f"{name}.", namespace=namespace)
        if self._naming == "random":
            assert self._rng is not None
            return ObjectMeta(name=f"{name}.{self._rng.getrandbits(64):016x}", namespace=namespace)
        return ObjectMeta(name=f"{name}.{_EPOCH_NS + round(self._clock.now() * 1e9):x}", namespace=namespace)
