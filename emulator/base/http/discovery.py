"""What the server says about itself: ``/version``, discovery (aggregated and legacy), ``/openapi/v3``.

Pure functions over ``emulator.base.http.resources.RESOURCES``; the router (``server``) picks one by
path and ``Accept`` and writes the dict it returns as JSON. Shapes are upstream's:

==========================  =====================================  ====================================
path                        function                               upstream type
==========================  =====================================  ====================================
``/version``                ``version()``                          ``version.Info``
``/api`` (aggregated)       ``aggregated(core=True)``              ``apidiscovery.k8s.io/v2``
``/apis`` (aggregated)      ``aggregated(core=False)``             ``APIGroupDiscoveryList``
``/api`` (legacy)           ``legacy_versions(server_address)``    ``APIVersions``
``/apis`` (legacy)          ``legacy_groups()``                    ``APIGroupList``
``/apis/<g>``               ``legacy_group(g)``                    ``APIGroup``
``/api/v1``, ``/apis/g/v``  ``legacy_resources(g, v)``             ``APIResourceList``
``/openapi/v3``             ``openapi_root()``                     the v3 path index
``/openapi/v3/<path>``      ``openapi_document(path)``             an OpenAPI 3.0 document (bytes)
==========================  =====================================  ====================================

``wants_aggregated(accept)`` says which of the two ``/api`` and ``/apis`` answers an ``Accept`` asks
for; ``respond(path, accept, server_address=...)`` puts it all together for a router: the body and
Content-Type of any of these paths (trailing slash allowed: the Python client asks ``/version/``,
``/api/``, ``/apis/apps/``), or None when the path is not one of them or names nothing served.

Aggregated discovery is served only when ``Accept`` asks for ``as=APIGroupDiscoveryList;v=v2``
and must then carry ``AGGREGATED_CONTENT_TYPE``: client-go checks ``g``, ``v`` and ``as`` of the
response's Content-Type and otherwise decodes the body as legacy ``APIVersions`` (finding nothing).

Named groups are listed in upstream's priority order (the aggregator's ``apiVersionPriorities``:
apps 17800, batch 17400, policy 17100, storage.k8s.io 16800, scheduling.k8s.io 16600,
coordination.k8s.io 16500, resource.k8s.io 16100), which
is the order ``kubectl api-versions`` and the REST mapper see; resources inside a group-version
are sorted by name, subresources after their parent, as upstream's installer does.

This module does not own the resource table (``resources``), the OpenAPI schemas
(``openapi``, re-exported here), authentication, methods or HTTP (``server``).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Final

import msgspec

from emulator.base.http import metricsapi
from emulator.base.http.openapi import openapi_document, openapi_root
from emulator.base.http.resources import RESOURCES, Resource, by_group_version

__all__ = [
    "AGGREGATED_CONTENT_TYPE",
    "GIT_VERSION",
    "aggregated",
    "legacy_group",
    "legacy_groups",
    "legacy_resources",
    "legacy_versions",
    "named_groups",
    "openapi_document",
    "openapi_root",
    "respond",
    "storage_version_hash",
    "version",
    "wants_aggregated",
]

AGGREGATED_CONTENT_TYPE: Final = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

GIT_VERSION: Final = "v1.32.0"
"""The version the server reports.

Not v1.34 (whose scheduler the emulator mimics): ``kubectl`` on these machines is Google Cloud
SDK's dispatcher, which reads ``minor`` from ``/version`` and runs ``kubectl.1.<minor>`` for the
minors it ships (27…33); for 34 it falls back to its default and ``kubectl version`` warns that
the server "exceeds the supported minor version skew". 32 picks the default kubectl 1.32."""

_GROUP_PRIORITY: Final = {
    "apps": 17800,
    "events.k8s.io": 17750,
    "autoscaling": 17500,
    "batch": 17400,
    "policy": 17100,
    "scheduling.k8s.io": 16600,
    "storage.k8s.io": 16800,
    "coordination.k8s.io": 16500,
    "resource.k8s.io": 16100,
}
"""Upstream's ``apiVersionPriorities`` (kube-aggregator) for the groups we could serve."""


def version() -> dict[str, str]:
    """``/version``: a ``version.Info`` (every field a string, as upstream)."""
    return {
        "major": "1",
        "minor": GIT_VERSION.split(".")[1],
        "gitVersion": GIT_VERSION,
        "gitCommit": "0" * 40,
        "gitTreeState": "clean",
        "buildDate": "2024-12-11T18:04:20Z",
        "goVersion": "go1.23.3",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def named_groups() -> list[str]:
    """The named API groups served, in upstream's priority order."""
    groups: list[str] = []
    for r in RESOURCES:
        if r.group and r.group not in groups:
            groups.append(r.group)
    return sorted(groups, key=lambda g: (-_GROUP_PRIORITY.get(g, 0), g))


def _versions(group: str) -> list[str]:
    """The versions of ``group`` served, preferred first."""
    seen: list[str] = []
    for r in RESOURCES:
        if r.group == group and r.version not in seen:
            seen.append(r.version)
    return seen


def _sorted(group: str, version: str) -> list[Resource]:
    return sorted(by_group_version(group, version), key=lambda r: r.name)


# --- aggregated (apidiscovery.k8s.io/v2) -------------------------------------------------


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _aggregated_resource(r: Resource) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "resource": r.name,
        "responseKind": _gvk(r.group, r.version, r.kind),
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "singularResource": r.singular,
        "verbs": list(r.verbs),
    }
    if r.short_names:
        doc["shortNames"] = list(r.short_names)
    if r.categories:
        doc["categories"] = list(r.categories)
    if r.subresources:
        doc["subresources"] = [
            {
                "subresource": s.name,
                "responseKind": _gvk(s.group, s.version, s.kind),
                "verbs": list(s.verbs),
            }
            for s in r.subresources
        ]
    return doc


