"""Each verb through the HTTP door: answers, Status errors, auth, limits, the trace's agent."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.codec import convert
from emulator.base.api.policy import PodDisruptionBudget
from emulator.base.apiserver.server import WriteRecord
from emulator.base.http.apply import FieldManagers
from emulator.base.http.resources import Resource
from tests.builders import pod
from tests.http.server_support import TABLE, new_api, serving
from tests.references import trace_line

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

POD = {"metadata": {"name": "new"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
DEPLOY = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
    },
}


async def test_get_and_list() -> None:
    async with serving() as s:
        code, body = await s.call("GET", "/api/v1/namespaces/default/pods/p0")
        assert (code, body["kind"], body["apiVersion"], body["metadata"]["name"]) == (200, "Pod", "v1", "p0")
        code, body = await s.call("GET", "/api/v1/pods")
        assert (code, body["kind"], body["apiVersion"]) == (200, "PodList", "v1")
        assert body["metadata"]["resourceVersion"] == str(s.api.revision)
        assert [i["metadata"]["name"] for i in body["items"]] == ["p0", "p1"]
        code, body = await s.call("GET", "/api/v1/nodes")
        assert [i["metadata"]["name"] for i in body["items"]] == ["n1", "n2"]


@pytest.mark.parametrize(
    ("query", "names"),
    [
        pytest.param("labelSelector=app%3Dweb", ["p0", "p2"], id="label"),
        pytest.param("labelSelector=app%21%3Dweb", ["p1", "p3"], id="label-not"),
        pytest.param("fieldSelector=metadata.name%3Dp1", ["p1"], id="name"),
        pytest.param("fieldSelector=metadata.name%21%3Dp1", ["p0", "p2", "p3"], id="name-not"),
        pytest.param("fieldSelector=spec.nodeName%3D", ["p0", "p1", "p2", "p3"], id="unbound"),
        pytest.param("fieldSelector=spec.nodeName%3Dn1", [], id="on-node"),
        pytest.param(
            "fieldSelector=status.phase%21%3DSucceeded,status.phase%21%3DFailed",
            ["p0", "p1", "p2", "p3"],
            id="phase-not",
        ),
    ],
)
async def test_list_selectors(query: str, names: list[str]) -> None:
    async with serving(new_api(pods=4)) as s:
        code, body = await s.call("GET", f"/api/v1/namespaces/default/pods?{query}")
        assert code == 200
        assert [i["metadata"]["name"] for i in body["items"]] == names


async def test_list_pages_with_continue() -> None:
    async with serving(new_api(pods=5)) as s:
        names: list[str] = []
        token = ""
        pages = 0
        while True:
            code, body = await s.call("GET", f"/api/v1/pods?limit=2&continue={token}")
            assert code == 200
            pages += 1
            names += [i["metadata"]["name"] for i in body["items"]]
            token = body["metadata"].get("continue", "")
            if not token:
                assert "remainingItemCount" not in body["metadata"]
                break
            assert body["metadata"]["remainingItemCount"] == 5 - len(names)
        assert (pages, names) == (3, ["p0", "p1", "p2", "p3", "p4"])


async def test_list_as_table() -> None:
    async with serving() as s:
        code, body = await s.call("GET", "/api/v1/pods", headers={"Accept": TABLE})
        assert (code, body["kind"], body["apiVersion"]) == (200, "Table", "meta.k8s.io/v1")
        assert body["metadata"]["resourceVersion"] == str(s.api.revision)
        assert [r["object"]["metadata"]["name"] for r in body["rows"]] == ["p0", "p1"]
        assert body["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
        code, body = await s.call("GET", "/api/v1/pods?includeObject=Object", headers={"Accept": TABLE})
        assert body["rows"][0]["object"]["kind"] == "Pod"


async def test_create_defaults_generates_and_traces_the_agent() -> None:
    async with serving() as s:
        seen: list[WriteRecord] = []
        s.api.add_write_listener(seen.append)
        body = {"metadata": {"generateName": "g-"}, "spec": POD["spec"]}
        code, out = await s.call("POST", "/api/v1/namespaces/default/pods", body)
        assert code == 201
        assert out["metadata"]["name"].startswith("g-")
        assert out["metadata"]["uid"]
        assert out["metadata"]["resourceVersion"] == str(s.api.revision)
        assert [trace_line(r)["agent"] for r in seen] == ["kubectl"]


async def test_create_without_content_type_or_kind() -> None:
    async with serving() as s:
        code, out = await s.call(
            "POST",
            "/api/v1/namespaces/default/pods",
            raw=b'{"metadata":{"name":"py"},"spec":{"containers":[{"name":"c","image":"i"}]}}',
            headers={"User-Agent": "OpenAPI-Generator/37.0.2/python"},
        )
        assert (code, out["kind"]) == (201, "Pod")


async def test_dry_run_never_persists() -> None:
    async with serving() as s:
        before = s.api.revision
        code, out = await s.call("POST", "/api/v1/namespaces/default/pods?dryRun=All", POD)
        assert (code, out["metadata"]["name"]) == (201, "new")
        assert s.api.revision == before
        code, _ = await s.call("GET", "/api/v1/namespaces/default/pods/new")
        assert code == 404


@pytest.mark.parametrize(
    ("method", "path", "body", "code", "reason", "message"),
    [
        pytest.param(
            "GET",
            "/api/v1/namespaces/default/pods/nope",
            None,
            404,
            "NotFound",
            'pods "nope" not found',
            id="not-found",
        ),
        pytest.param(
            "GET",
            "/api/v1/widgets",
            None,
            404,
            "NotFound",
            "the server could not find the requested resource",
            id="unknown-path",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods",
            {"metadata": {"name": "p0"}, "spec": POD["spec"]},
            409,
            "AlreadyExists",
            'pods "p0" already exists',
            id="already-exists",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods",
            {"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}},
            422,
            "Invalid",
            'Pod "x" is invalid: spec.containers[0].image: Required value',
            id="invalid",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods",
            {
                "metadata": {"name": "x"},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "abc"}}}]},
            },
            400,
            "BadRequest",
            'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            id="bad-quantity",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods",
            {**POD, "apiVersion": "apps/v1"},
            400,
            "BadRequest",
            "the API version in the data (apps/v1) does not match the expected API version (v1)",
            id="apiversion-mismatch",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/other/pods",
            {**POD, "metadata": {"name": "x", "namespace": "d"}},
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
            id="namespace-mismatch",
        ),
        pytest.param(
            "PUT",
            "/api/v1/namespaces/default/pods/p0",
            {"metadata": {"name": "p1"}, "spec": POD["spec"]},
            400,
            "BadRequest",
            "the name of the object (p1) does not match the name on the URL (p0)",
            id="name-mismatch",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods/p0",
            POD,
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            id="post-to-name",
        ),
        pytest.param(
            "DELETE",
            "/api/v1/namespaces",
            None,
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            id="no-deletecollection",
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/default/pods?fieldSelector=x%3Dy",
            None,
            400,
            "BadRequest",
            "field label not supported: x",
            id="field-label",
        ),
        pytest.param(
            "GET",
            "/api/v1/pods?resourceVersion=999",
            None,
            504,
            "Timeout",
            "Too large resource version: 999, current: 6",
            id="too-large-rv",
        ),
    ],
)
async def test_errors(method: str, path: str, body: Any, code: int, reason: str, message: str) -> None:
    async with serving() as s:
        got, out = await s.call(method, path, body)
        assert (got, out["kind"], out["status"], out["reason"], out["code"]) == (
            code,
            "Status",
            "Failure",
            reason,
            code,
        )
        assert out["message"] == message


async def test_malformed_protobuf_body_is_a_bad_request() -> None:
    async with serving() as s:
        code, out = await s.call(
            "POST",
            "/api/v1/namespaces",
            raw=b"k8s\x00\x0a",
            headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
        )
        assert (code, out["reason"]) == (400, "BadRequest")
        assert out["message"] == "the object provided is unrecognized: truncated varint"


async def test_update_stale_resource_version_conflicts() -> None:
    async with serving() as s:
        code, cur = await s.call("GET", "/api/v1/namespaces/default/pods/p0")
        cur["metadata"]["labels"] = {"x": "1"}
        code, out = await s.call("PUT", "/api/v1/namespaces/default/pods/p0", cur)
        assert (code, out["metadata"]["labels"]) == (200, {"x": "1"})
        code, out = await s.call("PUT", "/api/v1/namespaces/default/pods/p0", cur)
        assert (code, out["reason"], out["details"]) == (409, "Conflict", {"name": "p0", "kind": "pods"})
        assert out["message"] == (
            'Operation cannot be fulfilled on pods "p0": the object has been modified; '
            "please apply your changes to the latest version and try again"
        )


async def test_status_subresource_changes_status_only() -> None:
    async with serving() as s:
        _, cur = await s.call("GET", "/api/v1/namespaces/default/pods/p0")
        cur["status"] = {"phase": "Running"}
        cur["metadata"]["labels"] = {"ignored": "yes"}
        code, out = await s.call("PUT", "/api/v1/namespaces/default/pods/p0/status", cur)
        assert code == 200
        assert out["status"]["phase"] == "Running"
        assert out["metadata"]["labels"] == {"app": "web"}


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        pytest.param("application/merge-patch+json", {"metadata": {"labels": {"a": "b"}}}, id="merge"),
        pytest.param("application/strategic-merge-patch+json", {"metadata": {"labels": {"a": "b"}}}, id="strategic"),
    ],
)
async def test_patch(content_type: str, patch: dict[str, Any]) -> None:
    async with serving() as s:
        code, out = await s.call(
            "PATCH", "/api/v1/namespaces/default/pods/p0", patch, headers={"Content-Type": content_type}
        )
        assert code == 200
        assert out["metadata"]["labels"] == {"app": "web", "a": "b"}
        assert s.api.get("Pod", "p0", "default").metadata.labels == {"app": "web", "a": "b"}


async def test_server_side_apply_creates_then_merges() -> None:
    async with serving() as s:
        apply = {"Content-Type": "application/apply-patch+yaml"}
        path = "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=kubectl&force=false"
        code, out = await s.call("PATCH", path, DEPLOY, headers=apply)
        assert (code, out["kind"], out["spec"]["replicas"]) == (201, "Deployment", 2)
        code, out = await s.call("PATCH", path, {**DEPLOY, "spec": {**DEPLOY["spec"], "replicas": 3}}, headers=apply)
        assert (code, out["spec"]["replicas"]) == (200, 3)
        code, out = await s.call("PATCH", "/apis/apps/v1/namespaces/default/deployments/web", DEPLOY, headers=apply)
        assert (code, out["reason"]) == (400, "BadRequest")


async def test_delete_answers_pods_with_the_object_and_others_with_status() -> None:
    async with serving() as s:
        code, out = await s.call("DELETE", "/api/v1/namespaces/default/pods/p0", {"propagationPolicy": "Background"})
        assert (code, out["kind"], out["metadata"]["name"]) == (200, "Pod", "p0")
        await s.call("POST", "/apis/apps/v1/namespaces/default/deployments", DEPLOY)
        uid = s.api.get("Deployment", "web", "default").metadata.uid
        code, out = await s.call(
            "DELETE", "/apis/apps/v1/namespaces/default/deployments/web?propagationPolicy=Background"
        )
        assert (code, out["kind"], out["status"]) == (200, "Status", "Success")
        assert out["details"] == {"name": "web", "group": "apps", "kind": "deployments", "uid": uid}


async def test_delete_preconditions() -> None:
    async with serving() as s:
        code, out = await s.call("DELETE", "/api/v1/namespaces/default/pods/p0", {"preconditions": {"uid": "other"}})
        assert (code, out["reason"]) == (409, "Conflict")
        assert "Precondition failed: UID in precondition: other" in out["message"]


async def test_delete_graceful_pod_stays_until_confirmed() -> None:
    api = new_api(pods=0)
    api.create(pod("bound", node="n1"))
    async with serving(api) as s:
        code, out = await s.call("DELETE", "/api/v1/namespaces/default/pods/bound", {"gracePeriodSeconds": 30})
        assert code == 200
        assert out["metadata"]["deletionGracePeriodSeconds"] == 30
        assert s.api.get("Pod", "bound", "default").metadata.deletion_timestamp is not None


async def test_deletecollection_answers_the_list() -> None:
    async with serving(new_api(pods=4)) as s:
        code, out = await s.call("DELETE", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb")
        assert (code, out["kind"]) == (200, "PodList")
        assert [i["metadata"]["name"] for i in out["items"]] == ["p0", "p2"]
        assert [p.metadata.name for p in s.api.list("Pod")[0]] == ["p1", "p3"]


@pytest.mark.parametrize("dry", [False, True], ids=["real", "dry-run"])
async def test_deletecollection_answers_the_items_as_listed(dry: bool) -> None:
    """Upstream's ``Store.DeleteCollection`` answers the list it listed (each item unchanged, the
    list's resourceVersion), not each delete's result: a pod removed at once is not shown at the
    deletion's revision, nor marked; a pod deleted gracefully is not shown marked."""
    api = new_api(pods=2)
    api.create(pod("bound", node="n1", labels={"app": "web"}))
    async with serving(api) as s:
        path = "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb&gracePeriodSeconds=30"
        code, listed = await s.call("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb")
        before = s.api.revision
        code, out = await s.call("DELETE", path + ("&dryRun=All" if dry else ""))
        assert (code, out["kind"]) == (200, "PodList")
        assert out["metadata"]["resourceVersion"] == listed["metadata"]["resourceVersion"] == str(before)
        assert out["items"] == listed["items"]
        assert [i["metadata"]["name"] for i in out["items"]] == ["bound", "p0"]
        assert all("deletionTimestamp" not in i["metadata"] for i in out["items"])
        if dry:
            assert s.api.revision == before
            return
        assert [p.metadata.name for p in s.api.list("Pod")[0]] == ["bound", "p1"]
        assert s.api.get("Pod", "bound", "default").metadata.deletion_grace_period_seconds == 30


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v1/namespaces/default/pods/p0/binding", id="pod-binding"),
        pytest.param("/api/v1/namespaces/default/bindings", id="bindings"),
    ],
)
async def test_binding(path: str) -> None:
    async with serving() as s:
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p0"}, "target": {"name": "n1"}}
        code, out = await s.call("POST", path, body)
        assert (code, out) == (
            201,
            {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
        )
        assert s.api.get("Pod", "p0", "default").spec.node_name == "n1"
        code, out = await s.call("POST", path, body)
        assert (code, out["reason"]) == (409, "Conflict")
        assert (
            out["message"]
            == 'Operation cannot be fulfilled on pods/binding "p0": pod p0 is already assigned to node "n1"'
        )


async def test_eviction_and_disruption_budget() -> None:
    api = new_api(pods=0)
    running = api.create(pod("a", node="n1", labels={"app": "web"}))
    ready = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    api.update_status(replace(running, status=convert(ready, type(running.status))))
    spec = {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
    pdb = api.create(convert({"metadata": {"name": "b", "namespace": "default"}, "spec": spec}, PodDisruptionBudget))
    status = {
        "observedGeneration": 1,
        "disruptionsAllowed": 0,
        "currentHealthy": 1,
        "desiredHealthy": 1,
        "expectedPods": 1,
    }
    api.update_status(replace(pdb, status=convert(status, type(pdb.status))))
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "a"}}
    async with serving(api) as s:
        code, out = await s.call("POST", "/api/v1/namespaces/default/pods/a/eviction", body)
        assert (code, out["reason"]) == (429, "TooManyRequests")
        assert out["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
        assert [c["reason"] for c in out["details"]["causes"]] == ["DisruptionBudget"]
        budget = s.api.get("PodDisruptionBudget", "b", "default")
        s.api.update_status(replace(budget, status=replace(budget.status, disruptions_allowed=1)))
        code, out = await s.call("POST", "/api/v1/namespaces/default/pods/a/eviction", body)
        assert (code, out["status"], out["code"]) == (201, "Success", 201)
        assert s.api.get("Pod", "a", "default").metadata.deletion_timestamp is not None


async def test_scale_subresource() -> None:
    async with serving() as s:
        await s.call("POST", "/apis/apps/v1/namespaces/default/deployments", DEPLOY)
        path = "/apis/apps/v1/namespaces/default/deployments/web/scale"
        code, out = await s.call("GET", path)
        assert (code, out["kind"], out["apiVersion"], out["spec"], out["status"]) == (
            200,
            "Scale",
            "autoscaling/v1",
            {"replicas": 2},
            {"replicas": 0, "selector": "app=web"},
        )
        out["spec"]["replicas"] = 5
        code, out = await s.call("PUT", path, out)
        assert (code, out["spec"]["replicas"]) == (200, 5)
        code, out = await s.call(
            "PATCH", path, {"spec": {"replicas": 1}}, headers={"Content-Type": "application/merge-patch+json"}
        )
        assert (code, out["spec"]["replicas"]) == (200, 1)
        assert s.api.get("Deployment", "web", "default").spec.replicas == 1
        code, out = await s.call(
            "PATCH",
            f"{path}?fieldManager=kubectl",
            {"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": 4}},
            headers={"Content-Type": "application/apply-patch+yaml"},
        )
        assert (code, out["spec"]["replicas"]) == (200, 4)


