"""Unmodelled fields through the HTTP door: what a client writes and the Structs drop comes
back on get, list, watch and Tables with the object; patches and updates see it; a later
write replaces it; a delete forgets it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from emulator.base.api.codec import convert, to_builtins
from emulator.base.api.core import Pod
from emulator.base.http.extras import UnmodelledFields
from emulator.base.http.watch import EncodedObjects
from tests.http.server_support import TABLE, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

PODS = "/api/v1/namespaces/default/pods"
ENV = [{"name": "LOG_LEVEL", "value": "info"}]
PROBE = {"httpGet": {"path": "/healthz", "port": 8080}}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "x"},
    "spec": {
        "containers": [
            {"name": "web", "image": "nginx", "env": ENV, "readinessProbe": PROBE, "imagePullPolicy": "Always"},
            {"name": "side", "image": "busybox", "command": ["sleep", "1d"]},
        ],
        "dnsPolicy": "Default",
    },
}


def web(obj: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in obj["spec"]["containers"] if c["name"] == "web")


async def test_create_get_list_serve_the_fields_the_struct_drops() -> None:
    async with serving() as s:
        code, created = await s.call("POST", PODS, POD)
        assert code == 201
        assert web(created)["env"] == ENV
        code, got = await s.call("GET", f"{PODS}/x")
        assert (web(got)["env"], web(got)["readinessProbe"], got["spec"]["dnsPolicy"]) == (ENV, PROBE, "Default")
        assert got["spec"]["containers"][1]["command"] == ["sleep", "1d"]
        code, listed = await s.call("GET", PODS)
        (item,) = [i for i in listed["items"] if i["metadata"]["name"] == "x"]
        assert web(item)["imagePullPolicy"] == "Always"
        others = [i for i in listed["items"] if i["metadata"]["name"] != "x"]
        assert all("env" not in c for i in others for c in i["spec"]["containers"])


@pytest.mark.parametrize(
    ("content_type", "patch", "expected_env"),
    [
        pytest.param(
            "application/strategic-merge-patch+json",
            {"metadata": {"labels": {"a": "b"}}},
            ENV,
            id="strategic-merge-keeps",
        ),
        pytest.param(
            "application/merge-patch+json",
            {"metadata": {"annotations": {"a": "b"}}},
            ENV,
            id="merge-patch-keeps",
        ),
    ],
)
async def test_patches_start_from_the_served_object(content_type: str, patch: Any, expected_env: Any) -> None:
    async with serving() as s:
        await s.call("POST", PODS, POD)
        code, out = await s.call("PATCH", f"{PODS}/x", patch, headers={"Content-Type": content_type})
        assert code == 200, out
        assert web(out).get("env") == expected_env
        code, got = await s.call("GET", f"{PODS}/x")
        assert web(got).get("env") == expected_env


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        pytest.param(
            "application/strategic-merge-patch+json",
            {"spec": {"containers": [{"name": "web", "env": [{"name": "X", "value": "1"}]}]}},
            id="strategic-merge-env-by-name",
        ),
        pytest.param(
            "application/json-patch+json", [{"op": "remove", "path": "/spec/containers/0/env"}], id="json-patch"
        ),
    ],
)
async def test_a_pods_unmodelled_spec_fields_are_immutable_as_upstreams(content_type: str, patch: Any) -> None:
    """The pod spec's unmodelled fields are part of the stored spec: changing ``env`` is a spec
    change, which upstream's ``ValidatePodUpdate`` (pkg/apis/core/validation) forbids."""
    async with serving() as s:
        await s.call("POST", PODS, POD)
        code, out = await s.call("PATCH", f"{PODS}/x", patch, headers={"Content-Type": content_type})
        assert code == 422, out
        assert "pod updates may not change fields" in out["message"]
        code, got = await s.call("GET", f"{PODS}/x")
        assert web(got)["env"] == ENV


async def test_an_update_replaces_the_extras_and_a_status_write_keeps_them() -> None:
    async with serving() as s:
        await s.call("POST", PODS, POD)
        code, got = await s.call("GET", f"{PODS}/x")
        got["status"] = {**got.get("status", {}), "phase": "Pending"}
        code, out = await s.call("PUT", f"{PODS}/x/status", got)
        assert code == 200, out
        assert web(out)["env"] == ENV
        del got["spec"]["containers"][0]["env"]
        got.pop("status")
        code, out = await s.call("PUT", f"{PODS}/x", got)
        assert code == 422, out  # the env is part of the stored spec: ValidatePodUpdate
        del got["metadata"]["resourceVersion"]
        got["spec"]["containers"][0]["readinessProbe"] = {"exec": {"command": ["true"]}}
        got["metadata"]["name"] = "y"
        code, out = await s.call("POST", PODS, got)
        assert code == 201, out
        assert "env" not in web(out)
        assert web(out)["readinessProbe"] == {"exec": {"command": ["true"]}}


async def test_tables_with_the_object_carry_the_extras() -> None:
    async with serving() as s:
        await s.call("POST", PODS, POD)
        code, tab = await s.call("GET", f"{PODS}?includeObject=Object", headers={"Accept": TABLE})
        assert code == 200
        (row,) = [r for r in tab["rows"] if r["object"]["metadata"]["name"] == "x"]
        assert web(row["object"])["env"] == ENV


