"""Discovery, /version and /openapi/v3 (``emulator.base.http.discovery``, ``emulator.base.http.openapi``).

Pure tests pin every served resource against upstream v1.32's ``kubectl api-resources -o wide``
and its subresources, check that aggregated and legacy discovery say the same thing, and that
every OpenAPI document has what ``kubectl apply`` (a PATCH with the kind's GVK and a
``fieldValidation`` parameter) and ``kubectl explain`` (schemas with GVKs, resolvable refs) need.
The client tests serve only these documents (through ``discovery.respond``) from a tiny aiohttp
app on 127.0.0.1, once with aggregated discovery and once legacy-only (kubectl 1.20's way), and
run the real kubectl (version, api-resources, api-versions, explain, create and re-apply) and the
official Python client (typed discovery calls, ``DynamicClient``) against it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import openapi_spec_validator
import pytest
import pytest_asyncio
from aiohttp import web

from emulator.base.http import discovery, openapi, openapi_schemas, schema_docs
from emulator.base.http.resources import RESOURCES, group_versions

ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
STATUS = ["get", "patch", "update"]

# name, short names, apiVersion, namespaced, kind, verbs, categories: upstream v1.32
METRICS = "metrics.k8s.io/v1beta1"
"""The resource metrics API (``metricsapi``): served beside the stored resources, not in ``RESOURCES``."""
UPSTREAM = [
    ("bindings", [], "v1", True, "Binding", ["create"], []),
    ("configmaps", ["cm"], "v1", True, "ConfigMap", ALL, []),
    ("events", ["ev"], "v1", True, "Event", ALL, []),
    (
        "namespaces",
        ["ns"],
        "v1",
        False,
        "Namespace",
        ["create", "delete", "get", "list", "patch", "update", "watch"],
        [],
    ),
    ("nodes", ["no"], "v1", False, "Node", ALL, []),
    ("persistentvolumeclaims", ["pvc"], "v1", True, "PersistentVolumeClaim", ALL, []),
    ("persistentvolumes", ["pv"], "v1", False, "PersistentVolume", ALL, []),
    ("pods", ["po"], "v1", True, "Pod", ALL, ["all"]),
    ("secrets", [], "v1", True, "Secret", ALL, []),
    ("services", ["svc"], "v1", True, "Service", ALL, ["all"]),
    ("controllerrevisions", [], "apps/v1", True, "ControllerRevision", ALL, []),
    ("daemonsets", ["ds"], "apps/v1", True, "DaemonSet", ALL, ["all"]),
    ("deployments", ["deploy"], "apps/v1", True, "Deployment", ALL, ["all"]),
    ("replicasets", ["rs"], "apps/v1", True, "ReplicaSet", ALL, ["all"]),
    ("statefulsets", ["sts"], "apps/v1", True, "StatefulSet", ALL, ["all"]),
    ("horizontalpodautoscalers", ["hpa"], "autoscaling/v2", True, "HorizontalPodAutoscaler", ALL, ["all"]),
    ("cronjobs", ["cj"], "batch/v1", True, "CronJob", ALL, ["all"]),
    ("jobs", [], "batch/v1", True, "Job", ALL, ["all"]),
    ("leases", [], "coordination.k8s.io/v1", True, "Lease", ALL, []),
    ("poddisruptionbudgets", ["pdb"], "policy/v1", True, "PodDisruptionBudget", ALL, []),
    ("priorityclasses", ["pc"], "scheduling.k8s.io/v1", False, "PriorityClass", ALL, []),
    ("csidrivers", [], "storage.k8s.io/v1", False, "CSIDriver", ALL, []),
    ("csinodes", [], "storage.k8s.io/v1", False, "CSINode", ALL, []),
    ("csistoragecapacities", [], "storage.k8s.io/v1", True, "CSIStorageCapacity", ALL, []),
    ("storageclasses", ["sc"], "storage.k8s.io/v1", False, "StorageClass", ALL, []),
    ("volumeattachments", [], "storage.k8s.io/v1", False, "VolumeAttachment", ALL, []),
    # upstream v1.34
    ("deviceclasses", [], "resource.k8s.io/v1", False, "DeviceClass", ALL, []),
    ("resourceclaims", [], "resource.k8s.io/v1", True, "ResourceClaim", ALL, []),
    ("resourceclaimtemplates", [], "resource.k8s.io/v1", True, "ResourceClaimTemplate", ALL, []),
    ("resourceslices", [], "resource.k8s.io/v1", False, "ResourceSlice", ALL, []),
    # custom resources: kubernetes-sigs/karpenter v1.9.1 CRDs (names.categories: [karpenter])
    ("nodeclaims", [], "karpenter.sh/v1", False, "NodeClaim", ALL, ["karpenter"]),
    ("nodepools", [], "karpenter.sh/v1", False, "NodePool", ALL, ["karpenter"]),
]

# groupVersion, name, kind, group/version when not the parent's, verbs: upstream's APIResourceList
SUBRESOURCES = [
    ("v1", "namespaces/status", "Namespace", None, STATUS),
    ("v1", "nodes/status", "Node", None, STATUS),
    ("v1", "persistentvolumeclaims/status", "PersistentVolumeClaim", None, STATUS),
    ("v1", "persistentvolumes/status", "PersistentVolume", None, STATUS),
    ("storage.k8s.io/v1", "volumeattachments/status", "VolumeAttachment", None, STATUS),
    ("v1", "pods/binding", "Binding", None, ["create"]),
    ("v1", "pods/eviction", "Eviction", ("policy", "v1"), ["create"]),
    ("v1", "pods/attach", "PodAttachOptions", None, ["create", "get"]),
    ("v1", "pods/exec", "PodExecOptions", None, ["create", "get"]),
    ("v1", "pods/log", "Pod", None, ["get"]),
    ("v1", "pods/portforward", "PodPortForwardOptions", None, ["create", "get"]),
    ("v1", "pods/resize", "Pod", None, STATUS),
    ("v1", "pods/status", "Pod", None, STATUS),
    ("v1", "services/status", "Service", None, STATUS),
    ("apps/v1", "daemonsets/status", "DaemonSet", None, STATUS),
    ("apps/v1", "deployments/scale", "Scale", ("autoscaling", "v1"), STATUS),
    ("apps/v1", "deployments/status", "Deployment", None, STATUS),
    ("apps/v1", "replicasets/scale", "Scale", ("autoscaling", "v1"), STATUS),
    ("apps/v1", "replicasets/status", "ReplicaSet", None, STATUS),
    ("apps/v1", "statefulsets/scale", "Scale", ("autoscaling", "v1"), STATUS),
    ("apps/v1", "statefulsets/status", "StatefulSet", None, STATUS),
    ("autoscaling/v2", "horizontalpodautoscalers/status", "HorizontalPodAutoscaler", None, STATUS),
    ("batch/v1", "cronjobs/status", "CronJob", None, STATUS),
    ("batch/v1", "jobs/status", "Job", None, STATUS),
    ("policy/v1", "poddisruptionbudgets/status", "PodDisruptionBudget", None, STATUS),
    ("resource.k8s.io/v1", "resourceclaims/status", "ResourceClaim", None, STATUS),
    ("karpenter.sh/v1", "nodeclaims/status", "NodeClaim", None, STATUS),
    ("karpenter.sh/v1", "nodepools/status", "NodePool", None, STATUS),
]


def _split(group_version: str) -> tuple[str, str]:
    group, _, version = group_version.rpartition("/")
    return group, version


def _legacy_entry(group_version: str, name: str) -> dict[str, Any]:
    doc = discovery.legacy_resources(*_split(group_version))
    assert doc is not None
    entries: list[dict[str, Any]] = [r for r in doc["resources"] if r["name"] == name]
    assert len(entries) == 1
    return entries[0]


def _aggregated_entry(group_version: str, name: str) -> dict[str, Any]:
    group, version = _split(group_version)
    doc = discovery.aggregated(core=not group)
    (item,) = [i for i in doc["items"] if i["metadata"].get("name", "") == group]
    (ver,) = [v for v in item["versions"] if v["version"] == version]
    entries: list[dict[str, Any]] = [r for r in ver["resources"] if r["resource"] == name]
    assert len(entries) == 1
    return entries[0]


# --- /version ------------------------------------------------------------------------------


def test_version_picks_a_kubectl_the_dispatcher_has() -> None:
    info = discovery.version()
    assert (info["major"], info["minor"], info["gitVersion"]) == ("1", "32", "v1.32.0")
    assert all(isinstance(v, str) for v in info.values())
    assert set(info) >= {"gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"}


# --- resources against upstream --------------------------------------------------------------


def test_every_served_resource_is_pinned() -> None:
    assert sorted(r.name for r in RESOURCES) == sorted(row[0] for row in UPSTREAM)


@pytest.mark.parametrize(
    ("name", "short", "group_version", "namespaced", "kind", "verbs", "categories"),
    [pytest.param(*row, id=row[0]) for row in UPSTREAM],
)
def test_resource_is_served_as_upstream(
    name: str,
    short: list[str],
    group_version: str,
    namespaced: bool,
    kind: str,
    verbs: list[str],
    categories: list[str],
) -> None:
    legacy = _legacy_entry(group_version, name)
    assert (legacy["singularName"], legacy["namespaced"], legacy["kind"]) == (kind.lower(), namespaced, kind)
    assert (legacy["verbs"], legacy.get("shortNames", []), legacy.get("categories", [])) == (verbs, short, categories)
    agg = _aggregated_entry(group_version, name)
    group, version = _split(group_version)
    assert agg["responseKind"] == {"group": group, "version": version, "kind": kind}
    assert agg["scope"] == ("Namespaced" if namespaced else "Cluster")
    assert (agg["verbs"], agg.get("shortNames", []), agg.get("categories", [])) == (verbs, short, categories)


@pytest.mark.parametrize(
    ("group_version", "name", "kind", "elsewhere", "verbs"),
    [pytest.param(*row, id=row[1]) for row in SUBRESOURCES],
)
def test_subresource_is_listed_as_upstream(
    group_version: str, name: str, kind: str, elsewhere: tuple[str, str] | None, verbs: list[str]
) -> None:
    entry = _legacy_entry(group_version, name)
    assert (entry["kind"], entry["verbs"], entry["singularName"]) == (kind, verbs, "")
    assert (entry.get("group"), entry.get("version")) == (elsewhere or (None, None))
    parent, sub = name.split("/")
    (agg,) = [s for s in _aggregated_entry(group_version, parent)["subresources"] if s["subresource"] == sub]
    group, version = elsewhere or _split(group_version)
    assert agg == {
        "subresource": sub,
        "responseKind": {"group": group, "version": version, "kind": kind},
        "verbs": verbs,
    }


def test_every_subresource_is_pinned() -> None:
    served = {(r.group_version, f"{r.name}/{s.name}") for r in RESOURCES for s in r.subresources}
    assert served == {(row[0], row[1]) for row in SUBRESOURCES}


@pytest.mark.parametrize(
    ("group_version", "name", "expected"),
    [
        pytest.param("v1", "pods", "xPOwRZ+Yhw8=", id="pods"),
        pytest.param("v1", "nodes", "XwShjMxG9Fs=", id="nodes"),
        pytest.param("apps/v1", "deployments", "8aSe+NMegvE=", id="deployments"),
    ],
)
def test_storage_version_hash_is_upstreams(group_version: str, name: str, expected: str) -> None:
    assert _legacy_entry(group_version, name)["storageVersionHash"] == expected


def test_bindings_has_no_storage_version_hash() -> None:
    assert "storageVersionHash" not in _legacy_entry("v1", "bindings")


# --- aggregated and legacy agree ---------------------------------------------------------------


def _legacy_from_aggregated(item: dict[str, Any], version: dict[str, Any]) -> dict[str, Any]:
    """What an APIResourceList says, derived from aggregated discovery (as client-go does)."""
    group = item["metadata"].get("name", "")
    resources: list[dict[str, Any]] = []
    for r in version["resources"]:
        entry: dict[str, Any] = {
            "name": r["resource"],
            "singularName": r["singularResource"],
            "namespaced": r["scope"] == "Namespaced",
            "kind": r["responseKind"]["kind"],
            "verbs": r["verbs"],
        }
        entry |= {k: r[k] for k in ("shortNames", "categories") if k in r}
        resources.append(entry)
        for s in r.get("subresources", []):
            sub: dict[str, Any] = {"name": f"{r['resource']}/{s['subresource']}", "singularName": ""}
            sub["namespaced"] = entry["namespaced"]
            kind = s["responseKind"]
            if (kind["group"], kind["version"]) != (group, version["version"]):
                sub |= {"group": kind["group"], "version": kind["version"]}
            sub |= {"kind": kind["kind"], "verbs": s["verbs"]}
            resources.append(sub)
    gv = f"{group}/{version['version']}" if group else version["version"]
    return {"groupVersion": gv, "resources": resources}


@pytest.mark.parametrize("core", [pytest.param(True, id="api"), pytest.param(False, id="apis")])
def test_aggregated_and_legacy_agree(core: bool) -> None:
    doc = discovery.aggregated(core)
    assert (doc["kind"], doc["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
    for item in doc["items"]:
        for version in item["versions"]:
            assert version["freshness"] == "Current"
            derived = _legacy_from_aggregated(item, version)
            legacy = discovery.legacy_resources(item["metadata"].get("name", ""), version["version"])
            assert legacy is not None
            for entry in legacy["resources"]:
                entry.pop("storageVersionHash", None)
            assert derived == {k: legacy[k] for k in ("groupVersion", "resources")}


def test_groups_are_in_upstreams_priority_order() -> None:
    names = [
        "apps",
        "autoscaling",
        "batch",
        "policy",
        "storage.k8s.io",
        "scheduling.k8s.io",
        "coordination.k8s.io",
        "resource.k8s.io",
        "karpenter.sh",  # a CRD group: after the built-in ones
    ]
    assert [g["name"] for g in discovery.legacy_groups()["groups"]] == [*names, "metrics.k8s.io"]
    assert [g for g, _ in group_versions()] == ["", *names]
    assert [i["metadata"]["name"] for i in discovery.aggregated(core=False)["items"]] == [*names, "metrics.k8s.io"]
    assert discovery.aggregated(core=True)["items"][0]["metadata"] == {"creationTimestamp": None}


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        pytest.param("apps", {"groupVersion": "apps/v1", "version": "v1"}, id="apps"),
        pytest.param("nope.example.com", None, id="unknown"),
        pytest.param("", None, id="core-is-not-a-named-group"),
    ],
)
def test_legacy_group(group: str, expected: dict[str, str] | None) -> None:
    doc = discovery.legacy_group(group)
    if expected is None:
        assert doc is None
        return
    assert doc == {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": [expected],
        "preferredVersion": expected,
    }


@pytest.mark.parametrize(
    ("group", "version"),
    [
        pytest.param("", "v2", id="core-v2"),
        pytest.param("apps", "v1beta1", id="apps-v1beta1"),
        pytest.param("x", "v1", id="x"),
    ],
)
def test_unserved_group_version_has_no_resource_list(group: str, version: str) -> None:
    assert discovery.legacy_resources(group, version) is None


def test_legacy_versions_carry_the_server_address() -> None:
    assert discovery.legacy_versions("127.0.0.1:6443") == {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}],
    }


def test_core_resource_list_has_no_api_version_and_named_groups_do() -> None:
    assert "apiVersion" not in (discovery.legacy_resources("", "v1") or {})
    assert (discovery.legacy_resources("apps", "v1") or {})["apiVersion"] == "v1"


@pytest.mark.parametrize(
    ("accept", "aggregated"),
    [
        pytest.param(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
            True,
            id="kubectl-1.32",
        ),
        pytest.param("application/json, */*", False, id="kubectl-1.20"),
        pytest.param("application/json", False, id="plain-json"),
        pytest.param("", False, id="none"),
        pytest.param(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
            False,
            id="v2beta1-only",
        ),
        pytest.param("application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", False, id="yaml"),
    ],
)
def test_wants_aggregated(accept: str, aggregated: bool) -> None:
    assert discovery.wants_aggregated(accept) is aggregated


AGG_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)


@pytest.mark.parametrize(
    ("path", "accept", "content_type", "kind"),
    [
        pytest.param("/version", "application/json, */*", "application/json", None, id="version"),
        pytest.param("/version/", "application/json", "application/json", None, id="version-slash"),
        pytest.param("/api", AGG_ACCEPT, discovery.AGGREGATED_CONTENT_TYPE, "APIGroupDiscoveryList", id="api-agg"),
        pytest.param("/apis", AGG_ACCEPT, discovery.AGGREGATED_CONTENT_TYPE, "APIGroupDiscoveryList", id="apis-agg"),
        pytest.param("/api", "application/json, */*", "application/json", "APIVersions", id="api-legacy"),
        pytest.param("/apis/", "application/json", "application/json", "APIGroupList", id="apis-legacy"),
        pytest.param("/apis/apps", AGG_ACCEPT, "application/json", "APIGroup", id="group"),
        pytest.param("/apis/apps/v1", AGG_ACCEPT, "application/json", "APIResourceList", id="apps-v1"),
        pytest.param("/api/v1/", "application/json", "application/json", "APIResourceList", id="core-v1-slash"),
        pytest.param("/openapi/v3", "application/json, */*", "application/json", None, id="openapi-root"),
        pytest.param("/openapi/v3/apis/apps/v1", "application/json", "application/json", None, id="openapi-doc"),
    ],
)
def test_respond(path: str, accept: str, content_type: str, kind: str | None) -> None:
    answer = discovery.respond(path, accept, server_address="127.0.0.1:6443")
    assert answer is not None
    body, served_type = answer
    assert served_type == content_type
    assert json.loads(body).get("kind") == kind


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/apis/apps/v2", id="unserved-version"),
        pytest.param("/apis/nope.example.com", id="unserved-group"),
        pytest.param("/api/v2", id="unserved-core-version"),
        pytest.param("/api/v1/pods", id="a-resource"),
        pytest.param("/apis/apps/v1/namespaces/default/deployments", id="a-namespaced-resource"),
        pytest.param("/openapi/v3/apis/nope/v1", id="unserved-document"),
        pytest.param("/openapi/v2", id="openapi-v2"),
        pytest.param("/healthz", id="healthz"),
    ],
)
def test_respond_leaves_other_paths_to_the_router(path: str) -> None:
    assert discovery.respond(path, AGG_ACCEPT, server_address="127.0.0.1:6443") is None


# --- OpenAPI v3 --------------------------------------------------------------------------------


def _documents() -> Iterator[tuple[str, dict[str, Any]]]:
    for group, version in group_versions():
        path = openapi.document_path(group, version)
        body = discovery.openapi_document(path)
        assert body is not None
        yield path, json.loads(body)


def test_root_lists_every_group_version_with_its_documents_hash() -> None:
    root = discovery.openapi_root()["paths"]
    assert list(root) == sorted(openapi.document_path(g, v) for g, v in group_versions())
    for path, entry in root.items():
        body = discovery.openapi_document(path)
        assert body is not None
        assert entry["serverRelativeURL"] == f"/openapi/v3/{path}?hash={hashlib.sha512(body).hexdigest().upper()}"


def test_documents_name_the_served_version() -> None:
    for _, doc in _documents():
        assert (doc["openapi"], doc["info"]) == ("3.0.0", {"title": "Kubernetes", "version": discovery.GIT_VERSION})


def test_documents_are_built_once() -> None:
    assert discovery.openapi_document("api/v1") is discovery.openapi_document("/api/v1")
    assert discovery.openapi_document("apis/apps/v2") is None


@pytest.mark.parametrize("resource", [pytest.param(r, id=r.qualified) for r in RESOURCES if r.stored])
def test_patch_carries_gvk_and_field_validation(resource: Any) -> None:
    """What kubectl's ``supportsQueryParamV3`` looks for before sending ``fieldValidation=Strict``."""
    body = discovery.openapi_document(openapi.document_path(resource.group, resource.version))
    assert body is not None
    doc = json.loads(body)
    gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    patches = [
        op["patch"] for op in doc["paths"].values() if op.get("patch", {}).get("x-kubernetes-group-version-kind") == gvk
    ]
    assert patches
    assert all(any(p["name"] == "fieldValidation" and p["in"] == "query" for p in op["parameters"]) for op in patches)
    # not advertised, so that kubectl apply uses its compiled-in patch metadata (see openapi._PATCH_TYPES)
    assert all("application/strategic-merge-patch+json" not in op["requestBody"]["content"] for op in patches)
    assert all("application/apply-patch+yaml" in op["requestBody"]["content"] for op in patches)
    schema = doc["components"]["schemas"][openapi.schema_name(resource.struct)]
    assert schema["x-kubernetes-group-version-kind"] == [gvk]


