"""Topology segments and the volumes a driver provisions (pure functions).

A segment is the tuple of a node's values of the driver's ``topologyKeys`` (in their order;
the empty tuple when the driver has none): upstream's ``AccessibleTopology`` of a CSI volume.
A provisioned volume lives in one segment, which its required node affinity names
(``key In [value]`` per key), as the external-provisioner writes what the driver reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from emulator.base.api.core import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from emulator.base.api.meta import ObjectMeta, reference_to
from emulator.base.api.quantity import Quantity
from emulator.base.api.storage import (
    ANN_DYNAMICALLY_PROVISIONED,
    CSIPersistentVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    StorageClass,
    TopologySelectorTerm,
    VolumeNodeAffinity,
)

__all__ = ["Segment", "allowed", "build_volume", "segment_of", "segment_of_volume", "volume_name"]

Segment = tuple[str, ...]


def segment_of(labels: Mapping[str, str], keys: Sequence[str]) -> Segment | None:
    """The segment of a node with ``labels``; None when it lacks one of the keys."""
    if any(k not in labels for k in keys):
        return None
    return tuple(labels[k] for k in keys)


def allowed(segment: Segment, keys: Sequence[str], terms: Sequence[TopologySelectorTerm]) -> bool:
    """Whether a StorageClass's ``allowedTopologies`` admit ``segment`` (no terms: any);
    a term's expressions on other keys cannot be checked here and are taken as met."""
    if not terms:
        return True
    values = dict(zip(keys, segment, strict=True))
    return any(
        all(r.key not in values or values[r.key] in r.values for r in term.match_label_expressions) for term in terms
    )


def volume_name(claim: PersistentVolumeClaim) -> str:
    """Upstream's ``pvc-<claim uid>``."""
    return f"pvc-{claim.metadata.uid}"


def _affinity(segment: Segment, keys: Sequence[str]) -> VolumeNodeAffinity | None:
    if not keys:
        return None
    exprs = [NodeSelectorRequirement(key=k, operator="In", values=[v]) for k, v in zip(keys, segment, strict=True)]
    return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=exprs)]))


def segment_of_volume(volume: PersistentVolume, keys: Sequence[str]) -> Segment | None:
    """The segment a provisioned volume's node affinity names (None if it names none)."""
    if not keys:
        return ()
    aff = volume.spec.node_affinity
    if aff is None or aff.required is None or not aff.required.node_selector_terms:
        return None
    values = {r.key: r.values[0] for r in aff.required.node_selector_terms[0].match_expressions if r.values}
    return segment_of(values, keys)


def build_volume(
    driver: str, claim: PersistentVolumeClaim, sc: StorageClass, segment: Segment, keys: Sequence[str]
) -> PersistentVolume:
    """The PersistentVolume the external-provisioner writes for ``claim``: capacity = the
    request, the class's reclaim policy and mount options, ``csi`` (driver, volume handle),
    ``claimRef`` to the claim (so the PV controller binds them), provisioned-by, and the
    segment as required node affinity."""
    request = claim.spec.resources.requests.get("storage") or Quantity.from_value(0)
    ref = reference_to(claim)
    mode = claim.spec.volume_mode or "Filesystem"
    return PersistentVolume(
        metadata=ObjectMeta(name=volume_name(claim), annotations={ANN_DYNAMICALLY_PROVISIONED: driver}),
        spec=PersistentVolumeSpec(
            capacity={"storage": request},
            access_modes=list(claim.spec.access_modes),
            claim_ref=ref,
            persistent_volume_reclaim_policy=sc.reclaim_policy or "Delete",
            storage_class_name=sc.metadata.name,
            mount_options=list(sc.mount_options),
            volume_mode=mode,
            node_affinity=_affinity(segment, keys),
            csi=CSIPersistentVolumeSource(
                driver=driver, volume_handle=f"vol-{claim.metadata.uid}", fs_type="ext4" if mode == "Filesystem" else ""
            ),
        ),
    )
