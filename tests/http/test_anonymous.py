"""Anonymous requests (no bearer token) are ``system:anonymous``, whom upstream's RBAC lets
read only health and version: everything else is 403 with RBAC's message; a wrong token
stays 401."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.base.http.anonymous import attributes
from tests.http.server_support import serving

_ANON = 'User "system:anonymous" cannot'


@pytest.mark.asyncio
@pytest.mark.real_time
@pytest.mark.parametrize(
    ("method", "path", "message", "details"),
    [
        pytest.param(
            "GET",
            "/api/v1/namespaces/default/pods",
            f'pods is forbidden: {_ANON} list resource "pods" in API group "" in the namespace "default"',
            {"kind": "pods"},
            id="list",
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/default/pods/p0",
            f'pods "p0" is forbidden: {_ANON} get resource "pods" in API group "" in the namespace "default"',
            {"name": "p0", "kind": "pods"},
            id="get",
        ),
        pytest.param(
            "GET",
            "/api/v1/nodes?watch=true",
            f'nodes is forbidden: {_ANON} watch resource "nodes" in API group "" at the cluster scope',
            {"kind": "nodes"},
            id="watch",
        ),
        pytest.param(
            "GET",
            "/api/v1/watch/namespaces/default/pods?fieldSelector=metadata.name%3Dp1",
            f'pods "p1" is forbidden: {_ANON} watch resource "pods" in API group "" in the namespace "default"',
            {"name": "p1", "kind": "pods"},
            id="legacy-watch-of-one",
        ),
        pytest.param(
            "POST",
            "/apis/apps/v1/namespaces/default/deployments",
            f'deployments.apps is forbidden: {_ANON} create resource "deployments" in API group "apps" '
            'in the namespace "default"',
            {"group": "apps", "kind": "deployments"},
            id="create",
        ),
        pytest.param(
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/d/scale",
            f'deployments.apps "d" is forbidden: {_ANON} patch resource "deployments/scale" in API group "apps" '
            'in the namespace "default"',
            {"name": "d", "group": "apps", "kind": "deployments"},
            id="subresource",
        ),
        pytest.param(
            "DELETE",
            "/api/v1/namespaces/default/pods",
            f'pods is forbidden: {_ANON} deletecollection resource "pods" in API group "" in the namespace "default"',
            {"kind": "pods"},
            id="deletecollection",
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/kube-system",
            f'namespaces "kube-system" is forbidden: {_ANON} get resource "namespaces" in API group "" '
            'in the namespace "kube-system"',
            {"name": "kube-system", "kind": "namespaces"},
            id="a-namespace",
        ),
        pytest.param(
            "GET",
            "/api/v1/foos",
            f'foos is forbidden: {_ANON} list resource "foos" in API group "" at the cluster scope',
            {"kind": "foos"},
            id="unknown-resource-is-forbidden-not-404",
        ),
        pytest.param("GET", "/api", f'forbidden: {_ANON} get path "/api"', {}, id="discovery"),
        pytest.param("GET", "/apis/apps/v1", f'forbidden: {_ANON} get path "/apis/apps/v1"', {}, id="group"),
        pytest.param("GET", "/livez/ping", f'forbidden: {_ANON} get path "/livez/ping"', {}, id="a-health-check"),
        pytest.param("POST", "/version", f'forbidden: {_ANON} post path "/version"', {}, id="post-version"),
        pytest.param("GET", "/", f'forbidden: {_ANON} get path "/"', {}, id="root"),
    ],
)
async def test_anonymous_is_forbidden_with_rbacs_message(
    method: str, path: str, message: str, details: dict[str, Any]
) -> None:
    async with serving(token="sekret") as s:
        code, out = await s.call(method, path, {} if method in ("POST", "PATCH") else None)
        assert (code, out) == (
            403,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": message,
                "reason": "Forbidden",
                "details": details,
                "code": 403,
            },
        )


@pytest.mark.asyncio
@pytest.mark.real_time
@pytest.mark.parametrize("header", [None, "Basic eDp5", "Bearer "])
async def test_no_token_is_anonymous_but_a_wrong_one_is_401(header: str | None) -> None:
    async with serving(token="sekret") as s:
        anon_headers = {"Authorization": header} if header else None
        assert (await s.call("GET", "/api/v1/nodes", headers=anon_headers))[0] == 403
        assert (await s.call("GET", "/version", headers=anon_headers))[0] == 200
        code, out = await s.call("GET", "/api/v1/nodes", headers={"Authorization": "Bearer wrong"})
        assert (code, out["reason"]) == (401, "Unauthorized")


@pytest.mark.asyncio
@pytest.mark.real_time
async def test_without_a_token_setting_nothing_is_forbidden() -> None:
    async with serving() as s:
        assert (await s.call("GET", "/api/v1/nodes"))[0] == 200


def test_attributes_of_a_watch_prefix_without_resource_is_a_path() -> None:
    assert not attributes("GET", "/api/v1/watch", {}).resource_request