@pytest.mark.parametrize(
    "path", [pytest.param(openapi.document_path(g, v), id=f"{g or 'core'}-{v}") for g, v in group_versions()]
)
def test_document_is_valid_openapi_3_0(path: str) -> None:
    body = discovery.openapi_document(path)
    assert body is not None
    openapi_spec_validator.validate(json.loads(body))


def test_every_ref_resolves() -> None:
    for path, doc in _documents():
        schemas = doc["components"]["schemas"]
        refs = {ref.removeprefix("#/components/schemas/") for ref in _refs(doc)}
        assert refs <= set(schemas), path


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


@pytest.mark.parametrize(
    ("path", "schema", "prop", "expected"),
    [
        pytest.param(
            "api/v1",
            "io.k8s.api.core.v1.PodSpec",
            "containers",
            {"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"},
            id="containers",
        ),
        pytest.param(
            "api/v1",
            "io.k8s.api.core.v1.Container",
            "ports",
            {
                "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                "x-kubernetes-list-type": "map",
                "x-kubernetes-patch-merge-key": "containerPort",
                "x-kubernetes-patch-strategy": "merge",
            },
            id="container-ports",
        ),
        pytest.param(
            "api/v1",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "finalizers",
            {"x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"},
            id="finalizers",
        ),
        pytest.param(
            "apis/apps/v1",
            "io.k8s.api.apps.v1.DeploymentStatus",
            "conditions",
            {"x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge"},
            id="deployment-conditions",
        ),
    ],
)
def test_list_markers(path: str, schema: str, prop: str, expected: dict[str, Any]) -> None:
    body = discovery.openapi_document(path)
    assert body is not None
    found = json.loads(body)["components"]["schemas"][schema]["properties"][prop]
    assert {k: v for k, v in found.items() if k.startswith("x-kubernetes-")} == expected


