"""A pending pod's PersistentVolumeClaims as Karpenter's provisioner reads them
(kubernetes-sigs/karpenter v1.9.1 ``pkg/controllers/provisioning/scheduling/volumetopology.go``,
``pkg/utils/volume``).

``validate`` is ``ValidatePersistentVolumeClaims`` (part of ``Provisioner.Validate`` in
``GetPendingPods``): a pod whose claim is missing, being deleted or Lost, bound to a missing
PersistentVolume or without ``pv.kubernetes.io/bind-completed``, unbound without a StorageClass,
with a missing StorageClass or an ``Immediate`` one, is ignored: upstream's error text, which
the agent publishes as the pod's ``FailedScheduling`` Event ("Failed to schedule pod, ...").

``requirements`` is ``GetRequirements``: for each claim, a bound PersistentVolume's first
required node selector term (without ``kubernetes.io/hostname`` for a local or hostPath
volume), or an unbound claim's StorageClass's first ``allowedTopologies`` term (``In``). They
are added to the NodeClaim's requirements, not to the pod's affinity (an option's labels must
satisfy them); a lookup that fails leaves the pod out of the simulation.

``listers``: the simulator's ``VolumeListers`` (``pvc``, ``pv``, ``storage_class``).
"""

from __future__ import annotations

from typing import Any, Final

from emulator.base.api.core import Pod

__all__ = [
    "BIND_COMPLETED",
    "Requirement",
    "VolumeLookupError",
    "has_claims",
    "provisionable",
    "requirements",
    "valid_pods",
    "validate",
]

BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
HOSTNAME: Final = "kubernetes.io/hostname"

Requirement = tuple[str, str, tuple[str, ...]]
"""(key, operator, values) of a node selector requirement."""


class VolumeLookupError(Exception):
    """A claim, volume or class the pod's volumes name is missing (upstream's message)."""


def provisionable(pod: Pod) -> bool:
    """``IsProvisionable`` (``GetProvisionablePods``): pending ``Unschedulable``, not bound, not
    terminal nor deleting, not a DaemonSet's; what ``valid_pods`` then checks."""
    if pod.spec.node_name or pod.metadata.deletion_timestamp is not None:
        return False
    if pod.status.phase in ("Succeeded", "Failed"):
        return False
    if any(o.kind == "DaemonSet" and o.controller for o in pod.metadata.owner_references):
        return False
    return any(
        c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable" for c in pod.status.conditions
    )


def has_claims(pod: Pod) -> bool:
    return any(v.persistent_volume_claim is not None or v.ephemeral is not None for v in pod.spec.volumes)


def valid_pods(pods: list[Pod], listers: Any, ignored: dict[str, tuple[Pod, str]]) -> list[Pod]:
    """``GetPendingPods``' filter: the pods ``validate`` passes; the others into ``ignored``
    (uid -> the pod and why)."""
    if not any(has_claims(p) for p in pods):
        return pods
    out = []
    for pod in pods:
        why = validate(pod, listers) if has_claims(pod) else None
        if why is None:
            out.append(pod)
        else:
            ignored[pod.metadata.uid] = (pod, why)
    return out


def _claim(pod: Pod, volume: Any, listers: Any) -> Any | None:
    """``GetPersistentVolumeClaim``: the claim a volume names (an ephemeral volume's is
    ``<pod>-<volume>``), None for other sources."""
    if volume.persistent_volume_claim is not None:
        name = volume.persistent_volume_claim.claim_name
    elif volume.ephemeral is not None:
        name = f"{pod.metadata.name}-{volume.name}"
    else:
        return None
    pvc = listers.pvc(pod.metadata.namespace, name)
    if pvc is None:
        raise VolumeLookupError(f'getting persistent volume claim, persistentvolumeclaims "{name}" not found')
    return pvc


def validate(pod: Pod, listers: Any) -> str | None:
    """Why upstream ignores the pod for its claims, or None (module docstring)."""
    try:
        for volume in pod.spec.volumes:
            pvc = _claim(pod, volume, listers)
            if pvc is None:
                continue
            if pvc.metadata.deletion_timestamp is not None:
                return "persistentvolumeclaim is being deleted"
            if pvc.status.phase == "Lost":
                return "persistentvolumeclaim bound to non-existent persistentvolume"
            class_name = pvc.spec.storage_class_name or ""
            if pvc.spec.volume_name:
                if listers.pv(pvc.spec.volume_name) is None:
                    return f'failed to validate pvc, persistentvolumes "{pvc.spec.volume_name}" not found'
                if BIND_COMPLETED not in pvc.metadata.annotations:
                    return "pvc is considered unbound because it does not contain annotation"
                continue
            if not class_name:
                return "unbound pvc must define a storage class"
            sc = listers.storage_class(class_name)
            if sc is None:
                return (
                    "failed to validate pvc, failed to get storage class, "
                    f'storageclasses.storage.k8s.io "{class_name}" not found'
                )
            if (sc.volume_binding_mode or "Immediate") == "Immediate":
                return "failed to validate pvc, pvc with immediate volume binding mode must be bound"
    except VolumeLookupError as err:
        return str(err)
    return None


def requirements(pod: Pod, listers: Any) -> list[Requirement]:
    """The pod's volume topology requirements (module docstring); ``VolumeLookupError`` when a
    claim, its volume or its class is missing."""
    out: list[Requirement] = []
    for volume in pod.spec.volumes:
        pvc = _claim(pod, volume, listers)
        if pvc is None:
            continue
        if pvc.spec.volume_name:
            pv = listers.pv(pvc.spec.volume_name)
            if pv is None:
                missing = f'persistentvolumes "{pvc.spec.volume_name}" not found'
                raise VolumeLookupError(f"getting existing requirements, getting persistent volume, {missing}")
            affinity = pv.spec.node_affinity
            required = affinity.required if affinity is not None else None
            if required is None or not required.node_selector_terms:
                continue
            reqs = [(r.key, r.operator, tuple(r.values)) for r in required.node_selector_terms[0].match_expressions]
            if pv.spec.local is not None or pv.spec.host_path is not None:
                reqs = [r for r in reqs if r[0] != HOSTNAME]
            out.extend(reqs)
        elif pvc.spec.storage_class_name:
            sc = listers.storage_class(pvc.spec.storage_class_name)
            if sc is None:
                raise VolumeLookupError(
                    f'getting storage class, storageclasses.storage.k8s.io "{pvc.spec.storage_class_name}" not found'
                )
            if sc.allowed_topologies:
                out.extend((r.key, "In", tuple(r.values)) for r in sc.allowed_topologies[0].match_label_expressions)
    return out
