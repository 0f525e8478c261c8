"""``components.schemas`` of the ``/openapi/v3`` documents, generated from the emulator's Structs.

``msgspec.json.schema_components`` over the kinds of a group-version gives JSON Schema named
after the Structs; ``schemas`` renames them as upstream (``io.k8s.api.core.v1.Pod``,
``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``: module → package, with ``_PACKAGE_OF_NAME``
for the Structs kept elsewhere than upstream keeps them), unwraps ``Optional``, writes
quantities and int-or-strings as upstream's ``oneOf`` schemas, drops defaults (the Structs'
defaults are the emulator's, not always upstream's) and docstrings (they describe the
emulator; the text comes from ``schema_docs``, a described ``$ref`` wrapped in ``allOf`` as
upstream), and adds upstream's strategic-merge and list-type markers (``LIST_MARKERS``) and
``x-kubernetes-group-version-kind`` on every kind and its ``<Kind>List``. The kinds that have no
Struct (``Status``, ``DeleteOptions``, ``Patch``, ``ListMeta``, autoscaling/v1 ``Scale``,
policy/v1 ``Eviction``) are written by hand, small.

This module does not own paths, operations or caching (``openapi``), nor the text (``schema_docs``).
"""

from __future__ import annotations

import functools
import json
from typing import Any, Final

import msgspec

from emulator.base.api import (
    apps,
    autoscaling,
    batch,
    config,
    core,
    karpenter,
    meta,
    podtemplate,
    policy,
    probe,
    resource,
    resourcestatus,
    scheduling,
    services,
    storage,
    volumes,
)
from emulator.base.api.quantity import Quantity
from emulator.base.http import schema_docs
from emulator.base.http.resources import RESOURCES, Resource, Subresource, by_group_version

__all__ = ["INT_OR_STRING", "LIST_MARKERS", "META", "QUANTITY", "REF", "schema_name", "schemas", "subresource_schema"]

REF: Final = "#/components/schemas/"
META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1"
QUANTITY: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

_PACKAGE_OF_MODULE: Final = {
    core: "io.k8s.api.core.v1",
    podtemplate: "io.k8s.api.core.v1",
    config: "io.k8s.api.core.v1",
    probe: "io.k8s.api.core.v1",
    services: "io.k8s.api.core.v1",
    apps: "io.k8s.api.apps.v1",
    autoscaling: "io.k8s.api.autoscaling.v2",
    batch: "io.k8s.api.batch.v1",
    policy: "io.k8s.api.policy.v1",
    scheduling: "io.k8s.api.scheduling.v1",
    storage: "io.k8s.api.storage.v1",
    resource: "io.k8s.api.resource.v1",
    resourcestatus: "io.k8s.api.resource.v1",
    volumes: "io.k8s.api.core.v1",
    karpenter: "sh.karpenter.v1",
    meta: META,
}
_PACKAGE_OF_NAME: Final = {
    # where upstream's package differs from the module the emulator keeps the Struct in
    "ObjectReference": "io.k8s.api.core.v1",
    "Lease": "io.k8s.api.coordination.v1",
    "LeaseSpec": "io.k8s.api.coordination.v1",
    **dict.fromkeys(
        (
            "PersistentVolume",
            "PersistentVolumeSpec",
            "PersistentVolumeStatus",
            "PersistentVolumeClaim",
            "PersistentVolumeClaimStatus",
            "PersistentVolumeClaimCondition",
            "CSIPersistentVolumeSource",
            "SecretReference",
            "VolumeNodeAffinity",
            "TopologySelectorTerm",
            "TopologySelectorLabelRequirement",
        ),
        "io.k8s.api.core.v1",
    ),
}