@pytest.mark.parametrize(
    ("path", "schema", "prop", "expected"),
    [
        pytest.param(
            "api/v1",
            "io.k8s.api.core.v1.ResourceRequirements",
            "requests",
            {
                "type": "object",
                "additionalProperties": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"},
            },
            id="quantity",
        ),
        pytest.param(
            "apis/policy/v1",
            "io.k8s.api.policy.v1.PodDisruptionBudgetSpec",
            "minAvailable",
            {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
            id="int-or-string",
        ),
        pytest.param(
            "apis/apps/v1",
            "io.k8s.api.apps.v1.DeploymentSpec",
            "replicas",
            {"type": "integer"},
            id="optional-unwrapped",
        ),
    ],
)
def test_property_schemas(path: str, schema: str, prop: str, expected: dict[str, Any]) -> None:
    body = discovery.openapi_document(path)
    assert body is not None
    found = json.loads(body)["components"]["schemas"][schema]["properties"][prop]
    assert {k: v for k, v in found.items() if k != "description"} == expected


def test_every_list_marker_lands_on_a_served_property() -> None:
    schemas: dict[str, Any] = {}
    for _, doc in _documents():
        schemas |= doc["components"]["schemas"]
    for name, prop in openapi_schemas.LIST_MARKERS:
        found = schemas[name]["properties"][prop]
        assert found["type"] == "array"
        assert openapi_schemas.LIST_MARKERS[(name, prop)].items() <= found.items()


def test_a_described_reference_is_wrapped_in_all_of() -> None:
    body = discovery.openapi_document("api/v1")
    assert body is not None
    affinity = json.loads(body)["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["affinity"]
    assert affinity == {
        "description": schema_docs.FIELDS[("io.k8s.api.core.v1.PodSpec", "affinity")],
        "allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.Affinity"}],
    }