@pytest.mark.parametrize(
    ("header", "code"),
    [
        pytest.param(None, 403, id="missing"),  # anonymous: RBAC forbids it (was 401)
        pytest.param("Bearer wrong", 401, id="wrong"),
        pytest.param("Bearer sekret", 200, id="right"),
        pytest.param("bearer sekret", 200, id="scheme-lower-case"),
        pytest.param("BEARER sekret", 200, id="scheme-upper-case"),
        pytest.param("  Bearer sekret  ", 200, id="surrounding-space"),
        pytest.param("Bearer  sekret", 403, id="empty-token"),  # no token: anonymous (was 401)
        pytest.param("Basic sekret", 403, id="other-scheme"),  # no token: anonymous (was 401)
        pytest.param("Bearer \xff", 401, id="non-ascii"),
    ],
)
async def test_bearer_token(header: str | None, code: int) -> None:
    async with serving(token="sekret") as s:
        got, out = await s.call("GET", "/api/v1/pods", headers={"Authorization": header} if header else None)
        assert got == code
        if code == 401:
            assert (out["reason"], out["message"]) == ("Unauthorized", "Unauthorized")
        if code == 403:
            assert out["reason"] == "Forbidden"


@pytest.mark.parametrize(
    ("method", "path", "header", "code"),
    [
        pytest.param("GET", "/healthz", None, 200, id="healthz"),
        pytest.param("GET", "/livez", None, 200, id="livez"),
        pytest.param("GET", "/readyz", None, 200, id="readyz"),
        pytest.param("GET", "/version", None, 200, id="version"),
        pytest.param("GET", "/version/", None, 200, id="version-slash"),
        pytest.param("GET", "/livez/ping", None, 403, id="a-check-is-not-public"),  # anonymous: was 401
        pytest.param("GET", "/api", None, 403, id="discovery-is-not-public"),  # anonymous: was 401
        pytest.param("GET", "/version", "Bearer wrong", 401, id="a-bad-token-is-never-anonymous"),
        pytest.param("GET", "/version", "Basic eDp5", 200, id="no-bearer-token-is-anonymous"),
    ],
)
async def test_public_info_is_anonymous(method: str, path: str, header: str | None, code: int) -> None:
    """upstream's ``system:public-info-viewer``: anyone may GET health and version."""
    headers = {"Authorization": header} if header else None
    async with serving(token="sekret") as s, s.client.request(method, path, headers=headers) as resp:
        assert resp.status == code


