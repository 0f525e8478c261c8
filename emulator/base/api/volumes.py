"""Pod volumes and the claim spec they share with PersistentVolumeClaims (upstream core/v1
``Volume``, ``PersistentVolumeClaimVolumeSource``, ``EphemeralVolumeSource``,
``PersistentVolumeClaimSpec``).

A pod volume models the sources something here acts on: ConfigMap and Secret (the kubelet waits
for them, ``agents/kubelet/configrefs.py``), ``persistentVolumeClaim`` and ``ephemeral`` (volume
scheduling and the storage controllers). Every other source (``emptyDir``, ``hostPath``,
``projected``...) is kept verbatim in the pod spec's unmodelled overlay
(``emulator.base.api.unmodelled``) and mounts at once. The claim spec lives here, below both
``core`` (pods) and ``storage`` (PersistentVolumeClaim), because a generic ephemeral volume
carries a whole claim template inside the pod spec.
"""

from __future__ import annotations

from emulator.base.api.config import ConfigMapVolumeSource, SecretVolumeSource
from emulator.base.api.meta import K8s, LabelSelector, ObjectMeta
from emulator.base.api.quantity import Quantity

__all__ = [
    "EphemeralVolumeSource",
    "PersistentVolumeClaimSpec",
    "PersistentVolumeClaimTemplate",
    "PersistentVolumeClaimVolumeSource",
    "TypedLocalObjectReference",
    "TypedObjectReference",
    "Volume",
    "VolumeResourceRequirements",
]


class TypedLocalObjectReference(K8s, frozen=True):
    api_group: str | None = None
    kind: str = ""
    name: str = ""


class TypedObjectReference(K8s, frozen=True):
    api_group: str | None = None
    kind: str = ""
    name: str = ""
    namespace: str | None = None


class VolumeResourceRequirements(K8s, frozen=True):
    limits: dict[str, Quantity] = {}
    requests: dict[str, Quantity] = {}


class PersistentVolumeClaimSpec(K8s, frozen=True):
    access_modes: list[str] = []
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements = VolumeResourceRequirements()
    volume_name: str = ""
    storage_class_name: str | None = None
    volume_mode: str | None = None
    data_source: TypedLocalObjectReference | None = None
    data_source_ref: TypedObjectReference | None = None
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaimTemplate(K8s, frozen=True):
    """The claim a generic ephemeral volume asks for: the ephemeral-volume controller creates it
    as ``<pod>-<volume>``, owned by the pod."""

    metadata: ObjectMeta = ObjectMeta()
    spec: PersistentVolumeClaimSpec = PersistentVolumeClaimSpec()


class PersistentVolumeClaimVolumeSource(K8s, frozen=True):
    claim_name: str = ""
    read_only: bool = False


class EphemeralVolumeSource(K8s, frozen=True):
    volume_claim_template: PersistentVolumeClaimTemplate | None = None


class Volume(K8s, frozen=True):
    """A pod volume: the modelled sources (above); any other source is kept in the pod spec's
    unmodelled overlay and mounts at once."""

    name: str = ""
    config_map: ConfigMapVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