def test_every_description_names_a_served_schema() -> None:
    """The text table cannot drift from the Structs unnoticed."""
    schemas: dict[str, Any] = {}
    for _, doc in _documents():
        schemas |= doc["components"]["schemas"]
    for name, prop in schema_docs.FIELDS:
        assert schemas[name]["properties"][prop]["description"] == schema_docs.FIELDS[(name, prop)]
    for name, text in schema_docs.TYPES.items():
        assert schemas[name]["description"] == text
    for r in RESOURCES:
        assert schemas[openapi.schema_name(r.struct)]["description"] == schema_docs.KINDS[r.kind]


# --- the real kubectl against these documents ------------------------------------------------------

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
kubectl_test = pytest.mark.skipif(not Path(KUBECTL).exists(), reason="kubectl is not installed (/usr/bin/kubectl)")
NOT_FOUND = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}


@dataclass
class Served:
    """The test server: its URL, the writes it was sent (method, path and query), the objects
    created and the PATCHes (Content-Type, body)."""

    url: str
    writes: list[tuple[str, str]] = field(default_factory=list)
    objects: dict[str, Any] = field(default_factory=dict)
    patches: list[tuple[str, Any]] = field(default_factory=list)


def _app(served: Served, *, aggregated: bool) -> web.Application:
    """Discovery and OpenAPI documents; a POST is kept as sent and answered by GET; a PATCH is
    recorded and answered with the object unchanged; any other GET is a 404."""

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.method == "POST":
            served.writes.append((request.method, request.path_qs))
            obj = await request.json()
            obj["metadata"]["resourceVersion"] = "1"
            served.objects[f"{request.path}/{obj['metadata']['name']}"] = obj
            return web.json_response(obj, status=201)
        if request.method == "PATCH":
            served.writes.append((request.method, request.path_qs))
            served.patches.append((request.content_type, await request.json()))
            return web.json_response(served.objects[request.path])
        if request.path in served.objects:
            return web.json_response(served.objects[request.path])
        accept = request.headers.get("Accept", "") if aggregated else "application/json"
        answer = discovery.respond(request.path, accept, server_address=request.host)
        if answer is None:
            message = "the server could not find the requested resource"
            return web.json_response({**NOT_FOUND, "message": message}, status=404)
        return web.Response(body=answer[0], headers={"Content-Type": answer[1]})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