def _aggregated_group(group: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"creationTimestamp": None}
    if group:
        metadata = {"name": group, "creationTimestamp": None}
    return {
        "metadata": metadata,
        "versions": [
            {
                "version": v,
                "resources": [_aggregated_resource(r) for r in _sorted(group, v)],
                "freshness": "Current",
            }
            for v in _versions(group)
        ],
    }


def aggregated(core: bool) -> dict[str, Any]:
    """``/api`` (``core``) or ``/apis`` as an ``APIGroupDiscoveryList``; serve it with
    ``AGGREGATED_CONTENT_TYPE``."""
    groups = [""] if core else named_groups()
    items = [_aggregated_group(g) for g in groups]
    if not core:
        items.append(metricsapi.aggregated_group())
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


# --- legacy (v1 APIVersions, APIGroupList, APIGroup, APIResourceList) ---------------------


def legacy_versions(server_address: str) -> dict[str, Any]:
    """``/api``: the core group's versions and where to reach the server (``host:port``)."""
    return {
        "kind": "APIVersions",
        "versions": _versions(""),
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_doc(group: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in _versions(group)]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def legacy_groups() -> dict[str, Any]:
    """``/apis``: every named group, preferred version first."""
    groups = [*(_group_doc(g) for g in named_groups()), metricsapi.group_doc()]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def legacy_group(group: str) -> dict[str, Any] | None:
    """``/apis/<group>``, or None when the group is not served."""
    if group == metricsapi.GROUP:
        return {"kind": "APIGroup", "apiVersion": "v1", **metricsapi.group_doc()}
    if not group or group not in named_groups():
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(group)}


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """Upstream's ``discovery.StorageVersionHash``: base64 of the first 8 bytes of the SHA-256
    of ``<group>/<version>/<kind>`` (of the storage version, which is the served one here)."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _legacy_resource(r: Resource) -> list[dict[str, Any]]:
    main: dict[str, Any] = {
        "name": r.name,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": list(r.verbs),
    }
    if r.short_names:
        main["shortNames"] = list(r.short_names)
    if r.categories:
        main["categories"] = list(r.categories)
    if r.stored:
        main["storageVersionHash"] = storage_version_hash(r.group, r.version, r.kind)
    entries = [main]
    for s in r.subresources:
        sub: dict[str, Any] = {"name": f"{r.name}/{s.name}", "singularName": "", "namespaced": r.namespaced}
        if (s.group, s.version) != (r.group, r.version):
            sub["group"] = s.group
            sub["version"] = s.version
        sub["kind"] = s.kind
        sub["verbs"] = list(s.verbs)
        entries.append(sub)
    return entries


def legacy_resources(group: str, version: str) -> dict[str, Any] | None:
    """``/api/v1`` or ``/apis/<group>/<version>``: resources and subresources, or None."""
    if (group, version) == (metricsapi.GROUP, metricsapi.VERSION):
        return metricsapi.resources_doc()
    served = _sorted(group, version)
    if not served:
        return None
    doc: dict[str, Any] = {"kind": "APIResourceList"}
    if group:
        doc["apiVersion"] = "v1"
    doc["groupVersion"] = served[0].group_version
    doc["resources"] = [entry for r in served for entry in _legacy_resource(r)]
    return doc


def wants_aggregated(accept: str) -> bool:
    """Whether an ``Accept`` header asks for aggregated discovery v2 (``as=APIGroupDiscoveryList``,
    ``g=apidiscovery.k8s.io``, ``v=v2``) in any of its media ranges; kubectl 1.26+ does, with a
    plain ``application/json`` last as the legacy fallback, which older clients send alone."""
    for media_range in accept.split(","):
        media_type, *params = (part.strip() for part in media_range.split(";"))
        if media_type.lower() not in ("application/json", "*/*", "application/*"):
            continue
        found = dict(p.partition("=")[::2] for p in params)
        if (found.get("g"), found.get("v"), found.get("as")) == ("apidiscovery.k8s.io", "v2", "APIGroupDiscoveryList"):
            return True
    return False


JSON: Final = "application/json"


def respond(path: str, accept: str, *, server_address: str) -> tuple[bytes, str] | None:
    """The answer to ``GET <path>`` (without its query) for the paths this module owns: the body
    and its Content-Type, or None (a 404 for the router) when ``path`` is not a discovery, version
    or OpenAPI path or names a group, version or document that is not served."""
    path = path.rstrip("/") or "/"
    doc: dict[str, Any] | None = None
    if path == "/version":
        doc = version()
    elif path in ("/api", "/apis"):
        if wants_aggregated(accept):
            return msgspec.json.encode(aggregated(core=path == "/api")), AGGREGATED_CONTENT_TYPE
        doc = legacy_versions(server_address) if path == "/api" else legacy_groups()
    elif path == "/openapi/v3":
        doc = openapi_root()
    elif path.startswith("/openapi/v3/"):
        body = openapi_document(path.removeprefix("/openapi/v3/"))
        return None if body is None else (body, JSON)
    else:
        match path.split("/")[1:]:
            case ["api", version_]:
                doc = legacy_resources("", version_)
            case ["apis", group]:
                doc = legacy_group(group)
            case ["apis", group, version_]:
                doc = legacy_resources(group, version_)
    return None if doc is None else (msgspec.json.encode(doc), JSON)
