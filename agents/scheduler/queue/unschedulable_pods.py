"""unschedulablePods' exits: the cluster events that may make parked pods schedulable, asked
through the queueing hints, and the leftover flush (upstream ``MoveAllToActiveOrBackoffQueue``,
``AssignedPodAdded``, ``AssignedPodUpdated``, ``movePodsToActiveOrBackoffQueue`` and
``flushUnschedulablePodsLeftover`` in ``backend/queue/scheduling_queue.go``, v1.34).

What this module owns: ``UnschedulablePods``, the part of ``SchedulingQueue`` that, for an event
of interest, asks each parked pod's hint (``hints.py``) and requeues it by the strategy (a gated
pod only on its gating plugin's events); records the event for in-flight pods (QueueingHints
on, protection on) and bumps ``moveRequestCycle``; with hints off, narrows Node add/update
events by ``pre_check_for_node``; and moves pods parked longer than
``pod_max_in_unschedulable`` (``UnschedulableTimeout``).

What it does not own: the hint decisions (``hints.py``), the moves themselves and the pool's
additions (``moves.py``), the timers that call the leftover flush (``SchedulingQueue.run``), nor
the in-flight replay when an attempt fails (``SchedulingQueue.add_unschedulable_if_not_present``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from emulator.base.api.core import Node, Pod

from ..framework.types import ActionType, ClusterEvent, EventResource, PodInfo
from . import events as ev
from .hints import QueueingStrategy
from .moves import QueueMoves
from .queued_pod_info import QueuedPodInfo

__all__ = ["PreCheck", "UnschedulablePods"]

PreCheck = Callable[[Pod], bool]

_NODE_PRECHECK_ACTIONS: Final = ActionType.Add | ActionType.Update


class UnschedulablePods(QueueMoves):
    """Requeueing parked pods on cluster events and after the timeout (a base of
    ``SchedulingQueue``)."""

    _pre_check_for_node: Callable[[Pod, Node], bool] | None
    _max_in_unschedulable: float

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

    def flush_unschedulable_pods_leftover(self) -> None:
        """Move pods that waited longer than ``pod_max_in_unschedulable`` (upstream: every 30 s)."""
        now = self._clock.now()
        stale = [q for q in self._unschedulable.values() if now - q.timestamp > self._max_in_unschedulable]
        if stale:
            self._move_pods(stale, ev.EventUnschedulableTimeout, None, None)