@pytest_asyncio.fixture(params=[pytest.param(True, id="aggregated"), pytest.param(False, id="legacy")])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    served = Served("")
    runner = web.AppRunner(_app(served, aggregated=request.param))
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        served.url = f"http://{host}:{port}"
        yield served
    finally:
        await runner.cleanup()


async def _kubectl(server: Served, tmp_path: Path, *args: str, stdin: bytes = b"") -> str:
    return (await _kubectl_both(server, tmp_path, *args, stdin=stdin))[0]


async def _kubectl_both(server: Served, tmp_path: Path, *args: str, stdin: bytes = b"") -> tuple[str, str]:
    """kubectl's stdout and stderr; it must exit 0."""
    env = {**os.environ, "HOME": str(tmp_path), "KUBECACHEDIR": str(tmp_path / "cache"), "KUBECONFIG": "/dev/null"}
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        f"--server={server.url}",
        *args,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(60):
            out, err = await proc.communicate(stdin)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    return out.decode(), err.decode()


@kubectl_test
@pytest.mark.real_time
@pytest.mark.asyncio
async def test_kubectl_version(server: Served, tmp_path: Path) -> None:
    out = await _kubectl(server, tmp_path, "version")
    assert "Server Version: v1.32.0" in out
    assert "WARNING" not in out