LIST_MARKERS: Final[dict[tuple[str, str], dict[str, Any]]] = {
    # (schema, property) -> upstream's extensions (k8s.io/api types.go markers)
    ("io.k8s.api.core.v1.PodSpec", "containers"): {"x-kubernetes-patch-merge-key": "name"},
    ("io.k8s.api.core.v1.PodSpec", "initContainers"): {"x-kubernetes-patch-merge-key": "name"},
    ("io.k8s.api.core.v1.PodSpec", "topologySpreadConstraints"): {
        "x-kubernetes-list-map-keys": ["topologyKey", "whenUnsatisfiable"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "topologyKey",
    },
    ("io.k8s.api.core.v1.PodSpec", "schedulingGates"): {
        "x-kubernetes-list-map-keys": ["name"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "name",
    },
    ("io.k8s.api.core.v1.PodSpec", "tolerations"): {"x-kubernetes-list-type": "atomic"},
    ("io.k8s.api.core.v1.Container", "ports"): {
        "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "containerPort",
    },
    ("io.k8s.api.core.v1.PodStatus", "conditions"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.core.v1.NodeSpec", "taints"): {"x-kubernetes-list-type": "atomic"},
    ("io.k8s.api.core.v1.NodeStatus", "conditions"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.core.v1.NodeStatus", "addresses"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.core.v1.ServiceSpec", "ports"): {
        "x-kubernetes-list-map-keys": ["port", "protocol"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "port",
    },
    (f"{META}.ObjectMeta", "finalizers"): {"x-kubernetes-list-type": "set"},
    (f"{META}.ObjectMeta", "ownerReferences"): {"x-kubernetes-patch-merge-key": "uid"},
    ("io.k8s.api.apps.v1.DeploymentStatus", "conditions"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.apps.v1.ReplicaSetStatus", "conditions"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.apps.v1.StatefulSetStatus", "conditions"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.apps.v1.DaemonSetStatus", "conditions"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.batch.v1.JobStatus", "conditions"): {
        "x-kubernetes-list-type": "atomic",
        "x-kubernetes-patch-merge-key": "type",
    },
    ("io.k8s.api.policy.v1.PodDisruptionBudgetStatus", "conditions"): {
        "x-kubernetes-list-map-keys": ["type"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "type",
    },
}
"""Every entry with a merge key also has ``x-kubernetes-patch-strategy: merge`` (added below). Only
the lists the Structs have are listed (a test checks that every entry lands on a property)."""

_TOP_LEVEL: Final = {
    "apiVersion": "APIVersion defines the versioned schema of this representation of an object.",
    "kind": "Kind is a string value representing the REST resource this object represents.",
    "metadata": "Standard object's metadata.",
    "spec": "Specification of the desired behavior of the object.",
    "status": "Most recently observed status of the object. Populated by the system. Read-only.",
}

_HANDWRITTEN: Final[dict[str, dict[str, Any]]] = {
    QUANTITY: {
        "description": "Quantity is a fixed-point representation of a number, such as 500m or 1Gi.",
        "oneOf": [{"type": "string"}, {"type": "number"}],
    },
    INT_OR_STRING: {
        "description": "IntOrString holds an int or a string, such as 1 or 25%.",
        "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}],
    },
    f"{META}.ListMeta": {
        "description": "ListMeta describes metadata that synthetic resources must have.",
        "type": "object",
        "properties": {"resourceVersion": {"type": "string"}, "continue": {"type": "string"}},
    },
    f"{META}.Status": {
        "description": "Status is a return value for calls that don't return other objects.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "status": {"type": "string"},
            "message": {"type": "string"},
            "reason": {"type": "string"},
            "code": {"type": "integer", "format": "int32"},
            "details": {"type": "object"},
            "metadata": {"$ref": f"{REF}{META}.ListMeta"},
        },
        "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Status"}],
    },
    f"{META}.DeleteOptions": {
        "description": "DeleteOptions may be provided when deleting an API object.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "dryRun": {"type": "array", "items": {"type": "string"}},
            "gracePeriodSeconds": {"type": "integer", "format": "int64"},
            "preconditions": {
                "type": "object",
                "properties": {"resourceVersion": {"type": "string"}, "uid": {"type": "string"}},
            },
            "propagationPolicy": {"type": "string"},
        },
    },
    f"{META}.Patch": {
        "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
        "type": "object",
    },
}
_SCALE: Final = {
    "description": "Scale represents a scaling request for a resource.",
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": f"{REF}{META}.ObjectMeta"},
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer", "format": "int32"}}},
        "status": {
            "type": "object",
            "properties": {"replicas": {"type": "integer", "format": "int32"}, "selector": {"type": "string"}},
            "required": ["replicas"],
        },
    },
    "x-kubernetes-group-version-kind": [{"group": "autoscaling", "version": "v1", "kind": "Scale"}],
}
_EVICTION: Final = {
    "description": "Eviction evicts a pod from its node subject to certain policies and safety constraints.",
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": f"{REF}{META}.ObjectMeta"},
        "deleteOptions": {"$ref": f"{REF}{META}.DeleteOptions"},
    },
    "x-kubernetes-group-version-kind": [{"group": "policy", "version": "v1", "kind": "Eviction"}],
}
_EXTRA_KINDS: Final = {
    ("autoscaling", "Scale"): ("io.k8s.api.autoscaling.v1.Scale", _SCALE),
    ("policy", "Eviction"): ("io.k8s.api.policy.v1.Eviction", _EVICTION),
}


@functools.cache
def _short_to_full() -> dict[str, str]:
    names: dict[str, str] = {}
    for module, package in _PACKAGE_OF_MODULE.items():
        for short, obj in vars(module).items():
            if isinstance(obj, type) and issubclass(obj, msgspec.Struct) and obj.__module__ == module.__name__:
                names[short] = f"{_PACKAGE_OF_NAME.get(short, package)}.{short}"
    return names


def schema_name(struct: type[Any]) -> str:
    """Upstream's schema name of a Struct (``io.k8s.api.core.v1.Pod``)."""
    return _short_to_full()[struct.__name__]


def _schema_hook(tp: type[Any]) -> dict[str, Any]:
    if tp is Quantity:
        return {"$ref": f"{REF}{QUANTITY}"}
    raise NotImplementedError(tp)


