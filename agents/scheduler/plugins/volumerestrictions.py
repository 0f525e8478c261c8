"""``VolumeRestrictions`` (upstream ``plugins/volumerestrictions/volume_restrictions.go``,
v1.34): PreFilter (with AddPod/RemovePod), Filter.

==========  ==================================================================================
point       behaviour
==========  ==================================================================================
PreFilter   the pod's ``persistentVolumeClaim`` claims with the ``ReadWriteOncePod`` access
            mode, and how many of them a scheduled pod already uses (anywhere in the cluster,
            upstream's ``StorageInfos().IsPVCUsedByPods``). A claim missing →
            UnschedulableAndUnresolvable ``persistentvolumeclaim "x" not found``. Nothing to
            check → ``Skip``
AddPod /    a simulated pod (preemption, nominated pods) using one of those claims adds /
RemovePod   removes a reference
Filter      a reference left → ``Unschedulable`` ``node has pod using PersistentVolumeClaim
            with the same name and ReadWriteOncePod access mode`` (on every node: preempting
            the user may help, so not ...AndUnresolvable)
==========  ==================================================================================

The in-tree disk conflicts (GCE PD, AWS EBS, RBD, iSCSI inline pod volumes: ``node(s) had no
available disk``) cannot arise: pod volumes here have no inline disk sources.

Events: Pod Delete (the deleted pod used one of the pod's claims), Node Add, PVC Add (a claim
of the pod).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
    NodeInfo,
    PodInfo,
    QueueingHint,
    Status,
)
from agents.scheduler.plugins.helper import volume_listers
from emulator.base.api.core import Pod

__all__ = ["ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT", "NAME", "PRE_FILTER_STATE_KEY", "VolumeRestrictions"]

NAME: Final = "VolumeRestrictions"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: Final = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"
_SKIP: Final = Status(Code.Skip)
_CONFLICT: Final = Status(Code.Unschedulable, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)


def _claim_names(pod: Pod) -> list[str]:
    return [v.persistent_volume_claim.claim_name for v in pod.spec.volumes if v.persistent_volume_claim is not None]


@dataclass(slots=True)
class _State:
    rwop_claims: frozenset[str]
    conflicting: int

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicting)

    def update_with_pod(self, pod: Pod, delta: int) -> None:
        self.conflicting += delta * sum(1 for n in _claim_names(pod) if n in self.rwop_claims)


class VolumeRestrictions:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle
        self.listers = volume_listers(handle)

    def __repr__(self) -> str:
        return "<VolumeRestrictions>"

    def _used_claims(self) -> set[tuple[str, str]]:
        """(namespace, claim) of every scheduled pod in the snapshot."""
        used: set[tuple[str, str]] = set()
        if self.handle is None:
            return used
        for ni in self.handle.snapshot_shared_lister().node_info_list:
            for pi in ni.pods:
                ns = pi.pod.metadata.namespace
                used.update((ns, n) for n in _claim_names(pi.pod))
        return used

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        if not pod.spec.volumes:  # most pods: no call at all
            return None, _SKIP
        names = _claim_names(pod)
        if not names:
            return None, _SKIP
        ns = pod.metadata.namespace
        rwop: list[str] = []
        for name in names:
            pvc = self.listers.pvc(ns, name) if self.listers is not None else None
            if pvc is None:
                return None, Status(Code.UnschedulableAndUnresolvable, f'persistentvolumeclaim "{name}" not found')
            if READ_WRITE_ONCE_POD in pvc.spec.access_modes and name not in rwop:
                rwop.append(name)
        if not rwop:
            return None, _SKIP
        used = self._used_claims()
        conflicting = sum(1 for n in rwop if (ns, n) in used)
        if conflicting == 0:
            return None, _SKIP
        state.write(PRE_FILTER_STATE_KEY, _State(frozenset(rwop), conflicting))
        return None, SUCCESS

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        try:
            s: _State = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return Status(Code.Error, f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_info_to_add.pod, 1)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        try:
            s: _State = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return Status(Code.Error, f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_info_to_remove.pod, -1)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        try:
            s: _State = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return Status(Code.Error, f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        return _CONFLICT if s.conflicting > 0 else SUCCESS

    # --- events -------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete), self.is_schedulable_after_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add), self.is_schedulable_after_pvc_added
            ),
        ]

    @staticmethod
    def is_schedulable_after_pvc_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if new.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue if new.metadata.name in _claim_names(pod) else QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if old is None:
            return QueueingHint.Queue
        if old.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QueueSkip
        mine = set(_claim_names(pod))
        if any(n in mine for n in _claim_names(old)):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip
