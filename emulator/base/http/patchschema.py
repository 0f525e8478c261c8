"""The merge-key table of PATCH and apply: kind → JSON path → list/map strategy.

Owns ``SCHEMAS`` and ``field_schema``: upstream's ``patchMergeKey``/``patchStrategy`` struct
tags (strategic merge, ``patch``) and ``+listType``/``+listMapKey`` markers (server-side
apply, ``apply``), per kind. Does not own merging itself (``patch``, ``apply``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["SCHEMAS", "FieldSchema", "field_schema"]


@dataclass(frozen=True, slots=True)
class FieldSchema:
    """One field's merge metadata: upstream's struct tags and list markers.

    ``merge_key``/``strategy`` are the ``patchMergeKey``/``patchStrategy`` tags (strategic
    merge); ``list_type``/``keys`` the ``+listType``/``+listMapKey`` markers (server-side apply).
    """

    merge_key: str = ""
    strategy: str = ""
    """``merge`` or ``""`` (a list is then replaced whole)."""
    retain_keys: bool = False
    list_type: str = "atomic"
    """``map`` (items keyed by ``keys``), ``set`` (scalars) or ``atomic``."""
    keys: tuple[str, ...] = ()


def _keyed(key: str, *ssa_keys: str, retain: bool = False, ssa: str = "map") -> FieldSchema:
    return FieldSchema(key, "merge", retain, ssa, ssa_keys or (key,))


_SET: Final = FieldSchema("", "merge", False, "set")
_CONDITIONS: Final = _keyed("type")

_OBJECT_META: Final = {
    "finalizers": _SET,
    "ownerReferences": _keyed("uid"),
}
_CONTAINER: Final = {
    "ports": _keyed("containerPort", "containerPort", "protocol"),
    "env": _keyed("name"),
    "volumeMounts": _keyed("mountPath"),
    "volumeDevices": _keyed("devicePath"),
}
_POD_SPEC: Final = {
    "volumes": _keyed("name", retain=True),
    "initContainers": _keyed("name"),
    "containers": _keyed("name"),
    "ephemeralContainers": _keyed("name"),
    "imagePullSecrets": _keyed("name"),
    "hostAliases": _keyed("ip"),
    "topologySpreadConstraints": _keyed("topologyKey", "topologyKey", "whenUnsatisfiable"),
    "schedulingGates": _keyed("name"),
    "resourceClaims": _keyed("name", retain=True),
    **{f"{c}.*.{k}": v for c in ("initContainers", "containers", "ephemeralContainers") for k, v in _CONTAINER.items()},
}
_POD_STATUS: Final = {
    "conditions": _CONDITIONS,
    "podIPs": _keyed("ip"),
    "hostIPs": _keyed("ip", ssa="atomic"),
    "resourceClaimStatuses": _keyed("name", retain=True),
}


def _under(prefix: str, table: Mapping[str, FieldSchema]) -> dict[str, FieldSchema]:
    return {f"{prefix}.{path}": schema for path, schema in table.items()}


def _template(prefix: str) -> dict[str, FieldSchema]:
    return {**_under(f"{prefix}.metadata", _OBJECT_META), **_under(f"{prefix}.spec", _POD_SPEC)}


def _workload(template: str, *, strategy: bool = False, conditions: str = "map") -> dict[str, FieldSchema]:
    table = {**_template(template), "status.conditions": _keyed("type", ssa=conditions)}
    if strategy:
        table["spec.strategy"] = FieldSchema(retain_keys=True)
    return table


_KIND_TABLES: Final[dict[str, dict[str, FieldSchema]]] = {
    "Pod": {**_under("spec", _POD_SPEC), **_under("status", _POD_STATUS)},
    "Node": {
        "spec.podCIDRs": _SET,
        "status.conditions": _CONDITIONS,
        "status.addresses": _keyed("type"),
    },
    "Service": {"spec.ports": _keyed("port", "port", "protocol"), "status.conditions": _CONDITIONS},
    "Namespace": {"status.conditions": _CONDITIONS},
    "Deployment": _workload("spec.template", strategy=True),
    "ReplicaSet": _workload("spec.template"),
    "StatefulSet": _workload("spec.template"),
    "DaemonSet": _workload("spec.template"),
    "Job": _workload("spec.template", conditions="atomic"),
    "CronJob": {**_template("spec.jobTemplate.spec.template"), **_under("spec.jobTemplate.metadata", _OBJECT_META)},
    "PodDisruptionBudget": {"status.conditions": _CONDITIONS},
    "PersistentVolumeClaim": {"status.conditions": _CONDITIONS},
    "CSINode": {"spec.drivers": _keyed("name")},
    "CSIDriver": {"spec.volumeLifecycleModes": _SET},
    "ResourceClaim": {"status.reservedFor": _keyed("uid")},
    "HorizontalPodAutoscaler": {"status.conditions": _CONDITIONS},
}

SCHEMAS: Final[dict[str, dict[str, FieldSchema]]] = {
    kind: {**_under("metadata", _OBJECT_META), **table} for kind, table in _KIND_TABLES.items()
}
"""Kind → dotted JSON path (``*`` steps into a list's items) → merge metadata.

Checked against the ``patchMergeKey``/``patchStrategy`` tags and ``listType`` markers of
``k8s.io/api`` v1.34 (core, apps, batch, policy, storage). Paths not listed are maps merged key by
key and atomic lists. Event, Lease, PriorityClass, Binding, ConfigMap, Secret, PersistentVolume,
StorageClass, CSIStorageCapacity, VolumeAttachment, DeviceClass, ResourceClaimTemplate, ResourceSlice,
NodePool, NodeClaim:
only ``metadata``'s entries (resource.k8s.io's lists are atomic; a claim's ``status.reservedFor``
merges by ``uid``).
"""
for _kind in (
    "Event",
    "Lease",
    "PriorityClass",
    "Binding",
    "ConfigMap",
    "Secret",
    "PersistentVolume",
    "StorageClass",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "DeviceClass",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "NodePool",
    "NodeClaim",
):
    SCHEMAS[_kind] = _under("metadata", _OBJECT_META)

_DEFAULT: Final = FieldSchema()


def field_schema(kind: str, path: str) -> FieldSchema:
    """The merge metadata of ``path`` (``spec.containers``, ``spec.containers.*.ports``)."""
    return SCHEMAS.get(kind, {}).get(path, _DEFAULT)
