"""Informer events → scheduler cache and queue (upstream ``pkg/scheduler/eventhandlers.go``).

================================  ==========================================================
informer event                    action (v1.34, QueueingHints on)
================================  ==========================================================
unassigned pod add                queue.add (if a profile serves its schedulerName)
unassigned pod update             skip if assumed; queue.update; nominatedNodeName changed or
                                  removed → AssignedPodDelete for pods of lower or equal
                                  priority
unassigned pod delete             queue.delete; a pod waiting at Permit is rejected, or a
                                  nominated pod → AssignedPodDelete (lower-or-equal priority)
pod becomes assigned              queue.delete + cache.add_pod (confirms an assumed pod)
assigned pod add                  cache.add_pod; AssignedPodAdd to every unschedulable pod
assigned pod update               cache.update_pod; one event per changed property
                                  (UpdatePodLabel, UpdatePodScaleDown, ...)
assigned pod delete / terminal    cache.remove_pod; AssignedPodDelete
uid changed under the same name   delete of the old pod, add of the new one
node add / update / delete        cache; NodeAdd / one event per changed property / NodeDelete
================================  ==========================================================

With QueueingHints off (pre-1.32), assigned-pod events go through the queue's
``assigned_pod_added`` / ``assigned_pod_updated`` pre-filters, as upstream did.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from agents.scheduler.cache import CacheError
from agents.scheduler.framework.types import ActionType, ClusterEvent, EventResource
from agents.scheduler.queue import EventAssignedPodAdd, EventAssignedPodDelete, pod_scheduling_properties_change
from emulator.base.api.core import Node, Pod
from emulator.base.api.resources import same_requests

if TYPE_CHECKING:
    from agents.scheduler.cache import Cache
    from agents.scheduler.framework.runtime import Framework
    from agents.scheduler.queue import SchedulingQueue
    from emulator.base.runtime.clock import Clock

__all__ = ["EventHandlers", "NodeEvents", "node_update_events"]


class NodeEvents:
    """Node cluster events (upstream ``framework/events.go``; labels as v1.34 derives them)."""

    Add: Final = ClusterEvent(EventResource.Node, ActionType.Add)
    Delete: Final = ClusterEvent(EventResource.Node, ActionType.Delete)


def _conditions(node: Node) -> dict[str, str]:
    return {c.type: c.status for c in node.status.conditions}


def node_update_events(old: Node, new: Node) -> list[ClusterEvent]:
    """Upstream ``NodeSchedulingPropertiesChange``, in upstream's order: uncordon (reported as a
    taint change), allocatable, labels, taints, conditions (type → status), annotations."""
    actions: list[ActionType] = []
    if old.spec.unschedulable != new.spec.unschedulable and not new.spec.unschedulable:
        actions.append(ActionType.UpdateNodeTaint)
    if old.status.allocatable != new.status.allocatable:
        actions.append(ActionType.UpdateNodeAllocatable)
    if old.metadata.labels != new.metadata.labels:
        actions.append(ActionType.UpdateNodeLabel)
    if old.spec.taints != new.spec.taints:
        actions.append(ActionType.UpdateNodeTaint)
    if _conditions(old) != _conditions(new):
        actions.append(ActionType.UpdateNodeCondition)
    if old.metadata.annotations != new.metadata.annotations:
        actions.append(ActionType.UpdateNodeAnnotation)
    return [ClusterEvent(EventResource.Node, a) for a in actions]


_TERMINAL_PHASES: Final = ("Succeeded", "Failed")


def _priority(pod: Pod) -> int:
    return pod.spec.priority or 0


def _le_priority(than: Pod) -> Callable[[Pod], bool]:
    """Upstream ``getLEPriorityPreCheck``: only pods of lower or equal priority may move."""
    limit = _priority(than)
    return lambda p: _priority(p) <= limit


class EventHandlers:
    """The informer handlers of a ``Scheduler`` (a mixin: it reads the scheduler's cache,
    queue, frameworks and clock)."""

    cache: Cache
    queue: SchedulingQueue
    frameworks: dict[str, Framework]
    clock: Clock
    options: Any
    _first_seen: dict[str, float]

    def responsible_for(self, pod: Pod) -> bool:
        raise NotImplementedError

    @staticmethod
    def _terminal(pod: Pod) -> bool:
        return pod.status.phase in _TERMINAL_PHASES

    def _assigned(self, pod: Pod) -> bool:
        """In the assigned-pod view: bound and not terminal (upstream's informer filter)."""
        return bool(pod.spec.node_name) and not self._terminal(pod)

    # --- pods -----------------------------------------------------------------------------

    def _on_pod_add(self, pod: Pod) -> None:
        if self._assigned(pod):
            self._add_assigned(pod)
        elif not pod.spec.node_name and self.responsible_for(pod) and pod.metadata.deletion_timestamp is None:
            self._first_seen.setdefault(pod.metadata.uid, self.clock.now())
            self.queue.add(pod)

    def _add_assigned(self, pod: Pod) -> None:
        self.cache.add_pod(pod)
        if self.options.queueing_hints:
            self.queue.move_all_to_active_or_backoff(EventAssignedPodAdd, None, pod)
        else:
            self.queue.assigned_pod_added(pod)

    def _on_pod_update(self, old: Pod, new: Pod) -> None:
        om, nm = old.metadata, new.metadata
        if om.resource_version == nm.resource_version:
            return
        if om.uid != nm.uid:  # deleted and re-created between two list/watch views
            self._on_pod_delete(old)
            self._on_pod_add(new)
            return
        # ``_assigned`` of each, inline (every status write of a bound pod comes through here)
        was = bool(old.spec.node_name) and old.status.phase not in _TERMINAL_PHASES
        now = bool(new.spec.node_name) and new.status.phase not in _TERMINAL_PHASES
        if was and now:
            # A status write keeps the spec object: its requests are compared once, for the
            # cache's PodInfo and the events both.
            alike = new.spec is old.spec and same_requests(new, old)
            self.cache.update_pod(old, new, alike=alike)
            events = pod_scheduling_properties_change(new, old, alike)
            if self.options.queueing_hints:
                dismissed = self.queue.dismissed_event_ids
                for event in events:
                    if id(event) not in dismissed:  # (its move would stop at the interest check)
                        self.queue.move_all_to_active_or_backoff(event, old, new)
            else:
                for event in events:
                    self.queue.assigned_pod_updated(old, new, event)
        elif was:  # terminal now (or, oddly, unbound): it left the assigned view
            self._remove_assigned(old)
        elif now:  # bound (by us or anybody): leaves the unscheduled view, enters the assigned one
            if self.responsible_for(old):
                self.queue.delete(old)
            if not self.cache.is_assumed_pod(new):  # bound by someone else: no binding cycle of ours
                self._first_seen.pop(new.metadata.uid, None)
            self._add_assigned(new)
        elif not new.spec.node_name and self.responsible_for(new):
            if self.cache.is_assumed_pod(new):
                return
            self.queue.update(old, new)
            old_nom, new_nom = old.status.nominated_node_name, new.status.nominated_node_name
            if old_nom and old_nom != new_nom:
                # The pod no longer holds room on old_nom: others may fit there now (v1.33+).
                self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, old, None, _le_priority(old))

    def _remove_assigned(self, pod: Pod) -> None:
        with contextlib.suppress(CacheError):  # a pod the cache never saw
            self.cache.remove_pod(pod)
        self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, pod, None)

    def _on_pod_delete(self, pod: Pod) -> None:
        if pod.spec.node_name:
            if not self._terminal(pod):
                self._remove_assigned(pod)
            return
        if not self.responsible_for(pod):
            return
        self.queue.delete(pod)
        self._first_seen.pop(pod.metadata.uid, None)
        fwk = self.frameworks[pod.spec.scheduler_name]
        if fwk.reject_waiting_pod(pod.metadata.uid):
            self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, pod, None)
        elif pod.status.nominated_node_name:
            self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, pod, None, _le_priority(pod))

    # --- nodes ----------------------------------------------------------------------------

    def _on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NodeEvents.Add, None, node)

    def _on_node_update(self, old: Node, new: Node) -> None:
        self.cache.update_node(old, new)
        for event in node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def _on_node_delete(self, node: Node) -> None:
        self.queue.move_all_to_active_or_backoff(NodeEvents.Delete, node, None)
        self.cache.remove_node(node)
