"""``VolumeBinding`` (upstream ``volumebinding/volume_binding.go``, v1.34).

==========  ==================================================================================
point       behaviour
==========  ==================================================================================
PreFilter   no PVC / ephemeral volume → empty state, ``Skip``. A claim missing →
            UnschedulableAndUnresolvable ``persistentvolumeclaim "x" not found`` (an
            ephemeral one: ``waiting for ephemeral volume controller to create the
            persistentvolumeclaim "x"``); Lost → ``... bound to non-existent persistentvolume``;
            being deleted → ``persistentvolumeclaim "x" is being deleted``; an unbound
            Immediate claim → UnschedulableAndUnresolvable ``pod has unbound immediate
            PersistentVolumeClaims``
Filter      the binder's ``find_pod_volumes``; its reasons → UnschedulableAndUnresolvable
PreScore    ``Skip`` (StorageCapacityScoring, the only scorer, is off by default in v1.34)
Reserve     the node's PodVolumes assumed (all bound: nothing to do in PreBind). Without
            PreFilter state (a framework driven by hand) Reserve and PreBind succeed doing
            nothing, where upstream would return its "not found" error
PreBind     PV claimRefs and claims' ``selected-node`` written, then wait for the PV controller
            (``bindTimeoutSeconds``, default 600); a failure → Error, assumptions reverted
Unreserve   assumptions reverted
==========  ==================================================================================

Events and hints (QueueingHints on): StorageClass Add|Update (allowedTopologies changed),
PVC Add|Update (a claim of the pod), PV Add|Update, Node Add|UpdateNodeLabel, CSINode
Add|Update (the migrated-plugins annotation changed), CSIDriver Update (storage capacity
turned off for a driver of the pod's CSI volumes: none here, pods have no inline CSI volumes),
CSIStorageCapacity Add|Update (its volume limit grew).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agents.scheduler.args import VolumeBindingArgs, decode_args
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
from emulator.base.api.core import Pod
from emulator.base.api.csimigration import MIGRATED_PLUGINS_ANNOTATION

from ..helper import pod_claims, volume_listers
from .binder import BindError, ClaimNotFound, PodVolumeClaims, PodVolumes, VolumeBinder
from .pvutil import volume_limit

__all__ = ["ERR_UNBOUND_IMMEDIATE", "NAME", "STATE_KEY", "VolumeBinding"]

NAME: Final = "VolumeBinding"
STATE_KEY: Final = NAME
ERR_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
_SKIP: Final = Status(Code.Skip)


@dataclass(slots=True)
class _State:
    claims: PodVolumeClaims | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False

    def clone(self) -> _State:
        return self  # upstream shares the pointer


_EMPTY_STATE: Final = _State()


def _unresolvable(msg: str) -> Status:
    return Status(Code.UnschedulableAndUnresolvable, msg)


class VolumeBinding:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.args = decode_args(VolumeBindingArgs, args)
        self.handle = handle
        self.listers = volume_listers(handle)
        self.binder = VolumeBinder(self.listers, float(self.args.bind_timeout_seconds or 0))

    def __repr__(self) -> str:
        return "<VolumeBinding>"

    # --- PreFilter ----------------------------------------------------------------------

    def _claims_problem(self, pod: Pod) -> str | None:
        """Upstream ``podHasPVCs``' error, or None."""
        ns = pod.metadata.namespace
        for claim in pod_claims(pod):
            pvc = self.listers.pvc(ns, claim.name) if self.listers is not None else None
            if pvc is None:
                if claim.ephemeral:
                    return f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{claim.name}"'
                return f'persistentvolumeclaim "{claim.name}" not found'
            if pvc.status.phase == "Lost":
                return (
                    f'persistentvolumeclaim "{claim.name}" bound to non-existent persistentvolume '
                    f'"{pvc.spec.volume_name}"'
                )
            if pvc.metadata.deletion_timestamp is not None:
                return f'persistentvolumeclaim "{claim.name}" is being deleted'
            if claim.ephemeral and not any(
                o.uid == pod.metadata.uid and o.controller for o in pvc.metadata.owner_references
            ):
                return f"PVC {ns}/{claim.name} was not created for pod {ns}/{pod.metadata.name} (pod is not owner)"
        return None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        if not pod.spec.volumes or not pod_claims(pod):
            state.write(STATE_KEY, _EMPTY_STATE)
            return None, _SKIP
        problem = self._claims_problem(pod)
        if problem is not None:
            return None, _unresolvable(problem)
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except ClaimNotFound as err:
            return None, Status(Code.Error, str(err))
        if claims.unbound_immediate:
            return None, _unresolvable(ERR_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _State(claims))
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    # --- Filter -------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:
            return Status(Code.Error, "not found")
        if s.claims is None or node_info.node is None:
            return SUCCESS
        try:
            volumes, reasons = self.binder.find_pod_volumes(s.claims, node_info.node)
        except BindError as err:
            return Status(Code.Error, str(err))
        if reasons:
            return Status(Code.UnschedulableAndUnresolvable, *reasons)
        s.by_node[node_info.name] = volumes
        return SUCCESS

    # --- Score (off in v1.34's defaults) --------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        return _SKIP

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return 0, SUCCESS

    def score_extensions(self) -> None:
        return None

    # --- Reserve / PreBind ----------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:  # no PreFilter ran (a framework driven by hand): no claims known
            return SUCCESS
        if s.claims is None:  # no claim at all (the shared empty state stays untouched)
            return SUCCESS
        volumes = s.by_node.get(node_name)
        if volumes is None:
            s.all_bound = True
            return SUCCESS
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod, node_name, volumes)
        except Exception as err:
            return Status(Code.Error, str(err))
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:
            return
        volumes = s.by_node.get(node_name)
        if volumes is not None:
            self.binder.revert_assumed(volumes)

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream ``PreBindPreFlight``: Skip when every claim is already bound (or the pod
        has none), exactly the cases where ``pre_bind`` returns Success without acting."""
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:
            return _SKIP
        if s.all_bound or s.claims is None:
            return _SKIP
        return SUCCESS

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        try:
            s: _State = state.read(STATE_KEY)
        except KeyError:
            return SUCCESS
        if s.all_bound or s.claims is None:
            return SUCCESS
        volumes = s.by_node.get(node_name)
        if volumes is None:
            return Status(Code.Error, f'no pod volumes found for node "{node_name}"')
        try:
            await self.binder.bind_pod_volumes(self.handle, pod, node_name, volumes)
        except BindError as err:
            return Status(Code.Error, str(err))
        return SUCCESS

    # --- events -------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.Add | ActionType.Update
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.StorageClass, add_update), self.is_schedulable_after_storage_class_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, add_update), self.is_schedulable_after_pvc_change
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolume, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSINode, add_update), self.is_schedulable_after_csi_node_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSIDriver, ActionType.Update), self.is_schedulable_after_csi_driver_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSIStorageCapacity, add_update), self.is_schedulable_after_capacity_change
            ),
        ]

    @staticmethod
    def is_schedulable_after_csi_node_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if old is None:
            return QueueingHint.Queue
        key = MIGRATED_PLUGINS_ANNOTATION
        if old.metadata.annotations.get(key) != new.metadata.annotations.get(key):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_pvc_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if new.metadata.namespace != pod.metadata.namespace:
            return QueueingHint.QueueSkip
        if any(c.name == new.metadata.name for c in pod_claims(pod)):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_storage_class_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if old is None or old.allowed_topologies != new.allowed_topologies:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_capacity_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if old is None:
            return QueueingHint.Queue
        old_limit, new_limit = volume_limit(old), volume_limit(new)
        if new_limit is not None and (old_limit is None or new_limit.value > old_limit.value):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def is_schedulable_after_csi_driver_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QueueSkip  # only inline CSI volumes count; pods here have none
