"""Answers in protobuf and YAML through the HTTP door: content negotiation as kube-apiserver's
(q-values, ``*/*``, 406), objects, lists, errors and watch streams in upstream's protobuf
encoding, JSON unchanged for JSON clients."""

from __future__ import annotations

import json
import struct
from typing import Any

import pytest
import yaml

from emulator.base.apiserver.server import ServerSettings
from emulator.base.http.negotiate import JSON, PROTOBUF, YAML, negotiate, parse_accept
from emulator.base.http.protobuf import decode, fields
from tests.builders import pod
from tests.http.server_support import TABLE, Served, new_api, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]
PB = "application/vnd.kubernetes.protobuf"


def stripped(value: Any) -> Any:
    """JSON without nulls and zero values (protobuf reads an unset non-pointer field as zero)."""
    if isinstance(value, dict):
        out = {k: stripped(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, "", 0, False, {}, [])}
    if isinstance(value, list):
        return [stripped(v) for v in value]
    return value


async def get(s: Served, path: str, accept: str) -> tuple[int, str, bytes]:
    async with s.client.get(path, headers={"Accept": accept}) as resp:
        return resp.status, resp.headers["Content-Type"], await resp.read()


OBJECTS: list[tuple[str, dict[str, Any]]] = [
    (
        "/apis/apps/v1/namespaces/default/deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}]},
                },
            },
        },
    ),
    (
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "l"},
            "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40, "renewTime": "2024-01-01T00:00:00.250000Z"},
        },
    ),
    (
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": -5},
    ),
    (
        "/apis/batch/v1/namespaces/default/jobs",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j"},
            "spec": {
                "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
            },
        },
    ),
]
READS = [
    "/api/v1/namespaces/default/pods/p0",
    "/api/v1/namespaces/default/pods",
    "/api/v1/nodes/n1",
    "/api/v1/nodes",
    "/apis/apps/v1/namespaces/default/deployments/web",
    "/apis/coordination.k8s.io/v1/namespaces/default/leases/l",
    "/apis/coordination.k8s.io/v1/leases",
    "/apis/scheduling.k8s.io/v1/priorityclasses/high",
    "/apis/batch/v1/namespaces/default/jobs/j",
    "/apis/batch/v1/jobs",
]


async def test_objects_and_lists_in_protobuf_decode_to_their_json() -> None:
    async with serving() as s:
        for path, obj in OBJECTS:
            code, out = await s.call("POST", path, obj)
            assert code == 201, out
        for path in READS:
            code, ctype, body = await get(s, path, PB)
            assert (code, ctype) == (200, PB), path
            assert body.startswith(b"k8s\x00")
            jcode, jtype, jbody = await get(s, path, "application/json")
            assert (jcode, jtype) == (200, JSON)
            want = json.loads(jbody)
            for item in want.get("items", []):  # a list's items carry no type meta in protobuf
                del item["apiVersion"], item["kind"]
            assert stripped(decode(body)) == stripped(want), path


async def test_json_answers_are_unchanged() -> None:
    async with serving() as s:
        for accept in ("", "application/json", "*/*", f"application/json, {PB};q=0.5"):
            code, ctype, body = await get(s, "/api/v1/namespaces/default/pods/p0", accept)
            assert (code, ctype) == (200, JSON)
            assert body == s.http.verbs.handle(_get_call("/api/v1/namespaces/default/pods/p0")).body
        code, ctype, _ = await get(s, "/api/v1/pods", TABLE)
        assert (code, ctype) == (200, JSON)
        code, ctype, body = await get(s, "/api/v1/pods", f"{PB};as=Table;v=v1;g=meta.k8s.io, {PB}")
        assert (code, ctype, json.loads(body)["kind"]) == (200, JSON, "Table")


def _get_call(path: str) -> Any:
    from emulator.base.http.calls import Call
    from emulator.base.http.routing import route

    target = route(path)
    return Call(method="GET", target=target, query={}, body=b"", content_type="", agent="kubectl")  # type: ignore[arg-type]


