"""Hostile values through the HTTP door (issue 24): huge durations, bad headers, deep or
out-of-range JSON, non-UTF-8 protobuf — each a 4xx answer (or a clamped value), never a 500
nor an exception that escapes into the clock."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from emulator.base.runtime.clock import LoopClock, PacedClock, format_timestamp
from tests.http.server_support import new_api, serving
from tests.http.test_server_protobuf import PB, envelope, ld

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

INT64_MAX = 2**63 - 1


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}], **spec},
    }


async def test_a_pod_with_the_longest_grace_period_is_deleted_gracefully() -> None:
    async with serving() as s:
        status, body = await s.call(
            "POST", "/api/v1/namespaces/default/pods", _pod("slow", terminationGracePeriodSeconds=INT64_MAX)
        )
        assert status == 201, body
        status, body = await s.call("DELETE", "/api/v1/namespaces/default/pods/slow")
        assert status == 200, body
        assert body["metadata"]["deletionGracePeriodSeconds"] == INT64_MAX
        assert body["metadata"]["deletionTimestamp"] == "9999-12-31T23:59:59Z"
        status, body = await s.call(
            "DELETE", "/api/v1/namespaces/default/pods/slow", {"kind": "DeleteOptions", "gracePeriodSeconds": INT64_MAX}
        )
        assert status == 200, body


async def test_timestamps_clamp_to_the_range_of_metav1_time() -> None:
    assert format_timestamp(float(INT64_MAX)) == "9999-12-31T23:59:59Z"
    assert format_timestamp(1e300) == "9999-12-31T23:59:59Z"
    assert format_timestamp(-1e300) == "0001-01-01T00:00:00Z"
    assert format_timestamp(math.nan) == "9999-12-31T23:59:59Z"


@pytest.mark.parametrize("seconds", [float(INT64_MAX), 1e300, math.inf, math.nan])
async def test_a_sleep_beyond_the_clocks_range_waits_forever_without_overflow(seconds: float) -> None:
    for clock in (LoopClock(virtual=False), PacedClock(virtual=False, speed=10)):
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(clock.sleep(seconds), 0.05)


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**70])
async def test_integers_beyond_int64_are_refused_with_400(value: int) -> None:
    async with serving() as s:
        status, body = await s.call(
            "POST", "/api/v1/namespaces/default/pods", _pod("big", terminationGracePeriodSeconds=value)
        )
        assert status == 400, body
        assert "int64" in body["message"]
        status, body = await s.call("POST", "/api/v1/namespaces/default/pods", _pod("prio", priority=value))
        assert status == 400, body
        names = {p.metadata.name for p in s.api.list("Pod", namespace="default")[0]}
        assert not names & {"big", "prio"}


async def test_a_bearer_token_that_is_not_utf8_is_401() -> None:
    async with serving(new_api(), token="secret") as s:
        host, port = s.client.server.host, s.client.server.port
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(
                b"GET /api/v1/pods HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\r\nConnection: close\r\n\r\n"
            )
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 10)
        finally:
            writer.close()
        assert answer.startswith(b"HTTP/1.1 401"), answer[:200]


async def test_a_very_deep_json_body_is_400() -> None:
    async with serving() as s:
        raw = b'{"metadata":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        status, body = await s.call(
            "POST", "/api/v1/namespaces/default/pods", raw=raw, headers={"Content-Type": "application/json"}
        )
        assert status == 400, body


@pytest.mark.parametrize("depth", [11_000, 100_000])
async def test_a_json_patch_with_a_deep_value_is_400(depth: int) -> None:
    async with serving() as s:
        deep = b"[" * depth + b"0" + b"]" * depth
        raw = b'[{"op":"add","path":"/spec/x","value":' + deep + b"}]"
        for content_type in ("application/json-patch+json", "application/merge-patch+json"):
            body = raw if content_type.startswith("application/json") else b'{"spec":{"x":' + deep + b"}}"
            status, answer = await s.call(
                "PATCH", "/api/v1/namespaces/default/pods/p0", raw=body, headers={"Content-Type": content_type}
            )
            assert status == 400, answer


async def test_a_protobuf_namespace_with_a_non_utf8_name_is_422() -> None:
    body = envelope("v1", "Namespace", ld(1, ld(1, b"bad\xffname")))
    async with serving() as s:
        status, answer = await s.call("POST", "/api/v1/namespaces", raw=body, headers=PB)
        assert status == 422, answer
        assert answer["reason"] == "Invalid"


@pytest.mark.parametrize(
    ("literal", "content_type", "message"),
    [
        ("NaN", "application/merge-patch+json", "Invalid JSON Patch"),
        ("Infinity", "application/merge-patch+json", "Invalid JSON Patch"),
        ("-Infinity", "application/merge-patch+json", "Invalid JSON Patch"),
        ("NaN", "application/strategic-merge-patch+json", "invalid character 'N' looking for beginning of value"),
        ("-Infinity", "application/strategic-merge-patch+json", "invalid character 'I' in numeric literal"),
    ],
)
async def test_nan_and_infinity_in_a_patch_are_400_and_nothing_is_stored(
    literal: str, content_type: str, message: str
) -> None:
    body = b'{"metadata": {"labels": {"a": "b"}}, "spec": {"activeDeadlineSeconds": ' + literal.encode() + b"}}"
    async with serving() as s:
        before = s.api.revision
        status, answer = await s.call(
            "PATCH", "/api/v1/namespaces/default/pods/p0", raw=body, headers={"Content-Type": content_type}
        )
        assert (status, answer["reason"]) == (400, "BadRequest"), answer
        assert message in answer["message"]
        assert s.api.revision == before
    ops = b'[{"op": "add", "path": "/metadata/labels/x", "value": ' + literal.encode() + b"}]"
    async with serving() as s:
        status, answer = await s.call(
            "PATCH",
            "/api/v1/namespaces/default/pods/p0",
            raw=ops,
            headers={"Content-Type": "application/json-patch+json"},
        )
        assert status == 400, answer
