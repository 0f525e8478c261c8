"""Validation of the ``storage.k8s.io/v1`` kinds (upstream ``pkg/apis/storage/validation``):
StorageClass, CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment, their create and update
rules, as ``(path, detail)`` problems in upstream's order (the caller reports the first); and
``storage_problems``/``storage_update_problems``, the entry points for every storage kind
(PersistentVolume and PersistentVolumeClaim from ``volumevalidation``).

Update rules: a StorageClass's provisioner, parameters, reclaim policy and binding mode never
change; a CSIDriver's ``attachRequired`` and lifecycle modes; a CSINode driver's entry but its
``allocatable`` (``MutableCSINodeAllocatableCount``); a CSIStorageCapacity's topology and class;
a VolumeAttachment's spec.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.labels import dns1123_subdomain_errors, go_quote, qualified_name_errors
from emulator.base.api.labelselector import label_name_problems, label_selector_problems
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.storage import (
    BINDING_MODES,
    FS_GROUP_POLICIES,
    LIFECYCLE_MODES,
    SC_RECLAIM_POLICIES,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
    VolumeAttachment,
    VolumeError,
)
from emulator.base.api.volumevalidation import (
    Problem,
    csi_driver_name_problems,
    go_json,
    pv_problems,
    pv_spec_problems,
    pv_update_problems,
    pvc_problems,
    pvc_update_problems,
    quantity_problem,
    supported,
)

__all__ = ["storage_problems", "storage_update_problems"]

_MAX_PARAMETERS: Final = 512
_MAX_PARAMETERS_SIZE: Final = 256 * 1024
_MAX_METADATA_SIZE: Final = 256 * 1024
_MAX_ERROR_MESSAGE: Final = 1024
_MAX_NODE_ID: Final = 192
_IMMUTABLE: Final = "field is immutable"


def _too_long(path: str, limit: int) -> Problem:
    return path, f"Too long: may not be more than {limit} bytes"


# --- StorageClass ---------------------------------------------------------------------------------


def _provisioner(provisioner: str, path: str) -> Iterator[Problem]:
    if not provisioner:
        yield path, "Required value"
        return
    lowered = provisioner.lower()
    for msg in qualified_name_errors(lowered):
        yield path, f"Invalid value: {go_quote(lowered)}: {msg}"


def _parameters(params: Mapping[str, str], path: str) -> Iterator[Problem]:
    if len(params) > _MAX_PARAMETERS:
        yield _too_long(path, _MAX_PARAMETERS)
        return
    if "" in params:
        yield path, 'Invalid value: "": field can not be empty.'
    if sum(len(k.encode()) + len(v.encode()) for k, v in params.items()) > _MAX_PARAMETERS_SIZE:
        yield _too_long(path, _MAX_PARAMETERS_SIZE)


def _topologies(terms: list[TopologySelectorTerm], path: str) -> Iterator[Problem]:
    seen: list[dict[str, frozenset[str]]] = []
    for i, term in enumerate(terms):
        exprs: dict[str, frozenset[str]] = {}
        for j, req in enumerate(term.match_label_expressions):
            at = f"{path}[{i}].matchLabelExpressions[{j}]"
            if not req.values:
                yield f"{at}.values", "Required value"
            values: set[str] = set()
            for k, value in enumerate(req.values):
                if value in values:
                    yield f"{at}.values[{k}]", f"Duplicate value: {go_quote(value)}"
                values.add(value)
            yield from label_name_problems(req.key, f"{at}.key")
            if req.key in exprs:
                yield f"{at}.key", f"Duplicate value: {go_quote(req.key)}"
            exprs[req.key] = frozenset(values)
        if exprs in seen:
            yield f"{path}[{i}].matchLabelExpressions", 'Duplicate value: ""'
        seen.append(exprs)


def _storage_class(sc: StorageClass) -> Iterator[Problem]:
    yield from _provisioner(sc.provisioner, "provisioner")
    yield from _parameters(sc.parameters, "parameters")
    if sc.reclaim_policy and sc.reclaim_policy not in SC_RECLAIM_POLICIES:
        yield "reclaimPolicy", supported(sc.reclaim_policy, SC_RECLAIM_POLICIES)
    if sc.volume_binding_mode is None:
        yield "volumeBindingMode", "Required value"
    elif sc.volume_binding_mode not in BINDING_MODES:
        yield "volumeBindingMode", supported(sc.volume_binding_mode, BINDING_MODES)
    yield from _topologies(sc.allowed_topologies, "allowedTopologies")


def _storage_class_update(old: StorageClass, new: StorageClass) -> Iterator[Problem]:
    if new.parameters != old.parameters:
        yield "parameters", "Forbidden: updates to parameters are forbidden."
    if new.provisioner != old.provisioner:
        yield "provisioner", "Forbidden: updates to provisioner are forbidden."
    if new.reclaim_policy != old.reclaim_policy:
        yield "reclaimPolicy", "Forbidden: updates to reclaimPolicy are forbidden."
    if new.volume_binding_mode != old.volume_binding_mode:
        yield "volumeBindingMode", f"Invalid value: {go_quote(new.volume_binding_mode or '')}: {_IMMUTABLE}"


# --- CSIDriver ------------------------------------------------------------------------------------


def _csi_driver(driver: CSIDriver) -> Iterator[Problem]:
    spec = driver.spec
    for value, wire in (
        (spec.attach_required, "attachedRequired"),
        (spec.pod_info_on_mount, "podInfoOnMount"),
        (spec.storage_capacity, "storageCapacity"),
    ):
        if value is None:
            yield f"spec.{wire}", "Required value"
    if spec.fs_group_policy is not None and spec.fs_group_policy not in FS_GROUP_POLICIES:
        yield "spec.fsGroupPolicy", supported(spec.fs_group_policy, FS_GROUP_POLICIES)
    audiences: set[str] = set()
    for i, request in enumerate(spec.token_requests):
        at = f"spec.tokenRequests[{i}]"
        if request.audience in audiences:
            yield f"{at}.audience", f"Duplicate value: {go_quote(request.audience)}"
            continue
        audiences.add(request.audience)
        seconds = request.expiration_seconds
        if seconds is not None and seconds < 600:
            yield (
                f"{at}.expirationSeconds",
                f"Invalid value: {seconds}: may not specify a duration less than 10 minutes",
            )
        if seconds is not None and seconds > 1 << 32:
            yield (
                f"{at}.expirationSeconds",
                f"Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds",
            )
    for mode in spec.volume_lifecycle_modes:
        if mode not in LIFECYCLE_MODES:
            yield "spec.volumeLifecycleModes", supported(mode, LIFECYCLE_MODES)
    if spec.se_linux_mount is None:
        yield "spec.seLinuxMount", "Required value"
    period = spec.node_allocatable_update_period_seconds
    if period is not None and period < 10:
        yield (
            "spec.nodeAllocatableUpdatePeriodSeconds",
            f"Invalid value: {period}: must be greater than or equal to 10 seconds",
        )


def _csi_driver_update(old: CSIDriver, new: CSIDriver) -> Iterator[Problem]:
    if new.spec.attach_required != old.spec.attach_required:
        shown = "null" if new.spec.attach_required is None else str(new.spec.attach_required).lower()
        yield "spec.attachedRequired", f"Invalid value: {shown}: {_IMMUTABLE}"
    if new.spec.volume_lifecycle_modes != old.spec.volume_lifecycle_modes:
        yield "spec.volumeLifecycleModes", f"Invalid value: {go_json(new.spec.volume_lifecycle_modes)}: {_IMMUTABLE}"


# --- CSINode --------------------------------------------------------------------------------------


def _csi_node(node: CSINode) -> Iterator[Problem]:
    names: set[str] = set()
    for i, driver in enumerate(node.spec.drivers):
        at = f"spec.drivers[{i}]"
        yield from csi_driver_name_problems(driver.name, f"{at}.name")
        if not driver.node_id:
            yield f"{at}.nodeID", "Required value"
        if len(driver.node_id) > _MAX_NODE_ID:
            yield (
                f"{at}.nodeID",
                f"Invalid value: {go_quote(driver.node_id)}: must be {_MAX_NODE_ID} characters or less",
            )
        count = driver.allocatable.count if driver.allocatable is not None else None
        if count is not None and count < 0:
            yield f"{at}.allocatable.count", f"Invalid value: {count}: must be greater than or equal to 0"
        if driver.name in names:
            yield f"{at}.name", f"Duplicate value: {go_quote(driver.name)}"
        names.add(driver.name)
        keys: set[str] = set()
        for key in driver.topology_keys:
            if not key:
                yield at, "Required value"
            if key in keys:
                yield at, f"Duplicate value: {go_quote(key)}"
            keys.add(key)
            for msg in qualified_name_errors(key):
                yield at, f"Invalid value: {go_quote(key)}: {msg}"


def _csi_node_update(old: CSINode, new: CSINode) -> Iterator[Problem]:
    for before in old.spec.drivers:
        for after in new.spec.drivers:
            if before.name == after.name and replace(after, allocatable=None) != replace(before, allocatable=None):
                yield "spec.drivers", f"Invalid value: {go_json(after)}: {_IMMUTABLE}"


# --- CSIStorageCapacity ---------------------------------------------------------------------------


def _capacity(cap: CSIStorageCapacity) -> Iterator[Problem]:
    yield from label_selector_problems(cap.node_topology, "nodeTopology")
    for msg in dns1123_subdomain_errors(cap.storage_class_name):
        yield "storageClassName", f"Invalid value: {go_quote(cap.storage_class_name)}: {msg}"
    for q, wire in ((cap.capacity, "capacity"), (cap.maximum_volume_size, "maximumVolumeSize")):
        if q is None:
            continue
        if problem := quantity_problem(q, wire):
            yield problem
        elif wire == "capacity" and q.milli < 0:
            yield wire, f"Invalid value: {go_quote(q.text)}: must be greater than or equal to 0"


def _capacity_update(old: CSIStorageCapacity, new: CSIStorageCapacity) -> Iterator[Problem]:
    if new.node_topology != old.node_topology:
        shown = "null" if new.node_topology is None else go_json(new.node_topology)
        yield "nodeTopology", f"Invalid value: {shown}: {_IMMUTABLE}"
    if new.storage_class_name != old.storage_class_name:
        yield "storageClassName", f"Invalid value: {go_quote(new.storage_class_name)}: {_IMMUTABLE}"


# --- VolumeAttachment -----------------------------------------------------------------------------


def _volume_error(err: VolumeError | None, path: str) -> Iterator[Problem]:
    if err is None:
        return
    if len(err.message) > _MAX_ERROR_MESSAGE:
        yield _too_long(f"{path}.message", _MAX_METADATA_SIZE)
    if err.error_code is not None and err.error_code < 0:
        yield f"{path}.errorCode", f"Invalid value: {err.error_code}: must be between 0 and 2147483647, inclusive"


def _attachment(va: VolumeAttachment) -> Iterator[Problem]:
    spec = va.spec
    if not spec.attacher:
        yield "spec.attacher", "Required value"
    source, pv_name = spec.source, spec.source.persistent_volume_name
    one_of = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    if source.inline_volume_spec is None and pv_name is None:
        yield "spec.source", f"Required value: {one_of}"
    elif source.inline_volume_spec is not None and pv_name is not None:
        yield "spec.source", f"Forbidden: {one_of}"
    elif pv_name is not None and not pv_name:
        yield "spec.source.persistentVolumeName", "Required value: must specify non empty persistentVolumeName"
    elif source.inline_volume_spec is not None:
        yield from _inline_spec(va)
    for msg in dns1123_subdomain_errors(spec.node_name):
        yield "spec.nodeName", f"Invalid value: {go_quote(spec.node_name)}: {msg}"
    metadata = va.status.attachment_metadata
    if sum(len(k.encode()) + len(v.encode()) for k, v in metadata.items()) > _MAX_METADATA_SIZE:
        yield _too_long("status.attachmentMetadata", _MAX_METADATA_SIZE)
    yield from _volume_error(va.status.attach_error, "status.attachError")
    yield from _volume_error(va.status.detach_error, "status.detachError")
    # ValidateVolumeAttachmentV1
    yield from csi_driver_name_problems(spec.attacher, "spec.attacher")
    if pv_name:
        for msg in dns1123_subdomain_errors(pv_name):
            yield "spec.source.persistentVolumeName", f"Invalid value: {go_quote(pv_name)}: {msg}"


def _inline_spec(va: VolumeAttachment) -> Iterator[Problem]:
    """An inline volume spec: no claim, capacity, node affinity or class; a CSI source; only
    ``Retain`` and ``Filesystem``; then the spec's own rules (capacity aside)."""
    spec = va.spec.source.inline_volume_spec
    assert spec is not None
    at = "spec.source.inlineVolumeSpec"
    inline = "may not be specified in the context of inline volumes"
    if spec.claim_ref is not None:
        yield f"{at}.claimRef", f"Forbidden: {inline}"
    if spec.capacity:
        yield f"{at}.capacity", f"Forbidden: {inline}"
    if spec.csi is None:
        yield f"{at}.csi", "Required value: has to be specified in the context of inline volumes"
    if spec.persistent_volume_reclaim_policy not in ("", "Retain"):
        yield f"{at}.persistentVolumeReclaimPolicy", "Forbidden: may only be Retain in the context of inline volumes"
    if spec.node_affinity is not None:
        yield f"{at}.nodeAffinity", f"Forbidden: {inline}"
    if spec.storage_class_name:
        yield f"{at}.storageClassName", f"Forbidden: {inline}"
    if spec.volume_mode not in (None, "Filesystem"):
        yield (
            f"{at}.volumeMode",
            "Forbidden: may not specify volumeMode other than Filesystem in the context of inline volumes",
        )
    for problem in pv_spec_problems(replace(spec, capacity={"storage": _ONE}), at):
        if not problem[0].startswith(f"{at}.capacity"):
            yield problem


