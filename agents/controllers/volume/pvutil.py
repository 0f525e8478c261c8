"""What binding decides from a claim and a volume alone: upstream's ``component-helpers/storage/volume``
(``GetPersistentVolumeClaimClass``, ``IsVolumeBoundToClaim``, ``CheckVolumeModeMismatches``,
``CheckAccessModes``, ``FindMatchingVolume``) and the PV controller's access-mode index
(``persistentvolume/index.go``: ``findByClaim``, ``allPossibleMatchingAccessModes``) and
``checkVolumeSatisfyClaim``.

Pure functions over the API structs; no client, no clock. The PV controller calls
``find_best_match`` without a node (the scheduler's binder passes one: its own copy).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from emulator.base.api.labelselector import label_selector_matches
from emulator.base.api.meta import ObjectReference, reference_to
from emulator.base.api.nodeaffinity import node_selector_requirement_matches
from emulator.base.api.storage import BETA_STORAGE_CLASS, PersistentVolume, PersistentVolumeClaim

__all__ = [
    "POD_CLAIM_INDEX",
    "access_modes_match",
    "claim_class",
    "claim_key",
    "claim_ref",
    "claim_request",
    "find_best_match",
    "find_matching_volume",
    "is_bound_to_claim",
    "node_affinity_matches",
    "satisfy_problem",
    "storage_of",
    "unscheduled_claims",
    "volume_class",
    "volume_mode_mismatch",
]


def claim_class(claim: PersistentVolumeClaim) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation first, then ``storageClassName``."""
    if BETA_STORAGE_CLASS in claim.metadata.annotations:
        return claim.metadata.annotations[BETA_STORAGE_CLASS]
    return claim.spec.storage_class_name or ""


def volume_class(volume: PersistentVolume) -> str:
    """``GetPersistentVolumeClass``."""
    if BETA_STORAGE_CLASS in volume.metadata.annotations:
        return volume.metadata.annotations[BETA_STORAGE_CLASS]
    return volume.spec.storage_class_name


def storage_of(volume: PersistentVolume) -> int:
    """The volume's ``capacity.storage`` in milli-units (0 if unset)."""
    q = volume.spec.capacity.get("storage")
    return 0 if q is None else q.milli


def claim_request(claim: PersistentVolumeClaim) -> int:
    """The claim's ``resources.requests.storage`` in milli-units (0 if unset)."""
    q = claim.spec.resources.requests.get("storage")
    return 0 if q is None else q.milli


def claim_ref(claim: PersistentVolumeClaim) -> ObjectReference:
    """``reference.GetReference(claim)``: what a volume's ``claimRef`` holds."""
    return reference_to(claim)


