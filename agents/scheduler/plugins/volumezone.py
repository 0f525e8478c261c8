"""``VolumeZone`` (upstream ``plugins/volumezone/volume_zone.go``, v1.34): PreFilter, Filter.

==========  ==================================================================================
point       behaviour
==========  ==================================================================================
PreFilter   for each ``persistentVolumeClaim`` volume: the bound PV's zone/region labels
            (``topology.kubernetes.io/{zone,region}`` and the beta
            ``failure-domain.beta.kubernetes.io/{zone,region}``; ``a__b`` is the set {a, b}).
            An unbound claim of a WaitForFirstConsumer class is passed over. None → ``Skip``.
            UnschedulableAndUnresolvable: ``PersistentVolumeClaim had no name``, the claim
            missing (``persistentvolumeclaim "x" not found``), an unbound claim without class
            (``PersistentVolumeClaim had no pv name and storageClass name``), its class
            missing (``storageclass.storage.k8s.io "x" not found``), an unbound claim of an
            Immediate class (``PersistentVolume had no name``), the PV missing
            (``persistentvolume "x" not found``)
Filter      a node with none of the topology labels passes; else each PV label's key (or, for a
            beta key the node lacks, its GA twin) must carry a value in the PV's set, else
            UnschedulableAndUnresolvable ``node(s) had no available volume zone``
==========  ==================================================================================

Events: StorageClass Add (WaitForFirstConsumer classes), Node Add|UpdateNodeLabel, PVC
Add|Update (a claim of the pod), PV Add|Update (new, or its topology labels changed).
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
    QueueingHint,
    Status,
)
from agents.scheduler.plugins.helper import volume_listers
from emulator.base.api.core import Pod
from emulator.base.api.storage import BETA_STORAGE_CLASS

__all__ = ["ERR_REASON_CONFLICT", "NAME", "PRE_FILTER_STATE_KEY", "TOPOLOGY_LABELS", "VolumeZone"]

NAME: Final = "VolumeZone"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"
TOPOLOGY_LABELS: Final = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)
_GA: Final = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}
_SKIP: Final = Status(Code.Skip)


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


@dataclass(frozen=True, slots=True)
class _State:
    topologies: tuple[PVTopology, ...]

    def clone(self) -> _State:
        return self


def _unresolvable(msg: str) -> Status:
    return Status(Code.UnschedulableAndUnresolvable, msg)


def _zones(value: str) -> frozenset[str]:
    """Upstream ``LabelZonesToSet``: ``a__b`` → {a, b}."""
    return frozenset(z for z in value.split("__") if z)


def pv_topologies(pv: Any) -> list[PVTopology]:
    labels = pv.metadata.labels
    return [PVTopology(pv.metadata.name, k, _zones(labels[k])) for k in TOPOLOGY_LABELS if k in labels]


class VolumeZone:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.listers = volume_listers(handle)

    def __repr__(self) -> str:
        return "<VolumeZone>"

    def _pv_topologies(self, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        out: list[PVTopology] = []
        ns = pod.metadata.namespace
        ls = self.listers
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is None:
                continue
            name = v.persistent_volume_claim.claim_name
            if not name:
                return out, _unresolvable("PersistentVolumeClaim had no name")
            pvc = ls.pvc(ns, name) if ls is not None else None
            if pvc is None:
                return out, _unresolvable(f'persistentvolumeclaim "{name}" not found')
            pv_name = pvc.spec.volume_name
            if not pv_name:
                sc = pvc.metadata.annotations.get(BETA_STORAGE_CLASS, pvc.spec.storage_class_name or "")
                if not sc:
                    return out, _unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                cls = ls.storage_class(sc)
                if cls is None:
                    return out, _unresolvable(f'storageclass.storage.k8s.io "{sc}" not found')
                if cls.volume_binding_mode == "WaitForFirstConsumer":
                    continue
                return out, _unresolvable("PersistentVolume had no name")
            pv = ls.pv(pv_name)
            if pv is None:
                return out, _unresolvable(f'persistentvolume "{pv_name}" not found')
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        volumes = pod.spec.volumes
        if not volumes or not any(v.persistent_volume_claim is not None for v in volumes):
            return None, _SKIP
        topologies, status = self._pv_topologies(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, _SKIP
        state.write(PRE_FILTER_STATE_KEY, _State(tuple(topologies)))
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        try:
            s: _State = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return SUCCESS
        node = node_info.node
        if node is None:
            return SUCCESS
        labels = node.metadata.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return SUCCESS
        for t in s.topologies:
            value = labels.get(t.key)
            if value is None:
                ga = _GA.get(t.key)
                value = labels.get(ga) if ga is not None else None
            if value is None or value not in t.values:
                return _unresolvable(ERR_REASON_CONFLICT)
        return SUCCESS

    # --- events -------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.Add | ActionType.Update
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.StorageClass, ActionType.Add), self.is_schedulable_after_storage_class_added
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, add_update), self.is_schedulable_after_pvc_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolume, add_update), self.is_schedulable_after_pv_change
            ),
        ]

    @staticmethod
    def is_schedulable_after_storage_class_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if new.volume_binding_mode != "WaitForFirstConsumer":
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    @staticmethod
    def is_schedulable_after_pvc_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if new.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QueueSkip
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is not None and v.persistent_volume_claim.claim_name == new.metadata.name:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_pv_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if old is None:
            return QueueingHint.Queue
        if pv_topologies(old) != pv_topologies(new):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip
