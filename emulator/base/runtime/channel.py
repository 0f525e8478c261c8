"""A bounded, batching, single-consumer channel: the hand-off under every watch stream.

This module owns ``Channel``: producers ``put`` without ever awaiting, and the one consumer
takes *everything* queued with each ``get_batch()``. One wake-up per batch rather than per
item is what makes watch delivery cheap (a task switch costs 3-8 µs here;
``bench/channel_vs_anyio.py`` measures the hand-off). It does not own routing (the API server's watch hub) or what a
consumer does after the channel ends (an informer relists).

The state is a list of queued items, at most one waiter future (the waiting consumer's) and
the close exception. The consumer only ever takes the whole queue, so a list swapped for a
fresh one is enough; no ``deque`` is needed.

| state             | put(item)                              | get_batch()                    |
| ----------------- | -------------------------------------- | ------------------------------ |
| open, empty       | queue it, wake the consumer            | wait for a put or a close      |
| open, queued      | queue it; if more than ``maxsize``     | return all queued items        |
|                   | items would be queued, drop it and     |                                |
|                   | close with ``Overflow``                |                                |
| closed, queued    | drop it                                | return all queued items        |
| closed, empty     | drop it                                | raise the close exception      |

A *lazy* item (``put_lazy``: a watch BOOKMARK for an in-process informer, 2,000 of them a
minute on 1,000 nodes) does not wake the consumer when nothing is queued: it waits, apart from
the queue and not counted against ``maxsize``, and is handed out first with the next batch (or
before the close exception); a later lazy item replaces it (only the latest one matters to
such a consumer). Queued behind other items, it is a plain ``put``.

A consumer that can apply a batch synchronously, in whatever code is running, exactly as
it would once woken (an in-process informer: its handlers are synchronous) gives the channel
a *drain* and an *owe* list (``set_drain``: the API server's watch hub, ``WatchHub.owed``).
Waking that consumer is then owed instead: ``put`` appends the channel to the list once, and
the owner settles it (``settle``; the hub settles its whole list with ``settle_each``) when
the write that queued the items is complete, by
handing the queued batch to the drain there, in the writer's code, instead of a wake-up and
a task switch. While owed, and while the drain runs, puts only queue (a drain is never
re-entered: what its own handlers cause to be queued is handed to it after, in order). A
drain that declines (returns False: the batch is put back), a close, or items left queued
have the consumer woken as without a drain. Everything queued, overflow and close behave as
without a drain.

A slow consumer is ended rather than allowed to block writers or grow without bound, as
Kubernetes ends a watcher that falls too far behind; it still receives everything queued
before the overflow, then ``Overflow``. Closing wakes the consumer by completing its waiter
with a result (never an exception), so queued items are always delivered before the end.
A consumer cancelled while waiting leaves the channel as it was: its waiter is cleared, and
puts tolerate a waiter that is already done. Cancellation always propagates.

Not thread-safe: producers and the consumer run on the same event loop.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Channel", "ChannelClosed", "Overflow", "settle_each"]

T = TypeVar("T")


class ChannelClosed(Exception):
    """The channel was closed: nothing more will arrive."""


class Overflow(ChannelClosed):
    """The consumer fell behind: more than ``maxsize`` items would have been queued."""


class Channel(Generic[T]):
    """A bounded channel with one consumer that drains everything queued at each wake-up."""

    __slots__ = ("_drain", "_exc", "_items", "_lazy", "_limit", "_maxsize", "_owe", "_owed", "_waiter")

    def __init__(self, maxsize: int | None = None) -> None:
        if maxsize is not None and maxsize < 1:
            raise ValueError(f"maxsize must be at least 1 (or None for unbounded), got {maxsize}")
        self._maxsize = maxsize
        self._limit = maxsize if maxsize is not None else sys.maxsize
        """``maxsize``, or a bound no queue reaches (one comparison a put)."""
        self._items: list[T] = []
        self._waiter: asyncio.Future[None] | None = None
        self._exc: BaseException | None = None
        self._lazy: T | None = None
        self._drain: Callable[[list[T]], bool] | None = None
        self._owe: list[Channel[T]] | None = None
        """Where an owed wake-up is recorded for ``settle`` (the watch hub's ``owed``), while a
        drain is set."""
        self._owed = False
        """The consumer's wake-up is owed (not made yet), or its drain is running."""

    @property
    def maxsize(self) -> int | None:
        """The most items that may be queued at once (None: unbounded)."""
        return self._maxsize

    @property
    def closed(self) -> bool:
        """True once closed, even while queued items remain to be taken."""
        return self._exc is not None

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"<Channel queued={len(self._items)} maxsize={self._maxsize} closed={self.closed}>"

    def put(self, item: T) -> bool:
        """Queue ``item`` without waiting; dropped if closed, overflow closes the channel.
        False when the channel is closed after the call (the item dropped)."""
        if self._exc is not None:
            return False
        items = self._items
        if len(items) >= self._limit:
            self.close(Overflow(f"channel overflowed: more than {self._maxsize} items queued"))
            return False
        items.append(item)
        # ``_wake``, written out: every watch event of every watcher comes here
        if self._owed:
            return True  # owed already, or draining: as a waiter already woken
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            # (a waiter already done owes nothing: a put that no settle follows, a bookmark's,
            # must not leave the channel owed, or a later close would wake no one)
            owe = self._owe
            if owe is not None:
                self._owed = True
                owe.append(self)
            else:
                waiter.set_result(None)
        return True

    def put_lazy(self, item: T) -> None:
        """Queue ``item`` without waking the consumer if nothing is queued (it comes first
        with the next batch, replacing a lazy item still waiting); else ``put``."""
        if self._exc is not None:
            return
        if self._items:
            self.put(item)
            return
        self._lazy = item

    @property
    def lazy(self) -> T | None:
        """The lazy item waiting for the next batch, if any."""
        return self._lazy

    def put_many(self, items: list[T]) -> None:
        """``put`` each of ``items`` in order (one wake-up): the same queue, overflow and
        close as the ``put`` calls would leave."""
        if self._exc is not None:
            return
        if len(self._items) + len(items) > self._limit:
            for item in items:
                self.put(item)
            return
        self._items.extend(items)
        self._wake()

    def close(self, exc: BaseException | None = None) -> None:
        """End the stream: once drained, the consumer gets ``exc`` (default ``ChannelClosed``).

        Closing twice keeps the first reason.
        """
        if self._exc is not None:
            return
        self._exc = exc if exc is not None else ChannelClosed("channel closed")
        waiter = self._waiter
        if waiter is not None and not waiter.done() and not self._owed:  # owed: ``settle`` wakes it
            waiter.set_result(None)

    async def get_batch(self) -> list[T]:
        """Take everything queued, waiting while the channel is open and empty.

        Raises the close exception once the channel is closed and empty.
        """
        while not self._items:
            if self._exc is not None:
                if self._lazy is not None:
                    break
                raise self._exc
            if self._waiter is not None:
                raise RuntimeError("Channel has one consumer, and it is already waiting")
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            try:
                await waiter
            finally:
                self._waiter = None
        return self._take()

    def get_nowait_batch(self) -> list[T]:
        """Take everything queued, maybe nothing; raise the close exception if closed and empty."""
        if not self._items and self._lazy is None and self._exc is not None:
            raise self._exc
        return self._take()

    def _take(self) -> list[T]:
        items = self._items
        self._items = []
        lazy = self._lazy
        if lazy is not None:
            self._lazy = None
            items.insert(0, lazy)
        return items

    def set_drain(self, drain: Callable[[list[T]], bool] | None, owe: list[Channel[T]] | None = None) -> None:
        """``drain(batch)``: apply a batch taken from the queue as the consumer woken from
        ``get_batch`` would, returning True, or return False without applying it (it is put
        back and the consumer woken). A waiting consumer's wake-up is then owed: the channel
        is appended to ``owe`` once, for its owner to call ``settle`` (None, or no drain:
        every wake-up is made at once, as without)."""
        self._drain = drain
        self._owe = owe if drain is not None else None

    def settle(self) -> None:
        """Settle the owed wake-up: while the consumer still waits and the channel is open,
        hand the drain everything queued (again while its handlers queue more); then, if
        the drain declined, or items are left, or the channel is closed, wake the consumer.
        An exception of the drain propagates, its batch put back and the consumer woken.
        (``settle_each`` of this one channel.)"""
        settle_each([self])

    def _wake(self) -> None:
        if self._owed:
            return  # owed already, or draining: as a waiter already woken
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            owe = self._owe
            if owe is not None:
                self._owed = True
                owe.append(self)
            else:
                waiter.set_result(None)


def settle_each(owed: list[Channel[T]]) -> None:
    """``Channel.settle`` of each channel of ``owed`` in order, those appended meanwhile too
    (a list iterator visits them), then the settled ones removed from the list's front (also
    when a drain raises: the raising one counts as settled). One loop for every owed channel
    of a write (the watch hub's ``settle``), the per-channel steps written out in it."""
    settled = 0
    try:
        for channel in owed:
            settled += 1
            waiter = channel._waiter
            if waiter is None or waiter.done():
                channel._owed = False  # the consumer stopped waiting (cancelled): nothing to wake
                continue
            drain = channel._drain
            batch = channel._items
            try:
                while batch and channel._exc is None and drain is not None:
                    channel._items = []  # ``_take``, inlined
                    lazy = channel._lazy
                    if lazy is not None:
                        channel._lazy = None
                        batch.insert(0, lazy)
                    try:
                        done = drain(batch)  # ``_owed`` stays set meanwhile: puts only queue
                    except BaseException:
                        channel._items[:0] = batch
                        raise
                    if not done:
                        channel._items[:0] = batch
                        break
                    batch = channel._items  # what its handlers queued meanwhile
            finally:
                channel._owed = False
                if (channel._items or channel._exc is not None) and not waiter.done():
                    waiter.set_result(None)
    finally:
        if settled == len(owed):
            owed.clear()  # (the usual case: a slice's deletion costs more)
        else:
            del owed[:settled]