async def test_body_limit() -> None:
    async with serving(max_body=100) as s:
        big = {**POD, "metadata": {"name": "x", "annotations": {"a": "b" * 200}}}
        code, out = await s.call("POST", "/api/v1/namespaces/default/pods", big)
        assert (code, out["reason"], out["message"]) == (
            413,
            "RequestEntityTooLarge",
            "Request entity too large: limit is 100",
        )


async def test_namespace_object_and_version() -> None:
    async with serving() as s:
        code, out = await s.call("GET", "/api/v1/namespaces/default")
        assert (code, out["kind"]) == (200, "Namespace")
        code, out = await s.call("GET", "/version")
        assert code == 200
        assert out["major"] == "1"


class RecordingManagers(FieldManagers):
    """Field managers that record the calls the verbs make and own one field per object."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def update(
        self,
        resource: Resource,
        old: dict[str, Any] | None,
        new: dict[str, Any],
        *,
        manager: str,
        operation: str,
        time: str,
    ) -> None:
        self.calls.append(
            ("update", new["metadata"]["name"], "create" if old is None else "change", manager, operation)
        )

    def managed_fields(self, uid: str) -> list[dict[str, Any]]:
        return [{"manager": "m", "operation": "Update", "apiVersion": "v1"}]

    def forget(self, uid: str) -> None:
        self.calls.append(("forget", uid))


async def test_field_managers_see_every_write_and_render_managed_fields() -> None:
    managers = RecordingManagers()
    async with serving(managers=managers) as s:
        code, out = await s.call("POST", "/api/v1/namespaces/default/pods?fieldManager=kubectl-create", POD)
        assert code == 201
        assert out["metadata"]["managedFields"] == [{"manager": "m", "operation": "Update", "apiVersion": "v1"}]
        await s.call(
            "PATCH",
            "/api/v1/namespaces/default/pods/new?fieldManager=kubectl-label",
            {"metadata": {"labels": {"a": "b"}}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        code, listed = await s.call("GET", "/api/v1/namespaces/default/pods")
        assert all("managedFields" in i["metadata"] for i in listed["items"])
        uid = s.api.get("Pod", "new", "default").metadata.uid
        await s.call("DELETE", "/api/v1/namespaces/default/pods/new")
        assert managers.calls == [
            ("update", "new", "create", "kubectl-create", "Update"),
            ("update", "new", "change", "kubectl-label", "Update"),
            ("forget", uid),
        ]


DEPLOYMENT = {
    "metadata": {"name": "d"},
    "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {
            "metadata": {"labels": {"app": "d"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        },
    },
}
BAD_STATUS = {"status": {"replicas": 1, "updatedReplicas": 2}}


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "code"),
    [
        pytest.param(
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/d?dryRun=All",
            {**BAD_STATUS, "spec": {"replicas": 3}},
            {"Content-Type": "application/strategic-merge-patch+json"},
            200,
            id="patch",
        ),
        pytest.param(
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/d?dryRun=All&fieldManager=m&force=true",
            {"apiVersion": "apps/v1", "kind": "Deployment", **DEPLOYMENT, **BAD_STATUS, "spec": {"replicas": 3}},
            {"Content-Type": "application/apply-patch+yaml"},
            200,
            id="apply",
        ),
        pytest.param(
            "POST",
            "/apis/apps/v1/namespaces/default/deployments?dryRun=All",
            {**DEPLOYMENT, "metadata": {"name": "e"}, **BAD_STATUS},
            {},
            201,
            id="create",
        ),
    ],
)
async def test_dry_run_ignores_the_status_of_a_main_resource_write(
    method: str, path: str, body: dict[str, Any], headers: dict[str, str], code: int
) -> None:
    """Upstream's PrepareForUpdate/PrepareForCreate drop the status a write to the main
    resource carries, dry run or not (kubectl diff of a file with a stale status sends it
    in a dry-run strategic merge patch: it was 422 on the status)."""
    async with serving() as s:
        created, _ = await s.call("POST", "/apis/apps/v1/namespaces/default/deployments", DEPLOYMENT)
        assert created == 201
        status = s.api.get("Deployment", "d", "default").status
        got, out = await s.call(method, path, body, headers=headers)
        assert (got, out.get("status", {}).get("updatedReplicas")) == (code, status.updated_replicas or None)
        assert s.api.get("Deployment", "d", "default").spec.replicas != 3
