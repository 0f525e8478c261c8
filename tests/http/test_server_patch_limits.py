"""JSON patch bounds as upstream's (``maxJSONPatchOperations``, ``JSONPatchMaxCopyBytes``):
the patch bomb (``add`` then n x ``copy`` of the growing list) is refused before it grows."""

from __future__ import annotations

import json
import time

import pytest

from tests.http.server_support import serving

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

PATH = "/api/v1/namespaces/default/pods/p0"
JSON_PATCH = {"Content-Type": "application/json-patch+json"}


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
