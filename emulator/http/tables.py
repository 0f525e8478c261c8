"""Table answers (placeholder until tables lands): the default convertor only.

Upstream's ``DefaultTableConvertor``: Name and Created At. The real module (engineer
"tables") replaces this file at merge with upstream's printers per kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from emulator.api.codec import to_builtins
from emulator.http.resources import Resource

__all__ = ["table"]


def table(
    resource: Resource,
    objects: Sequence[Any],
    *,
    now: float,
    include_object: str = "Metadata",
    resource_version: str = "",
    continue_token: str = "",
    headers: bool = True,
) -> dict[str, Any]:
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": [obj.metadata.name, obj.metadata.creation_timestamp or ""]}
        if include_object == "Object":
            row["object"] = to_builtins(obj)
        elif include_object == "Metadata":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": to_builtins(obj.metadata),
            }
        rows.append(row)
    meta: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        meta["continue"] = continue_token
    out: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
    if headers:
        out["columnDefinitions"] = [
            {"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0},
            {"name": "Created At", "type": "date", "format": "", "description": "", "priority": 0},
        ]
    out["rows"] = rows
    return out
