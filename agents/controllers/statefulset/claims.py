"""A StatefulSet replica's claims, as upstream's ``stateful_set_utils.go`` makes and owns them.

Pure functions:

- ``claims_for`` (upstream ``getPersistentVolumeClaims``): for each of ``spec.volumeClaimTemplates``
  (in the set's order; upstream iterates a map), the claim ``<template>-<set>-<ordinal>`` in the
  set's namespace, the template's labels merged with the set's ``selector.matchLabels``;
- ``update_storage`` (upstream ``updateStorage``): the pod's volumes become one
  ``persistentVolumeClaim`` volume per template (named as the template, replacing a template
  volume of that name), then the template's other volumes;
- ``storage_matches``: every template has its claim volume in the pod;
- the retention policy (``persistentVolumeClaimRetentionPolicy``, StatefulSetAutoDeletePVC,
  GA since 1.32): ``claim_owner_up_to_date`` (upstream ``isClaimOwnerUpToDate``) and
  ``owner_refs_for`` (upstream ``updateClaimOwnerRefForSetAndPod``). Retain/Retain: no
  reference of the set or pod; whenDeleted Delete: the set is the claim's controller; whenScaled
  Delete: once the replica's ordinal is out of range (scaled down) the *pod* is the claim's
  controller instead, so the garbage collector deletes the claim with the pod. A claim with
  another controller, or with references to a previous set or pod of the same name (another
  UID), is left alone as upstream leaves it.
"""

from __future__ import annotations

from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.controllerutils import owner_ref
from agents.controllers.statefulset.identity import ordinal_of, start_ordinal
from emulator.base.api.apps import StatefulSet
from emulator.base.api.core import Pod
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.storage import PersistentVolumeClaim
from emulator.base.api.volumes import PersistentVolumeClaimVolumeSource, Volume

__all__ = [
    "claim_name",
    "claim_owner_up_to_date",
    "claims_for",
    "has_unexpected_controller",
    "owner_refs_for",
    "pod_in_ordinal_range",
    "storage_matches",
    "update_storage",
]

RETAIN: Final = "Retain"
DELETE: Final = "Delete"


def claim_name(template: PersistentVolumeClaim, set_name: str, ordinal: int) -> str:
    """Upstream ``getPersistentVolumeClaimName``."""
    return f"{template.metadata.name}-{set_name}-{ordinal}"


def claims_for(sts: StatefulSet, ordinal: int) -> list[tuple[str, PersistentVolumeClaim]]:
    """(template name, claim) of replica ``ordinal``, in the templates' order."""
    match = dict(sts.spec.selector.match_labels) if sts.spec.selector is not None else {}
    out: list[tuple[str, PersistentVolumeClaim]] = []
    for template in sts.spec.volume_claim_templates:
        meta = template.metadata
        claim = PersistentVolumeClaim(
            metadata=ObjectMeta(
                name=claim_name(template, sts.metadata.name, ordinal),
                namespace=sts.metadata.namespace,
                labels={**meta.labels, **match},
                annotations=dict(meta.annotations),
                finalizers=list(meta.finalizers),
            ),
            spec=template.spec,
        )
        out.append((meta.name, claim))
    return out


def update_storage(sts: StatefulSet, pod: Pod, ordinal: int) -> Pod:
    """The pod with one claim volume per template, replacing same-named template volumes."""
    if not sts.spec.volume_claim_templates:
        return pod
    claims = claims_for(sts, ordinal)
    names = {name for name, _ in claims}
    volumes = [
        Volume(name=name, persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=c.metadata.name))
        for name, c in claims
    ]
    volumes += [v for v in pod.spec.volumes if v.name not in names]
    return replace(pod, spec=replace(pod.spec, volumes=volumes))