def _clean(node: Any) -> Any:
    """Rewrite msgspec's JSON Schema into upstream's OpenAPI spelling."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    any_of = node.get("anyOf")
    if any_of is not None:
        kinds = [alt for alt in any_of if alt != {"type": "null"}]
        if sorted(json.dumps(k, sort_keys=True) for k in kinds) == ['{"type": "integer"}', '{"type": "string"}']:
            return {"$ref": f"{REF}{INT_OR_STRING}"}
        if len(kinds) == 1:
            return _clean({**{k: v for k, v in node.items() if k != "anyOf"}, **kinds[0]})
    for key, value in node.items():
        if key in ("default", "title"):
            continue
        if key == "required" and not value:
            continue
        if key == "$ref":
            out[key] = REF + _short_to_full().get(value.removeprefix(REF), value.removeprefix(REF))
            continue
        out[key] = _clean(value)
    return out


def _described(schema: dict[str, Any], text: str) -> dict[str, Any]:
    """``schema`` with a description; a bare ``$ref`` is wrapped in ``allOf`` first, as upstream
    does (OpenAPI 3.0 ignores the siblings of a ``$ref``)."""
    if "$ref" in schema:
        return {"description": text, "allOf": [{"$ref": schema["$ref"]}]}
    return {"description": text, **schema}


def _gvk(group: str, version: str, kind: str) -> list[dict[str, str]]:
    return [{"group": group, "version": version, "kind": kind}]


def _list_schema(r: Resource, item: str) -> dict[str, Any]:
    return {
        "description": f"{r.kind}List is a list of {r.kind} objects.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "description": _TOP_LEVEL["apiVersion"]},
            "items": {"type": "array", "items": {"$ref": f"{REF}{item}"}},
            "kind": {"type": "string", "description": _TOP_LEVEL["kind"]},
            "metadata": {"$ref": f"{REF}{META}.ListMeta"},
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": _gvk(r.group, r.version, f"{r.kind}List"),
    }


def schemas(group: str, version: str) -> dict[str, dict[str, Any]]:
    resources = by_group_version(group, version)
    structs = [r.struct for r in resources]
    subs = [s for r in resources for s in r.subresources]
    if any(s.kind == "Binding" for s in subs) and core.Binding not in structs:
        structs.append(core.Binding)
    _, components = msgspec.json.schema_components(structs, schema_hook=_schema_hook, ref_template=REF + "{name}")
    schemas: dict[str, dict[str, Any]] = {}
    for short, raw in components.items():
        full = _short_to_full()[short]
        schema = _clean(raw)
        schema.pop("description", None)  # the Struct's docstring speaks of the emulator, not to a user
        if full in schema_docs.TYPES:
            schema = {"description": schema_docs.TYPES[full], **schema}
        properties = schema.get("properties", {})
        for internal in [p for p in properties if p.startswith("$")]:  # PodSpec's $unmodelled: never served
            del properties[internal]
        for prop, extensions in properties.items():
            markers = LIST_MARKERS.get((full, prop))
            if markers:
                extensions.update(markers)
                if "x-kubernetes-patch-merge-key" in markers or markers.get("x-kubernetes-list-type") == "set":
                    extensions["x-kubernetes-patch-strategy"] = "merge"
            text = schema_docs.FIELDS.get((full, prop))
            if text:
                properties[prop] = _described(extensions, text)
        schemas[full] = schema
    # a kind of another group carried whole (a StatefulSet's PersistentVolumeClaim templates)
    # is described there too, as upstream's documents describe it
    carried = [r for r in RESOURCES if r.stored and r not in resources and schema_name(r.struct) in schemas]
    for r in [*resources, *carried]:
        full = schema_name(r.struct)
        kind_schema = {"description": schema_docs.KINDS[r.kind], **schemas[full]}
        kind_schema["x-kubernetes-group-version-kind"] = _gvk(r.group, r.version, r.kind)
        properties = kind_schema.get("properties", {})
        for prop, text in _TOP_LEVEL.items():
            if prop in properties and "description" not in properties[prop]:
                properties[prop] = _described(properties[prop], text)
        schemas[full] = kind_schema
        if r.stored and r in resources:
            schemas[f"{full}List"] = _list_schema(r, full)
    if "Binding" in {s.kind for s in subs} | {r.kind for r in resources}:
        schemas[schema_name(core.Binding)]["x-kubernetes-group-version-kind"] = _gvk("", "v1", "Binding")
    for s in subs:
        extra = _EXTRA_KINDS.get((s.group, s.kind))
        if extra:
            schemas[extra[0]] = extra[1]
    text = json.dumps(schemas)
    for name, schema in _HANDWRITTEN.items():
        if name not in (QUANTITY, INT_OR_STRING) or f"{REF}{name}" in text:
            schemas[name] = schema
    return dict(sorted(schemas.items()))


def subresource_schema(r: Resource, s: Subresource) -> str:
    """The schema a subresource answers with (``Scale``, ``Eviction``, ``Binding`` or the parent's)."""
    if (s.group, s.kind) in _EXTRA_KINDS:
        return _EXTRA_KINDS[(s.group, s.kind)][0]
    if s.kind == "Binding":
        return schema_name(core.Binding)
    return schema_name(r.struct)
