"""The volume kinds (upstream ``pkg/registry/core/persistentvolume``, ``.../persistentvolumeclaim``
and ``pkg/registry/storage/...``): defaulted on create and update (``storagedefaults.default_storage``),
upstream's update rules (``storagevalidation``). PersistentVolumes, claims and VolumeAttachments
have a status the controllers write: reset on create (a volume's and a claim's phase
``Pending``; a volume's ``lastPhaseTransitionTime`` its creation time), kept by updates, and
replaced only through the status subresource. A claim without a class gets the default one
(the ``DefaultStorageClass`` admission). A claim and a volume created (not restored) get
their protection finalizer, ``kubernetes.io/pvc-protection`` / ``kubernetes.io/pv-protection``
(upstream's ``StorageObjectInUseProtection`` admission plugin); the pvc-protection and
pv-protection controllers remove it once the object is no longer in use. Only the claims and CSIStorageCapacities are
namespaced; none of the kinds has a selectable field beyond the metadata's.
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from emulator.base.api.errors import Invalid
from emulator.base.api.storage import (
    BETA_STORAGE_CLASS,
    PV_PROTECTION_FINALIZER,
    PVC_PROTECTION_FINALIZER,
    PersistentVolumeClaimStatus,
    PersistentVolumeStatus,
    VolumeAttachmentStatus,
)
from emulator.base.api.storagedefaults import default_class, default_storage
from emulator.base.api.validation import validate_status_update, validate_storage_update, validate_update
from emulator.base.api.volumevalidation import pvc_status_problems
from emulator.base.apiserver.registry.strategy import Strategy

__all__ = [
    "CSIDriverStrategy",
    "CSINodeStrategy",
    "CSIStorageCapacityStrategy",
    "PersistentVolumeClaimStrategy",
    "PersistentVolumeStrategy",
    "StorageClassStrategy",
    "StorageStrategy",
    "VolumeAttachmentStrategy",
]


def with_finalizer(obj: Any, finalizer: str) -> Any:
    """``obj`` with ``finalizer`` appended, if absent (upstream ``StorageObjectInUseProtection``)."""
    if finalizer in obj.metadata.finalizers:
        return obj
    return replace(obj, metadata=replace(obj.metadata, finalizers=[*obj.metadata.finalizers, finalizer]))


class StorageStrategy(Strategy):
    """Defaulting and the update rules; a subclass names its kind and scope."""

    namespaced = False
    fresh_status: Any = None
    """The status a created object starts with (None: the kind has no status)."""

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        if self.fresh_status is not None and not restore:
            obj = replace(obj, status=self.fresh_status)
        return default_storage(obj)

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        return default_storage(candidate)

    def validate_update(self, current: Any, candidate: Any) -> None:
        validate_update(candidate)
        validate_storage_update(current, candidate)


class PersistentVolumeStrategy(StorageStrategy):
    kind = "PersistentVolume"
    fresh_status = PersistentVolumeStatus()

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        obj = super().prepare_for_create(obj, restore=restore)
        return obj if restore else with_finalizer(obj, PV_PROTECTION_FINALIZER)

    def complete_create(self, obj: Any) -> Any:
        """Upstream stamps the ``Pending`` phase's transition at creation."""
        if obj.status.last_phase_transition_time is None and obj.status.phase == "Pending":
            return replace(obj, status=replace(obj.status, last_phase_transition_time=obj.metadata.creation_timestamp))
        return obj


class PersistentVolumeClaimStrategy(StorageStrategy):
    """A claim created without a class (neither ``storageClassName`` nor the beta annotation)
    gets the default StorageClass's name, if there is one: upstream's ``DefaultStorageClass``
    admission plugin (``plugin/pkg/admission/storage/storageclass/setdefault``)."""

    kind = "PersistentVolumeClaim"
    namespaced = True
    fresh_status = PersistentVolumeClaimStatus()

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        obj = super().prepare_for_create(obj, restore=restore)
        if not restore:
            obj = with_finalizer(obj, PVC_PROTECTION_FINALIZER)
        if restore or obj.spec.storage_class_name is not None or BETA_STORAGE_CLASS in obj.metadata.annotations:
            return obj
        default = default_class(self.store.table("StorageClass").values())
        if default is None:
            return obj
        return replace(obj, spec=replace(obj.spec, storage_class_name=default.metadata.name))

    def validate_status_update(self, current: Any, candidate: Any) -> None:
        validate_status_update(candidate)
        if problem := next(pvc_status_problems(candidate), None):
            raise Invalid.at(candidate.kind, candidate.metadata.name, *problem)


class StorageClassStrategy(StorageStrategy):
    kind = "StorageClass"


class CSIDriverStrategy(StorageStrategy):
    kind = "CSIDriver"


class CSINodeStrategy(StorageStrategy):
    kind = "CSINode"


class CSIStorageCapacityStrategy(StorageStrategy):
    kind = "CSIStorageCapacity"
    namespaced = True


class VolumeAttachmentStrategy(StorageStrategy):
    kind = "VolumeAttachment"
    fresh_status = VolumeAttachmentStatus()

    def prepare_for_status_update(self, current: Any, obj: Any) -> Any:
        return default_storage(replace(current, status=obj.status))
