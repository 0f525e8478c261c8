"""``/openapi/v3``: one OpenAPI 3.0 document per served group-version, generated from the Structs.

Two clients read these documents:

* ``kubectl apply|create|replace`` (default ``--validate=strict``) looks, in the document of the
  object's group-version, for a PATCH operation whose ``x-kubernetes-group-version-kind`` is the
  object's and which takes a ``fieldValidation`` query parameter; found, it sends
  ``?fieldValidation=Strict`` and leaves validation to the server; not found, it falls back to
  ``/openapi/v2`` in protobuf, which this server does not serve.
* ``kubectl explain`` walks ``components.schemas`` from the schema carrying the kind's
  ``x-kubernetes-group-version-kind`` through ``$ref``\\ s.

Paths: for every resource the collection and item paths (and ``/<plural>`` across namespaces),
and its subresources, with upstream's operation ids (``patchCoreV1NamespacedPod``), actions and
GVKs. Schemas: ``msgspec.json.schema_components`` over the kinds of the group-version, renamed as
upstream (``io.k8s.api.core.v1.Pod``, ``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``),
``Optional`` unwrapped, quantities and int-or-strings as upstream's ``oneOf`` schemas, defaults
dropped (the Structs' defaults are the emulator's, not always upstream's), and upstream's
strategic-merge and list-type markers (``_LIST_MARKERS``) on the lists the Structs have.
Descriptions come from ``schema_docs`` (the Structs' docstrings are dropped: they describe the
emulator); a described ``$ref`` is wrapped in ``allOf``, as upstream writes it.

Every document is built once and cached with its hash (``openapi_root`` links to
``?hash=<sha512>``, as upstream, so that clients may cache it for good).

This module does not own what is served (``resources``) or HTTP (``server``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any, Final

import msgspec

from emulator.api import apps, batch, core, meta, podtemplate, policy, scheduling, services
from emulator.api.quantity import Quantity
from emulator.http import schema_docs
from emulator.http.resources import Resource, Subresource, by_group_version, group_versions

__all__ = ["document_path", "openapi_document", "openapi_root", "schema_name"]

_REF: Final = "#/components/schemas/"
_META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1"
QUANTITY: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

_PACKAGE_OF_MODULE: Final = {
    core: "io.k8s.api.core.v1",
    podtemplate: "io.k8s.api.core.v1",
    services: "io.k8s.api.core.v1",
    apps: "io.k8s.api.apps.v1",
    batch: "io.k8s.api.batch.v1",
    policy: "io.k8s.api.policy.v1",
    scheduling: "io.k8s.api.scheduling.v1",
    meta: _META,
}
_PACKAGE_OF_NAME: Final = {
    # where upstream's package differs from the module the emulator keeps the Struct in
    "LabelSelector": _META,
    "LabelSelectorRequirement": _META,
    "ObjectReference": "io.k8s.api.core.v1",
    "Lease": "io.k8s.api.coordination.v1",
    "LeaseSpec": "io.k8s.api.coordination.v1",
}

_LIST_MARKERS: Final[dict[tuple[str, str], dict[str, Any]]] = {
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
    ("io.k8s.api.core.v1.PodStatus", "podIPs"): {"x-kubernetes-patch-merge-key": "ip"},
    ("io.k8s.api.core.v1.PodStatus", "hostIPs"): {"x-kubernetes-patch-merge-key": "ip"},
    ("io.k8s.api.core.v1.NodeSpec", "podCIDRs"): {"x-kubernetes-list-type": "set"},
    ("io.k8s.api.core.v1.NodeSpec", "taints"): {"x-kubernetes-list-type": "atomic"},
    ("io.k8s.api.core.v1.NodeStatus", "conditions"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.core.v1.NodeStatus", "addresses"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.core.v1.NamespaceStatus", "conditions"): {"x-kubernetes-patch-merge-key": "type"},
    ("io.k8s.api.core.v1.ServiceSpec", "ports"): {
        "x-kubernetes-list-map-keys": ["port", "protocol"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "port",
    },
    (f"{_META}.ObjectMeta", "finalizers"): {"x-kubernetes-list-type": "set"},
    (f"{_META}.ObjectMeta", "ownerReferences"): {"x-kubernetes-patch-merge-key": "uid"},
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
"""Every entry with a merge key also has ``x-kubernetes-patch-strategy: merge`` (added below)."""

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
    f"{_META}.ListMeta": {
        "description": "ListMeta describes metadata that synthetic resources must have.",
        "type": "object",
        "properties": {"resourceVersion": {"type": "string"}, "continue": {"type": "string"}},
    },
    f"{_META}.Status": {
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
            "metadata": {"$ref": f"{_REF}{_META}.ListMeta"},
        },
        "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Status"}],
    },
    f"{_META}.DeleteOptions": {
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
    f"{_META}.Patch": {
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
        "metadata": {"$ref": f"{_REF}{_META}.ObjectMeta"},
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
        "metadata": {"$ref": f"{_REF}{_META}.ObjectMeta"},
        "deleteOptions": {"$ref": f"{_REF}{_META}.DeleteOptions"},
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
        return {"$ref": f"{_REF}{QUANTITY}"}
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
            return {"$ref": f"{_REF}{INT_OR_STRING}"}
        if len(kinds) == 1:
            return _clean({**{k: v for k, v in node.items() if k != "anyOf"}, **kinds[0]})
    for key, value in node.items():
        if key in ("default", "title"):
            continue
        if key == "required" and not value:
            continue
        if key == "$ref":
            out[key] = _REF + _short_to_full().get(value.removeprefix(_REF), value.removeprefix(_REF))
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
            "items": {"type": "array", "items": {"$ref": f"{_REF}{item}"}},
            "kind": {"type": "string", "description": _TOP_LEVEL["kind"]},
            "metadata": {"$ref": f"{_REF}{_META}.ListMeta"},
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": _gvk(r.group, r.version, f"{r.kind}List"),
    }


def _schemas(group: str, version: str) -> dict[str, dict[str, Any]]:
    resources = by_group_version(group, version)
    structs = [r.struct for r in resources]
    subs = [s for r in resources for s in r.subresources]
    if any(s.kind == "Binding" for s in subs) and core.Binding not in structs:
        structs.append(core.Binding)
    _, components = msgspec.json.schema_components(structs, schema_hook=_schema_hook, ref_template=_REF + "{name}")
    schemas: dict[str, dict[str, Any]] = {}
    for short, raw in components.items():
        full = _short_to_full()[short]
        schema = _clean(raw)
        schema.pop("description", None)  # the Struct's docstring speaks of the emulator, not to a user
        if full in schema_docs.TYPES:
            schema = {"description": schema_docs.TYPES[full], **schema}
        properties = schema.get("properties", {})
        for prop, extensions in properties.items():
            markers = _LIST_MARKERS.get((full, prop))
            if markers:
                extensions.update(markers)
                if "x-kubernetes-patch-merge-key" in markers or markers.get("x-kubernetes-list-type") == "set":
                    extensions["x-kubernetes-patch-strategy"] = "merge"
            text = schema_docs.FIELDS.get((full, prop))
            if text:
                properties[prop] = _described(extensions, text)
        schemas[full] = schema
    for r in resources:
        full = schema_name(r.struct)
        kind_schema = {"description": schema_docs.KINDS[r.kind], **schemas[full]}
        kind_schema["x-kubernetes-group-version-kind"] = _gvk(r.group, r.version, r.kind)
        properties = kind_schema.get("properties", {})
        for prop, text in _TOP_LEVEL.items():
            if prop in properties and "description" not in properties[prop]:
                properties[prop] = _described(properties[prop], text)
        schemas[full] = kind_schema
        if r.stored:
            schemas[f"{full}List"] = _list_schema(r, full)
    if "Binding" in {s.kind for s in subs} | {r.kind for r in resources}:
        schemas[schema_name(core.Binding)]["x-kubernetes-group-version-kind"] = _gvk("", "v1", "Binding")
    for s in subs:
        extra = _EXTRA_KINDS.get((s.group, s.kind))
        if extra:
            schemas[extra[0]] = extra[1]
    text = json.dumps(schemas)
    for name, schema in _HANDWRITTEN.items():
        if name not in (QUANTITY, INT_OR_STRING) or f"{_REF}{name}" in text:
            schemas[name] = schema
    return dict(sorted(schemas.items()))


# --- paths -------------------------------------------------------------------------------


def _camel_group(group: str) -> str:
    if not group:
        return "Core"
    return "".join(part.capitalize() for part in group.removesuffix(".k8s.io").split("."))


def _query(name: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": kind, "uniqueItems": True}}


def _path_params(path: str) -> list[dict[str, Any]]:
    """The path-level parameters upstream declares: ``name``/``namespace`` where templated, ``pretty``."""
    params = [
        {"name": n, "in": "path", "required": True, "schema": {"type": "string", "uniqueItems": True}}
        for n in ("name", "namespace")
        if f"{{{n}}}" in path
    ]
    return [*params, _query("pretty")]


_WRITE_PARAMS: Final = [_query("dryRun"), _query("fieldManager"), _query("fieldValidation")]
_LIST_PARAMS: Final = [
    _query("allowWatchBookmarks", "boolean"),
    _query("continue"),
    _query("fieldSelector"),
    _query("labelSelector"),
    _query("limit", "integer"),
    _query("resourceVersion"),
    _query("resourceVersionMatch"),
    _query("sendInitialEvents", "boolean"),
    _query("timeoutSeconds", "integer"),
    _query("watch", "boolean"),
]
_DELETE_PARAMS: Final = [
    _query("dryRun"),
    _query("gracePeriodSeconds", "integer"),
    _query("propagationPolicy"),
]
_PATCH_TYPES: Final = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)


def _content(ref: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"{_REF}{ref}"}}}


def _operation(
    op_id: str, action: str, gvk: tuple[str, str, str], ref: str, params: list[dict[str, Any]], *, body: str = ""
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": op_id,
        "parameters": params,
        "responses": {"200": {"description": "OK", "content": _content(ref)}, "401": {"description": "Unauthorized"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": dict(zip(("group", "version", "kind"), gvk, strict=True)),
    }
    if body == "patch":
        patch = {"schema": {"$ref": f"{_REF}{_META}.Patch"}}
        operation["parameters"] = [*params, _query("force", "boolean")]
        operation["requestBody"] = {"content": dict.fromkeys(_PATCH_TYPES, patch), "required": True}
    elif body:
        operation["requestBody"] = {"content": _content(body), "required": True}
    if action == "post":
        operation["responses"]["201"] = {"description": "Created", "content": _content(ref)}
    return operation


def _sub_ref(r: Resource, s: Subresource) -> str:
    if (s.group, s.kind) in _EXTRA_KINDS:
        return _EXTRA_KINDS[(s.group, s.kind)][0]
    if s.kind == "Binding":
        return schema_name(core.Binding)
    return schema_name(r.struct)


def _paths(group: str, version: str) -> dict[str, dict[str, Any]]:
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    stem = f"{_camel_group(group)}{version.capitalize()}"
    paths: dict[str, dict[str, Any]] = {}
    for r in sorted(by_group_version(group, version), key=lambda r: r.name):
        scope = "Namespaced" if r.namespaced else ""
        collection = f"{prefix}/namespaces/{{namespace}}/{r.name}" if r.namespaced else f"{prefix}/{r.name}"
        gvk = (r.group, r.version, r.kind)
        ref = schema_name(r.struct)
        ops: dict[str, Any] = {}
        if "list" in r.verbs:
            ops["get"] = _operation(f"list{stem}{scope}{r.kind}", "list", gvk, f"{ref}List", _LIST_PARAMS)
        if "create" in r.verbs:
            ops["post"] = _operation(f"create{stem}{scope}{r.kind}", "post", gvk, ref, _WRITE_PARAMS, body=ref)
        if "deletecollection" in r.verbs:
            params = [*_DELETE_PARAMS, *_LIST_PARAMS]
            ops["delete"] = _operation(
                f"delete{stem}Collection{scope}{r.kind}", "deletecollection", gvk, f"{_META}.Status", params
            )
        paths[collection] = ops
        if r.namespaced and "list" in r.verbs:
            op = _operation(f"list{stem}{r.kind}ForAllNamespaces", "list", gvk, f"{ref}List", _LIST_PARAMS)
            paths[f"{prefix}/{r.name}"] = {"get": op}
        if not r.stored:
            continue
        item: dict[str, Any] = {}
        if "get" in r.verbs:
            item["get"] = _operation(f"read{stem}{scope}{r.kind}", "get", gvk, ref, [])
        if "update" in r.verbs:
            item["put"] = _operation(f"replace{stem}{scope}{r.kind}", "put", gvk, ref, _WRITE_PARAMS, body=ref)
        if "patch" in r.verbs:
            item["patch"] = _operation(f"patch{stem}{scope}{r.kind}", "patch", gvk, ref, _WRITE_PARAMS, body="patch")
        if "delete" in r.verbs:
            item["delete"] = _operation(
                f"delete{stem}{scope}{r.kind}",
                "delete",
                gvk,
                f"{_META}.Status",
                _DELETE_PARAMS,
                body=f"{_META}.DeleteOptions",
            )
        paths[f"{collection}/{{name}}"] = item
        for s in r.subresources:
            sub_ref = _sub_ref(r, s)
            sub_gvk = (s.group, s.version, s.kind)
            name = f"{stem}{scope}{r.kind}{s.name.capitalize()}"
            sub: dict[str, Any] = {}
            if "get" in s.verbs:
                sub["get"] = _operation(f"read{name}", "get", sub_gvk, sub_ref, [])
            if "create" in s.verbs:
                sub["post"] = _operation(f"create{name}", "post", sub_gvk, sub_ref, _WRITE_PARAMS, body=sub_ref)
            if "update" in s.verbs:
                sub["put"] = _operation(f"replace{name}", "put", sub_gvk, sub_ref, _WRITE_PARAMS, body=sub_ref)
            if "patch" in s.verbs:
                sub["patch"] = _operation(f"patch{name}", "patch", sub_gvk, sub_ref, _WRITE_PARAMS, body="patch")
            paths[f"{collection}/{{name}}/{s.name}"] = sub
    return {path: {**ops, "parameters": _path_params(path)} for path, ops in paths.items()}


# --- documents ---------------------------------------------------------------------------


def document_path(group: str, version: str) -> str:
    """``api/v1`` or ``apis/<group>/<version>``: the key of a group-version's document."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


@functools.cache
def _documents() -> dict[str, tuple[bytes, str]]:
    """Every document, built once: path → (JSON bytes, upper-case hex SHA-512)."""
    documents: dict[str, tuple[bytes, str]] = {}
    for group, version in group_versions():
        doc = {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "v1.32.0"},
            "paths": _paths(group, version),
            "components": {"schemas": _schemas(group, version)},
        }
        body = msgspec.json.encode(doc)
        documents[document_path(group, version)] = (body, hashlib.sha512(body).hexdigest().upper())
    return documents


def openapi_root() -> dict[str, Any]:
    """``/openapi/v3``: one entry per served group-version, linking to its document by hash."""
    return {
        "paths": {
            path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
            for path, (_, digest) in _documents().items()
        }
    }


def openapi_document(path: str) -> bytes | None:
    """The document at ``/openapi/v3/<path>`` (``api/v1``, ``apis/apps/v1``), or None."""
    found = _documents().get(path.strip("/"))
    return found[0] if found else None