@kubectl_test
@pytest.mark.real_time
@pytest.mark.asyncio
async def test_kubectl_api_resources(server: Served, tmp_path: Path) -> None:
    out = await _kubectl(server, tmp_path, "api-resources")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:] if METRICS not in line}
    assert out.splitlines()[0].split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    metrics = sorted(line.split() for line in out.splitlines() if METRICS in line)
    assert metrics == [["nodes", METRICS, "false", "NodeMetrics"], ["pods", METRICS, "true", "PodMetrics"]]
    for name, short, group_version, namespaced, kind, _verbs, _categories in UPSTREAM:
        assert rows[name] == [name, *short, group_version, str(namespaced).lower(), kind]


def _columns(table: str) -> list[dict[str, str]]:
    """kubectl's fixed-width table as dicts, cut at the header's column starts (cells may be empty)."""
    header, *lines = table.splitlines()
    names = header.split()
    starts = [header.index(f"{n} " if i < len(names) - 1 else n) for i, n in enumerate(names)]
    bounds = [*starts[1:], None]
    return [{n: line[a:b].strip() for n, a, b in zip(names, starts, bounds, strict=True)} for line in lines]


@kubectl_test
@pytest.mark.real_time
@pytest.mark.asyncio
async def test_kubectl_api_resources_wide(server: Served, tmp_path: Path) -> None:
    table = await _kubectl(server, tmp_path, "api-resources", "-o", "wide")
    rows = {row["NAME"]: row for row in _columns(table) if row["APIVERSION"] != METRICS}
    for name, _short, _gv, _namespaced, _kind, verbs, categories in UPSTREAM:
        assert (rows[name]["VERBS"], rows[name]["CATEGORIES"]) == (",".join(verbs), ",".join(categories))


