"""``/openapi/v3``: one OpenAPI 3.0 document per served group-version.

Two clients read these documents:

* ``kubectl apply|create|replace`` (default ``--validate=strict``) looks, in the document of the
  object's group-version, for a PATCH operation whose ``x-kubernetes-group-version-kind`` is the
  object's and which takes a ``fieldValidation`` query parameter; found, it sends
  ``?fieldValidation=Strict`` and leaves validation to the server; not found, it falls back to
  ``/openapi/v2`` in protobuf, which this server does not serve.
* ``kubectl explain`` walks ``components.schemas`` (``openapi_schemas``) from the schema
  carrying the kind's ``x-kubernetes-group-version-kind`` through ``$ref``\\ s.

Paths: for every resource the collection and item paths (and ``/<plural>`` across namespaces),
and its subresources, with upstream's operation ids (``patchCoreV1NamespacedPod``), actions,
GVKs and parameters (path-level ``name``/``namespace``/``pretty``).
The one deliberate difference from upstream: PATCH operations do not list
``application/strategic-merge-patch+json`` (``_PATCH_TYPES`` says why).

Every document is built once and cached with its hash (``openapi_root`` links to
``?hash=<SHA-512>``, as upstream, so that clients may cache it for good).

This module does not own what is served (``resources``), the schemas (``openapi_schemas``) or
HTTP (``server``).
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any, Final

import msgspec

from emulator.base.http.openapi_schemas import META, REF, schema_name, schemas, subresource_schema
from emulator.base.http.resources import by_group_version, group_versions

__all__ = ["document_path", "openapi_document", "openapi_root", "schema_name"]


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
)
"""The PATCH bodies the documents advertise: upstream's, minus ``strategic-merge-patch+json``
(which the server still accepts). kubectl's client-side ``apply`` computes its strategic merge
patch from the OpenAPI v3 schema of the kind when the PATCH advertises that type, and fails
with ``warning: error calculating patch from openapi v3 spec: unable to find api field "env"``
on any field the Structs do not model; without it, kubectl falls back (silently, after a 404 on
``/openapi/v2``) to the patch metadata compiled into it for the built-in kinds: upstream's own."""


def _content(ref: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"{REF}{ref}"}}}


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
        patch = {"schema": {"$ref": f"{REF}{META}.Patch"}}
        operation["parameters"] = [*params, _query("force", "boolean")]
        operation["requestBody"] = {"content": dict.fromkeys(_PATCH_TYPES, patch), "required": True}
    elif body:
        operation["requestBody"] = {"content": _content(body), "required": True}
    if action == "post":
        operation["responses"]["201"] = {"description": "Created", "content": _content(ref)}
    return operation


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
                f"delete{stem}Collection{scope}{r.kind}", "deletecollection", gvk, f"{META}.Status", params
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
                f"{META}.Status",
                _DELETE_PARAMS,
                body=f"{META}.DeleteOptions",
            )
        paths[f"{collection}/{{name}}"] = item
        for s in r.subresources:
            sub_ref = subresource_schema(r, s)
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
            "components": {"schemas": schemas(group, version)},
        }
        body = msgspec.json.encode(doc, order="sorted")  # keys sorted, as Go writes its maps
        documents[document_path(group, version)] = (body, hashlib.sha512(body).hexdigest().upper())
    return documents


def openapi_root() -> dict[str, Any]:
    """``/openapi/v3``: one entry per served group-version, linking to its document by hash."""
    documents = sorted(_documents().items())
    return {
        "paths": {path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"} for path, (_, digest) in documents}
    }


def openapi_document(path: str) -> bytes | None:
    """The document at ``/openapi/v3/<path>`` (``api/v1``, ``apis/apps/v1``), or None."""
    found = _documents().get(path.strip("/"))
    return found[0] if found else None
