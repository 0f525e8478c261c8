"""``WatchStream``: the receiving end of a client's watch, with the client's delivery delay
and watch faults applied (``WatchFaults``, the hook ``emulator.app.scenario.faults.FaultPlan``
implements).

Owns when each event of a watch is handed to its consumer: the seeded delivery delay
(``Client.watch_latency``), the faults' extra delay and the overtaking they allow, the order
that is always kept (one object's events, BOOKMARKs), and the revision an overtaken event is
delivered with. It does not open or route watches (``Client.watch``, the API server's hub)
nor apply the events (``emulator.base.client.informer``).
"""

from __future__ import annotations

import asyncio
import bisect
from typing import TYPE_CHECKING, Protocol

import msgspec

from emulator.base.apiserver.watcher import Watcher, WatchEvent
from emulator.base.runtime.channel import ChannelClosed

if TYPE_CHECKING:
    from emulator.base.client.client import Client

__all__ = ["WatchFaults", "WatchStream"]


class WatchFaults(Protocol):
    """Fault hook of watch delivery (``emulator.app.scenario.faults.FaultPlan`` implements it)."""

    def watch_delay(self, agent: str, kind: str, t: float) -> tuple[float, bool]:
        """(extra delay, may overtake other objects' events) for an event written at ``t``."""
        ...


class WatchStream:
    """The receiving end of a watch, with the client's delivery delay applied.

    ``await next_batch()`` returns the events whose delivery time has come, in order;
    it raises ``ChannelClosed`` (or its subclass ``Overflow``) when the server ended
    the watch. Events are never reordered: a later event is never delivered before an
    earlier one, whatever the jitter.

    With ``Client.watch_faults`` set, each event's delivery time also gets the hook's
    extra delay, and the stream keeps listening while it waits, so that an event may
    overtake earlier events *of other objects* when the hook allows it (``watchReorder``);
    one object's events still arrive in revision order, and a BOOKMARK never overtakes an
    earlier event. When the server ends the stream, every event already queued is still
    delivered before ``ChannelClosed``, so the highest revision delivered is exactly where a
    resumed watch must start; an event delivered after a later one therefore carries that
    highest revision in its ``revision`` (the stream's progress; the object keeps its own
    ``resourceVersion``), and an informer resuming from the last event it saw neither skips
    nor replays one.
    """

    def __init__(self, client: Client, watcher: Watcher) -> None:
        self._client = client
        self.watcher = watcher
        self.pending: list[tuple[float, WatchEvent]] = []
        """Events taken from the channel, waiting for their delivery time (a delayed stream), in order."""
        self._last_due = 0.0
        self._object_due: dict[tuple[str, str], float] = {}
        self._progress = 0
        self._closed: ChannelClosed | None = None

    def close(self) -> None:
        self._client.server.stop_watch(self.watcher)

    async def next_batch(self) -> list[WatchEvent]:
        client = self._client
        if client.watch_faults is not None:
            return await self._next_batch_with_faults(client.watch_faults)
        lat = client.watch_latency
        delayed = lat.mean > 0 or lat.jitter > 0
        if not delayed and not self.pending:
            return await self.watcher.channel.get_batch()
        if not self.pending:
            batch = await self.watcher.channel.get_batch()
            for ev in batch:
                due = max(self._last_due, ev.time + lat.sample(client._rng))
                self._last_due = due
                self.pending.append((due, ev))
        due0 = self.pending[0][0]
        if due0 > client.clock.now():
            await client.clock.sleep_until(due0)
        return self._take(max(due0, client.clock.now()))

    def direct(self) -> bool:
        """Whether ``next_batch`` hands the channel's batch over as it is (no delay, no
        faults, nothing pending): what an inline informer's drain may do instead."""
        return self._client.watch_direct and not self.pending

    def _take(self, ready: float) -> list[WatchEvent]:
        i = 0
        while i < len(self.pending) and self.pending[i][0] <= ready:
            i += 1
        out = [ev for _, ev in self.pending[:i]]
        del self.pending[:i]
        return out

    # --- with faults ----------------------------------------------------------------------

    def _schedule(self, batch: list[WatchEvent], faults: WatchFaults) -> None:
        client = self._client
        kind = self.watcher.kind
        for ev in batch:
            base = ev.time + client.watch_latency.sample(client._rng)
            if ev.type == "BOOKMARK":
                due = max(self._last_due, base)
            else:
                extra, reorder = faults.watch_delay(client.name, kind, ev.time)
                meta = ev.object.metadata
                key = (meta.namespace, meta.name)
                if reorder:
                    due = max(self._object_due.get(key, 0.0), base + extra)
                else:
                    due = max(self._last_due, base + extra)
                self._object_due[key] = due
            self._last_due = max(self._last_due, due)
            bisect.insort_right(self.pending, (due, ev), key=lambda p: p[0])

    async def _next_batch_with_faults(self, faults: WatchFaults) -> list[WatchEvent]:
        clock = self._client.clock
        channel = self.watcher.channel
        while True:
            if self._closed is None:
                try:
                    self._schedule(channel.get_nowait_batch(), faults)
                except ChannelClosed as closed:
                    self._closed = closed
            if not self.pending:
                if self._closed is not None:
                    raise self._closed
                self._object_due.clear()
            now = clock.now()
            if self.pending and self.pending[0][0] <= now:
                return self._with_progress(self._take(now))
            if self._closed is not None:
                await clock.sleep_until(self.pending[0][0])
                continue
            wait = self.pending[0][0] - now if self.pending else None
            try:
                async with asyncio.timeout(wait):
                    batch = await channel.get_batch()
            except TimeoutError:
                continue
            except ChannelClosed as closed:
                self._closed = closed
                continue
            self._schedule(batch, faults)

    def _with_progress(self, out: list[WatchEvent]) -> list[WatchEvent]:
        """Events delivered after a later one carry the stream's progress as revision."""
        for i, ev in enumerate(out):
            if ev.revision < self._progress:
                out[i] = msgspec.structs.replace(ev, revision=self._progress)
            else:
                self._progress = ev.revision
        return out
