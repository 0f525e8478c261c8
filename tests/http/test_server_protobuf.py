"""The protobuf bodies kubectl sends (drain's DeleteOptions and Eviction, the
objects of the ``create <kind>`` generators): decoded from upstream's envelope; a kind without
a message gets 415. ``data/kubectl-protobuf.json`` holds bodies kubectl 1.32 sent, with its command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from emulator.base.http.protobuf import MAGIC, ProtobufError, decode
from tests.builders import pod
from tests.http.server_support import new_api, serving

PB = {"Content-Type": "application/vnd.kubernetes.protobuf"}
KUBECTL_BODIES: dict[str, dict[str, str]] = json.loads(
    (Path(__file__).parent / "data" / "kubectl-protobuf.json").read_text()
)


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def vint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def ld(number: int, value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(raw)) + raw


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return MAGIC + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw) + ld(3, b"") + ld(4, b"")


DELETE_OPTIONS = vint(1, 7) + ld(2, ld(1, "u-1") + ld(2, "42")) + ld(4, "Foreground") + ld(5, "All")
EVICTION = ld(1, ld(1, "p0") + ld(3, "default")) + ld(2, vint(1, 0))
NAMESPACE = ld(1, ld(1, "foo") + ld(11, ld(1, "team") + ld(2, "a")))


@pytest.mark.parametrize(
    ("body", "want"),
    [
        pytest.param(
            envelope("v1", "DeleteOptions", DELETE_OPTIONS),
            {
                "apiVersion": "v1",
                "kind": "DeleteOptions",
                "gracePeriodSeconds": 7,
                "preconditions": {"uid": "u-1", "resourceVersion": "42"},
                "propagationPolicy": "Foreground",
                "dryRun": ["All"],
            },
            id="delete-options",
        ),
        pytest.param(
            envelope("policy/v1", "Eviction", EVICTION),
            {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": "p0", "namespace": "default"},
                "deleteOptions": {"gracePeriodSeconds": 0},
            },
            id="eviction",
        ),
        pytest.param(
            envelope("v1", "Namespace", NAMESPACE),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "foo", "labels": {"team": "a"}}},
            id="namespace",
        ),
        pytest.param(
            # kubectl create secret generic s --from-literal=k=\x00\x01 (map<string,bytes> data)
            envelope("v1", "Secret", ld(1, ld(1, "s")) + ld(2, ld(1, "k") + ld(2, b"\x00\x01")) + ld(3, "Opaque")),
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "AAE="}, "type": "Opaque"},
            id="secret-bytes-map",
        ),
        pytest.param(
            envelope("v1", "PersistentVolumeClaim", ld(1, ld(1, "pvc"))),
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc"}},
            id="any-served-kind",
        ),
        pytest.param(envelope("example.com/v1", "Widget", ld(1, ld(1, "w"))), None, id="kind-without-message"),
        pytest.param(
            envelope("v1", "DeleteOptions", vint(1, -1)),
            {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": -1},
            id="negative-int64",
        ),
    ],
)
def test_decode(body: bytes, want: dict[str, Any] | None) -> None:
    assert decode(body) == want


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(b"{}", "missing the k8s protobuf magic number", id="no-magic"),
        pytest.param(MAGIC + b"\x0a\x10ab", "truncated field", id="truncated"),
        pytest.param(MAGIC + b"\x0b", "unsupported wire type 3", id="group"),
    ],
)
def test_decode_refused(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message):
        decode(body)


@pytest.mark.asyncio
@pytest.mark.real_time
async def test_kubectl_protobuf_bodies_over_http() -> None:
    api = new_api(pods=1)
    api.create(pod("bound", node="n1"))
    async with serving(api) as s:
        code, out = await s.call(
            "DELETE",
            "/api/v1/namespaces/default/pods/bound",
            raw=envelope("v1", "DeleteOptions", vint(1, 7)),
            headers=PB,
        )
        assert (code, out["metadata"]["deletionGracePeriodSeconds"]) == (200, 7)
        code, out = await s.call(
            "POST",
            "/api/v1/namespaces/default/pods/p0/eviction",
            raw=envelope("policy/v1", "Eviction", EVICTION),
            headers=PB,
        )
        assert (code, out["status"]) == (201, "Success")
        code, out = await s.call("POST", "/api/v1/namespaces", raw=envelope("v1", "Namespace", NAMESPACE), headers=PB)
        assert (code, out["metadata"]["name"], out["metadata"]["labels"]["team"]) == (201, "foo", "a")
        widget = envelope("example.com/v1", "Widget", b"")
        code, out = await s.call("POST", "/api/v1/namespaces/default/pods", raw=widget, headers=PB)
        assert (code, out["reason"]) == (415, "UnsupportedMediaType")


def _template(name: str, image: str, **spec: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": name, "image": image, **spec.pop("container", {})}], **spec}}


@pytest.mark.parametrize(
    ("generator", "want"),
    [
        pytest.param(
            "deployment",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "x", "labels": {"app": "x"}},
                "spec": {
                    "replicas": 3,
                    "selector": {"matchLabels": {"app": "x"}},
                    "template": {
                        "metadata": {"labels": {"app": "x"}},
                        **_template("nginx", "nginx", container={"ports": [{"containerPort": 80}]}),
                    },
                },
            },
            id="create-deployment",
        ),
        pytest.param(
            "job",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j1"},
                "spec": {
                    "template": _template("j1", "busybox", container={"command": ["sleep", "5"]}, restartPolicy="Never")
                },
            },
            id="create-job",
        ),
        pytest.param(
            "cronjob",
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": "c1"},
                "spec": {
                    "schedule": "*/1 * * * *",
                    "jobTemplate": {
                        "metadata": {"name": "c1"},
                        "spec": {"template": _template("c1", "busybox", restartPolicy="OnFailure")},
                    },
                },
            },
            id="create-cronjob",
        ),
        pytest.param(
            "service",
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "s1", "labels": {"app": "s1"}},
                "spec": {
                    "ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                    "selector": {"app": "s1"},
                    "type": "ClusterIP",
                },
            },
            id="create-service-clusterip",
        ),
        pytest.param(
            "pdb",
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "p1"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
            },
            id="create-pdb",
        ),
        pytest.param(
            "priorityclass",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "pc1"},
                "value": 100,
                "description": "hi",
                "preemptionPolicy": "PreemptLowerPriority",
            },
            id="create-priorityclass",
        ),
    ],
)
def test_decode_what_kubectl_create_sends(generator: str, want: dict[str, Any]) -> None:
    """Upstream writes every non-pointer field, zeros included; the decoded dict is the JSON
    kubectl would have sent (zeros of non-pointer fields left out, as ``omitempty`` does)."""
    assert decode(bytes.fromhex(KUBECTL_BODIES[generator]["body"])) == want


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param(ld(2, vint(1, 0)), {"spec": {"replicas": 0}}, id="pointer-zero-kept"),
        pytest.param(ld(2, vint(5, 0) + vint(7, 0)), {}, id="plain-zeros-dropped"),
        pytest.param(
            ld(2, ld(4, ld(1, "RollingUpdate") + ld(2, ld(1, vint(1, 1) + ld(3, "25%")) + ld(2, vint(2, 0))))),
            {
                "spec": {
                    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 0}}
                }
            },
            id="int-or-string",
        ),
        pytest.param(ld(2, ld(99, "x") + vint(98, 1)), {}, id="unknown-fields-skipped"),
    ],
)
def test_decode_deployment_fields(raw: bytes, want: dict[str, Any]) -> None:
    assert decode(envelope("apps/v1", "Deployment", raw)) == {"apiVersion": "apps/v1", "kind": "Deployment", **want}
