"""``NodeVolumeLimits`` (upstream ``plugins/nodevolumelimits/csi.go``, v1.34): PreFilter, Filter.

==========  ==================================================================================
point       behaviour
==========  ==================================================================================
PreFilter   ``Skip`` unless the pod has a ``persistentVolumeClaim`` or ``ephemeral`` volume
Filter      the pod's new volumes, as ``driver/handle``: a bound claim's PV — its CSI driver and
            volumeHandle, or an in-tree source counted as its CSI-migrated driver
            (``awsElasticBlockStore`` → ebs.csi.aws.com, ``gcePersistentDisk`` →
            pd.csi.storage.gke.io, ``azureDisk`` → disk.csi.azure.com, ``cinder`` →
            cinder.csi.openstack.org); an unbound claim (or one whose PV is not there yet)
            counts under its StorageClass's provisioner (in-tree provisioners translated the
            same way). Volumes already used by the node's pods are not new; per driver,
            attached + new > the CSINode's ``allocatable.count`` → ``Unschedulable``
            ``node(s) exceed max volume count``. The pod's own claim missing →
            UnschedulableAndUnresolvable ``looking up PVC ns/x: persistentvolumeclaim "x" not
            found``; a node without CSINode or limits passes
==========  ==================================================================================

Events: CSINode Add, CSINode Update (a driver's limit rose or went), Pod Delete (an assigned
pod with claims), PVC Add. (VolumeAttachment Delete is upstream's too; the scheduler has no
VolumeAttachment informer, so that wake-up comes with the pod deletion that frees it.)
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
    NodeInfo,
    QueueingHint,
    Status,
)
from agents.scheduler.plugins.helper import pod_claims, volume_listers
from emulator.base.api.core import Pod
from emulator.base.api.csimigration import MIGRATED_PROVISIONERS, csi_source
from emulator.base.api.storage import BETA_STORAGE_CLASS

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NAME", "NodeVolumeLimits", "csi_limits"]

NAME: Final = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
_SKIP: Final = Status(Code.Skip)
_EXCEEDED: Final = Status(Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


class _NotFound(Exception):
    pass


def csi_limits(csi_node: Any) -> dict[str, int]:
    """Upstream ``getVolumeLimits``: driver → ``allocatable.count``, where set."""
    if csi_node is None:
        return {}
    return {
        d.name: d.allocatable.count
        for d in csi_node.spec.drivers
        if d.allocatable is not None and d.allocatable.count is not None
    }


class NodeVolumeLimits:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.listers = volume_listers(handle)

    def __repr__(self) -> str:
        return "<NodeVolumeLimits>"

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        return (None, SUCCESS) if pod.spec.volumes and pod_claims(pod) else (None, _SKIP)

    def pre_filter_extensions(self) -> None:
        return None

    def _from_class(self, pvc: Any) -> tuple[str, str] | None:
        """Upstream ``getCSIDriverInfoFromSC``: (driver, a per-claim handle) or None."""
        name = pvc.metadata.annotations.get(BETA_STORAGE_CLASS, pvc.spec.storage_class_name or "")
        cls = self.listers.storage_class(name) if name else None
        if cls is None or not cls.provisioner:
            return None
        driver = MIGRATED_PROVISIONERS.get(cls.provisioner, cls.provisioner)
        return driver, f"{pvc.metadata.namespace}-{pvc.metadata.name}"

    def _volume_of(self, pvc: Any, new_pod: bool) -> tuple[str, str] | None:
        if not pvc.spec.volume_name:
            return self._from_class(pvc)
        pv = self.listers.pv(pvc.spec.volume_name)
        if pv is None:
            return self._from_class(pvc) if new_pod else None
        source = csi_source(pv)  # in-tree sources counted as their CSI-migrated driver's volume
        if source is None:
            return None
        driver, handle = source
        return driver, handle or pv.metadata.name

    def _attachable(self, pod: Pod, new_pod: bool, out: dict[str, str]) -> None:
        """Upstream ``filterAttachableVolumes``: ``driver/handle`` → driver into ``out``."""
        ns = pod.metadata.namespace
        for claim in pod_claims(pod):
            pvc = self.listers.pvc(ns, claim.name)
            if pvc is None:
                if new_pod:
                    raise _NotFound(f'looking up PVC {ns}/{claim.name}: persistentvolumeclaim "{claim.name}" not found')
                continue
            if claim.ephemeral and not any(
                o.uid == pod.metadata.uid and o.controller for o in pvc.metadata.owner_references
            ):
                if new_pod:
                    raise ValueError(
                        f"PVC {ns}/{claim.name} was not created for pod {ns}/{pod.metadata.name} (pod is not owner)"
                    )
                continue
            volume = self._volume_of(pvc, new_pod)
            if volume is not None:
                out[f"{volume[0]}/{volume[1]}"] = volume[0]

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None or self.listers is None or not pod.spec.volumes:
            return SUCCESS
        new: dict[str, str] = {}
        try:
            self._attachable(pod, True, new)
        except _NotFound as err:
            return Status(Code.UnschedulableAndUnresolvable, str(err))
        except ValueError as err:
            return Status(Code.Error, str(err))
        if not new:
            return SUCCESS
        limits = csi_limits(self.listers.csi_node(node.metadata.name))
        if not limits:
            return SUCCESS
        attached: dict[str, str] = {}
        for pi in node_info.pods:
            try:
                self._attachable(pi.pod, False, attached)
            except ValueError:
                continue
        attached_count: dict[str, int] = {}
        for handle, driver in attached.items():
            new.pop(handle, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return _EXCEEDED
        return SUCCESS

    # --- events -------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, ActionType.Add)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSINode, ActionType.Update), self.is_schedulable_after_csi_node_updated
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete), self.is_schedulable_after_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add)),
        ]

    @staticmethod
    def is_schedulable_after_csi_node_updated(pod: Pod, old: Any, new: Any) -> QueueingHint:
        before, after = csi_limits(old), csi_limits(new)
        for driver, limit in before.items():
            if driver not in after or after[driver] > limit:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if old is None:
            return QueueingHint.Queue
        if not old.spec.node_name or not pod_claims(old):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue
