"""Upstream's defaulting of the volume kinds (``pkg/apis/core/v1/defaults.go``,
``pkg/apis/storage/v1/defaults.go``) and the default StorageClass (``GetDefaultClass``).

Owns ``default_storage`` (the defaults upstream applies on decode; idempotent, so a stored
object is unchanged by it) and ``is_default_class``/``default_class``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from msgspec.structs import replace

from emulator.base.api.storage import (
    BETA_IS_DEFAULT_CLASS,
    IS_DEFAULT_CLASS,
    CSIDriver,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

__all__ = ["default_class", "default_storage", "is_default_class"]


def is_default_class(sc: StorageClass) -> bool:
    """``IsDefaultAnnotation``: the GA or the beta annotation is ``"true"``."""
    notes = sc.metadata.annotations
    return notes.get(IS_DEFAULT_CLASS) == "true" or notes.get(BETA_IS_DEFAULT_CLASS) == "true"


def default_class(classes: Iterable[StorageClass]) -> StorageClass | None:
    """``GetDefaultClass``: of the classes marked default, the newest; equally new ones by name."""
    marked = [sc for sc in classes if is_default_class(sc)]
    if not marked:
        return None
    newest = max(sc.metadata.creation_timestamp or "" for sc in marked)
    return min(
        (sc for sc in marked if (sc.metadata.creation_timestamp or "") == newest), key=lambda sc: sc.metadata.name
    )


def _default_pv(pv: PersistentVolume) -> PersistentVolume:
    spec = pv.spec
    if spec.persistent_volume_reclaim_policy and spec.volume_mode is not None and pv.status.phase:
        return pv
    spec = replace(
        spec,
        persistent_volume_reclaim_policy=spec.persistent_volume_reclaim_policy or "Retain",
        volume_mode=spec.volume_mode if spec.volume_mode is not None else "Filesystem",
    )
    status = pv.status if pv.status.phase else replace(pv.status, phase="Pending")
    return replace(pv, spec=spec, status=status)


def _default_pvc(pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
    if pvc.spec.volume_mode is not None and pvc.status.phase:
        return pvc
    spec = pvc.spec if pvc.spec.volume_mode is not None else replace(pvc.spec, volume_mode="Filesystem")
    status = pvc.status if pvc.status.phase else replace(pvc.status, phase="Pending")
    return replace(pvc, spec=spec, status=status)


def _default_class(sc: StorageClass) -> StorageClass:
    if sc.reclaim_policy is not None and sc.volume_binding_mode is not None:
        return sc
    return replace(
        sc,
        reclaim_policy=sc.reclaim_policy if sc.reclaim_policy is not None else "Delete",
        volume_binding_mode=sc.volume_binding_mode if sc.volume_binding_mode is not None else "Immediate",
    )


def _default_driver(driver: CSIDriver) -> CSIDriver:
    s = driver.spec
    spec = replace(
        s,
        attach_required=True if s.attach_required is None else s.attach_required,
        pod_info_on_mount=False if s.pod_info_on_mount is None else s.pod_info_on_mount,
        storage_capacity=False if s.storage_capacity is None else s.storage_capacity,
        fs_group_policy="ReadWriteOnceWithFSType" if s.fs_group_policy is None else s.fs_group_policy,
        volume_lifecycle_modes=s.volume_lifecycle_modes or ["Persistent"],
        requires_republish=False if s.requires_republish is None else s.requires_republish,
        se_linux_mount=False if s.se_linux_mount is None else s.se_linux_mount,
    )
    return driver if spec == s else replace(driver, spec=spec)


def default_storage(obj: Any) -> Any:
    """``obj`` with upstream's defaults (a storage kind; any other object is returned as is):
    PV reclaim policy ``Retain``, volume mode ``Filesystem``, phase ``Pending``; PVC volume
    mode ``Filesystem``, phase ``Pending``; StorageClass reclaim policy ``Delete``, binding
    mode ``Immediate``; CSIDriver ``attachRequired`` true, ``fsGroupPolicy``
    ``ReadWriteOnceWithFSType``, ``volumeLifecycleModes`` ``[Persistent]``, the other flags
    false; a VolumeAttachment's ``status.attached`` false (served, never omitted)."""
    if isinstance(obj, PersistentVolume):
        return _default_pv(obj)
    if isinstance(obj, PersistentVolumeClaim):
        return _default_pvc(obj)
    if isinstance(obj, StorageClass):
        return _default_class(obj)
    if isinstance(obj, CSIDriver):
        return _default_driver(obj)
    if isinstance(obj, VolumeAttachment) and obj.status.attached is None:
        obj = replace(obj, status=replace(obj.status, attached=False))
    if isinstance(obj, VolumeAttachment) and obj.spec.source.inline_volume_spec is not None:
        inline = obj.spec.source.inline_volume_spec
        if inline.persistent_volume_reclaim_policy and inline.volume_mode is not None:
            return obj
        inline = _default_pv(PersistentVolume(spec=inline)).spec
        source = replace(obj.spec.source, inline_volume_spec=inline)
        return replace(obj, spec=replace(obj.spec, source=source))
    return obj