async def test_watch_events_carry_the_extras_and_a_delete_forgets_them() -> None:
    async with serving() as s:
        await s.call("POST", PODS, POD)
        rv = s.api.revision
        async with s.client.get(f"{PODS}?watch=true&resourceVersion={rv}") as resp:
            await s.call(
                "PATCH",
                f"{PODS}/x",
                {"metadata": {"labels": {"w": "1"}}},
                headers={"Content-Type": "application/merge-patch+json"},
            )
            event = json.loads(await resp.content.readline())
            assert (event["type"], web(event["object"])["env"]) == ("MODIFIED", ENV)
        stored = s.api.get("Pod", "x", "default")
        assert stored.spec.unmodelled  # stored with the object, not beside it
        assert not s.http.extras.has(stored.metadata.uid)
        code, _ = await s.call("DELETE", f"{PODS}/x?gracePeriodSeconds=0")
        assert code == 200


async def test_a_dry_run_answers_with_the_extras_and_remembers_nothing() -> None:
    async with serving() as s:
        code, out = await s.call("POST", f"{PODS}?dryRun=All", POD)
        assert code == 201, out
        assert web(out)["env"] == ENV
        code, _ = await s.call("GET", f"{PODS}/x")
        assert code == 404
        assert repr(s.http.extras).startswith("<UnmodelledFields objects=0 ")


async def test_the_shared_watch_encoding_cache_follows_the_extras() -> None:
    # ``command`` is not modelled (``env`` is, since ConfigMap and Secret references are)
    pod = {**POD, "spec": {"containers": [{"name": "web", "image": "nginx", "command": ["run", "--verbose"]}]}}
    extras, cache = UnmodelledFields(), EncodedObjects()
    obj = convert({**pod, "metadata": {"name": "x", "uid": "u"}}, Pod)
    assert b"--verbose" not in cache.get(obj)
    extras.remember("u", pod, to_builtins(obj))
    assert b"--verbose" in cache.get(obj, extras)
    assert b"--verbose" in cache.get(obj, extras)
    assert cache.hits == 1
    extras.remember("u", {**pod, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}, to_builtins(obj))
    assert b"--verbose" not in cache.get(obj, extras)


async def test_a_json_patch_of_managed_fields_replaces_them_as_kubectl_migration_sends() -> None:
    async with serving() as s:
        await s.call("POST", f"{PODS}?fieldManager=kubectl-client-side-apply", POD)
        code, got = await s.call("GET", f"{PODS}/x")
        assert [m["manager"] for m in got["metadata"]["managedFields"]] == ["kubectl-client-side-apply"]
        migrated = [{**got["metadata"]["managedFields"][0], "manager": "kubectl", "operation": "Apply"}]
        ops = [
            {"op": "replace", "path": "/metadata/managedFields", "value": migrated},
            {"op": "test", "path": "/metadata/resourceVersion", "value": got["metadata"]["resourceVersion"]},
        ]
        code, out = await s.call("PATCH", f"{PODS}/x", ops, headers={"Content-Type": "application/json-patch+json"})
        assert code == 200, out
        assert [(m["manager"], m["operation"]) for m in out["metadata"]["managedFields"]] == [("kubectl", "Apply")]
        assert web(out)["env"] == ENV


DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
DEPLOY = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "x"},
    "spec": {
        "replicas": 0,
        "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "x"}}, "spec": POD["spec"]},
    },
}


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        pytest.param(
            "application/strategic-merge-patch+json",
            {
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "web", "env": [{"name": "LOG_LEVEL", "value": "debug"}]}]}
                    }
                }
            },
            id="strategic-merge",
        ),
        pytest.param(
            "application/json-patch+json",
            [{"op": "replace", "path": "/spec/template/spec/containers/0/env/0/value", "value": "debug"}],
            id="json-patch",
        ),
        pytest.param(
            "application/merge-patch+json",
            {"spec": {"template": {"spec": {"dnsPolicy": "ClusterFirst"}}}},
            id="merge-patch",
        ),
        pytest.param(
            "application/apply-patch+yaml",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "x"},
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "web", "image": "nginx", "env": [{"name": "LOG_LEVEL", "value": "debug"}]}
                            ]
                        }
                    }
                },
            },
            id="server-side-apply",
        ),
    ],
)
async def test_a_dry_run_patch_leaves_the_remembered_fields_alone(content_type: str, patch: Any) -> None:
    async with serving() as s:
        await s.call("POST", DEPLOYS, DEPLOY)
        query = "?dryRun=All&fieldManager=m&force=true"
        code, out = await s.call("PATCH", f"{DEPLOYS}/x{query}", patch, headers={"Content-Type": content_type})
        assert code == 200, out
        assert web(out["spec"]["template"])["env"] != ENV or out["spec"]["template"]["spec"]["dnsPolicy"] != "Default"
        code, got = await s.call("GET", f"{DEPLOYS}/x")
        assert (web(got["spec"]["template"])["env"], got["spec"]["template"]["spec"]["dnsPolicy"]) == (ENV, "Default")