async def test_yaml_answers_and_406() -> None:
    async with serving() as s:
        code, ctype, body = await get(s, "/api/v1/namespaces/default/pods/p0", "application/yaml")
        assert (code, ctype) == (200, YAML)
        _, _, jbody = await get(s, "/api/v1/namespaces/default/pods/p0", "application/json")
        assert yaml.safe_load(body) == json.loads(jbody)
        code, ctype, body = await get(s, "/api/v1/namespaces/default/pods/p0", "text/html")
        assert (code, ctype) == (406, JSON)
        assert json.loads(body)["message"] == (
            "only the following media types are accepted: application/json, application/yaml, " + PB
        )
        code, ctype, body = await get(s, "/api/v1/pods?watch=true", "application/yaml")
        assert (code, json.loads(body)["reason"]) == (406, "NotAcceptable")


async def test_errors_in_protobuf() -> None:
    async with serving() as s:
        code, ctype, body = await get(s, "/api/v1/namespaces/default/pods/nope", PB)
        assert (code, ctype) == (404, PB)
        status = decode(body)
        assert status is not None
        assert (status["kind"], status["code"], status["reason"]) == ("Status", 404, "NotFound")
        assert status["details"] == {"name": "nope", "kind": "pods"}


async def read_frame(resp: Any) -> tuple[bytes, dict[str, Any]]:
    """(type, object) of the next protobuf watch frame."""
    (size,) = struct.unpack(">I", await resp.content.readexactly(4))
    event = dict(fields(await resp.content.readexactly(size)))
    raw = event[2]
    assert isinstance(raw, bytes)
    envelope = dict(fields(raw))[1]
    assert isinstance(envelope, bytes)
    obj = decode(envelope)
    assert obj is not None
    return event[1], obj  # type: ignore[return-value]


async def test_watch_410_in_band_in_protobuf() -> None:
    api = new_api(settings=ServerSettings(history_size=2, event_fresh_duration=0))
    for i in range(5):
        api.create(pod(f"x{i}"))
    path = "/api/v1/pods?watch=true&resourceVersion=1"
    async with serving(api) as s, s.client.get(path, headers={"Accept": PB}) as resp:
        kind, status = await read_frame(resp)
        assert (kind, status["kind"], status["code"], status["reason"]) == (b"ERROR", "Status", 410, "Expired")
        assert await resp.content.read() == b""


async def test_watch_in_protobuf_frames() -> None:
    async with serving() as s:
        path = "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=5"
        async with s.client.get(path, headers={"Accept": f"{PB}, */*"}) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == f"{PB};stream=watch"
            names = []
            for _ in range(2):
                kind, obj = await read_frame(resp)
                assert (kind, obj["kind"]) == (b"ADDED", "Pod")
                names.append(obj["metadata"]["name"])
            assert names == ["p0", "p1"]


@pytest.mark.parametrize(
    ("accept", "want"),
    [
        ("", JSON),
        ("*/*", JSON),
        ("application/*", JSON),
        (f"{PB}, */*", PROTOBUF),
        (f"{PB},application/json", PROTOBUF),
        (f"application/json;q=0.9, {PB}", PROTOBUF),
        (f"*/*, {PB};q=0.5", JSON),
        (f"{PB};q=0, application/yaml", YAML),
        ("application/yaml;q=0.5, application/json;q=0.8", JSON),
    ],
)
async def test_negotiate(accept: str, want: str) -> None:
    assert negotiate(accept) == want


async def test_parse_accept_orders_by_q_then_specificity() -> None:
    got = [(c.type, c.subtype) for c in parse_accept("*/*, text/*;q=1, application/json;q=0.9, application/yaml")]
    assert got == [("application", "yaml"), ("text", "*"), ("*", "*"), ("application", "json")]


async def test_a_pod_created_from_protobuf_answered_in_protobuf() -> None:
    from emulator.base.http.protobuf_encode import encode_envelope

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pb", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]},
    }
    body = encode_envelope(pod)
    assert body is not None
    async with serving() as s:
        headers = {"Content-Type": PB, "Accept": f"{PB},application/json"}
        async with s.client.post("/api/v1/namespaces/default/pods", data=body, headers=headers) as resp:
            assert (resp.status, resp.headers["Content-Type"]) == (201, PB)
            created = decode(await resp.read())
        assert created is not None
        assert created["metadata"]["labels"] == {"a": "b"}
        assert created["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}
        assert s.api.get("Pod", "pb", "default").metadata.labels == {"a": "b"}
