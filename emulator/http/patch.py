"""PATCH bodies (placeholder until patch lands): JSON merge patch (RFC 7386) only.

The real module (engineer "patch") replaces this file at merge with strategic merge and
JSON patch as well.
"""

from __future__ import annotations

from typing import Any

import msgspec

from emulator.api.errors import BadRequest, UnsupportedMediaType
from emulator.http.resources import Resource

__all__ = ["apply_patch"]


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def apply_patch(resource: Resource, current: dict[str, Any], body: bytes, content_type: str) -> dict[str, Any]:
    if content_type not in (
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ):
        raise UnsupportedMediaType(f"the body of the request was in an unknown format: {content_type}")
    try:
        patch = msgspec.json.decode(body)
    except msgspec.DecodeError as err:
        raise BadRequest(str(err)) from None
    result: dict[str, Any] = _merge(current, patch)
    return result