@kubectl_test
@pytest.mark.real_time
@pytest.mark.asyncio
async def test_kubectl_resolves_the_all_category(server: Served, tmp_path: Path) -> None:
    rows = _columns(await _kubectl(server, tmp_path, "api-resources", "--categories=all"))
    assert [row["NAME"] for row in rows] == [row[0] for row in UPSTREAM if "all" in row[6]]


@kubectl_test
@pytest.mark.real_time
@pytest.mark.asyncio
async def test_kubectl_api_versions(server: Served, tmp_path: Path) -> None:
    out = await _kubectl(server, tmp_path, "api-versions")
    expected = [
        "apps/v1",
        "autoscaling/v2",
        "batch/v1",
        "coordination.k8s.io/v1",
        "karpenter.sh/v1",
        "metrics.k8s.io/v1beta1",
        "policy/v1",
        "resource.k8s.io/v1",
        "scheduling.k8s.io/v1",
        "storage.k8s.io/v1",
        "v1",
    ]
    assert out.split() == expected


@kubectl_test
@pytest.mark.real_time
@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            ("pods.spec.containers",),
            [
                "KIND:       Pod",
                "FIELD: containers <[]Container>",
                "name\t<string> -required-",
                "ports\t<[]ContainerPort>",
            ],
            id="pods.spec.containers",
        ),
        pytest.param(
            ("deployment.spec.replicas",),
            ["GROUP:      apps", "KIND:       Deployment", "FIELD: replicas <integer>", "Number of desired pods."],
            id="deployment.spec.replicas",
        ),
        pytest.param(("pdb.spec",), ["KIND:       PodDisruptionBudget", "minAvailable\t<IntOrString>"], id="pdb.spec"),
    ],
)
async def test_kubectl_explain(args: tuple[str, ...], expected: list[str], server: Served, tmp_path: Path) -> None:
    out = await _kubectl(server, tmp_path, "explain", *args)
    for line in expected:
        assert line in out


MANIFESTS = {
    "Pod": ("v1", "/api/v1/namespaces/default/pods", {"containers": [{"name": "c", "image": "nginx"}]}),
    "Deployment": ("apps/v1", "/apis/apps/v1/namespaces/default/deployments", {"replicas": 1}),
    "PodDisruptionBudget": (
        "policy/v1",
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        {"minAvailable": 1},
    ),
    "PriorityClass": ("scheduling.k8s.io/v1", "/apis/scheduling.k8s.io/v1/priorityclasses", None),
}


@kubectl_test
@pytest.mark.real_time
@pytest.mark.asyncio
@pytest.mark.parametrize("kind", [pytest.param(k, id=k) for k in MANIFESTS])
async def test_kubectl_create_leaves_validation_to_the_server(kind: str, server: Served, tmp_path: Path) -> None:
    """With a PATCH carrying the kind's GVK and ``fieldValidation`` in /openapi/v3, kubectl sends
    ``fieldValidation=Strict`` instead of fetching /openapi/v2 (protobuf) to validate itself."""
    api_version, collection, spec = MANIFESTS[kind]
    manifest: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    manifest |= {"spec": spec} if spec is not None else {"value": 10}
    if "/namespaces/" in collection:
        manifest["metadata"]["namespace"] = "default"
    out = await _kubectl(server, tmp_path, "create", "-f", "-", stdin=json.dumps(manifest).encode())
    assert "x created" in out
    assert server.writes == [("POST", f"{collection}?fieldManager=kubectl-create&fieldValidation=Strict")]


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    # env, command and livenessProbe are fields the emulator's Structs do not model
                    {
                        "name": "c",
                        "image": "nginx:1",
                        "env": [{"name": "A", "value": "1"}],
                        "command": ["sleep"],
                        "livenessProbe": {"exec": {"command": ["true"]}},
                    }
                ]
            },
        },
    },
}


