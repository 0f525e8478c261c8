"""Name syntax (``emulator.base.api.labels``): upstream's ``IsQualifiedName``, ``IsValidLabelValue``,
``IsDNS1123Label`` and ``IsDNS1123Subdomain`` messages, word for word."""

from __future__ import annotations

import pytest

from emulator.base.api.labels import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    is_dns1123_label,
    is_label_key,
    is_label_value,
    label_value_errors,
    parse_int64,
    qualified_name_errors,
)

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        pytest.param("team-a", [], id="valid"),
        pytest.param("a" * 63, [], id="63-chars"),
        pytest.param("a" * 64, ["must be no more than 63 characters"], id="64-chars"),
        pytest.param("Team", [LABEL_MSG], id="uppercase"),
        pytest.param("team-a\n", [LABEL_MSG], id="trailing-newline"),
        pytest.param("a.b", [LABEL_MSG], id="dot"),
    ],
)
def test_dns1123_label_errors(value: str, errors: list[str]) -> None:
    assert dns1123_label_errors(value) == errors
    assert is_dns1123_label(value) is (not errors)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param("example.com", True, id="dotted"),
        pytest.param("a" * 253, True, id="253-chars"),
        pytest.param("a" * 254, False, id="254-chars"),
        pytest.param("example.com.", False, id="trailing-dot"),
        pytest.param("example.com\n", False, id="trailing-newline"),
    ],
)
def test_dns1123_subdomain_errors(value: str, valid: bool) -> None:
    assert (dns1123_subdomain_errors(value) == []) is valid


@pytest.mark.parametrize(
    ("key", "prefixes"),
    [
        pytest.param("app", [], id="name"),
        pytest.param("example.com/app", [], id="prefixed"),
        pytest.param("/app", ["prefix part must be non-empty"], id="empty-prefix"),
        pytest.param("Example.com/app", ["prefix part a lowercase RFC 1123 subdomain"], id="bad-prefix"),
        pytest.param("example.com/", ["name part must be non-empty", "name part must consist"], id="empty-name"),
        pytest.param("a" * 64, ["name part must be no more than 63 characters"], id="long-name"),
        pytest.param("a/b/c", ["a qualified name must consist"], id="two-slashes"),
    ],
)
def test_qualified_name_errors(key: str, prefixes: list[str]) -> None:
    got = qualified_name_errors(key)
    assert len(got) == len(prefixes)
    assert all(e.startswith(p) for e, p in zip(got, prefixes, strict=True)), got
    assert is_label_key(key) is (not prefixes)


def test_label_values() -> None:
    assert label_value_errors("") == []
    assert label_value_errors("v1.2_x") == []
    assert label_value_errors("a" * 64)[0] == "must be no more than 63 characters"
    assert not is_label_value("-a")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("42", 42, id="int"),
        pytest.param("-7", -7, id="negative"),
        pytest.param("+7", 7, id="plus"),
        pytest.param(str(2**63 - 1), 2**63 - 1, id="max"),
        pytest.param(str(2**63), None, id="overflow"),
        pytest.param("1e3", None, id="exponent"),
        pytest.param(" 1", None, id="space"),
    ],
)
def test_parse_int64(text: str, value: int | None) -> None:
    assert parse_int64(text) == value
