"""Pods that reference ResourceClaims (upstream ``validatePodResourceClaims`` and
``validateResourceClaimNames``, v1.34; cases from ``pkg/apis/core/validation/validation_test.go``'s
resource-claim tables), and ``spec.resourceClaims`` immutability on update."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.codec import ManifestError, load_manifests, to_builtins
from emulator.base.api.core import Namespace, PodResourceClaim
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock


def _pod(claims: list[dict[str, Any]], container_claims: list[dict[str, Any]], name: str = "pod") -> str:
    container: dict[str, Any] = {"name": "c", "image": "i"}
    if container_claims:
        container["resources"] = {"claims": container_claims}
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [container], "resourceClaims": claims},
    }
    return json.dumps(doc)


TEMPLATE = {"name": "gpu", "resourceClaimTemplateName": "gpu-template"}
CLAIM = {"name": "shared", "resourceClaimName": "shared-gpu"}


@pytest.mark.parametrize(
    ("text", "path", "detail"),
    [
        pytest.param(
            _pod([{"name": "gpu"}], []),
            "spec.resourceClaims[0]",
            'Invalid value: core.PodResourceClaim{Name:"gpu", ResourceClaimName:(*string)(nil), '
            "ResourceClaimTemplateName:(*string)(nil)}: must specify one of: `resourceClaimName`, "
            "`resourceClaimTemplateName`",
            id="no-source",
        ),
        pytest.param(
            _pod([{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}], []),
            "spec.resourceClaims[0]",
            'Invalid value: core.PodResourceClaim{Name:"gpu", ResourceClaimName:"a", ResourceClaimTemplateName:"b"}: '
            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            id="two-sources",
        ),
        pytest.param(_pod([TEMPLATE, TEMPLATE], []), "spec.resourceClaims[1].name", 'Duplicate value: "gpu"', id="dup"),
        pytest.param(
            _pod([{"resourceClaimName": "a"}], []), "spec.resourceClaims[0].name", "Required value", id="no-name"
        ),
        pytest.param(
            _pod([{"name": "Gpu", "resourceClaimName": "a"}], []), "spec.resourceClaims[0].name", None, id="bad-name"
        ),
        pytest.param(
            _pod([{"name": "gpu", "resourceClaimName": "A_b"}], []),
            "spec.resourceClaims[0].resourceClaimName",
            None,
            id="bad-claim-name",
        ),
        pytest.param(
            _pod([TEMPLATE], [], name="p" * 250),
            "spec.resourceClaims[0].name",
            None,
            id="final-claim-name-too-long",
        ),
        pytest.param(
            _pod([], [{"name": "gpu"}]),
            "spec.containers[0].resources.claims[0]",
            'Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty',
            id="container-claim-without-pod-claims",
        ),
        pytest.param(
            _pod([TEMPLATE, CLAIM], [{"name": "other"}]),
            "spec.containers[0].resources.claims[0]",
            'Not found: "other": must be one of the names in pod.spec.resourceClaims: gpu, shared',
            id="container-claim-unknown",
        ),
        pytest.param(
            _pod([TEMPLATE], [{"name": "gpu"}, {"name": "gpu"}]),
            "spec.containers[0].resources.claims[1]",
            'Duplicate value: "gpu"',
            id="container-claim-twice",
        ),
        pytest.param(
            _pod([TEMPLATE], [{"name": "gpu", "request": "Bad_Request"}]),
            "spec.containers[0].resources.claims[0].request",
            None,
            id="container-claim-bad-request",
        ),
    ],
)
def test_bad_claim_references(text: str, path: str, detail: str | None) -> None:
    with pytest.raises(ManifestError) as err:
        load_manifests(text, source="pod.yaml")
    assert err.value.path == path
    if detail is not None:
        assert err.value.detail == detail


def test_a_pod_with_claims_loads_and_round_trips() -> None:
    text = _pod([TEMPLATE, CLAIM], [{"name": "gpu"}, {"name": "shared", "request": "r"}])
    (pod,) = load_manifests(text, source="pod.yaml")
    assert pod.spec.resource_claims[0] == PodResourceClaim(name="gpu", resource_claim_template_name="gpu-template")
    assert to_builtins(pod)["spec"]["resourceClaims"] == [TEMPLATE, CLAIM]
    assert to_builtins(pod)["spec"]["containers"][0]["resources"] == {
        "claims": [{"name": "gpu"}, {"name": "shared", "request": "r"}]
    }


def test_a_pod_without_claims_encodes_as_before() -> None:
    (pod,) = load_manifests(_pod([], []), source="pod.yaml")
    out = to_builtins(pod)
    assert "resourceClaims" not in out["spec"]
    assert out["spec"]["containers"][0] == {"name": "c", "image": "i"}
    assert "resourceClaimStatuses" not in out.get("status", {})


def test_resource_claims_are_immutable() -> None:
    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    (pod,) = load_manifests(_pod([TEMPLATE], [{"name": "gpu"}]), source="pod.yaml")
    pod = api.create(pod)
    changed = replace(pod, spec=replace(pod.spec, resource_claims=[replace(pod.spec.resource_claims[0], name="x")]))
    with pytest.raises(Invalid) as err:
        api.update(changed)
    assert err.value.field == "spec"
    assert err.value.detail.startswith("Forbidden: pod updates may not change fields other than")
