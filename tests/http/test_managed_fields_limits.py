"""``metadata.managedFields`` a client sends (issue 24 #7): each entry validated as upstream's
``ValidateManagedFields`` (422, nothing stored), and at most ten Update managers kept
(``DefaultMaxUpdateManagers``; older ones merged into ``ancient-changes``), so 20,000 entries
leave a record of ten."""

from __future__ import annotations

import json
from typing import Any

import pytest

from emulator.base.http.apply import FieldManagers
from emulator.base.http.resources import find
from tests.http.server_support import serving

pytestmark = [pytest.mark.real_time]

PATH = "/api/v1/namespaces/default/pods/p0"
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
POD = find("", "v1", "pods")


def _entry(manager: str, time: str = "2024-01-01T00:00:00Z", **extra: Any) -> dict[str, Any]:
    row = {"manager": manager, "operation": "Update", "apiVersion": "v1", "time": time, "fieldsType": "FieldsV1"}
    row["fieldsV1"] = {"f:metadata": {"f:labels": {f"f:{manager}": {}}}}
    return {**row, **extra}


async def _set_managed(s: Any, entries: list[dict[str, Any]]) -> tuple[int, Any]:
    ops = [{"op": "add", "path": "/metadata/managedFields", "value": entries}]
    return await s.call("PATCH", PATH, raw=json.dumps(ops).encode(), headers=JSON_PATCH)


@pytest.mark.parametrize(
    ("entry", "field", "detail"),
    [
        (
            _entry("m", operation="Foo"),
            "metadata.managedFields[0].operation",
            'Invalid value: "Foo": must be `Apply` or `Update`',
        ),
        (
            _entry("m", fieldsType="FieldsV2"),
            "metadata.managedFields[0].fieldsType",
            'Invalid value: "FieldsV2": must be `FieldsV1`',
        ),
        (_entry("m" * 129), "metadata.managedFields[0].manager", "Too long: may not be more than 128 bytes"),
        (
            _entry("m", subresource="s" * 257),
            "metadata.managedFields[0].subresource",
            "Too long: may not be more than 256 bytes",
        ),
    ],
)
@pytest.mark.asyncio
async def test_an_invalid_entry_is_422_and_nothing_is_stored(entry: dict[str, Any], field: str, detail: str) -> None:
    async with serving() as s:
        before = s.api.revision
        code, body = await _set_managed(s, [entry])
        assert (code, body["reason"]) == (422, "Invalid"), body
        assert body["message"] == f'Pod "p0" is invalid: {field}: {detail}'
        assert body["details"]["causes"][0]["field"] == field
        assert s.api.revision == before


@pytest.mark.asyncio
async def test_several_invalid_entries_are_listed() -> None:
    async with serving() as s:
        code, body = await _set_managed(s, [_entry("a", operation=""), _entry("b"), _entry("c", operation="X")])
        assert code == 422
        assert body["message"].startswith(
            'Pod "p0" is invalid: [metadata.managedFields[0].operation: Invalid value: ""'
        )
        assert "metadata.managedFields[2].operation" in body["message"]


@pytest.mark.asyncio
@pytest.mark.filterwarnings("ignore:Sending a large body:ResourceWarning")
async def test_twenty_thousand_entries_leave_ten_update_managers() -> None:
    entries = [
        {"manager": f"m{i:05d}", "operation": "Update", "apiVersion": "v1", "fieldsV1": {"f:a": {}}}
        for i in range(20_000)
    ]
    async with serving() as s:
        code, body = await _set_managed(s, entries)
        assert code == 200, body
        managed = body["metadata"]["managedFields"]
        assert [e["operation"] for e in managed] == ["Update"] * 10
        assert managed[0]["manager"] == "ancient-changes"
        code, body = await s.call("GET", PATH)
        assert body["metadata"]["managedFields"] == managed


def _update(managers: FieldManagers, name: str, label: str, time: str, old: dict[str, Any] | None) -> dict[str, Any]:
    labels = {**((old or {}).get("metadata", {}).get("labels") or {}), label: "x"}
    new = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d", "uid": "u", "labels": labels}}
    managers.update(POD, old, new, manager=name, operation="Update", time=time)
    return new


def test_the_oldest_update_managers_merge_into_ancient_changes() -> None:
    managers = FieldManagers()
    obj: dict[str, Any] | None = None
    for i in range(12):
        obj = _update(managers, f"m{i:02d}", f"l{i}", f"2024-01-01T00:00:{i:02d}Z", obj)
    rows = managers.managed_fields("u")
    names = [r["manager"] for r in rows]
    assert len(rows) == 10
    assert names[0] == "ancient-changes"  # m00, m01 and m02 merged, with m02's time
    assert rows[0]["time"] == "2024-01-01T00:00:02Z"
    assert set(rows[0]["fieldsV1"]["f:metadata"]["f:labels"]) - {"."} == {"f:l0", "f:l1", "f:l2"}
    assert names[1:] == [f"m{i:02d}" for i in range(3, 12)]
    applied = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d", "labels": {"a": "1"}}}
    managers.apply(POD, obj, applied, manager="ssa", force=False, time="2024-01-01T00:01:00Z")
    assert len(managers.managed_fields("u")) == 11  # Apply managers are not capped
