"""What the API server's store is configured with and what it hands its write listeners: the
settings (``ServerSettings``, with the history window's bounds ``EVENT_FRESH_DURATION``,
``HISTORY_LOWER_BOUND``, ``HISTORY_TRIM_SLACK``), the verbs (``Verb``), one write as the
listeners see it (``WriteRecord``) and a listener's batch entry (``WriteMany``).

Value types only: the store that applies the settings and makes the records is ``store``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

import msgspec

from emulator.base.apiserver.eventttl import DEFAULT_EVENT_TTL

__all__ = [
    "EVENT_FRESH_DURATION",
    "HISTORY_LOWER_BOUND",
    "HISTORY_TRIM_SLACK",
    "ServerSettings",
    "Verb",
    "WriteMany",
    "WriteRecord",
]

Verb = Literal["create", "update", "updateStatus", "bind", "delete", "evict"]
WriteMany = Callable[[Verb, str, float, str, list[tuple[Any, Any, int]]], None]
"""``write_many(verb, kind, time, agent, writes)``: a listener's batch entry (see the module
docstring); ``writes`` are (old, new, revision), read it, never change it."""


class WriteRecord(msgspec.Struct, frozen=True, gc=False):
    """One successful write, as the listeners see it (a frozen struct: one per write, and a
    msgspec struct is built several times faster than a frozen dataclass)."""

    revision: int
    time: float
    verb: Verb
    kind: str
    old: Any
    new: Any
    agent: str = ""
    """Who made the write, when it came through the HTTP door (its User-Agent's product,
    e.g. ``kubectl``); empty for the in-process agents."""

    @property
    def obj(self) -> Any:
        return self.new if self.new is not None else self.old


EVENT_FRESH_DURATION: Final = 75.0
"""Upstream's ``eventFreshDuration``: the watch cache keeps at least this much history (the
default bookmark frequency, 60 s, plus 15 s), so a watcher resuming from its last bookmark
finds its revision."""
HISTORY_LOWER_BOUND: Final = 100
"""Upstream ``defaultLowerBoundCapacity``: the history never shrinks below this many events."""
HISTORY_TRIM_SLACK: Final = 1.0
"""The history is trimmed once its oldest event is this many simulated seconds past the fresh
duration, then back to exactly the fresh duration: one trim per second of writes rather than a
call per write, so it holds between 75 and 76 s of events (upstream's ring may hold up to
twice the fresh window)."""


@dataclass(frozen=True, slots=True)
class ServerSettings:
    history_size: int = 100_000
    """At most this many watch events kept for resuming (upstream's watch cache stops growing
    at ``100 * 1024`` per resource); a watch from an older revision gets Gone."""
    event_fresh_duration: float = EVENT_FRESH_DURATION
    """Events older than this leave the history window once it holds more than
    ``HISTORY_LOWER_BOUND`` (upstream ``eventFreshDuration``)."""
    watch_buffer: int = 1_000_000
    """Events a watcher may have undelivered before it is ended (its informer relists)."""
    event_ttl: float = DEFAULT_EVENT_TTL
    """Upstream ``--event-ttl``: an Event is deleted this long after its last write (0: never)."""
    feature_gates: tuple[tuple[str, bool], ...] = ()
    """Upstream ``--feature-gates`` that differ from v1.34's defaults, as ``(name, on)``: today
    the DRA gates the ``resource.k8s.io`` strategies read (``resourcedefaults.DRA_GATES``)."""
