"""Unknown fields through ``serve``, as upstream's ``fieldValidation`` (default ``Warn``):
accepted, dropped, and one ``Warning: 299 - "unknown field \\"spec.x\\""`` header per field
(``addStrictDecodingWarnings``, staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go);
``Strict`` is upstream's 400 ``strict decoding error``; ``Ignore`` says nothing. Bounded: 10,000
unknown fields are ``MAX_UNKNOWN`` warnings and one ``and N more``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from emulator.base.api.unknownfields import MAX_UNKNOWN, prune_unknown, warning_texts
from tests.http.server_support import serving

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

PODS = "/api/v1/namespaces/default/pods"


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "nginx", "env": [{"name": "A", "value": "1", "valu": "x"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container], **spec}}


async def _post(s: Any, path: str, body: Any) -> tuple[int, list[str], Any]:
    async with s.client.post(path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}) as r:
        return r.status, r.headers.getall("Warning", []), json.loads(await r.read())


async def test_warn_is_the_default_and_the_fields_are_dropped() -> None:
    async with serving() as s:
        code, warnings, out = await _post(s, PODS, _pod("a", x=1))
        assert code == 201, out
        assert warnings == [
            '299 - "unknown field \\"spec.containers[0].env[0].valu\\""',
            '299 - "unknown field \\"spec.x\\""',
        ]
        assert "x" not in out["spec"]
        assert out["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]
        async with s.client.get(f"{PODS}/a") as r:
            assert "Warning" not in r.headers


@pytest.mark.parametrize(
    ("mode", "code", "warned"),
    [("Warn", 201, True), ("Ignore", 201, False), ("Strict", 400, False), ("Bogus", 400, False)],
)
async def test_field_validation_modes(mode: str, code: int, warned: bool) -> None:
    async with serving() as s:
        got, warnings, out = await _post(s, f"{PODS}?fieldValidation={mode}", _pod("a", x=1))
        assert got == code, out
        assert bool(warnings) is warned
        if mode == "Strict":
            assert out["message"] == (
                'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                'unknown field "spec.containers[0].env[0].valu", unknown field "spec.x"'
            )


async def test_ten_thousand_unknown_fields_do_not_flood() -> None:
    async with serving() as s:
        code, warnings, _ = await _post(s, PODS, _pod("a", **{f"f{i}": i for i in range(10_000)}))
        assert code == 201
        assert len(warnings) == MAX_UNKNOWN + 1
        assert warnings[-1] == f'299 - "and {10_001 - MAX_UNKNOWN} more unknown fields"'


async def test_known_fields_of_every_depth_are_kept() -> None:
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"any": "key"}, "annotations": {"a": "b"}},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "livenessProbe": {"httpGet": {"path": "/", "port": "http"}},
                            "resources": {"limits": {"cpu": "1"}},
                        }
                    ],
                    "volumes": [{"name": "v", "configMap": {"name": "cm", "items": [{"key": "k", "path": "p"}]}}],
                },
            },
        },
    }
    pruned, found = prune_unknown(doc)
    assert pruned is doc
    assert warning_texts(found) == []
