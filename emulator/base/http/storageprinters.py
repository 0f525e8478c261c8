"""Upstream's Table columns and rows of the volume kinds (``pkg/printers/internalversion/printers.go``:
``printPersistentVolume``, ``printPersistentVolumeClaim``, ``printStorageClass``, ``printCSINode``,
``printCSIDriver``, ``printCSIStorageCapacity``, ``printVolumeAttachment``).

Kept apart from ``printers``/``tables`` (the other kinds) only for size; they merge these in.
Access modes print as upstream's short forms in its fixed order (``RWO,ROX,RWX,RWOP``); a class
is the beta annotation ``volume.beta.kubernetes.io/storage-class`` when set, else the spec's; a
StorageClass marked by ``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta
annotation) is named ``<name> (default)``; a deleted volume or claim is ``Terminating``.
Quantities print as written (upstream prints the canonical form: ``1024Mi`` as ``1Gi``).

Pure: ``now`` is given (``Since``), no clock reads, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import Quantity
from emulator.base.api.storage import (
    BETA_STORAGE_CLASS,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from emulator.base.api.storagedefaults import is_default_class
from emulator.base.http.cells import AGE_COLUMN as _AGE
from emulator.base.http.cells import NAME_COLUMN as _NAME
from emulator.base.http.cells import Since
from emulator.base.http.cells import column as _col

__all__ = ["STORAGE_COLUMNS", "STORAGE_ROWS"]

_SHORT_MODES: Final = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


STORAGE_COLUMNS: Final[dict[str, tuple[dict[str, Any], ...]]] = {
    "PersistentVolume": (
        _NAME,
        _col("Capacity", "string", "capacity is the description of the persistent volume's resources and capacity."),
        _col("Access Modes", "string", "accessModes contains all ways the volume can be mounted."),
        _col(
            "Reclaim Policy",
            "string",
            "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.",
        ),
        _col("Status", "string", "phase indicates if a volume is available, bound to a claim, or released by a claim."),
        _col(
            "Claim",
            "string",
            "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
        ),
        _col("StorageClass", "string", "StorageClass of the pv"),
        _col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
        _col(
            "Reason",
            "string",
            "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and "
            "tidy display in the CLI.",
        ),
        _AGE,
        _col(
            "VolumeMode",
            "string",
            "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw "
            "block state.",
            priority=1,
        ),
    ),
    "PersistentVolumeClaim": (
        _NAME,
        _col("Status", "string", "phase represents the current phase of PersistentVolumeClaim."),
        _col("Volume", "string", "volumeName is the binding reference to the PersistentVolume backing this claim."),
        _col("Capacity", "string", "capacity represents the actual resources of the underlying volume."),
        _col("Access Modes", "string", "accessModes contains the actual access modes the volume backing the PVC has."),
        _col("StorageClass", "string", "StorageClass of the pvc"),
        _col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
        _AGE,
        _col(
            "VolumeMode",
            "string",
            "volumeMode defines what type of volume is required by the claim.",
            priority=1,
        ),
    ),
    "StorageClass": (
        _NAME,
        _col("Provisioner", "string", "provisioner indicates the type of the provisioner."),
        _col(
            "ReclaimPolicy",
            "string",
            "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage "
            "class.",
        ),
        _col(
            "VolumeBindingMode",
            "string",
            "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.",
        ),
        _col(
            "AllowVolumeExpansion",
            "string",
            "allowVolumeExpansion shows whether the storage class allow volume expand.",
        ),
        _AGE,
    ),
    "CSINode": (
        _NAME,
        _col("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
        _AGE,
    ),
    "CSIDriver": (
        _NAME,
        _col(
            "AttachRequired", "boolean", "attachRequired indicates this CSI volume driver requires an attach operation."
        ),
        _col(
            "PodInfoOnMount",
            "boolean",
            "podInfoOnMount indicates this CSI volume driver requires additional pod information.",
        ),
        _col(
            "StorageCapacity",
            "boolean",
            "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage "
            "capacity that the driver deployment will report.",
        ),
        _col(
            "TokenRequests",
            "string",
            "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for.",
        ),
        _col(
            "RequiresRepublish",
            "boolean",
            "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called.",
        ),
        _col("Modes", "string", "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports."),
        _AGE,
    ),
    "CSIStorageCapacity": (
        _NAME,
        _col(
            "StorageClassName",
            "string",
            "storageClassName represents the name of the StorageClass that the reported capacity applies to.",
        ),
        _col("Capacity", "string", "capacity is the value reported by the CSI driver in its GetCapacityResponse."),
    ),
    "VolumeAttachment": (
        _NAME,
        _col(
            "Attacher",
            "string",
            "attacher indicates the name of the volume driver that MUST handle this request.",
            fmt="name",
        ),
        _col("PV", "string", "persistentVolumeName represents the name of the persistent volume to attach."),
        _col("Node", "string", "nodeName represents the node that the volume should be attached to."),
        _col("Attached", "boolean", "attached indicates the volume is successfully attached."),
        _AGE,
    ),
}
"""Kind → upstream's column definitions (descriptions: the first sentence of upstream's text)."""


def _modes(modes: list[str]) -> str:
    """``GetAccessModesAsString``."""
    return ",".join(short for mode, short in _SHORT_MODES if mode in modes)


def _size(q: Quantity | None) -> str:
    return "0" if q is None else q.text


def _phase(meta: ObjectMeta, phase: str) -> str:
    return "Terminating" if meta.deletion_timestamp is not None else phase


def _pv_cells(pv: PersistentVolume, since: Since) -> list[Any]:
    spec = pv.spec
    claim = f"{spec.claim_ref.namespace}/{spec.claim_ref.name}" if spec.claim_ref is not None else ""
    klass = pv.metadata.annotations.get(BETA_STORAGE_CLASS, spec.storage_class_name)
    return [
        pv.metadata.name,
        _size(spec.capacity.get("storage")),
        _modes(spec.access_modes),
        spec.persistent_volume_reclaim_policy,
        _phase(pv.metadata, pv.status.phase),
        claim,
        klass,
        spec.volume_attributes_class_name if spec.volume_attributes_class_name is not None else "<unset>",
        pv.status.reason,
        since(pv.metadata.creation_timestamp),
        spec.volume_mode if spec.volume_mode is not None else "<unset>",
    ]


def _pvc_cells(pvc: PersistentVolumeClaim, since: Since) -> list[Any]:
    spec = pvc.spec
    capacity = modes = ""
    if spec.volume_name:
        modes = _modes(pvc.status.access_modes)
        capacity = _size(pvc.status.capacity.get("storage"))
    klass = pvc.metadata.annotations.get(BETA_STORAGE_CLASS)
    if klass is None:
        klass = spec.storage_class_name or ""
    return [
        pvc.metadata.name,
        _phase(pvc.metadata, pvc.status.phase),
        spec.volume_name,
        capacity,
        modes,
        klass,
        spec.volume_attributes_class_name if spec.volume_attributes_class_name is not None else "<unset>",
        since(pvc.metadata.creation_timestamp),
        spec.volume_mode if spec.volume_mode is not None else "<unset>",
    ]


def _class_cells(sc: StorageClass, since: Since) -> list[Any]:
    return [
        sc.metadata.name + (" (default)" if is_default_class(sc) else ""),
        sc.provisioner,
        sc.reclaim_policy or "Delete",
        sc.volume_binding_mode or "Immediate",
        bool(sc.allow_volume_expansion),
        since(sc.metadata.creation_timestamp),
    ]


def _csinode_cells(node: CSINode, since: Since) -> list[Any]:
    return [node.metadata.name, len(node.spec.drivers), since(node.metadata.creation_timestamp)]


def _csidriver_cells(driver: CSIDriver, since: Since) -> list[Any]:
    spec = driver.spec
    tokens = ",".join(t.audience for t in spec.token_requests) if spec.token_requests else "<unset>"
    return [
        driver.metadata.name,
        spec.attach_required if spec.attach_required is not None else True,
        bool(spec.pod_info_on_mount),
        bool(spec.storage_capacity),
        tokens,
        bool(spec.requires_republish),
        ",".join(spec.volume_lifecycle_modes) or "<none>",
        since(driver.metadata.creation_timestamp),
    ]


def _capacity_cells(cap: CSIStorageCapacity, since: Since) -> list[Any]:
    return [cap.metadata.name, cap.storage_class_name, cap.capacity.text if cap.capacity is not None else "<unset>"]


def _attachment_cells(va: VolumeAttachment, since: Since) -> list[Any]:
    return [
        va.metadata.name,
        va.spec.attacher,
        va.spec.source.persistent_volume_name or "",
        va.spec.node_name,
        va.status.attached,
        since(va.metadata.creation_timestamp),
    ]


STORAGE_ROWS: Final[dict[str, Callable[[Any, Since], list[Any]]]] = {
    "PersistentVolume": _pv_cells,
    "PersistentVolumeClaim": _pvc_cells,
    "StorageClass": _class_cells,
    "CSINode": _csinode_cells,
    "CSIDriver": _csidriver_cells,
    "CSIStorageCapacity": _capacity_cells,
    "VolumeAttachment": _attachment_cells,
}
"""Kind → its row printer."""
