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

Why ~600 lines in one module: the three sub-queues, the in-flight event log and the
nominator move a pod between them under one invariant (a pod is in exactly one place), as
upstream's ``scheduling_queue.go``; the pieces that stand alone already live beside it
(``heap.py``, ``backoff_queue.py``, ``hints.py``, ``nominator.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from emulator.base.api.core import Node, Pod
from emulator.base.runtime.clock import Clock

from ..framework.types import ActionType, ClusterEvent, EventResource, PodInfo, Status
from . import events as ev
from .backoff_queue import BACKOFF_Q_ORDERING_WINDOW, BackoffQueue, truncate_to_window
from .heap import KeyedHeap
from .hints import HintEvaluator, HintsFn, QueueingStrategy
from .inflight import InFlightTracker
from .nominator import Nominator, PodLister
from .queued_pod_info import QueuedPodInfo

__all__ = [
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE",
    "FLUSH_BACKOFF_Q_PERIOD",
    "FLUSH_UNSCHEDULABLE_PERIOD",
    "QueueClosed",
    "SchedulingQueue",
]

DEFAULT_POD_INITIAL_BACKOFF: Final = 1.0
DEFAULT_POD_MAX_BACKOFF: Final = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE: Final = 300.0
FLUSH_BACKOFF_Q_PERIOD: Final = BACKOFF_Q_ORDERING_WINDOW
FLUSH_UNSCHEDULABLE_PERIOD: Final = 30.0

ACTIVE_Q: Final = "Active"
BACKOFF_Q: Final = "Backoff"
UNSCHEDULABLE_Q: Final = "Unschedulable"

LessFn = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
PreEnqueueFn = Callable[[Pod], "tuple[Status, str] | None"]
"""``pre_enqueue(pod)``: None if every PreEnqueue plugin admits it, else (status, plugin name)."""
PreCheck = Callable[[Pod], bool]

_NODE_PRECHECK_ACTIONS: Final = ActionType.Add | ActionType.Update


class QueueClosed(Exception):
    """``pop`` on a closed, empty queue: the scheduling loop should end."""


class SchedulingQueue:
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
        self._active: KeyedHeap[QueuedPodInfo] = KeyedHeap(_key, less, sort_key)
        self._backoff = BackoffQueue(
            clock,
            initial=pod_initial_backoff,
            maximum=pod_max_backoff,
            active_less=less,
            pop_from_backoff_q=pop_from_backoff_q,
            active_key=sort_key,
        )
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._in_flight = InFlightTracker()
        self.nominator = nominator if nominator is not None else Nominator(pod_lister)
        self._cycle = 0
        self._move_request_cycle = -1
        self._closed = False
        self._waiters: list[asyncio.Future[None]] = []
        self._incoming: dict[tuple[str, str], int] = {}
        self._last_added: PodInfo | None = None
        """The PodInfo of the last pod ``add`` queued: the next pod of the same spec object (a
        stream of pods from one template) copies its derived data (``QueuedPodInfo.new``)."""

    # --- properties and introspection ------------------------------------------------------

    @property
    def scheduling_cycle(self) -> int:
        return self._cycle

    @property
    def move_request_cycle(self) -> int:
        return self._move_request_cycle

    @property
    def queueing_hints(self) -> bool:
        return self._qhints

    @property
    def closed(self) -> bool:
        return self._closed

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

    def is_in_flight(self, uid: str) -> bool:
        return uid in self._in_flight

    def in_flight_pods(self) -> list[Pod]:
        return self._in_flight.pods()

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
        self._move_to_active(qpi, _UNSCHEDULED_POD_ADD)

    def update(self, old: Pod, new: Pod) -> None:
        """An unscheduled pod was updated (upstream ``Update``)."""
        key = _pod_key(new)
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
            self._move_to_active(QueuedPodInfo.new(new, self._clock.now()), _UNSCHEDULED_POD_UPDATE)
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
                self._move_to_backoff(qpi, _UNSCHEDULED_POD_UPDATE)
            else:
                self._move_to_active(qpi, _UNSCHEDULED_POD_UPDATE)

    def delete(self, pod: Pod) -> None:
        """The pod was deleted (or bound): drop it from every sub-queue and the nominator."""
        self.nominator.delete_nominated_pod_if_exists(pod)
        key = _pod_key(pod)
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
        key = _pod_key(pod)
        from_backoff = False
        qpi = self._unschedulable.get(key)
        if qpi is None:
            qpi = self._backoff.delete(key)
            if qpi is None:
                return False
            from_backoff = True
        return self._move_to_active(qpi, ev.FORCE_ACTIVATE, from_backoff=from_backoff)

    # --- popping ---------------------------------------------------------------------------

    def pop_nowait(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None if nothing is poppable (never blocks).

        activeQ's head; with pop-from-backoffQ and activeQ empty, podBackoffQ's head. The pod is
        now in flight: ``attempts`` and ``scheduling_cycle`` grow by one, its rejector plugins are
        cleared for the new attempt.
        """
        active, backoff = self._active, self._backoff
        while True:
            # The heaps' entry lists asked first: every pod's first pop attempt finds both empty.
            qpi = active.pop() if active._entries else None
            label = ""
            if qpi is None and self._pop_from_backoff_q and backoff._rejected._entries:
                qpi = backoff.pop_backoff()
                label = ev.POP_FROM_BACKOFF_Q
            if qpi is None:
                return None
            pod = qpi.pod_info.pod  # ``qpi.pod``, ``qpi.uid`` without the properties
            uid = pod.metadata.uid
            if self._qhints and uid in self._in_flight:
                continue  # tracked twice (upstream logs and discards the duplicate)
            if label:
                self._count(ACTIVE_Q, label)
            qpi.attempts += 1
            qpi.backoff_expiration = None
            self._in_flight.add_pod(uid, pod)
            self._cycle += 1
            qpi.unschedulable_plugins.clear()
            qpi.pending_plugins.clear()
            return qpi

    async def pop(self) -> QueuedPodInfo:
        """Wait for a poppable pod and pop it. Cancellable; raises ``QueueClosed`` once the queue
        is closed and nothing is left to pop."""
        while True:
            qpi = self.pop_nowait()
            if qpi is not None:
                return qpi
            if self._closed:
                raise QueueClosed("scheduling queue is closed")
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def done(self, uid: str) -> None:
        """The pod's attempt is over (failure requeued, or Permit passed): stop tracking it."""
        self._in_flight.done(uid)

    def close(self) -> None:
        """Wake every ``pop`` (they raise ``QueueClosed`` once the queue is empty); ``run`` ends
        at its next tick. In-flight tracking is dropped, as upstream's ``close``."""
        self._closed = True
        self._in_flight.clear()
        self._wake()

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

    # --- cluster events --------------------------------------------------------------------

    def move_all_to_active_or_backoff(
        self, event: ClusterEvent, old: Any = None, new: Any = None, pre_check: PreCheck | None = None
    ) -> None:
        """A cluster event may have made unschedulable pods schedulable: ask their hints."""
        if not self._decide.is_event_of_interest(event):
            return
        if (
            pre_check is None
            and not self._qhints
            and self._pre_check_for_node is not None
            and event.resource is EventResource.Node
            and event.action & _NODE_PRECHECK_ACTIONS
            and isinstance(new, Node)
        ):
            check, node = self._pre_check_for_node, new
            pre_check = lambda pod: check(pod, node)  # noqa: E731
        if pre_check is None:
            pods = list(self._unschedulable.values())
        else:
            pods = [q for q in self._unschedulable.values() if pre_check(q.pod)]
        self._move(pods, event, old, new)

    def assigned_pod_added(self, pod: Pod | PodInfo) -> None:
        """A bound pod appeared: only pods it may help (affinity, PodTopologySpread) are asked."""
        p = pod.pod if isinstance(pod, PodInfo) else pod
        self._move_pods(
            self._decide.cross_topology_pods(self._unschedulable.values(), p), ev.EventAssignedPodAdd, None, p
        )

    def assigned_pod_updated(self, old: Pod, new: Pod, event: ClusterEvent) -> None:
        """A bound pod changed; a request scale-down may help anyone, other changes only pods
        with cross-topology terms."""
        if ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown).match(event):
            self.move_all_to_active_or_backoff(event, old, new)
        else:
            self._move_pods(self._decide.cross_topology_pods(self._unschedulable.values(), new), event, old, new)

    def _move_pods(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any) -> None:
        """Upstream ``movePodsToActiveOrBackoffQueue``."""
        if self._decide.is_event_of_interest(event):
            self._move(pods, event, old, new)

    def _move(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any) -> None:
        """``_move_pods`` for an event of interest."""
        label = str(event) if pods else ""
        for qpi in pods:
            if qpi.gated and not any(g.match(event) for g in qpi.gating_plugin_events):
                continue  # only the gating plugin's events can lift a gate
            strategy = self._decide.worth_requeuing(qpi, event, old, new)
            if strategy is QueueingStrategy.Skip:
                continue
            self._unschedulable.pop(qpi.key, None)
            self._requeue(qpi, strategy, label)
        self._move_request_cycle = self._cycle
        if self._record:
            self._in_flight.add_event_if_any_in_flight(event, old, new)

    # --- moving between sub-queues ---------------------------------------------------------

    def _requeue(self, qpi: QueuedPodInfo, strategy: QueueingStrategy, label: str) -> str:
        """Upstream ``requeuePodWithQueueingStrategy``; returns where the pod ended up."""
        if strategy is QueueingStrategy.Skip:
            self._add_unschedulable(qpi, label)
            return UNSCHEDULABLE_Q
        if strategy is QueueingStrategy.AfterBackoff and self._backoff.is_backing_off(qpi):
            return BACKOFF_Q if self._move_to_backoff(qpi, label) else UNSCHEDULABLE_Q
        return ACTIVE_Q if self._move_to_active(qpi, label) else UNSCHEDULABLE_Q

    def _move_to_active(self, qpi: QueuedPodInfo, label: str, *, from_backoff: bool = False) -> bool:
        """Upstream ``moveToActiveQ``: PreEnqueue (skipped for pods leaving backoffQ with
        pop-from-backoffQ: it ran on entry), then activeQ, or unschedulablePods if gated."""
        if not (from_backoff and self._pop_from_backoff_q):
            self._run_pre_enqueue(qpi)
        key = _key(qpi)
        if qpi.gating_plugin:  # ``qpi.gated``
            if key not in self._active and key not in self._backoff and key not in self._unschedulable:
                self._add_unschedulable(qpi, label)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.now()
        self._unschedulable.pop(key, None)
        self._backoff.delete(key)
        self._active.add_or_update(qpi)
        incoming, k = self._incoming, (ACTIVE_Q, label)  # ``_count`` inline
        incoming[k] = incoming.get(k, 0) + 1
        if label in _NOMINATE_ON:
            self.nominator.add_nominated_pod(qpi.pod_info, None)
        if self._waiters:  # (``_wake`` of none wakes none)
            self._wake()
        return True

    def _move_to_backoff(self, qpi: QueuedPodInfo, label: str) -> bool:
        """Upstream ``moveToBackoffQ``; with pop-from-backoffQ PreEnqueue runs here."""
        if self._pop_from_backoff_q:
            self._run_pre_enqueue(qpi)
            if qpi.gated:
                if qpi.key not in self._unschedulable:
                    self._add_unschedulable(qpi, label)
                return False
        self._unschedulable.pop(qpi.key, None)
        self._backoff.add(qpi)
        self._count(BACKOFF_Q, label)
        if self._pop_from_backoff_q:
            self._wake()
        return True

    def _add_unschedulable(self, qpi: QueuedPodInfo, label: str) -> None:
        key = qpi.key
        if key not in self._unschedulable:
            self._count("Gated" if qpi.gated else UNSCHEDULABLE_Q, label)
        self._unschedulable[key] = qpi

    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> None:
        result = self._pre_enqueue(qpi.pod_info.pod) if self._pre_enqueue is not None else None
        if result is None or result[0].is_success():
            qpi.gating_plugin = ""
            return
        plugin = result[1]
        qpi.unschedulable_plugins.add(plugin)
        qpi.gating_plugin = plugin
        qpi.gating_plugin_events = self._decide.gating_events(qpi.pod, plugin)

    def _count(self, queue: str, label: str) -> None:
        k = (queue, label)
        self._incoming[k] = self._incoming.get(k, 0) + 1

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for w in waiters:
            if not w.done():
                w.set_result(None)

    # --- periodic flushes ------------------------------------------------------------------

    def _stopping(self) -> bool:
        return self._closed

    def flush_backoff_q_completed(self) -> None:
        """Move every pod whose backoff is over to activeQ (upstream: every second)."""
        for qpi in self._backoff.pop_all_completed():
            self._move_to_active(qpi, ev.BACKOFF_COMPLETE, from_backoff=True)

    def flush_unschedulable_pods_leftover(self) -> None:
        """Move pods that waited longer than ``pod_max_in_unschedulable`` (upstream: every 30 s)."""
        now = self._clock.now()
        stale = [q for q in self._unschedulable.values() if now - q.timestamp > self._max_in_unschedulable]
        if stale:
            self._move_pods(stale, ev.EventUnschedulableTimeout, None, None)

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


_UNSCHEDULED_POD_ADD: Final = str(ev.EventUnscheduledPodAdd)
_UNSCHEDULED_POD_UPDATE: Final = str(ev.EventUnscheduledPodUpdate)
"""The two events' labels, formatted once (a label is formatted from the event's enums)."""
_NOMINATE_ON: Final = frozenset({_UNSCHEDULED_POD_ADD, _UNSCHEDULED_POD_UPDATE})


def _key(qpi: QueuedPodInfo) -> str:
    meta = qpi.pod_info.pod.metadata  # ``qpi.key`` without the property
    return f"{meta.namespace}/{meta.name}"


def _pod_key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"
