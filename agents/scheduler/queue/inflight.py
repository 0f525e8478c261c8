"""In-flight tracking: which pods are being scheduled, and what happened meanwhile (upstream
``active_queue.go``: ``inFlightPods`` / ``inFlightEvents``).

This module owns one timeline of two kinds of entries, in arrival order: a pod when it is popped,
and every cluster event received while at least one pod is in flight. When a pod's attempt fails,
the scheduling queue replays only the events recorded *after that pod's own entry*
(``events_for_pod``) through the queueing hints, so an event that arrived during the attempt is
not lost (the "in-flight race"). ``done(uid)`` removes the pod and prunes the events no remaining
in-flight pod can need. It does not own the hints or where the pod goes afterwards.

Upstream keeps a linked list; here every entry gets a sequence number, pods are a dict
uid -> sequence (pop order) and events a list sorted by sequence with a moving head, so
``events_for_pod`` is a bisection and pruning is "drop events older than the oldest in-flight pod".

| operation                        | no pod in flight      | >= 1 pod in flight               |
| -------------------------------- | --------------------- | -------------------------------- |
| ``add_pod(uid)``                 | starts the timeline   | appended                         |
| ``add_event_if_any_in_flight``   | ignored               | appended                         |
| ``add_events_if_pod_in_flight``  | ignored (False)       | appended if that pod is in flight |
| ``done(uid)``                    | no-op                 | pod removed; older events pruned |
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import Any

from emulator.base.api.core import Pod

from ..framework.types import ClusterEvent

__all__ = ["InFlightTracker", "RecordedEvent"]


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """A cluster event seen while pods were in flight, with the objects it carried."""

    event: ClusterEvent
    old_obj: Any
    new_obj: Any


class InFlightTracker:
    """Pods popped and not yet ``done``, and the events that arrived while they were out."""

    __slots__ = ("_event_seqs", "_events", "_head", "_pods", "_seq")

    def __init__(self) -> None:
        self._seq = itertools.count()
        self._pods: dict[str, tuple[int, Pod]] = {}
        self._event_seqs: list[int] = []
        self._events: list[RecordedEvent] = []
        self._head = 0

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    @property
    def event_count(self) -> int:
        return len(self._events) - self._head

    def pods(self) -> list[Pod]:
        """In-flight pods (as popped), in pop order."""
        return [pod for _, pod in self._pods.values()]

    def add_pod(self, uid: str, pod: Pod) -> None:
        """Start tracking a popped pod; re-adding a uid restarts its timeline."""
        self._pods.pop(uid, None)
        self._pods[uid] = (next(self._seq), pod)

    def add_event_if_any_in_flight(self, event: ClusterEvent, old_obj: Any, new_obj: Any) -> bool:
        if not self._pods:
            return False
        self._append(RecordedEvent(event, old_obj, new_obj))
        return True

    def add_events_if_pod_in_flight(self, uid: str, old_obj: Any, new_obj: Any, events: list[ClusterEvent]) -> bool:
        """Record ``events`` if the pod ``uid`` is in flight (upstream ``addEventsIfPodInFlight``)."""
        if uid not in self._pods:
            return False
        for event in events:
            self._append(RecordedEvent(event, old_obj, new_obj))
        return True

    def events_for_pod(self, uid: str) -> list[RecordedEvent] | None:
        """Events recorded after the pod was popped; ``None`` if it is not in flight."""
        entry = self._pods.get(uid)
        if entry is None:
            return None
        i = bisect.bisect_right(self._event_seqs, entry[0], lo=self._head)
        return self._events[i:]

    def done(self, uid: str) -> None:
        if self._pods.pop(uid, None) is None:
            return
        if not self._pods:
            self._event_seqs.clear()
            self._events.clear()
            self._head = 0
            return
        oldest = next(iter(self._pods.values()))[0]
        self._head = bisect.bisect_left(self._event_seqs, oldest, lo=self._head)
        if self._head > 64 and self._head * 2 > len(self._events):
            del self._events[: self._head]
            del self._event_seqs[: self._head]
            self._head = 0

    def clear(self) -> None:
        self._pods.clear()
        self._event_seqs.clear()
        self._events.clear()
        self._head = 0

    def _append(self, event: RecordedEvent) -> None:
        self._event_seqs.append(next(self._seq))
        self._events.append(event)

    def __repr__(self) -> str:
        return f"<InFlightTracker pods={len(self._pods)} events={self.event_count}>"
