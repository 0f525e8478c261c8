"""Validation of PersistentVolumes and PersistentVolumeClaims (upstream ``pkg/apis/core/validation``:
``ValidatePersistentVolume``/``...Update``, ``ValidatePersistentVolumeClaim``/``...Update``/
``...StatusUpdate``), with upstream's field paths and messages, as ``(path, detail)`` problems in
upstream's order (the caller reports the first).

Checked: access modes (required, supported, ``ReadWriteOncePod`` alone), a PV's capacity (only
``storage``, positive), reclaim policy, node affinity (``required``, a valid node selector), its
volume source (exactly one; a CSI source's driver and handle, a host path's and a local volume's
path, a local volume's node affinity), class name, volume mode; a claim's selector, storage
request (present, positive), class name, volume mode, data source references; the update rules
(a PV's source, volume mode and node affinity are immutable; a claim's spec is immutable but for
``volumeName`` set once, the storage request of a bound claim — never below its status capacity —
and a storage class given to a claim that had none). Where upstream appends a ``cmp.Diff`` of the
specs to a message the message stops before it (one line).

Also: malformed and out-of-range quantities, as pods' are refused (``quantity.TOO_LARGE``).
Not checked: the fields of in-tree sources other than paths (their plugins are not simulated).
"""

from __future__ import annotations

import os.path
from collections.abc import Iterator, Mapping
from typing import Any, Final

import msgspec
from msgspec.structs import replace

from emulator.base.api.labels import dns1123_subdomain_errors, go_quote
from emulator.base.api.labelselector import label_selector_problems
from emulator.base.api.podvalidation import node_selector_problems
from emulator.base.api.quantity import TOO_LARGE, Quantity, fits_int64_milli
from emulator.base.api.storage import (
    ACCESS_MODES,
    BETA_STORAGE_CLASS,
    IN_TREE_SOURCES,
    PV_RECLAIM_POLICIES,
    VOLUME_MODES,
    CSIPersistentVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeSpec,
    TypedLocalObjectReference,
    TypedObjectReference,
    in_tree_sources,
)

__all__ = [
    "Problem",
    "csi_driver_name_problems",
    "go_json",
    "pv_problems",
    "pv_spec_problems",
    "pv_update_problems",
    "pvc_problems",
    "pvc_spec_problems",
    "pvc_status_problems",
    "pvc_update_problems",
    "quantity_problem",
    "supported",
]

