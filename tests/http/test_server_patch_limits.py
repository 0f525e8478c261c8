"""Hostile writes refused as upstream refuses them: JSON patch bounds (``maxJSONPatchOperations``,
``JSONPatchMaxCopyBytes``: the patch bomb, ``add`` then n x ``copy`` of the growing list, is refused
before it grows), deletecollection only under a namespace, ``dryRun`` values other than ``All``."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.http.server_support import serving

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

PATH = "/api/v1/namespaces/default/pods/p0"
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
POD = {"metadata": {"name": "new"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def _bomb(n: int) -> bytes:
    ops: list[dict[str, object]] = [{"op": "add", "path": "/spec/x", "value": ["a" * 40]}]
    ops += [{"op": "copy", "from": "/spec/x", "path": "/spec/x/-"} for _ in range(n)]
    return json.dumps(ops).encode()


async def test_patch_bomb_is_refused_quickly_and_stores_nothing() -> None:
    async with serving() as s:
        before = s.api.revision
        started = time.monotonic()
        code, body = await s.call("PATCH", PATH, raw=_bomb(30), headers=JSON_PATCH)
        elapsed = time.monotonic() - started
        assert (code, body["reason"]) == (422, "Invalid")
        text = json.dumps(body)
        assert "Unable to complete the copy, the accumulated size increase of copy is" in text, text
        assert "exceeding the limit 3145728" in text
        assert elapsed < 2.0
        assert s.api.revision == before


async def test_small_copies_still_apply() -> None:
    async with serving() as s:
        code, body = await s.call("PATCH", PATH, raw=_bomb(3), headers=JSON_PATCH)
        assert code == 200, body


async def test_more_than_ten_thousand_operations_is_413() -> None:
    ops = [{"op": "test", "path": "/kind", "value": "Pod"}] * 10_001
    async with serving() as s:
        code, body = await s.call("PATCH", PATH, raw=json.dumps(ops).encode(), headers=JSON_PATCH)
        assert (code, body["reason"], body["message"]) == (
            413,
            "RequestEntityTooLarge",
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
        )
        ok = [{"op": "test", "path": "/kind", "value": "Pod"}] * 10_000
        code, _ = await s.call("PATCH", PATH, raw=json.dumps(ok).encode(), headers=JSON_PATCH)
        assert code == 200


# --------------------------------------------------------------------------- finding 8: collections, dryRun


async def test_deletecollection_across_namespaces_is_405_and_deletes_nothing() -> None:
    async with serving() as s:
        code, body = await s.call("DELETE", "/api/v1/pods")
        assert (code, body["reason"]) == (405, "MethodNotAllowed")
        code, body = await s.call("GET", "/api/v1/pods")
        assert len(body["items"]) == 2
        code, _ = await s.call("DELETE", "/api/v1/nodes?dryRun=All")  # cluster-scoped: served
        assert code == 200


@pytest.mark.parametrize(
    ("method", "path", "body", "kind"),
    [
        ("POST", "/api/v1/namespaces/default/pods", POD, "CreateOptions"),
        ("PUT", PATH, None, "UpdateOptions"),
        ("PATCH", PATH, None, "PatchOptions"),
        ("DELETE", PATH, None, "DeleteOptions"),
        ("DELETE", "/api/v1/namespaces/default/pods", None, "DeleteOptions"),
    ],
)
async def test_dry_run_other_than_all_is_invalid_and_writes_nothing(
    method: str, path: str, body: Any, kind: str
) -> None:
    async with serving() as s:
        before = s.api.revision
        if method == "PUT":
            _, body = await s.call("GET", PATH)
        headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else None
        raw = b"{}" if method == "PATCH" else b""
        code, answer = await s.call(method, path + "?dryRun=yes", body, raw=raw, headers=headers)
        assert (code, answer["reason"], answer["message"]) == (
            422,
            "Invalid",
            f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{{"yes"}}: supported values: "All"',
        )
        assert s.api.revision == before
        code, _ = await s.call("GET", "/api/v1/namespaces/default/pods/p0")
        assert code == 200


async def test_dry_run_in_delete_options_body_is_checked() -> None:
    async with serving() as s:
        code, answer = await s.call("DELETE", PATH, {"dryRun": ["Al"]})
        assert (code, answer["reason"]) == (422, "Invalid")
        code, _ = await s.call("GET", PATH)
        assert code == 200
        code, _ = await s.call("DELETE", PATH, {"dryRun": ["All"]})
        assert code == 200
        code, _ = await s.call("GET", PATH)
        assert code == 200


# --------------------------------------------------------------------------- finding 7: validation gaps

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def _lease(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": spec}


@pytest.mark.parametrize(
    ("annotations", "detail"),
    [
        pytest.param(
            {"bad key!": "v"},
            'metadata.annotations: Invalid value: "bad key!": name part must consist of alphanumeric characters',
            id="key",
        ),
        pytest.param(
            {"big": "x" * (256 * 1024)},
            "metadata.annotations: Too long: may not be more than 262144 bytes",
            id="size",
        ),
    ],
)
async def test_annotations_are_validated_on_create_dry_run_and_update(annotations: dict[str, str], detail: str) -> None:
    async with serving() as s:
        pod = {**POD, "metadata": {"name": "new", "annotations": annotations}}
        for query in ("", "?dryRun=All"):
            code, body = await s.call("POST", "/api/v1/namespaces/default/pods" + query, pod)
            assert (code, body["reason"]) == (422, "Invalid"), body
            assert detail in body["message"]
        code, body = await s.call("POST", LEASES, _lease(holderIdentity="a"))
        assert code == 201
        body["metadata"]["annotations"] = annotations
        code, body = await s.call("PUT", LEASES + "/l", body)
        assert (code, body["reason"]) == (422, "Invalid"), body
        ok = {"Mixed.Case/Key": "v", "small": "x" * 1000}
        code, _ = await s.call(
            "POST", "/api/v1/namespaces/default/pods", {**POD, "metadata": {"name": "ok", "annotations": ok}}
        )
        assert code == 201


async def test_lease_spec_is_validated() -> None:
    async with serving() as s:
        code, body = await s.call("POST", LEASES, _lease(leaseDurationSeconds=-5))
        assert (code, body["message"]) == (
            422,
            'Lease.coordination.k8s.io "l" is invalid: '
            "spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0",
        )
        code, body = await s.call("POST", LEASES, _lease(renewTime="yesterday"))
        assert (code, body["reason"]) == (400, "BadRequest")
        assert 'parsing time "yesterday"' in body["message"]
        code, body = await s.call(
            "POST", LEASES, _lease(leaseDurationSeconds=40, renewTime="2026-01-01T00:00:00.000000Z")
        )
        assert code == 201, body
        body["spec"]["leaseTransitions"] = -1
        code, body = await s.call("PUT", LEASES + "/l", body)
        assert (code, body["reason"]) == (422, "Invalid")


async def test_field_manager_longer_than_128_bytes_is_invalid() -> None:
    async with serving() as s:
        code, body = await s.call("POST", "/api/v1/namespaces/default/pods?fieldManager=" + "m" * 129, POD)
        assert (code, body["message"]) == (
            422,
            'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
        )
        code, _ = await s.call("POST", "/api/v1/namespaces/default/pods?fieldManager=" + "m" * 128, POD)
        assert code == 201


async def test_dry_run_create_runs_every_check_of_a_real_create() -> None:
    async with serving() as s:
        for query in ("", "?dryRun=All"):  # a namespace that does not exist, then an existing name
            code, body = await s.call("POST", "/api/v1/namespaces/nowhere/pods" + query, POD)
            assert (code, body["reason"]) == (404, "NotFound"), (query, body)
            code, body = await s.call(
                "POST", "/api/v1/namespaces/default/pods" + query, {**POD, "metadata": {"name": "p0"}}
            )
            assert (code, body["reason"]) == (409, "AlreadyExists"), (query, body)
            with_rv = {**POD, "metadata": {"name": "rv", "resourceVersion": "5"}}
            code, body = await s.call("POST", "/api/v1/namespaces/default/pods" + query, with_rv)
            assert (code, body["reason"]) == (422, "Invalid"), (query, body)