def _attachment_update(old: VolumeAttachment, new: VolumeAttachment) -> Iterator[Problem]:
    if new.spec != old.spec:
        yield "spec", f"Invalid value: {go_json(new.spec)}: {_IMMUTABLE}"


# --- entry points ---------------------------------------------------------------------------------


_ONE: Final = parse_quantity("1")

_CREATE: Final[dict[type[Any], Any]] = {
    PersistentVolume: pv_problems,
    PersistentVolumeClaim: pvc_problems,
    StorageClass: _storage_class,
    CSIDriver: _csi_driver,
    CSINode: _csi_node,
    CSIStorageCapacity: _capacity,
    VolumeAttachment: _attachment,
}
_UPDATE: Final[dict[type[Any], Any]] = {
    PersistentVolume: pv_update_problems,
    PersistentVolumeClaim: pvc_update_problems,
    StorageClass: _storage_class_update,
    CSIDriver: _csi_driver_update,
    CSINode: _csi_node_update,
    CSIStorageCapacity: _capacity_update,
    VolumeAttachment: _attachment_update,
}


def storage_problems(obj: Any) -> Iterator[Problem]:
    """The create-time problems of a (defaulted) storage kind, metadata aside."""
    yield from _CREATE[type(obj)](obj)


def storage_update_problems(current: Any, candidate: Any) -> Iterator[Problem]:
    """The update rules of a storage kind beyond its create-time problems."""
    yield from _UPDATE[type(candidate)](current, candidate)