Problem = tuple[str, str]
_IMMUTABLE: Final = "field is immutable"
_ONE_TYPE: Final = "Forbidden: may not specify more than 1 volume type"
_PVC_SPEC_IMMUTABLE: Final = (
    "Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)


def _enc(obj: Any) -> Any:
    if isinstance(obj, Quantity):
        return obj.text
    raise NotImplementedError


_JSON: Final = msgspec.json.Encoder(enc_hook=_enc)


def go_json(value: Any) -> str:
    """A struct value as upstream's field errors print one (its JSON)."""
    return _JSON.encode(value).decode()


def supported(value: str, allowed: tuple[str, ...] | list[str]) -> str:
    """``field.NotSupported``'s detail."""
    return f"Unsupported value: {go_quote(value)}: supported values: " + ", ".join(go_quote(v) for v in allowed)


def quantity_problem(q: Quantity, path: str) -> Problem | None:
    """A malformed or too large quantity (as a pod's are refused), else None."""
    if q.error:
        return path, f"Invalid value: {go_quote(q.text)}: {q.error}"
    if not fits_int64_milli(q):
        return path, f"Invalid value: {go_quote(q.text)}: {TOO_LARGE}"
    return None


def _access_modes(modes: list[str], path: str, *, required: bool) -> Iterator[Problem]:
    if required and not modes:
        yield path, "Required value"
    once_pod = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            yield path, supported(mode, ACCESS_MODES)
        elif mode == "ReadWriteOncePod":
            once_pod = True
        else:
            other = True
    if once_pod and other:
        yield path, "Forbidden: may not use ReadWriteOncePod with other access modes"


def _class_name(name: str, path: str) -> Iterator[Problem]:
    for msg in dns1123_subdomain_errors(name):
        yield path, f"Invalid value: {go_quote(name)}: {msg}"


def csi_driver_name_problems(name: str, path: str) -> Iterator[Problem]:
    """``ValidateCSIDriverName`` (core): required, at most 63 characters, a DNS subdomain
    (lower-cased)."""
    if not name:
        yield path, "Required value"
    if len(name) > 63:
        yield path, "Too long: may not be more than 63 bytes"
    for msg in dns1123_subdomain_errors(name.lower()):
        yield path, f"Invalid value: {go_quote(name)}: {msg}"


def _csi_source(csi: CSIPersistentVolumeSource, path: str) -> Iterator[Problem]:
    yield from csi_driver_name_problems(csi.driver, f"{path}.driver")
    if not csi.volume_handle:
        yield f"{path}.volumeHandle", "Required value"
    for ref_name in (
        "controller_publish_secret_ref",
        "node_stage_secret_ref",
        "node_publish_secret_ref",
        "controller_expand_secret_ref",
        "node_expand_secret_ref",
    ):
        ref = getattr(csi, ref_name)
        if ref is None:
            continue
        wire = "".join(p.capitalize() if i else p for i, p in enumerate(ref_name.split("_")))
        if not ref.name:
            yield f"{path}.{wire}.name", "Required value"
        if not ref.namespace:
            yield f"{path}.{wire}.namespace", "Required value"


def _path_source(source: Mapping[str, Any], path: str) -> Iterator[Problem]:
    if not source.get("path"):
        yield f"{path}.path", "Required value"


def _capacity(capacity: Mapping[str, Quantity], path: str) -> Iterator[Problem]:
    if not capacity:
        yield path, "Required value"
    if "storage" not in capacity or len(capacity) > 1:
        shown = "{" + ", ".join(f"{go_quote(k)}: {go_quote(v.text)}" for k, v in sorted(capacity.items())) + "}"
        yield path, f"Unsupported value: {shown}: supported values: " + go_quote("storage")
    for name in sorted(capacity):
        q = capacity[name]
        if problem := quantity_problem(q, f"{path}.{name}"):
            yield problem
            continue
        if q.value < 0:
            yield f"{path}[{name}]", f"Invalid value: {q.value}: must be a valid resource quantity"
        if q.milli <= 0:
            yield f"{path}[{name}]", f"Invalid value: {go_quote(q.text)}: must be greater than zero"


def pv_spec_problems(spec: PersistentVolumeSpec, path: str = "spec") -> Iterator[Problem]:
    """``ValidatePersistentVolumeSpec`` of a stored (not inline) volume."""
    yield from _access_modes(spec.access_modes, f"{path}.accessModes", required=True)
    yield from _capacity(spec.capacity, f"{path}.capacity")
    policy = spec.persistent_volume_reclaim_policy
    if policy and policy not in PV_RECLAIM_POLICIES:
        yield f"{path}.persistentVolumeReclaimPolicy", supported(policy, PV_RECLAIM_POLICIES)
    affinity = False
    if spec.node_affinity is not None:
        affinity = True
        if spec.node_affinity.required is None:
            yield f"{path}.nodeAffinity.required", "Required value: must specify required node constraints"
        else:
            yield from node_selector_problems(spec.node_affinity.required, f"{path}.nodeAffinity.required")
    count = 0
    for name, source in in_tree_sources(spec):
        if count:
            yield f"{path}.{name}", _ONE_TYPE
            continue
        count += 1
        if name in ("hostPath", "local"):
            yield from _path_source(source, f"{path}.{name}")
        if name == "local" and not affinity:
            yield f"{path}.nodeAffinity", "Required value: Local volume requires node affinity"
    if spec.csi is not None:
        if count:
            yield f"{path}.csi", _ONE_TYPE
        else:
            count += 1
            yield from _csi_source(spec.csi, f"{path}.csi")
    if not count:
        yield path, "Required value: must specify a volume type"
    host = spec.host_path
    if host is not None and os.path.normpath(str(host.get("path") or ".")) == "/" and policy == "Recycle":
        yield f"{path}.persistentVolumeReclaimPolicy", "Forbidden: may not be 'recycle' for a hostPath mount of '/'"
    if spec.storage_class_name:
        yield from _class_name(spec.storage_class_name, f"{path}.storageClassName")
    if spec.volume_mode is not None and spec.volume_mode not in VOLUME_MODES:
        yield f"{path}.volumeMode", supported(spec.volume_mode, VOLUME_MODES)


def pv_problems(pv: PersistentVolume) -> Iterator[Problem]:
    """``ValidatePersistentVolume`` (metadata aside)."""
    yield from pv_spec_problems(pv.spec)


def _source(spec: PersistentVolumeSpec) -> PersistentVolumeSpec:
    """The ``PersistentVolumeSource`` part of a spec (its sources), the rest emptied."""
    kept = {attr: getattr(spec, attr) for attr in ("csi", *(a for a, _ in IN_TREE_SOURCES))}
    return PersistentVolumeSpec(**kept)


def pv_update_problems(current: PersistentVolume, candidate: PersistentVolume) -> Iterator[Problem]:
    """``ValidatePersistentVolumeUpdate`` beyond ``ValidatePersistentVolume``: the source and the
    volume mode never change, nor a node affinity once set (a controller expand secret may be
    added to a CSI source that had none)."""
    old, new = current.spec, candidate.spec
    if old.csi is not None and new.csi is not None and old.csi.controller_expand_secret_ref is None:
        new = replace(new, csi=replace(new.csi, controller_expand_secret_ref=None))
    if _source(new) != _source(old):
        yield "spec.persistentvolumesource", "Forbidden: spec.persistentvolumesource is immutable after creation"
    if new.volume_mode != old.volume_mode:
        yield "volumeMode", f"Invalid value: {go_quote(new.volume_mode or '')}: {_IMMUTABLE}"
    if old.node_affinity is not None and new.node_affinity != old.node_affinity:
        shown = "null" if new.node_affinity is None else go_json(new.node_affinity)
        yield "nodeAffinity", f"Invalid value: {shown}: {_IMMUTABLE}"


# --- claims ---------------------------------------------------------------------------------------


def _reference(ref: TypedLocalObjectReference | TypedObjectReference, path: str) -> Iterator[Problem]:
    if not ref.name:
        yield f"{path}.name", "Required value"
    if not ref.kind:
        yield f"{path}.kind", "Required value"
    group = ref.api_group or ""
    if not group and ref.kind != "PersistentVolumeClaim":
        detail = "must be 'PersistentVolumeClaim' when referencing the default apiGroup"
        yield path, f"Invalid value: {go_quote(ref.kind)}: {detail}"
    for msg in dns1123_subdomain_errors(group) if group else ():
        yield f"{path}.apiGroup", f"Invalid value: {go_quote(group)}: {msg}"


def _storage_request(spec: PersistentVolumeClaimSpec, path: str) -> Iterator[Problem]:
    for field in ("requests", "limits"):
        for name, q in sorted(getattr(spec.resources, field).items()):
            if problem := quantity_problem(q, f"{path}.resources.{field}.{name}"):
                yield problem
                return
    storage = spec.resources.requests.get("storage")
    at = f"{path}.resources[storage]"
    if storage is None:
        yield at, "Required value"
    elif storage.milli <= 0:
        yield at, f"Invalid value: {go_quote(storage.text)}: must be greater than zero"


def pvc_spec_problems(spec: PersistentVolumeClaimSpec, path: str = "spec") -> Iterator[Problem]:
    """``ValidatePersistentVolumeClaimSpec``."""
    if not spec.access_modes:
        yield f"{path}.accessModes", "Required value: at least 1 access mode is required"
    yield from label_selector_problems(spec.selector, f"{path}.selector")
    yield from _access_modes(spec.access_modes, f"{path}.accessModes", required=False)
    yield from _storage_request(spec, path)
    if spec.storage_class_name:
        yield from _class_name(spec.storage_class_name, f"{path}.storageClassName")
    if spec.volume_mode is not None and spec.volume_mode not in VOLUME_MODES:
        yield f"{path}.volumeMode", supported(spec.volume_mode, VOLUME_MODES)
    if spec.data_source is not None:
        yield from _reference(spec.data_source, f"{path}.dataSource")
    ref = spec.data_source_ref
    if ref is not None:
        yield from _reference(ref, f"{path}.dataSourceRef")
        if ref.namespace:
            if spec.data_source is not None:
                yield (
                    path,
                    f'Invalid value: "{path}.dataSource": may not be specified when '
                    "dataSourceRef.namespace is specified",
                )
        elif spec.data_source is not None:
            src = spec.data_source
            if (src.api_group, src.kind, src.name) != (ref.api_group, ref.kind, ref.name):
                yield path, f'Invalid value: "{path}.dataSource": must match dataSourceRef'


def pvc_problems(pvc: PersistentVolumeClaim) -> Iterator[Problem]:
    """``ValidatePersistentVolumeClaim`` (metadata aside)."""
    yield from pvc_spec_problems(pvc.spec)


def _storage_class_upgrade(current: PersistentVolumeClaim, candidate: PersistentVolumeClaim) -> bool:
    """A storage class given to a claim that had none: from its beta annotation's value
    (``validateStorageClassUpgradeFromAnnotation``) or, without the annotation, any class
    (``validateStorageClassUpgradeFromNil``)."""
    old_class, new_class = current.spec.storage_class_name, candidate.spec.storage_class_name
    if old_class is not None or not new_class:
        return False
    old_note = current.metadata.annotations.get(BETA_STORAGE_CLASS)
    if old_note is None:
        return True
    return candidate.metadata.annotations.get(BETA_STORAGE_CLASS) == old_note == new_class


def pvc_update_problems(current: PersistentVolumeClaim, candidate: PersistentVolumeClaim) -> Iterator[Problem]:
    """``ValidatePersistentVolumeClaimUpdate`` beyond ``ValidatePersistentVolumeClaim``."""
    old, new = current.spec, candidate.spec
    upgrade = _storage_class_upgrade(current, candidate)
    old_note = current.metadata.annotations.get(BETA_STORAGE_CLASS, "")
    new_note = candidate.metadata.annotations.get(BETA_STORAGE_CLASS, "")
    if not upgrade and old_note != new_note:
        yield f"metadata.annotations.{BETA_STORAGE_CLASS}", f"Invalid value: {go_quote(new_note)}: {_IMMUTABLE}"
    same_new = replace(new, volume_attributes_class_name=old.volume_attributes_class_name)
    if not old.volume_name:
        same_new = replace(same_new, volume_name=old.volume_name)
    if upgrade:
        same_new = replace(same_new, storage_class_name=old.storage_class_name)
    if candidate.status.phase == "Bound" and new.resources.requests:
        requests = dict(new.resources.requests)
        if "storage" in old.resources.requests:
            requests["storage"] = old.resources.requests["storage"]
        else:
            requests.pop("storage", None)
        same_new = replace(same_new, resources=replace(new.resources, requests=requests))
    if same_new != old:
        yield "spec", _PVC_SPEC_IMMUTABLE
    old_size, new_size = old.resources.requests.get("storage"), new.resources.requests.get("storage")
    status_size = current.status.capacity.get("storage")
    old_milli = old_size.milli if old_size else 0
    new_milli = new_size.milli if new_size else 0
    if new_milli < old_milli and new_milli <= (status_size.milli if status_size else 0):
        yield "spec.resources.requests.storage", "Forbidden: field can not be less than status.capacity"
    if new.volume_mode != old.volume_mode:
        yield "volumeMode", f"Invalid value: {go_quote(new.volume_mode or '')}: {_IMMUTABLE}"


def pvc_status_problems(pvc: PersistentVolumeClaim) -> Iterator[Problem]:
    """``ValidatePersistentVolumeClaimStatusUpdate``'s quantities: capacity and allocated
    resources, valid and not negative."""
    for field, wire in (("capacity", "capacity"), ("allocated_resources", "allocatedResources")):
        for name, q in sorted(getattr(pvc.status, field).items()):
            if problem := quantity_problem(q, f"status.{wire}.{name}"):
                yield problem
            elif q.value < 0:
                yield f"status.{wire}[{name}]", f"Invalid value: {q.value}: must be a valid resource quantity"