@kubectl_test
@pytest.mark.real_time
@pytest.mark.asyncio
async def test_kubectl_apply_patches_fields_the_structs_do_not_model(server: Served, tmp_path: Path) -> None:
    """A re-apply computes its strategic merge patch from kubectl's compiled-in metadata, silently
    (from our OpenAPI v3 schemas it would warn ``unable to find api field "env"``)."""
    await _kubectl(server, tmp_path, "apply", "-f", "-", stdin=json.dumps(DEPLOYMENT).encode())
    changed = json.loads(json.dumps(DEPLOYMENT))
    container = changed["spec"]["template"]["spec"]["containers"][0]
    container["image"] = "nginx:2"
    container["env"][0]["value"] = "2"
    out, err = await _kubectl_both(server, tmp_path, "apply", "-f", "-", stdin=json.dumps(changed).encode())
    assert out.strip() == "deployment.apps/web configured"
    assert "warning" not in err.lower()
    ((content_type, patch),) = server.patches
    assert content_type == "application/strategic-merge-patch+json"
    assert patch["spec"]["template"]["spec"]["containers"] == [
        {"$setElementOrder/env": [{"name": "A"}], "env": [{"name": "A", "value": "2"}], "image": "nginx:2", "name": "c"}
    ]


@pytest.mark.real_time
@pytest.mark.asyncio
async def test_a_legacy_client_gets_the_legacy_documents(server: Served) -> None:
    """kubectl 1.20 asks ``/api`` and ``/apis`` with ``application/json, */*`` only."""
    async with aiohttp.ClientSession(headers={"Accept": "application/json, */*"}) as session:
        async with session.get(f"{server.url}/api") as api:
            assert api.content_type == "application/json"
            assert (await api.json())["kind"] == "APIVersions"
        async with session.get(f"{server.url}/apis") as apis:
            assert (await apis.json())["kind"] == "APIGroupList"


@pytest.mark.real_time
@pytest.mark.asyncio
async def test_the_python_clients_dynamic_client_maps_kinds(server: Served, tmp_path: Path) -> None:
    """``kubernetes.dynamic`` discovers with plain ``application/json``: the legacy documents."""
    from kubernetes import client, dynamic

    def discover() -> list[tuple[str, bool, list[str], list[str] | None, list[str]]]:
        api = client.ApiClient(client.Configuration(host=server.url))
        try:
            dc = dynamic.DynamicClient(api, cache_file=str(tmp_path / "discovery.json"))  # type: ignore[no-untyped-call]
            found = []
            for api_version, kind in [("v1", "Pod"), ("apps/v1", "Deployment"), ("policy/v1", "PodDisruptionBudget")]:
                r = dc.resources.get(api_version=api_version, kind=kind)
                found.append((r.name, r.namespaced, r.short_names, r.categories, sorted(r.subresources)))
            return found
        finally:
            api.close()  # type: ignore[no-untyped-call]

    assert await asyncio.to_thread(discover) == [
        (
            "pods",
            True,
            ["po"],
            ["all"],
            ["attach", "binding", "eviction", "exec", "log", "portforward", "resize", "status"],
        ),
        ("deployments", True, ["deploy"], ["all"], ["scale", "status"]),
        ("poddisruptionbudgets", True, ["pdb"], None, ["status"]),
    ]


@pytest.mark.real_time
@pytest.mark.asyncio
async def test_the_python_clients_typed_discovery_calls_parse(server: Served) -> None:
    """``VersionApi``, ``CoreApi``, ``ApisApi``, ``AppsApi`` and ``*V1Api.get_api_resources`` decode
    our documents into their strict models (they ask ``/version/``, ``/api/``, ``/apis/apps/``...)."""
    from kubernetes import client

    def calls() -> tuple[Any, ...]:
        api = client.ApiClient(client.Configuration(host=server.url))
        try:
            apps = client.AppsApi(api).get_api_group().preferred_version
            assert apps is not None
            return (
                client.VersionApi(api).get_code().minor,
                client.CoreApi(api).get_api_versions().versions,
                [g.name for g in client.ApisApi(api).get_api_versions().groups],
                apps.group_version,
                [(r.name, r.kind, r.group) for r in client.CoreV1Api(api).get_api_resources().resources][-3:],
            )
        finally:
            api.close()  # type: ignore[no-untyped-call]

    assert await asyncio.to_thread(calls) == (
        "32",
        ["v1"],
        [
            "apps",
            "autoscaling",
            "batch",
            "policy",
            "storage.k8s.io",
            "scheduling.k8s.io",
            "coordination.k8s.io",
            "resource.k8s.io",
            "karpenter.sh",
            "metrics.k8s.io",
        ],
        "apps/v1",
        [("secrets", "Secret", None), ("services", "Service", None), ("services/status", "Service", None)],
    )
