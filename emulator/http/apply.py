"""Server-side apply (placeholder until patch lands): create-or-merge, no field ownership.

The real module (engineer "patch") replaces this file at merge with managed fields and
conflicts.
"""

from __future__ import annotations

from typing import Any

from emulator.api.errors import Conflict
from emulator.http.resources import Resource

__all__ = ["ApplyConflict", "FieldManagers"]


class ApplyConflict(Conflict):
    def __init__(self, message: str, causes: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.causes = causes or []


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict) or not isinstance(target, dict):
        return patch
    out = dict(target)
    for key, value in patch.items():
        out[key] = _merge(out.get(key), value)
    return out


class FieldManagers:
    def apply(
        self,
        resource: Resource,
        current: dict[str, Any] | None,
        applied: dict[str, Any],
        *,
        manager: str,
        force: bool,
        time: str,
    ) -> dict[str, Any]:
        if current is None:
            return applied
        result: dict[str, Any] = _merge(current, applied)
        return result

    def update(
        self,
        resource: Resource,
        old: dict[str, Any] | None,
        new: dict[str, Any],
        *,
        manager: str,
        operation: str,
        time: str,
    ) -> None:
        return None

    def managed_fields(self, uid: str) -> list[dict[str, Any]]:
        return []

    def forget(self, uid: str) -> None:
        return None
