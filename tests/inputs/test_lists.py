"""The List flattener: item paths, and a document whose expansion passes the limit refused
before it is expanded (time proportional to the file, not to the expansion)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from emulator.base.inputs import MAX_ITEMS, InputError, flatten_list, is_list, load_documents
from tests.inputs.hostile import alias_bomb


class _MyError(InputError):
    pass


POD: dict[str, Any] = {"kind": "Pod", "metadata": {"name": "p"}}


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        pytest.param({"kind": "List", "items": []}, True, id="list"),
        pytest.param({"kind": "List"}, True, id="list-without-items"),
        pytest.param({"kind": "PodList", "items": []}, True, id="typed-list"),
        pytest.param({"kind": "PodList"}, False, id="typed-list-without-items"),
        pytest.param({"kind": "Pod", "items": []}, False, id="pod-with-items"),
        pytest.param(["kind", "List"], False, id="not-a-mapping"),
    ],
)
def test_is_list(doc: Any, expected: bool) -> None:
    assert is_list(doc) is expected


def test_paths_of_nested_items() -> None:
    inner = {"kind": "List", "items": [POD, POD]}
    doc = {"kind": "List", "items": [POD, inner, POD]}
    got = [path for path, _ in flatten_list(doc, source="f", path="documents[2]")]
    assert got == [
        "documents[2].items[0]",
        "documents[2].items[1].items[0]",
        "documents[2].items[1].items[1]",
        "documents[2].items[2]",
    ]


def test_a_non_list_is_itself() -> None:
    assert flatten_list(POD, source="f") == [("", POD)]


def test_items_not_a_list_names_the_path_with_the_callers_error() -> None:
    doc = {"kind": "List", "items": [{"kind": "List", "items": 3}]}
    with pytest.raises(_MyError) as info:
        flatten_list(doc, source="f.yaml", error=_MyError)
    assert (info.value.file, info.value.path, info.value.detail) == (
        "f.yaml",
        "items[0].items",
        "expected a list of objects",
    )


def test_at_the_limit_is_expanded() -> None:
    doc = {"kind": "List", "items": [POD] * 10}
    assert len(flatten_list(doc, source="f", limit=10)) == 10


def test_past_the_limit_is_refused() -> None:
    doc = {"kind": "List", "items": [POD] * 11}
    with pytest.raises(InputError) as info:
        flatten_list(doc, source="f", limit=10)
    assert (info.value.path, info.value.detail) == ("items", "the List expands to 11 objects; at most 10 are allowed")


@pytest.mark.real_time
def test_the_alias_bomb_is_refused_before_expanding() -> None:
    doc = load_documents(alias_bomb(), source="bomb.yaml").docs[0]
    started = time.perf_counter()
    with pytest.raises(InputError) as info:
        flatten_list(doc, source="bomb.yaml")
    total = sum(9**level for level in range(10))  # the pod, then 9 ** level pods per level
    assert info.value.detail == f"the List expands to {total} objects; at most {MAX_ITEMS} are allowed"
    assert time.perf_counter() - started < 0.1
