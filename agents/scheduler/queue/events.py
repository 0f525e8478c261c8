"""The queue's own cluster events and pod-change classification (upstream ``framework/events.go``).

This module owns the events the scheduling queue itself raises or interprets:

* the named events ``EventAssignedPodAdd`` ... ``EventForceActivate`` and the queue-internal
  labels (``ScheduleAttemptFailure``, ``BackoffComplete``, ``PopFromBackoffQ``, ...);
* ``pod_scheduling_properties_change``: an unscheduled/assigned pod update as the specific
  ``UpdatePod*`` events (labels, scale-down, scheduling gates eliminated, tolerations, generated
  resource claims in ``status.resourceClaimStatuses``), falling back to a generic ``Update``;
* ``is_pod_updated``: the QueueingHints-off test "did anything but status change?".

It does not own node-change classification or the informer handlers (the scheduler's event
handlers do that and call the queue with the resulting events).
"""

from __future__ import annotations

from typing import Final

import msgspec

from emulator.base.api.core import Pod, PodStatus
from emulator.base.api.resources import pod_requests, same_requests

from ..framework.types import ActionType, ClusterEvent, EventResource

__all__ = [
    "BACKOFF_COMPLETE",
    "FORCE_ACTIVATE",
    "POP_FROM_BACKOFF_Q",
    "SCHEDULE_ATTEMPT_FAILURE",
    "SHARED_POD_UPDATES",
    "UNSCHEDULABLE_TIMEOUT",
    "EventAssignedPodAdd",
    "EventAssignedPodDelete",
    "EventAssignedPodUpdate",
    "EventForceActivate",
    "EventUnschedulableTimeout",
    "EventUnscheduledPodAdd",
    "EventUnscheduledPodDelete",
    "EventUnscheduledPodUpdate",
    "is_pod_updated",
    "pod_scheduling_properties_change",
    "properties_change_reference",
]

SCHEDULE_ATTEMPT_FAILURE: Final = "ScheduleAttemptFailure"
BACKOFF_COMPLETE: Final = "BackoffComplete"
POP_FROM_BACKOFF_Q: Final = "PopFromBackoffQ"
FORCE_ACTIVATE: Final = "ForceActivate"
UNSCHEDULABLE_TIMEOUT: Final = "UnschedulableTimeout"

_Assigned, _Unscheduled = EventResource.AssignedPod, EventResource.UnscheduledPod

EventAssignedPodAdd: Final = ClusterEvent(_Assigned, ActionType.Add)
EventAssignedPodUpdate: Final = ClusterEvent(_Assigned, ActionType.Update)
EventAssignedPodDelete: Final = ClusterEvent(_Assigned, ActionType.Delete)
EventUnscheduledPodAdd: Final = ClusterEvent(_Unscheduled, ActionType.Add)
EventUnscheduledPodUpdate: Final = ClusterEvent(_Unscheduled, ActionType.Update)
EventUnscheduledPodDelete: Final = ClusterEvent(_Unscheduled, ActionType.Delete)
EventUnschedulableTimeout: Final = ClusterEvent(EventResource.WildCard, ActionType.All, UNSCHEDULABLE_TIMEOUT)
"""Moves pods that sat in unschedulablePods longer than ``pod_max_in_unschedulable``."""
EventForceActivate: Final = ClusterEvent(EventResource.WildCard, ActionType.All, FORCE_ACTIVATE)
"""``Activate``: a wildcard aimed at one pod (carried as ``new_obj``)."""


def pod_scheduling_properties_change(new: Pod, old: Pod, alike: bool = False) -> list[ClusterEvent]:
    """Upstream ``PodSchedulingPropertiesChange``: the ``UpdatePod*`` events of an update.

    The resource is ``AssignedPod`` when ``new`` has a node, else ``UnscheduledPod``. Checked in
    upstream's order: labels, request scale-down, scheduling gates eliminated, tolerations,
    generated resource claims (``extractPodGeneratedResourceClaimChange``); none
    of them gives the generic ``Update`` (only plugins registering Pod/Update hear it).

    ``alike``: the caller found equal specs and ``same_requests(new, old)`` already.
    """
    if alike or ((new.spec is old.spec or new.spec == old.spec) and same_requests(new, old)):
        # Gates and tolerations come from the spec, requests from the spec and the status's
        # resize state: only the labels and the generated claims (status) may differ.
        # ``properties_change_reference`` without the shortcut.
        if new.status.resource_claim_statuses != old.status.resource_claim_statuses:
            return properties_change_reference(new, old)
        labels = new.metadata.labels != old.metadata.labels
        return [_UPDATES[bool(new.spec.node_name), labels]]
    return properties_change_reference(new, old)


_UPDATES: Final = {
    (assigned, labels): ClusterEvent(
        _Assigned if assigned else _Unscheduled, ActionType.UpdatePodLabel if labels else ActionType.Update
    )
    for assigned in (False, True)
    for labels in (False, True)
}
"""``pod_scheduling_properties_change``'s four one-event answers, built once (they are immutable)."""
SHARED_POD_UPDATES: Final = tuple(_UPDATES.values())
"""The same four events (the queue dismisses, by identity, those no plugin registered for)."""


def properties_change_reference(new: Pod, old: Pod) -> list[ClusterEvent]:
    """``pod_scheduling_properties_change`` checking every property whatever the specs."""
    resource = _Assigned if new.spec.node_name else _Unscheduled
    actions: list[ActionType] = []
    if new.metadata.labels != old.metadata.labels:
        actions.append(ActionType.UpdatePodLabel)
    if _scaled_down(new, old):
        actions.append(ActionType.UpdatePodScaleDown)
    if not new.spec.scheduling_gates and old.spec.scheduling_gates:
        actions.append(ActionType.UpdatePodSchedulingGatesEliminated)
    if len(new.spec.tolerations) != len(old.spec.tolerations):
        # The API only lets tolerations be added, so a length change is any change.
        actions.append(ActionType.UpdatePodToleration)
    if new.status.resource_claim_statuses != old.status.resource_claim_statuses:
        actions.append(ActionType.UpdatePodGeneratedResourceClaim)
    if not actions:
        actions.append(ActionType.Update)
    return [ClusterEvent(resource, a) for a in actions]


def _scaled_down(new: Pod, old: Pod) -> bool:
    """Some request of ``old`` was removed or lowered in ``new`` (upstream ``extractPodScaleDown``)."""
    new_req = pod_requests(new)
    for name, old_value in pod_requests(old).items():
        new_value = new_req.get(name)
        if new_value is None or old_value > new_value:
            return True
    return False


_EMPTY_STATUS: Final = PodStatus()


def _strip(pod: Pod) -> Pod:
    meta = msgspec.structs.replace(pod.metadata, resource_version="", generation=0, finalizers=[])
    return msgspec.structs.replace(pod, metadata=meta, status=_EMPTY_STATUS)


def is_pod_updated(old: Pod, new: Pod) -> bool:
    """Upstream ``isPodUpdated``: anything but status, resourceVersion, generation, finalizers changed."""
    return _strip(old) != _strip(new)