def is_bound_to_claim(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``: the claimRef names the claim (and its UID, when it has one)."""
    ref = volume.spec.claim_ref
    if ref is None or ref.name != claim.metadata.name or ref.namespace != claim.metadata.namespace:
        return False
    return not ref.uid or ref.uid == claim.metadata.uid


def volume_mode_mismatch(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """``CheckVolumeModeMismatches``: both default to ``Filesystem``."""
    return (claim.spec.volume_mode or "Filesystem") != (volume.spec.volume_mode or "Filesystem")


def access_modes_match(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """``CheckAccessModes``: the volume offers every mode the claim asks for."""
    offered = set(volume.spec.access_modes)
    return all(m in offered for m in claim.spec.access_modes)


def node_affinity_matches(volume: PersistentVolume, labels: Mapping[str, str]) -> bool:
    """``CheckNodeAffinity`` on node labels: a term (ORed) whose expressions (ANDed) all match."""
    affinity = volume.spec.node_affinity
    if affinity is None or affinity.required is None:
        return True
    return any(
        all(node_selector_requirement_matches(r, labels) for r in term.match_expressions)
        for term in affinity.required.node_selector_terms
    )


def satisfy_problem(volume: PersistentVolume, claim: PersistentVolumeClaim) -> str:
    """``checkVolumeSatisfyClaim``: why ``volume`` cannot serve ``claim`` ('' if it can)."""
    if volume.metadata.deletion_timestamp is not None:
        return f'the volume is marked for deletion "{volume.metadata.name}"'
    if claim_request(claim) > storage_of(volume):
        return "requested PV is too small"
    if volume_class(volume) != claim_class(claim):
        return "storageClassName does not match"
    if volume_mode_mismatch(claim, volume):
        return "incompatible volumeMode"
    if not access_modes_match(claim, volume):
        return "incompatible accessMode"
    return ""


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    *,
    node_labels: Mapping[str, str] | None = None,
    excluded: Iterable[str] = (),
    delay_binding: bool = False,
) -> PersistentVolume | None:
    """``FindMatchingVolume``: a volume pre-bound to ``claim`` if any, else the smallest
    Available one of its class that fits (size, volume mode, selector, node affinity when
    a node is given); ``delay_binding`` without a node only returns a pre-bound volume (the
    scheduler binds the others). Equal sizes: the first in ``volumes``' order."""
    skip = set(excluded)
    request = claim_request(claim)
    wanted = claim_class(claim)
    best: PersistentVolume | None = None
    best_size = 0
    for volume in volumes:
        if volume.metadata.name in skip:
            continue
        bound_here = is_bound_to_claim(volume, claim)
        if volume.spec.claim_ref is not None and not bound_here:
            continue
        size = storage_of(volume)
        if size < request or volume_mode_mismatch(claim, volume) or volume.metadata.deletion_timestamp is not None:
            continue
        affinity_ok = node_labels is None or node_affinity_matches(volume, node_labels)
        if bound_here:
            return volume if affinity_ok else None
        if node_labels is None and delay_binding:
            continue
        if volume.status.phase != "Available":
            continue
        if claim.spec.selector is not None and not label_selector_matches(claim.spec.selector, volume.metadata.labels):
            continue
        if volume_class(volume) != wanted or not affinity_ok:
            continue
        if node_labels is not None and not access_modes_match(claim, volume):
            continue
        if best is None or size < best_size:
            best, best_size = volume, size
    return best


def _matching_mode_sets(requested: Sequence[str], indexed: Iterable[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """``allPossibleMatchingAccessModes``: the index's mode sets holding every requested
    mode, fewest modes first (ties by their names, for a stable order)."""
    want = set(requested)
    found = [modes for modes in indexed if want <= set(modes)]
    return sorted(found, key=lambda modes: (len(modes), modes))


def find_best_match(
    claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume], *, delay_binding: bool
) -> PersistentVolume | None:
    """The PV controller's ``findBestMatchForClaim``: volumes grouped by their set of
    access modes; the groups offering the claim's modes are searched with the fewest
    modes first, each by ``find_matching_volume`` (volumes by name within a group)."""
    groups: dict[tuple[str, ...], list[PersistentVolume]] = {}
    for volume in sorted(volumes, key=lambda v: v.metadata.name):
        groups.setdefault(tuple(sorted(set(volume.spec.access_modes))), []).append(volume)
    for modes in _matching_mode_sets(claim.spec.access_modes, groups):
        found = find_matching_volume(claim, groups[modes], delay_binding=delay_binding)
        if found is not None:
            return found
    return None


POD_CLAIM_INDEX: Final = "pvc"
"""The PV controller's pod index: unscheduled pods by the claims they use."""


def claim_key(claim: PersistentVolumeClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def unscheduled_claims(pod: Any) -> list[str]:
    """Upstream's pod index by claim, of pods not yet scheduled: ``namespace/claim`` of each
    ``persistentVolumeClaim`` and ephemeral (``<pod>-<volume>``) volume."""
    if pod.spec.node_name:
        return []
    ns = pod.metadata.namespace
    out: list[str] = []
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None:
            out.append(f"{ns}/{v.persistent_volume_claim.claim_name}")
        elif v.ephemeral is not None:
            out.append(f"{ns}/{pod.metadata.name}-{v.name}")
    return out