def storage_matches(sts: StatefulSet, pod: Pod) -> bool:
    """Upstream ``storageMatches``."""
    ordinal = ordinal_of(sts.metadata.name, pod.metadata.name)
    if ordinal < 0:
        return False
    volumes = {v.name: v for v in pod.spec.volumes}
    for name, claim in claims_for(sts, ordinal):
        v = volumes.get(name)
        source = None if v is None else v.persistent_volume_claim
        if source is None or source.claim_name != claim.metadata.name:
            return False
    return True


def pod_in_ordinal_range(pod: Pod, sts: StatefulSet) -> bool:
    """Upstream ``podInOrdinalRange``."""
    ordinal = ordinal_of(sts.metadata.name, pod.metadata.name)
    start = start_ordinal(sts)
    replicas = sts.spec.replicas if sts.spec.replicas is not None else 1
    return start <= ordinal < start + replicas


def _group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def _matches(ref: OwnerReference, obj: Any) -> bool:
    """Upstream ``matchesRef``: same group, kind and name (any UID)."""
    return _group(ref.api_version) == _group(obj.api_version) and ref.kind == obj.kind and ref.name == obj.metadata.name


def _has_owner(claim: PersistentVolumeClaim, owner: Any) -> bool:
    return any(r.uid == owner.metadata.uid for r in claim.metadata.owner_references)


def _stale(claim: PersistentVolumeClaim, obj: Any) -> bool:
    """Upstream ``hasStaleOwnerRef``: the first reference to an object of that name has another UID."""
    ref = next((r for r in claim.metadata.owner_references if _matches(r, obj)), None)
    return ref is not None and ref.uid != obj.metadata.uid


def _policy(sts: StatefulSet) -> tuple[str, str]:
    p = sts.spec.persistent_volume_claim_retention_policy
    if p is None:
        return RETAIN, RETAIN
    return p.when_scaled or RETAIN, p.when_deleted or RETAIN


def has_unexpected_controller(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """Upstream ``hasUnexpectedController`` (never under Retain/Retain)."""
    if _policy(sts) == (RETAIN, RETAIN):
        return False
    for ref in claim.metadata.owner_references:
        if _matches(ref, sts):
            if ref.uid != sts.metadata.uid:
                return True
            continue
        if _matches(ref, pod):
            if ref.uid != pod.metadata.uid:
                return True
            continue
        if ref.controller:
            return True
    return False


def _non_controller_owner(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    uids = (sts.metadata.uid, pod.metadata.uid)
    return any(r.uid in uids and not r.controller for r in claim.metadata.owner_references)


def claim_owner_up_to_date(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """Upstream ``isClaimOwnerUpToDate``."""
    if _stale(claim, sts) or _stale(claim, pod):
        return True
    if has_unexpected_controller(claim, sts, pod):
        return not (_has_owner(claim, sts) or _has_owner(claim, pod))
    if _non_controller_owner(claim, sts, pod):
        return False
    scaled, deleted = _policy(sts)
    has_set, has_pod = _has_owner(claim, sts), _has_owner(claim, pod)
    down = not pod_in_ordinal_range(pod, sts)
    if scaled == DELETE and deleted == DELETE:
        return down != has_set and down == has_pod
    if scaled == DELETE:
        return not has_set and down == has_pod
    if deleted == DELETE:
        return has_set and not has_pod
    return not has_set and not has_pod


def owner_refs_for(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> list[OwnerReference]:
    """Upstream ``updateClaimOwnerRefForSetAndPod``: the claim's references with the set's
    and pod's scrubbed, then the one controller reference the policy asks for."""
    unexpected = has_unexpected_controller(claim, sts, pod)
    refs = [r for r in claim.metadata.owner_references if not (_matches(r, sts) or _matches(r, pod))]
    if unexpected:
        return refs
    scaled, deleted = _policy(sts)
    down = not pod_in_ordinal_range(pod, sts)
    if scaled == DELETE and down:
        refs.append(owner_ref(pod))
    elif deleted == DELETE and (scaled == RETAIN or not down):
        refs.append(owner_ref(sts))
    return refs
