"""The scheduler's volume binder (upstream ``volumebinding/binder.go``,
``SchedulerVolumeBinder``): which claims of a pod are bound, what a node offers the unbound
ones, assuming the choice, and making it real through the API server.

==========================  ==================================================================
method                      upstream
==========================  ==================================================================
``get_pod_volume_claims``   ``GetPodVolumeClaims``: bound / unbound WaitForFirstConsumer /
                            unbound immediate claims, and the PVs of each delayed class
``find_pod_volumes``        ``FindPodVolumes``: bound PVs' node affinity; for delayed claims
                            a ``selected-node`` elsewhere fails fast, else the smallest
                            matching PV, else provisioning (class provisioner, allowed
                            topologies, CSIStorageCapacity); the reasons of ``REASONS``
``assume_pod_volumes``      ``AssumePodVolumes``: PVs with their new claimRef and claims with
                            ``selected-node`` into the assume caches; True if all bound
``revert_assumed``          ``RevertAssumedPodVolumes``
``bind_pod_volumes``        ``BindPodVolumes``: ``bindAPIUpdate`` (PV updates, then claim
                            updates), then wait until ``check_bindings`` says every claim is
                            bound, until ``bind_timeout`` (woken by the storage informers'
                            events rather than upstream's 1 s poll)
==========================  ==================================================================
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from emulator.base.api.core import Node, Pod
from emulator.base.api.meta import ObjectReference
from emulator.base.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    PersistentVolume,
    PersistentVolumeClaim,
)

from ..helper import pod_claims
from .assume_cache import AssumeCache
from .pvutil import (
    NOT_SUPPORTED_PROVISIONER,
    capacity_sufficient,
    check_node_affinity,
    claim_class,
    claim_request,
    find_matching_volume,
    is_bound_to_claim,
    labels_node,
    match_topology_terms,
    node_has_access,
    pv_class,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "BindError",
    "ClaimNotFound",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinder",
]

ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT: Final = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST: Final = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"


class ClaimNotFound(Exception):
    """A claim the pod names is not in the informer (PreFilter: UnschedulableAndUnresolvable)."""


class BindError(Exception):
    pass


@dataclass(slots=True)
class PodVolumeClaims:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_delay: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    pvs_by_class: dict[str, list[PersistentVolume]] = field(default_factory=dict)


@dataclass(slots=True)
class PodVolumes:
    """Upstream ``PodVolumes``: (pv, claim) static bindings and claims to provision."""

    static_bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = field(default_factory=list)
    dynamic_provisions: list[PersistentVolumeClaim] = field(default_factory=list)


def _fully_bound(pvc: PersistentVolumeClaim) -> bool:
    return bool(pvc.spec.volume_name) and ANN_BIND_COMPLETED in pvc.metadata.annotations


def _rv(obj: Any) -> int:
    try:
        return int(obj.metadata.resource_version or 0)
    except ValueError:
        return 0


def bind_volume_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> tuple[PersistentVolume, bool]:
    """Upstream ``GetBindVolumeToClaim``: the PV with claimRef → pvc (and bound-by-controller
    when it had none); ``dirty`` when it changed."""
    if is_bound_to_claim(pv, pvc):
        return pv, False
    ref = ObjectReference(
        api_version="v1",
        kind="PersistentVolumeClaim",
        namespace=pvc.metadata.namespace,
        name=pvc.metadata.name,
        uid=pvc.metadata.uid,
        resource_version=pvc.metadata.resource_version,
    )
    annotations = dict(pv.metadata.annotations)
    annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    meta = msgspec.structs.replace(pv.metadata, annotations=annotations)
    return msgspec.structs.replace(pv, metadata=meta, spec=msgspec.structs.replace(pv.spec, claim_ref=ref)), True


class VolumeBinder:
    """One profile's binder over the scheduler's storage informers (``listers``)."""

    def __init__(self, listers: Any, bind_timeout: float) -> None:
        self.listers = listers
        self.bind_timeout = bind_timeout

        def store(kind: str) -> Any:
            return (lambda: listers.informers[kind].store) if listers is not None else (lambda: None)

        self.pv_cache = AssumeCache("PersistentVolume", store("PersistentVolume"))
        self.pvc_cache = AssumeCache("PersistentVolumeClaim", store("PersistentVolumeClaim"))

    # --- lookups ------------------------------------------------------------------------

    def _class(self, name: str) -> Any | None:
        return self.listers.storage_class(name) if self.listers is not None and name else None

    def _delay_binding(self, pvc: PersistentVolumeClaim) -> bool:
        cls = self._class(claim_class(pvc))
        return cls is not None and cls.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER

    def list_pvs(self, class_name: str) -> list[PersistentVolume]:
        return [pv for pv in self.pv_cache.list() if pv_class(pv) == class_name]

    # --- scheduling cycle ---------------------------------------------------------------

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        out = PodVolumeClaims()
        ns = pod.metadata.namespace
        for claim in pod_claims(pod):
            pvc = self.pvc_cache.get(claim.name, ns)
            if pvc is None:
                raise ClaimNotFound(f'error getting PVC "{ns}/{claim.name}": could not find v1.PersistentVolumeClaim')
            if _fully_bound(pvc):
                out.bound.append(pvc)
            elif self._delay_binding(pvc) and not pvc.spec.volume_name:
                out.unbound_delay.append(pvc)
            else:
                out.unbound_immediate.append(pvc)
        for pvc in out.unbound_delay:
            name = claim_class(pvc)
            if name not in out.pvs_by_class:
                out.pvs_by_class[name] = self.list_pvs(name)
        return out

    def find_pod_volumes(self, claims: PodVolumeClaims, node: Node) -> tuple[PodVolumes, list[str]]:
        """(PodVolumes, reasons); reasons empty when the node suits every claim."""
        volumes = PodVolumes()
        bound_ok = found = unbound_ok = storage_ok = True
        labels = labels_node(node.metadata.labels) if claims.bound or claims.unbound_delay else node
        for pvc in claims.bound:
            pv = self.pv_cache.get(pvc.spec.volume_name)
            if pv is None:
                found = False
                break
            if not check_node_affinity(pv, labels):
                bound_ok = False
                break
        if claims.unbound_delay:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            for pvc in claims.unbound_delay:
                selected = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.metadata.name:
                        return volumes, _reasons(bound_ok, False, storage_ok, found)
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            chosen: dict[str, PersistentVolumeClaim] = {}
            for pvc in to_match:
                pv = find_matching_volume(pvc, claims.pvs_by_class.get(claim_class(pvc), []), labels, chosen)
                if pv is None:
                    to_provision.append(pvc)
                else:
                    chosen[pv.metadata.name] = pvc
                    volumes.static_bindings.append((pv, pvc))
            if to_provision:
                unbound_ok, storage_ok = self._check_provisions(to_provision, node, volumes)
        return volumes, _reasons(bound_ok, unbound_ok, storage_ok, found)

    def _check_provisions(
        self, claims: list[PersistentVolumeClaim], node: Node, volumes: PodVolumes
    ) -> tuple[bool, bool]:
        """Upstream ``checkVolumeProvisions``: (unbound satisfied, sufficient storage)."""
        for pvc in claims:
            name = claim_class(pvc)
            if not name:
                raise BindError(f'no class for claim "{pvc.metadata.namespace}/{pvc.metadata.name}"')
            cls = self._class(name)
            if cls is None:
                raise BindError(f'failed to find storage class "{name}"')
            provisioner = cls.provisioner
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True
            if not match_topology_terms(cls.allowed_topologies, node.metadata.labels):
                return False, True
            if not self._has_enough_capacity(provisioner, pvc, name, node):
                return True, False
            volumes.dynamic_provisions.append(pvc)
        return True, True

    def _has_enough_capacity(self, provisioner: str, pvc: PersistentVolumeClaim, class_name: str, node: Node) -> bool:
        q = claim_request(pvc)
        if q is None or self.listers is None:
            return True
        driver = self.listers.csi_driver(provisioner)
        if driver is None or not driver.spec.storage_capacity:
            return True
        size = q.value
        return any(
            c.storage_class_name == class_name and capacity_sufficient(c, size) and node_has_access(node, c)
            for c in self.listers.capacities()
        )

    # --- reserve ------------------------------------------------------------------------

    def assume_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Upstream ``AssumePodVolumes``; True when every claim is already fully bound."""
        ns = pod.metadata.namespace
        if all((c := self.pvc_cache.get(cl.name, ns)) is not None and _fully_bound(c) for cl in pod_claims(pod)):
            return True
        bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = []
        provisions: list[PersistentVolumeClaim] = []
        try:
            for pv, pvc in volumes.static_bindings:
                new_pv, dirty = bind_volume_to_claim(pv, pvc)
                if dirty:
                    self.pv_cache.assume(new_pv)
                bindings.append((new_pv, pvc))
            for pvc in volumes.dynamic_provisions:
                annotations = dict(pvc.metadata.annotations)
                annotations[ANN_SELECTED_NODE] = node_name
                clone = msgspec.structs.replace(
                    pvc, metadata=msgspec.structs.replace(pvc.metadata, annotations=annotations)
                )
                self.pvc_cache.assume(clone)
                provisions.append(clone)
        except Exception:
            self.revert_assumed(PodVolumes(bindings, provisions))
            raise
        volumes.static_bindings = bindings
        volumes.dynamic_provisions = provisions
        return False

    def revert_assumed(self, volumes: PodVolumes) -> None:
        for pv, _ in volumes.static_bindings:
            self.pv_cache.restore(pv.metadata.name)
        for pvc in volumes.dynamic_provisions:
            self.pvc_cache.restore(pvc.metadata.name, pvc.metadata.namespace)

    # --- binding cycle ------------------------------------------------------------------

    async def bind_pod_volumes(self, handle: Any, pod: Pod, node_name: str, volumes: PodVolumes) -> None:
        """Upstream ``BindPodVolumes``; raises ``BindError`` (assumptions reverted) on failure."""
        try:
            await self._bind_api_update(handle.client, volumes)
            deadline = handle.clock.now() + self.bind_timeout
            while not self.check_bindings(handle, pod, node_name, volumes):
                left = deadline - handle.clock.now()
                if left <= 0:
                    raise BindError("binding volumes: context deadline exceeded")
                with contextlib.suppress(TimeoutError):  # as waiting_pods: the loop's time is the clock's
                    await asyncio.wait_for(self.listers.changed.wait().wait(), left)
        except BindError:
            self.revert_assumed(volumes)
            raise
        except Exception as err:  # an API refusal (conflict, not found): upstream returns it
            self.revert_assumed(volumes)
            raise BindError(str(err)) from None

    async def _bind_api_update(self, client: Any, volumes: PodVolumes) -> None:
        for i, (pv, pvc) in enumerate(volumes.static_bindings):
            volumes.static_bindings[i] = (await client.update(pv), pvc)
        for i, pvc in enumerate(volumes.dynamic_provisions):
            volumes.dynamic_provisions[i] = await client.update(pvc)

    def check_bindings(self, handle: Any, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Upstream ``checkBindings``: True when done, False to wait, ``BindError`` to give up."""
        ns = pod.metadata.namespace
        get_pod = getattr(handle, "get_pod", None)
        if get_pod is not None and get_pod(ns, pod.metadata.name) is None:
            raise BindError(f'pod does not exist any more: pods "{pod.metadata.name}" not found')
        for pv0, pvc0 in volumes.static_bindings:
            pv = self.pv_cache.get_api(pv0.metadata.name)
            pvc = self.pvc_cache.get_api(pvc0.metadata.name, ns)
            if pv is None or pvc is None:
                name = pv0.metadata.name if pv is None else pvc0.metadata.name
                raise BindError(f'failed to check binding: "{name}" not found')
            if _rv(pv0) > _rv(pv):
                return False
            if pv.spec.claim_ref is None or not pv.spec.claim_ref.uid:
                raise BindError(f'ClaimRef got reset for pv "{pv.metadata.name}"')
            if not _fully_bound(pvc):
                return False
        for claim in volumes.dynamic_provisions:
            pvc = self.pvc_cache.get_api(claim.metadata.name, ns)
            if pvc is None:
                raise BindError(f'failed to check provisioning pvc: "{claim.metadata.name}" not found')
            if _rv(claim) > _rv(pvc):
                return False
            if pvc.metadata.annotations.get(ANN_SELECTED_NODE) != node_name:
                raise BindError(f'provisioning failed for PVC "{pvc.metadata.name}"')
            if pvc.spec.volume_name:
                pv = self.pv_cache.get_api(pvc.spec.volume_name)
                if pv is None:
                    return False
                node = _node(handle, node_name)
                if node is not None and not check_node_affinity(pv, labels_node(node.metadata.labels)):
                    raise BindError(
                        f'pv "{pv.metadata.name}" node affinity doesn\'t match node "{node_name}": '
                        "no matching NodeSelectorTerms"
                    )
            if not _fully_bound(pvc):
                return False
        return True


def _node(handle: Any, name: str) -> Node | None:
    try:
        node: Node | None = handle.snapshot_shared_lister().get(name).node
    except (KeyError, RuntimeError):
        return None
    return node


def _reasons(bound_ok: bool, unbound_ok: bool, storage_ok: bool, found: bool) -> list[str]:
    out: list[str] = []
    if not bound_ok:
        out.append(ERR_REASON_NODE_CONFLICT)
    if not unbound_ok:
        out.append(ERR_REASON_BIND_CONFLICT)
    if not storage_ok:
        out.append(ERR_REASON_NOT_ENOUGH_SPACE)
    if not found:
        out.append(ERR_REASON_PV_NOT_EXIST)
    return out
