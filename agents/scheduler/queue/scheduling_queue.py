"""The scheduling queue: upstream ``PriorityQueue`` (``backend/queue/scheduling_queue.go``, v1.34).

What it owns: every pending pod of the scheduler, in exactly one place at a time --

* **activeQ**: a heap by the profile's QueueSort ``less``; ``pop`` takes its head;
* **backoffQ** (``backoff_queue.py``): pods waiting out their backoff;
* **unschedulablePods**: pods waiting for a cluster event (or the 5-minute timeout), including
  pods gated by PreEnqueue; an insertion-ordered dict keyed ``namespace/name``;
* **in flight** (``inflight.py``): popped and not yet ``done`` --

plus the scheduling cycle counter, ``moveRequestCycle`` (QueueingHints off), and the
``Nominator``. It decides where a pod goes on every event; it does not run plugins (the
scheduler hands it ``less``, ``pre_enqueue`` and ``hints`` built from the profiles), talk to the
API server, or know about nodes beyond the optional ``pre_check_for_node``.

Transitions (QueueingHints on, v1.34 default; "hint" = the decision of ``hints.py`` over the
plugins that rejected the pod; "B/A" = backoffQ if still backing off, else activeQ; every move
into activeQ runs PreEnqueue first and a gated pod lands in unschedulablePods instead):

| from            | trigger                                     | to                                   |
| --------------- | ------------------------------------------- | ------------------------------------ |
| (new)           | ``add``                                     | activeQ                              |
| activeQ         | ``pop`` / ``pop_nowait``                    | in flight (attempts+1, cycle+1)      |
| backoffQ        | ``pop`` with activeQ empty (pop-from-backoffQ) | in flight                         |
| in flight       | ``add_unschedulable_if_not_present``        | no rejector: B/A; else replay events |
|                 |                                             | since pop: Queue -> B/A (Pending     |
|                 |                                             | plugin: activeQ), none -> unsched.   |
| unschedulable   | ``move_all_to_active_or_backoff`` & friends | hint Queue -> B/A / activeQ          |
| unschedulable   | ``flush_unschedulable_pods_leftover``       | after 5 min: B/A (wildcard event)    |
| backoffQ        | ``flush_backoff_q_completed``               | activeQ (PreEnqueue not re-run)      |
| backoffQ/unsch. | ``activate``                                | activeQ                              |
| any queue       | ``delete``                                  | gone (in-flight entry stays to done) |

QueueingHints off (``queueing_hints=False``, the pre-1.32 behaviour): every registered event's
hint is "Queue"; a failed pod goes to backoffQ if a move request arrived since its pop
(``move_request_cycle >= cycle``) or it had no rejector, else to unschedulablePods; updates of
unschedulable pods move them if anything but status changed; no in-flight events are recorded
and an update of an in-flight pod adds it to activeQ again (as upstream).

In-flight protection off (``in_flight_events=False``, ``schedulerOptions.inFlightEvents: false``,
for race experiments): no event is recorded for in-flight pods and ``moveRequestCycle`` is
ignored, so a failed pod with a rejector always goes to unschedulablePods -- an event that
arrived during its attempt is lost and the pod waits for the next event or the 5-minute
leftover flush (upstream's queue before in-flight tracking). Pods are still tracked in flight.

Deviations, for determinism or the one-place invariant: unschedulablePods iterates in insertion
order; heap ties go first-added first; ``update`` stops evaluating a pod's update events once the
pod has left unschedulablePods (upstream continues when pop-from-backoffQ is off and could then
hold the pod in two places).

The queue is one object, as upstream's, split by concern into bases that share its state
(declared in ``moves.py``, built by ``SchedulingQueue.__init__``)::

    module                  | class               | owns
    ------------------------+---------------------+-------------------------------------------
    scheduling_queue.py     | SchedulingQueue     | construction, introspection, the nominator,
                            |                     | add/update/delete/activate, a failed
                            |                     | attempt's requeue, backoff flush, ``run``
    active_queue.py         | ActiveQueue         | pop, done, close, cycle, in-flight pods
    unschedulable_pods.py   | UnschedulablePods   | cluster events (hints), the leftover flush
    moves.py                | QueueMoves          | the state; moves into a sub-queue
                            |                     | (PreEnqueue, counts, nomination, waking)

The pieces that stand alone live beside them (``heap.py``, ``backoff_queue.py``, ``hints.py``,
``inflight.py``, ``nominator.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from emulator.base.api.core import Node, Pod
from emulator.base.runtime.clock import Clock

from ..framework.types import ClusterEvent, PodInfo
from . import events as ev
from .active_queue import ActiveQueue
from .backoff_queue import BACKOFF_Q_ORDERING_WINDOW, BackoffQueue, truncate_to_window
from .heap import KeyedHeap
from .hints import HintEvaluator, HintsFn
from .inflight import InFlightTracker
from .moves import (
    ACTIVE_Q,
    BACKOFF_Q,
    UNSCHEDULABLE_Q,
    UNSCHEDULED_POD_ADD,
    UNSCHEDULED_POD_UPDATE,
    PreEnqueueFn,
    pod_key,
    queued_key,
)
from .nominator import Nominator, PodLister
from .queued_pod_info import QueuedPodInfo
from .unschedulable_pods import UnschedulablePods

__all__ = [
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE",
    "FLUSH_BACKOFF_Q_PERIOD",
    "FLUSH_UNSCHEDULABLE_PERIOD",
    "SchedulingQueue",
]

DEFAULT_POD_INITIAL_BACKOFF: Final = 1.0
DEFAULT_POD_MAX_BACKOFF: Final = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE: Final = 300.0
FLUSH_BACKOFF_Q_PERIOD: Final = BACKOFF_Q_ORDERING_WINDOW
FLUSH_UNSCHEDULABLE_PERIOD: Final = 30.0

LessFn = Callable[[QueuedPodInfo, QueuedPodInfo], bool]


class SchedulingQueue(ActiveQueue, UnschedulablePods):
    """activeQ, backoffQ, unschedulablePods, in-flight tracking and the nominator."""

    def __init__(
        self,
        *,
        clock: Clock,
        less: LessFn,
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
        pre_enqueue: PreEnqueueFn | None = None,
        hints: HintsFn,
        registered_events: Iterable[ClusterEvent] | None = None,
        queueing_hints: bool = True,
        in_flight_events: bool = True,
        pop_from_backoff_q: bool = True,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE,
        pre_check_for_node: Callable[[Pod, Node], bool] | None = None,
        namespace_labels: Callable[[str], Mapping[str, str]] | None = None,
        pod_lister: PodLister | None = None,
        nominator: Nominator | None = None,
    ) -> None:
        """``registered_events``: the union of every profile's registered events, for the
        event-of-interest short-cut (upstream scans all profiles' hint maps); ``None`` treats
        every event as of interest. ``pre_check_for_node(pod, node)``: with hints off, filters
        which unschedulable pods a Node add/update may move (upstream ``preCheckForNode``).
        ``namespace_labels(ns)``: for affinity terms with a namespaceSelector. ``in_flight_events``:
        False switches the in-flight protection off (see the module docstring). ``sort_key``: a
        key whose order is exactly ``less`` (the QueueSort plugin's optional ``sort_key``), so
        activeQ compares precomputed tuples (``heap.py``). ``nominator``: one built beforehand and
        also given to the frameworks (upstream's ``WithPodNominator``); else a new one over
        ``pod_lister``."""
        self._clock = clock
        self._pre_enqueue = pre_enqueue
        self._decide = HintEvaluator(
            hints,
            queueing_hints=queueing_hints,
            registered_events=registered_events,
            namespace_labels=namespace_labels,
        )
        self._qhints = queueing_hints
        self.dismissed_event_ids: frozenset[int] = frozenset(
            id(e) for e in ev.SHARED_POD_UPDATES if not self._decide.is_event_of_interest(e)
        )
        """The ids of ``pod_scheduling_properties_change``'s shared one-event answers (module
        constants, so their ids are theirs for good) that no plugin registered for: their
        ``move_all_to_active_or_backoff`` would do nothing (it stops at the interest check).
        Worked out once: right only while the registered events never change after the queue
        is built (``HintEvaluator``'s are fixed); registering events later must rebuild it."""
        self._in_flight_events = in_flight_events
        self._record = queueing_hints and in_flight_events
        """Record events for in-flight pods (QueueingHints on, protection on)."""
        self._pop_from_backoff_q = pop_from_backoff_q
        self._max_in_unschedulable = pod_max_in_unschedulable
        self._pre_check_for_node = pre_check_for_node
        self._active = KeyedHeap(queued_key, less, sort_key)
        self._backoff = BackoffQueue(
            clock,
            initial=pod_initial_backoff,
            maximum=pod_max_backoff,
            active_less=less,
            pop_from_backoff_q=pop_from_backoff_q,
            active_key=sort_key,
        )
        self._unschedulable = {}
        self._in_flight = InFlightTracker()
        self.nominator = nominator if nominator is not None else Nominator(pod_lister)
        self._cycle = 0
        self._move_request_cycle = -1
        self._closed = False
        self._waiters = []
        self._incoming = {}
        self._last_added: PodInfo | None = None
        """The PodInfo of the last pod ``add`` queued: the next pod of the same spec object (a
        stream of pods from one template) copies its derived data (``QueuedPodInfo.new``)."""

    # --- properties and introspection ------------------------------------------------------

    @property
    def move_request_cycle(self) -> int:
        return self._move_request_cycle

    @property
    def queueing_hints(self) -> bool:
        return self._qhints

    def where(self, key: str) -> str | None:
        """Where the pod ``namespace/name`` waits: "Active", "Backoff", "Unschedulable" or None."""
        if key in self._active:
            return ACTIVE_Q
        if key in self._backoff:
            return BACKOFF_Q
        if key in self._unschedulable:
            return UNSCHEDULABLE_Q
        return None

    def get(self, key: str) -> QueuedPodInfo | None:
        """The queued record of ``namespace/name`` in any sub-queue (not in flight)."""
        qpi = self._active.get(key)
        if qpi is None:
            qpi = self._backoff.get(key)
        return qpi if qpi is not None else self._unschedulable.get(key)

    def pods_in_active_q(self) -> list[Pod]:
        return [q.pod for q in self._active.ordered()]

    def pods_in_backoff_q(self) -> list[Pod]:
        return [q.pod for q in self._backoff.ordered()]

    def unschedulable_pods(self) -> list[Pod]:
        return [q.pod for q in self._unschedulable.values()]

    def pending_pods(self) -> list[Pod]:
        """activeQ (pop order), backoffQ (pop order), then unschedulablePods (arrival order)."""
        return self.pods_in_active_q() + self.pods_in_backoff_q() + self.unschedulable_pods()

    def sizes(self) -> tuple[int, int, int]:
        """(activeQ, backoffQ, unschedulablePods) lengths in O(1), for sampling; gated pods
        wait in unschedulablePods, as upstream's map holds them."""
        return len(self._active), len(self._backoff), len(self._unschedulable)

    def statistics(self) -> dict[str, int]:
        gated = sum(1 for q in self._unschedulable.values() if q.gated)
        return {
            "active": len(self._active),
            "backoff": len(self._backoff),
            "backoff_error": self._backoff.len_errors(),
            "unschedulable": len(self._unschedulable),
            "gated": gated,
            "inflight": len(self._in_flight),
            "inflight_events": self._in_flight.event_count,
            "nominated": len(self.nominator),
            "scheduling_cycle": self._cycle,
            "move_request_cycle": self._move_request_cycle,
        }

    def incoming_pods(self) -> dict[tuple[str, str], int]:
        """Upstream ``scheduler_queue_incoming_pods_total``: (queue, event label) -> count."""
        return dict(self._incoming)

    def __repr__(self) -> str:
        return (
            f"<SchedulingQueue active={len(self._active)} backoff={len(self._backoff)} "
            f"unschedulable={len(self._unschedulable)} inflight={len(self._in_flight)}>"
        )

    # --- the nominator (upstream PriorityQueue embeds it) ----------------------------------

    def add_nominated_pod(self, pod_info: PodInfo, node_name: str | None) -> None:
        self.nominator.add_nominated_pod(pod_info, node_name)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self.nominator.delete_nominated_pod_if_exists(pod)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.nominator.nominated_pods_for_node(node_name)

    def nominated_node_names(self) -> list[str]:
        return self.nominator.nominated_node_names()

    # --- pod lifecycle ---------------------------------------------------------------------

    def add(self, pod: Pod) -> None:
        """An unscheduled pod was created: to activeQ (or unschedulablePods if gated)."""
        qpi = QueuedPodInfo.new(pod, self._clock.now(), self._last_added)
        self._last_added = qpi.pod_info
        self._move_to_active(qpi, UNSCHEDULED_POD_ADD)

    def update(self, old: Pod, new: Pod) -> None:
        """An unscheduled pod was updated (upstream ``Update``)."""
        key = pod_key(new)
        events: list[ClusterEvent] = []
        if self._qhints:
            events = ev.pod_scheduling_properties_change(new, old)
        # In flight: the attempt will be judged against these events when it comes back.
        if self._record and self._in_flight.add_events_if_pod_in_flight(new.metadata.uid, old, new, events):
            return
        qpi = self._active.get(key)
        if qpi is not None:
            qpi.update(new)
            self._active.add_or_update(qpi)
            self.nominator.update_nominated_pod(old, qpi.pod_info)
            return
        qpi = self._backoff.get(key)
        if qpi is not None:
            qpi.update(new)
            self._backoff.update(key)
            self.nominator.update_nominated_pod(old, qpi.pod_info)
            return
        qpi = self._unschedulable.get(key)
        if qpi is None:
            self._move_to_active(QueuedPodInfo.new(new, self._clock.now()), UNSCHEDULED_POD_UPDATE)
            return
        qpi.update(new)
        self.nominator.update_nominated_pod(old, qpi.pod_info)
        if self._qhints:
            for event in events:
                strategy = self._decide.worth_requeuing(qpi, event, old, new)
                if self._requeue(qpi, strategy, str(event)) != UNSCHEDULABLE_Q:
                    break
            return
        if ev.is_pod_updated(old, new):
            if self._backoff.is_backing_off(qpi):
                self._move_to_backoff(qpi, UNSCHEDULED_POD_UPDATE)
            else:
                self._move_to_active(qpi, UNSCHEDULED_POD_UPDATE)

    def delete(self, pod: Pod) -> None:
        """The pod was deleted (or bound): drop it from every sub-queue and the nominator."""
        self.nominator.delete_nominated_pod_if_exists(pod)
        key = pod_key(pod)
        if self._active.delete(key) is None and self._backoff.delete(key) is None:
            self._unschedulable.pop(key, None)

    def activate(self, pods: Iterable[Pod]) -> None:
        """Force pods from unschedulablePods/backoffQ into activeQ (``PodsToActivate``).

        A pod found in neither but in flight gets a ``ForceActivate`` event recorded, so it is
        requeued if its attempt fails (hints off: ``move_request_cycle`` is bumped instead).
        """
        for pod in pods:
            if self._activate_one(pod):
                continue
            if self._record:
                self._in_flight.add_events_if_pod_in_flight(pod.metadata.uid, None, pod, [ev.EventForceActivate])
            self._move_request_cycle = self._cycle

    def _activate_one(self, pod: Pod) -> bool:
        key = pod_key(pod)
        from_backoff = False
        qpi = self._unschedulable.get(key)
        if qpi is None:
            qpi = self._backoff.delete(key)
            if qpi is None:
                return False
            from_backoff = True
        return self._move_to_active(qpi, ev.FORCE_ACTIVATE, from_backoff=from_backoff)

    # --- failures --------------------------------------------------------------------------

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> bool:
        """Requeue a pod whose attempt failed; False (and nothing changes) if it is already queued.

        The caller has set ``unschedulable_plugins``/``pending_plugins`` from the diagnosis (both
        empty for an error). ``scheduling_cycle`` is the cycle of the failed attempt. Ends the
        pod's in-flight tracking in every case.
        """
        try:
            key = qpi.key
            if key in self._unschedulable or key in self._active or key in self._backoff:
                return False
            if qpi.unschedulable_plugins or qpi.pending_plugins:
                qpi.unschedulable_count += 1
                qpi.consecutive_errors_count = 0
            else:
                qpi.consecutive_errors_count += 1
            qpi.timestamp = self._clock.now()
            qpi.backoff_expiration = None
            if not self._qhints:
                moved = self._in_flight_events and self._move_request_cycle >= scheduling_cycle
                if moved or not qpi.rejector_plugins():
                    self._move_to_backoff(qpi, ev.SCHEDULE_ATTEMPT_FAILURE)
                else:
                    self._add_unschedulable(qpi, ev.SCHEDULE_ATTEMPT_FAILURE)
                return True
            recorded = self._in_flight.events_for_pod(qpi.uid)
            if recorded is not None and not self._in_flight_events:
                recorded = []  # protection off: whatever arrived during the attempt is lost
            strategy = self._decide.for_in_flight_pod(qpi, recorded)
            self._requeue(qpi, strategy, ev.SCHEDULE_ATTEMPT_FAILURE)
            return True
        finally:
            self.done(qpi.uid)

    # --- periodic flushes ------------------------------------------------------------------

    def _stopping(self) -> bool:
        return self._closed

    def flush_backoff_q_completed(self) -> None:
        """Move every pod whose backoff is over to activeQ (upstream: every second)."""
        for qpi in self._backoff.pop_all_completed():
            self._move_to_active(qpi, ev.BACKOFF_COMPLETE, from_backoff=True)

    async def run(self) -> None:
        """Run both flush timers until ``close()`` (or cancellation).

        Leftover flush at start and every 30 s (``wait.Until``); backoff flush at every window
        boundary, first at ``floor(start) + 1`` with pop-from-backoffQ (1.33+ aligned ticker),
        else ``start + 1``. When both are due together the leftover flush runs first.
        """
        clock = self._clock
        start = clock.now()
        next_backoff = (truncate_to_window(start) if self._pop_from_backoff_q else start) + FLUSH_BACKOFF_Q_PERIOD
        next_leftover = start
        while not self._stopping():
            if next_leftover <= next_backoff:
                await clock.sleep_until(next_leftover)
                if self._stopping():
                    break
                self.flush_unschedulable_pods_leftover()
                next_leftover += FLUSH_UNSCHEDULABLE_PERIOD
            else:
                await clock.sleep_until(next_backoff)
                if self._stopping():
                    break
                self.flush_backoff_q_completed()
                next_backoff += FLUSH_BACKOFF_Q_PERIOD
