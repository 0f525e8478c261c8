"""Discovery (placeholder until discovery lands): /version and legacy discovery only,
enough for kubectl to map resources. The real module (engineer "discovery") replaces it."""

from __future__ import annotations

from typing import Any, Final

from emulator.http import resources

__all__ = [
    "AGGREGATED_CONTENT_TYPE",
    "aggregated",
    "legacy_group",
    "legacy_groups",
    "legacy_resources",
    "legacy_versions",
    "openapi_document",
    "openapi_root",
    "version",
]

AGGREGATED_CONTENT_TYPE: Final = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def version() -> dict[str, Any]:
    return {
        "major": "1",
        "minor": "32",
        "gitVersion": "v1.32.0-emu",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.23.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def aggregated(core: bool) -> dict[str, Any]:
    items = []
    for g, v in resources.group_versions():
        if (g == "") != core:
            continue
        rs = []
        for r in resources.by_group_version(g, v):
            entry: dict[str, Any] = {
                "resource": r.name,
                "responseKind": {"group": g, "version": v, "kind": r.kind},
                "scope": "Namespaced" if r.namespaced else "Cluster",
                "singularResource": r.singular,
                "verbs": list(r.verbs),
            }
            if r.short_names:
                entry["shortNames"] = list(r.short_names)
            if r.categories:
                entry["categories"] = list(r.categories)
            if r.subresources:
                entry["subresources"] = [
                    {
                        "subresource": s.name,
                        "responseKind": {"group": s.group, "version": s.version, "kind": s.kind},
                        "verbs": list(s.verbs),
                    }
                    for s in r.subresources
                ]
            rs.append(entry)
        items.append(
            {
                "metadata": {"name": g},
                "versions": [{"version": v, "resources": rs, "freshness": "Current"}],
            }
        )
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


def legacy_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def legacy_groups() -> dict[str, Any]:
    groups = []
    for g, v in resources.group_versions():
        if g:
            gv = {"groupVersion": f"{g}/{v}", "version": v}
            groups.append({"name": g, "versions": [gv], "preferredVersion": gv})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def legacy_group(group: str) -> dict[str, Any] | None:
    for g in legacy_groups()["groups"]:
        if g["name"] == group:
            return {"kind": "APIGroup", "apiVersion": "v1", **g}
    return None


def legacy_resources(group: str, version: str) -> dict[str, Any] | None:
    rs = resources.by_group_version(group, version)
    if not rs:
        return None
    out = []
    for r in rs:
        entry: dict[str, Any] = {
            "name": r.name,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        out.append(entry)
        for s in r.subresources:
            out.append(
                {
                    "name": f"{r.name}/{s.name}",
                    "singularName": "",
                    "namespaced": r.namespaced,
                    "kind": s.kind,
                    "verbs": list(s.verbs),
                }
            )
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}


def openapi_root() -> dict[str, Any]:
    return {"paths": {}}


def openapi_document(path: str) -> bytes | None:
    return None
