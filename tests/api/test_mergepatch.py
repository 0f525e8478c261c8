"""``api.mergepatch.merge_patch``: JSON merge patch (RFC 7386), the one implementation behind
the HTTP ``PATCH`` (``application/merge-patch+json``) and the scenario's ``update`` steps: the
RFC's examples, idempotence, and that merging the diff of two documents gives the second."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api.mergepatch import merge_patch


@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [
        pytest.param({"a": "b"}, {"a": "c"}, {"a": "c"}, id="replace"),
        pytest.param({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}, id="add"),
        pytest.param({"a": "b"}, {"a": None}, {}, id="null-deletes"),
        pytest.param({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}, id="null-deletes-one"),
        pytest.param({"a": ["b"]}, {"a": "c"}, {"a": "c"}, id="list-replaced-by-scalar"),
        pytest.param({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}, id="scalar-replaced-by-list"),
        pytest.param({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}, id="nested"),
        pytest.param({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}, id="lists-are-not-merged"),
        pytest.param(["a", "b"], {"a": "c"}, {"a": "c"}, id="non-mapping-target"),
        pytest.param({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}, id="null-in-new-mapping"),
        pytest.param({"e": None}, {"a": 1}, {"e": None, "a": 1}, id="null-in-target-kept"),
        pytest.param({"a": "b"}, {"a": {"b": None}}, {"a": {}}, id="scalar-becomes-object"),
    ],
)
def test_merge_patch_rfc7386_examples(target: Any, patch: Any, result: Any) -> None:
    before = msgspec.json.encode(target)
    assert merge_patch(target, patch) == result
    assert msgspec.json.encode(target) == before  # the target is not changed


def test_the_result_shares_no_list_with_the_patch() -> None:
    patch: dict[str, Any] = {"a": [1, {"b": 2}]}
    merged = merge_patch({}, patch)
    merged["a"][1]["b"] = 3
    assert patch == {"a": [1, {"b": 2}]}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=10,
)


@given(
    target=st.dictionaries(st.text(max_size=2), JSON, max_size=4),
    patch=st.dictionaries(st.text(max_size=2), JSON, max_size=4),
)
def test_merge_patch_is_idempotent(target: dict[str, Any], patch: dict[str, Any]) -> None:
    once = merge_patch(target, patch)
    assert merge_patch(once, patch) == once
    for key, value in patch.items():
        assert (key not in once) if value is None else key in once


_scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)
_objects = st.dictionaries(st.text(max_size=3), _json, max_size=4)


def _merge_diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: None for k in a if k not in b}
    for key, value in b.items():
        if isinstance(value, dict) and isinstance(a.get(key), dict):
            sub = _merge_diff(a[key], value)
            if sub:
                out[key] = sub
        elif key not in a or a[key] != value or type(a[key]) is not type(value):
            out[key] = value
    return out


@given(_objects, _objects)
def test_merge_patch_of_a_diff_gives_the_target(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert merge_patch(a, _merge_diff(a, b)) == b
