"""Event expiry: the API server deletes an Event ``eventTTL`` after its last write.

Upstream stores Events in etcd under a lease of ``--event-ttl`` (default 1 h), renewed by every
write, so an Event nobody rewrites disappears an hour later. This module owns only the
bookkeeping: a queue of (deadline, revision, key) in write order — deadlines are then
non-decreasing, as the clock only moves forward and the TTL is fixed — and the choice of which
Events are due. It does not delete anything: the API server does, through its ordinary delete
path, so an expiry is a write like any other (trace, watchers, listeners).

An entry is stale when the Event was written again (or deleted) since: its revision no longer
matches the stored object's, and it is dropped when it reaches the front. Cost: one entry per
Event write, popped once; no task per Event.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Any, Final

__all__ = ["DEFAULT_EVENT_TTL", "EventExpiry"]

DEFAULT_EVENT_TTL: Final = 3600.0
"""Upstream kube-apiserver ``--event-ttl`` default: 1 h."""


class EventExpiry:
    """Deadlines of the stored Events, oldest first. ``ttl`` 0 or less: Events never expire."""

    __slots__ = ("_queue", "deadline", "on_deadline", "ttl")

    def __init__(self, ttl: float = DEFAULT_EVENT_TTL) -> None:
        self.ttl = ttl
        self._queue: deque[tuple[float, int, str, str]] = deque()
        self.deadline = math.inf
        """The earliest deadline queued (inf: none): the API server's one comparison per write."""
        self.on_deadline: Callable[[], None] | None = None
        """Called when a deadline appears where there was none (the timer that expires Events
        on time, ``Store.expire_events_on_time``, waits for it)."""

    def written(self, now: float, revision: int, namespace: str, name: str) -> None:
        """An Event was created or updated at ``now`` with ``revision``."""
        if self.ttl > 0:
            if not self._queue:
                self.deadline = now + self.ttl
                if self.on_deadline is not None:
                    self.on_deadline()
            self._queue.append((now + self.ttl, revision, namespace, name))

    def due(self, now: float, lookup: Callable[[str, str], Any]) -> list[Any]:
        """The stored Events whose last write is ``ttl`` old at ``now`` (in write order), taken
        off the queue; ``lookup(namespace, name)`` is the stored Event or None."""
        out: list[Any] = []
        q = self._queue
        while q and q[0][0] <= now:
            _, rev, namespace, name = q.popleft()
            current = lookup(namespace, name)
            if current is not None and current.metadata.resource_version == str(rev):
                out.append(current)
        self.deadline = q[0][0] if q else math.inf
        return out

    def __len__(self) -> int:
        return len(self._queue)

    def __repr__(self) -> str:
        return f"<EventExpiry ttl={self.ttl:g}s pending={len(self._queue)}>"
