"""Volumes as the API stores them: core/v1 PersistentVolume and PersistentVolumeClaim, and
``storage.k8s.io/v1`` StorageClass, CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment,
as upstream's ``k8s.io/api`` types define them.

Modelled: what binding, provisioning, attaching and the scheduler's volume plugins read. A
PersistentVolume's CSI source is a struct; its in-tree sources (``hostPath``, ``local``,
``awsElasticBlockStore``, ``gcePersistentDisk``...) are kept as their written mappings
(``InTree``), so they round-trip through manifests and HTTP alike and validation can count
them (exactly one source per volume). Everything else a manifest carries is kept by the HTTP
door as unmodelled extras (``emulator.base.http.extras``).

Owns: the structs and the constants of their enumerations. Defaulting is in ``storagedefaults``,
validation in ``volumevalidation`` (PV, PVC) and ``storagevalidation`` (the storage group).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from emulator.base.api.core import LabelSelector, NodeSelector, Pod
from emulator.base.api.meta import K8s, ObjectMeta, ObjectReference
from emulator.base.api.quantity import Quantity
from emulator.base.api.volumes import (
    PersistentVolumeClaimSpec,
    TypedLocalObjectReference,
    TypedObjectReference,
    VolumeResourceRequirements,
)

__all__ = [
    "ACCESS_MODES",
    "BETA_IS_DEFAULT_CLASS",
    "BETA_STORAGE_CLASS",
    "BINDING_MODES",
    "CLAIM_PHASES",
    "FS_GROUP_POLICIES",
    "IN_TREE_SOURCES",
    "IS_DEFAULT_CLASS",
    "LIFECYCLE_MODES",
    "PV_RECLAIM_POLICIES",
    "SC_RECLAIM_POLICIES",
    "STORAGE_KINDS",
    "VOLUME_MODES",
    "VOLUME_PHASES",
    "CSIDriver",
    "CSIDriverSpec",
    "CSINode",
    "CSINodeDriver",
    "CSINodeSpec",
    "CSIPersistentVolumeSource",
    "CSIStorageCapacity",
    "InTree",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PersistentVolumeClaimCondition",
    "PersistentVolumeClaimSpec",
    "PersistentVolumeClaimStatus",
    "PersistentVolumeSpec",
    "PersistentVolumeStatus",
    "SecretReference",
    "StorageClass",
    "TokenRequest",
    "TopologySelectorLabelRequirement",
    "TopologySelectorTerm",
    "TypedLocalObjectReference",
    "TypedObjectReference",
    "VolumeAttachment",
    "VolumeAttachmentSource",
    "VolumeAttachmentSpec",
    "VolumeAttachmentStatus",
    "VolumeError",
    "VolumeNodeAffinity",
    "VolumeNodeResources",
    "VolumeResourceRequirements",
    "in_tree_sources",
    "pod_claim_names",
]

ACCESS_MODES: Final = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
"""Upstream ``supportedAccessModes``, sorted as its NotSupported lists them."""
VOLUME_MODES: Final = ("Block", "Filesystem")
PV_RECLAIM_POLICIES: Final = ("Delete", "Recycle", "Retain")
SC_RECLAIM_POLICIES: Final = ("Delete", "Retain")
BINDING_MODES: Final = ("Immediate", "WaitForFirstConsumer")
VOLUME_PHASES: Final = ("Pending", "Available", "Bound", "Released", "Failed")
CLAIM_PHASES: Final = ("Pending", "Bound", "Lost")
FS_GROUP_POLICIES: Final = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES: Final = ("Persistent", "Ephemeral")
IS_DEFAULT_CLASS: Final = "storageclass.kubernetes.io/is-default-class"
"""The annotation that makes a StorageClass the default (kubectl prints ``(default)``)."""
BETA_IS_DEFAULT_CLASS: Final = "storageclass.beta.kubernetes.io/is-default-class"
BETA_STORAGE_CLASS: Final = "volume.beta.kubernetes.io/storage-class"

# The annotations and finalizers binding, provisioning and scheduling pass between them
# (upstream ``pkg/controller/volume/persistentvolume/util``, ``storage/util``).
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
"""On a claim: the node the scheduler chose for a WaitForFirstConsumer claim (provision there)."""
ANN_STORAGE_PROVISIONER: Final = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER: Final = "volume.beta.kubernetes.io/storage-provisioner"
"""On a claim: the provisioner the PV controller asks to provision it (both are written)."""
ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
ANN_DYNAMICALLY_PROVISIONED: Final = "pv.kubernetes.io/provisioned-by"
"""On a PV: the provisioner that made it (a Delete reclaim is then the provisioner's work)."""
PVC_PROTECTION_FINALIZER: Final = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER: Final = "kubernetes.io/pv-protection"
"""A claim's or volume's class before ``storageClassName`` existed (still read first)."""

InTree = dict[str, Any]
"""An in-tree volume source kept as written (its fields are the plugin's, not read here)."""


# --- core/v1 ------------------------------------------------------------------------------


class SecretReference(K8s, frozen=True):
    name: str = ""
    namespace: str = ""


class CSIPersistentVolumeSource(K8s, frozen=True):
    driver: str = ""
    volume_handle: str = ""
    read_only: bool | None = None
    fs_type: str = ""
    volume_attributes: dict[str, str] = {}
    controller_publish_secret_ref: SecretReference | None = None
    node_stage_secret_ref: SecretReference | None = None
    node_publish_secret_ref: SecretReference | None = None
    controller_expand_secret_ref: SecretReference | None = None
    node_expand_secret_ref: SecretReference | None = None


class VolumeNodeAffinity(K8s, frozen=True):
    required: NodeSelector | None = None


class PersistentVolumeSpec(K8s, frozen=True):
    capacity: dict[str, Quantity] = {}
    access_modes: list[str] = []
    claim_ref: ObjectReference | None = None
    persistent_volume_reclaim_policy: str = ""
    storage_class_name: str = ""
    mount_options: list[str] = []
    volume_mode: str | None = None
    node_affinity: VolumeNodeAffinity | None = None
    volume_attributes_class_name: str | None = None
    csi: CSIPersistentVolumeSource | None = None
    # the in-tree sources, in upstream's validation order
    host_path: InTree | None = None
    gce_persistent_disk: InTree | None = None
    aws_elastic_block_store: InTree | None = None
    glusterfs: InTree | None = None
    flocker: InTree | None = None
    nfs: InTree | None = None
    rbd: InTree | None = None
    quobyte: InTree | None = None
    cephfs: InTree | None = None
    iscsi: InTree | None = None
    cinder: InTree | None = None
    fc: InTree | None = None
    flex_volume: InTree | None = None
    azure_file: InTree | None = None
    vsphere_volume: InTree | None = None
    photon_persistent_disk: InTree | None = None
    portworx_volume: InTree | None = None
    azure_disk: InTree | None = None
    scale_io: InTree | None = msgspec.field(default=None, name="scaleIO")
    local: InTree | None = None
    storageos: InTree | None = None


IN_TREE_SOURCES: Final = (
    ("host_path", "hostPath"),
    ("gce_persistent_disk", "gcePersistentDisk"),
    ("aws_elastic_block_store", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flex_volume", "flexVolume"),
    ("azure_file", "azureFile"),
    ("vsphere_volume", "vsphereVolume"),
    ("photon_persistent_disk", "photonPersistentDisk"),
    ("portworx_volume", "portworxVolume"),
    ("azure_disk", "azureDisk"),
    ("scale_io", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
)
"""(attribute, the name upstream's errors give it), in upstream's order."""


def in_tree_sources(spec: PersistentVolumeSpec) -> list[tuple[str, InTree]]:
    """The in-tree sources a PV spec sets, as (upstream's error name, mapping)."""
    return [(name, v) for attr, name in IN_TREE_SOURCES if (v := getattr(spec, attr)) is not None]


class PersistentVolumeStatus(K8s, frozen=True):
    phase: str = ""
    message: str = ""
    reason: str = ""
    last_phase_transition_time: str | None = None


class PersistentVolume(K8s, frozen=True):
    api_version: str = "v1"
    kind: str = "PersistentVolume"
    metadata: ObjectMeta = ObjectMeta()
    spec: PersistentVolumeSpec = PersistentVolumeSpec()
    status: PersistentVolumeStatus = PersistentVolumeStatus()


class PersistentVolumeClaimCondition(K8s, frozen=True):
    type: str = ""
    status: str = ""
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class PersistentVolumeClaimStatus(K8s, frozen=True):
    phase: str = ""
    access_modes: list[str] = []
    capacity: dict[str, Quantity] = {}
    conditions: list[PersistentVolumeClaimCondition] = []
    allocated_resources: dict[str, Quantity] = {}
    allocated_resource_statuses: dict[str, str] = {}
    current_volume_attributes_class_name: str | None = None


class PersistentVolumeClaim(K8s, frozen=True):
    api_version: str = "v1"
    kind: str = "PersistentVolumeClaim"
    metadata: ObjectMeta = ObjectMeta()
    spec: PersistentVolumeClaimSpec = PersistentVolumeClaimSpec()
    status: PersistentVolumeClaimStatus = PersistentVolumeClaimStatus()


# --- storage.k8s.io/v1 --------------------------------------------------------------------


class TopologySelectorLabelRequirement(K8s, frozen=True):
    key: str = ""
    values: list[str] = []


class TopologySelectorTerm(K8s, frozen=True):
    match_label_expressions: list[TopologySelectorLabelRequirement] = []


class StorageClass(K8s, frozen=True):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "StorageClass"
    metadata: ObjectMeta = ObjectMeta()
    provisioner: str = ""
    parameters: dict[str, str] = {}
    reclaim_policy: str | None = None
    mount_options: list[str] = []
    allow_volume_expansion: bool | None = None
    volume_binding_mode: str | None = None
    allowed_topologies: list[TopologySelectorTerm] = []


class TokenRequest(K8s, frozen=True):
    audience: str = ""
    expiration_seconds: int | None = None


class CSIDriverSpec(K8s, frozen=True):
    attach_required: bool | None = None
    pod_info_on_mount: bool | None = None
    volume_lifecycle_modes: list[str] = []
    storage_capacity: bool | None = None
    fs_group_policy: str | None = None
    token_requests: list[TokenRequest] = []
    requires_republish: bool | None = None
    se_linux_mount: bool | None = None
    node_allocatable_update_period_seconds: int | None = None


class CSIDriver(K8s, frozen=True):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "CSIDriver"
    metadata: ObjectMeta = ObjectMeta()
    spec: CSIDriverSpec = CSIDriverSpec()


class VolumeNodeResources(K8s, frozen=True):
    count: int | None = None


class CSINodeDriver(K8s, frozen=True):
    name: str = ""
    node_id: str = msgspec.field(default="", name="nodeID")
    topology_keys: list[str] = []
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(K8s, frozen=True, omit_defaults=False):
    """``drivers`` is served even when empty (upstream's field has no ``omitempty``)."""

    drivers: list[CSINodeDriver] = []


class CSINode(K8s, frozen=True):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "CSINode"
    metadata: ObjectMeta = ObjectMeta()
    spec: CSINodeSpec = CSINodeSpec()


class CSIStorageCapacity(K8s, frozen=True):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "CSIStorageCapacity"
    metadata: ObjectMeta = ObjectMeta()
    node_topology: LabelSelector | None = None
    storage_class_name: str = ""
    capacity: Quantity | None = None
    maximum_volume_size: Quantity | None = None


class VolumeAttachmentSource(K8s, frozen=True):
    persistent_volume_name: str | None = None
    inline_volume_spec: PersistentVolumeSpec | None = None


class VolumeAttachmentSpec(K8s, frozen=True):
    attacher: str = ""
    source: VolumeAttachmentSource = VolumeAttachmentSource()
    node_name: str = ""


class VolumeError(K8s, frozen=True):
    time: str | None = None
    message: str = ""
    error_code: int | None = None


class VolumeAttachmentStatus(K8s, frozen=True):
    attached: bool | None = None
    """Defaulted to false (``storagedefaults.default_storage``): upstream always serves it."""
    attachment_metadata: dict[str, str] = {}
    attach_error: VolumeError | None = None
    detach_error: VolumeError | None = None


class VolumeAttachment(K8s, frozen=True):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "VolumeAttachment"
    metadata: ObjectMeta = ObjectMeta()
    spec: VolumeAttachmentSpec = VolumeAttachmentSpec()
    status: VolumeAttachmentStatus = VolumeAttachmentStatus()


STORAGE_KINDS: Final = (
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    VolumeAttachment,
)


def pod_claim_names(pod: Pod) -> list[str]:
    """The PersistentVolumeClaims a pod's volumes name, in volume order: a
    ``persistentVolumeClaim``'s ``claimName``, and a generic ephemeral volume's
    ``<pod>-<volume>`` (upstream ``ephemeral.VolumeClaimName``)."""
    names: list[str] = []
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None:
            names.append(v.persistent_volume_claim.claim_name)
        elif v.ephemeral is not None:
            names.append(f"{pod.metadata.name}-{v.name}")
    return names
