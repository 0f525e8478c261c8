"""``Coscheduling``: an example out-of-tree gang-scheduling plugin (Permit-based), a simplified
kubernetes-sigs/scheduler-plugins ``coscheduling`` without the PodGroup CRD.

A gang is declared on the pods themselves:

* label ``scheduling.x-k8s.io/pod-group: <group name>`` (the group, per namespace);
* annotation ``scheduling.x-k8s.io/min-available: "<n>"`` (how many members must be placed
  before any is bound; every member should carry the same value — the permitted pod's is used;
  absent means 1).

Pods without the label are not gang members and pass every point untouched. Enable it with
``schedulerOptions.plugins: {Coscheduling: "agents.scheduler.examples.coscheduling:Coscheduling"}``
and, in the profile, ``multiPoint: {enabled: [{name: Coscheduling}]}`` (it implements Reserve
and Permit). Args: ``permitWaitingTimeSeconds`` (default 60).

================  ==============================================================================
point             behaviour
================  ==============================================================================
Permit            count the group's members already placed — pods of the group on a node in the
                  cycle's snapshot (bound or assumed) and pods of the group waiting at Permit,
                  by uid — plus this one. Fewer than min-available: Wait (timeout
                  ``permitWaitingTimeSeconds``; on timeout the runtime rejects the pod). Enough:
                  allow every waiting member of the group and return Success.
                  A bad min-available annotation: UnschedulableAndUnresolvable.
Reserve           nothing (Success).
Unreserve         a member failed after Reserve (rejected, timed out, bind failed): reject the
                  group's other waiting members ("rejection in Unreserve"), so the gang is retried
                  as a whole rather than holding nodes.
events            Pod/Add of a pod of the same group (a new member may complete the gang): Queue;
                  Node/Add (the gang, rejected as a whole, may fit on a bigger cluster): Queue.
================  ==============================================================================

It does not own a gang-aware queue sort, PodGroup objects or a PreFilter quorum check (the
upstream plugin's ``PreFilter`` needs a pod lister the Handle does not expose).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agents.scheduler.framework.interface import Handle
from agents.scheduler.framework.types import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    QueueingHint,
    Status,
)
from agents.scheduler.framework.waiting_pods import WaitingPod
from emulator.base.api.core import Pod

__all__ = ["DEFAULT_PERMIT_WAITING_TIME_SECONDS", "MIN_AVAILABLE_ANNOTATION", "NAME", "POD_GROUP_LABEL", "Coscheduling"]

NAME: Final = "Coscheduling"
POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
MIN_AVAILABLE_ANNOTATION: Final = "scheduling.x-k8s.io/min-available"
DEFAULT_PERMIT_WAITING_TIME_SECONDS: Final = 60.0


def group_of(pod: Pod) -> tuple[str, str] | None:
    """(namespace, group name) of a gang member, else ``None``."""
    group = pod.metadata.labels.get(POD_GROUP_LABEL)
    return (pod.metadata.namespace, group) if group else None


class Coscheduling:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        args = dict(args or {})
        timeout = args.pop("permitWaitingTimeSeconds", DEFAULT_PERMIT_WAITING_TIME_SECONDS)
        if args:
            raise ValueError(f"{NAME} args: unknown field(s) {sorted(args)} (expected permitWaitingTimeSeconds)")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"{NAME} args: permitWaitingTimeSeconds must be a positive number, got {timeout!r}")
        self.permit_waiting_time = float(timeout)
        self._handle = handle

    # Reserve

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        group = group_of(pod)
        if group is None:
            return
        uid = pod.metadata.uid

        def reject(wp: WaitingPod) -> None:
            if wp.uid != uid and group_of(wp.pod) == group:
                wp.reject(NAME, "rejection in Unreserve")

        self._handle.iterate_over_waiting_pods(reject)

    # Permit

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        group = group_of(pod)
        if group is None:
            return SUCCESS, 0.0
        raw = pod.metadata.annotations.get(MIN_AVAILABLE_ANNOTATION, "1")
        try:
            min_available = int(raw)
        except ValueError:
            min_available = 0
        if min_available < 1:
            msg = (
                f'pod group "{group[1]}": annotation {MIN_AVAILABLE_ANNOTATION} must be a positive integer, got "{raw}"'
            )
            return Status(Code.UnschedulableAndUnresolvable, msg), 0.0
        members = self._placed_members(group, pod.metadata.uid)
        if len(members) + 1 < min_available:
            return Status(Code.Wait, f'pod group "{group[1]}": {len(members) + 1}/{min_available} members placed'), (
                self.permit_waiting_time
            )

        def allow(wp: WaitingPod) -> None:
            if group_of(wp.pod) == group:
                wp.allow(NAME)

        self._handle.iterate_over_waiting_pods(allow)
        return SUCCESS, 0.0

    def _placed_members(self, group: tuple[str, str], own_uid: str) -> dict[str, None]:
        """UIDs of the group's other members on a node of the snapshot or waiting at Permit."""
        uids: dict[str, None] = {}
        try:
            node_infos = self._handle.snapshot_shared_lister().node_info_list
        except RuntimeError:  # no snapshot (unit use): waiting pods only
            node_infos = []
        for ni in node_infos:
            for pi in ni.pods:
                if pi.uid != own_uid and group_of(pi.pod) == group:
                    uids[pi.uid] = None

        def add(wp: WaitingPod) -> None:
            status = wp.status
            if wp.uid != own_uid and group_of(wp.pod) == group and (status is None or status.is_success()):
                uids[wp.uid] = None

        self._handle.iterate_over_waiting_pods(add)
        return uids

    # queueing

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Add), self.is_schedulable_after_pod_add),
            # A gang rejected as a whole may fit once the cluster grows: retry it on a new node.
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
        ]

    @staticmethod
    def is_schedulable_after_pod_add(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        group = group_of(pod)
        if new is None or group is None or new.metadata.uid == pod.metadata.uid or group_of(new) != group:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def __repr__(self) -> str:
        return f"<Coscheduling permitWaitingTimeSeconds={self.permit_waiting_time:g}>"
