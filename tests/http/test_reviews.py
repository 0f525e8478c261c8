"""``kubectl auth can-i`` / ``auth whoami`` (``emulator.base.http.reviews``): always allowed, no RBAC."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from emulator.base.api.errors import BadRequest, Invalid
from emulator.base.http.protobuf import decode
from emulator.base.http.reviews import review
from emulator.base.http.routing import Discovery, route
from tests.http.server_support import new_api, serving

AUTHZ = ("authorization.k8s.io", "v1")
KUBECTL_BODIES = json.loads((Path(__file__).parent / "data" / "kubectl-protobuf.json").read_text())
CAN_I = {"resourceAttributes": {"namespace": "kube-system", "verb": "get", "resource": "pods", "subresource": "log"}}


def test_kubectl_can_i_body_decodes() -> None:
    body = decode(bytes.fromhex(KUBECTL_BODIES["selfsubjectaccessreview"]["body"]))
    assert body == {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": CAN_I}


def test_access_review_is_allowed_and_echoes_the_spec() -> None:
    out = review(*AUTHZ, "selfsubjectaccessreviews", {"spec": CAN_I})
    assert (out["kind"], out["apiVersion"], out["spec"]) == (
        "SelfSubjectAccessReview",
        "authorization.k8s.io/v1",
        CAN_I,
    )
    assert out["status"]["allowed"] is True


def test_rules_review_lists_the_wildcard_rule() -> None:
    out = review(*AUTHZ, "selfsubjectrulesreviews", {"spec": {"namespace": "default"}})
    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in out["status"]["resourceRules"]
    assert out["status"]["nonResourceRules"] == [{"verbs": ["*"], "nonResourceURLs": ["*"]}]


def test_whoami() -> None:
    out = review("authentication.k8s.io", "v1", "selfsubjectreviews", None)
    assert out["status"]["userInfo"] == {
        "username": "kubernetes-admin",
        "groups": ["system:masters", "system:authenticated"],
    }


@pytest.mark.parametrize(
    ("body", "error", "message"),
    [
        pytest.param({"spec": {}}, Invalid, "exactly one of nonResourceAttributes or resourceAttributes", id="empty"),
        pytest.param(
            {"kind": "Pod", "spec": CAN_I},
            BadRequest,
            r"^the kind in the data \(Pod\) does not match the expected kind \(SelfSubjectAccessReview\)$",
            id="wrong-kind",
        ),
    ],
)
def test_access_review_refused(body: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        review(*AUTHZ, "selfsubjectaccessreviews", body)


def test_route() -> None:
    assert route("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") == Discovery(
        "review", group="authorization.k8s.io", version="v1", path="selfsubjectaccessreviews"
    )


@pytest.mark.asyncio
@pytest.mark.real_time
async def test_reviews_over_http() -> None:
    async with serving(new_api(pods=0)) as s:
        path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
        code, out = await s.call("POST", path, {"spec": CAN_I})
        assert (code, out["status"]["allowed"]) == (201, True)
        code, out = await s.call("GET", path)
        assert (code, out["reason"]) == (405, "MethodNotAllowed")
