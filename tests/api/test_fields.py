"""Field selectors (``emulator.base.api.fields``) against upstream ``fields.ParseSelector``."""

from __future__ import annotations

import pytest

from emulator.base.api.fields import fields_match, parse_field_selector

# --- field selectors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", {}, id="empty"),
        pytest.param("metadata.name=x", {"metadata.name": "x"}, id="equals"),
        pytest.param("metadata.name==x", {"metadata.name": "x"}, id="double-equals"),
        pytest.param(
            "metadata.name=x,spec.nodeName=",
            {"metadata.name": "x", "spec.nodeName": ""},
            id="empty-value",
        ),
        pytest.param("a=1,,b=2", {"a": "1", "b": "2"}, id="empty-term-skipped"),
        pytest.param(r"a=x\,y\=z\\", {"a": "x,y=z\\"}, id="escapes"),
        pytest.param("a=x,a=x", {"a": "x"}, id="repeat-same-value"),
    ],
)
def test_parse_field_selector(text: str, expected: dict[str, str]) -> None:
    assert parse_field_selector(text) == expected


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param("metadata.name", r"can't understand 'metadata.name'", id="no-operator"),
        pytest.param("status.phase!=Running", r"'!=' is not supported", id="not-equals"),
        pytest.param("a=b=c", r"unescaped character in value: =", id="unescaped-equals"),
        pytest.param(r"a=b\q", r"invalid escape sequence: \\q", id="bad-escape"),
        pytest.param("a=b\\", r"invalid escape sequence: \\$", id="trailing-backslash"),
        pytest.param("a=x,a=y", r"two different values", id="conflicting-values"),
    ],
)
def test_parse_field_selector_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_field_selector(text)


@pytest.mark.parametrize(
    ("fields", "obj", "expected"),
    [
        pytest.param({}, {"metadata.name": "x"}, True, id="empty-matches-all"),
        pytest.param({"metadata.name": "x"}, {"metadata.name": "x"}, True, id="hit"),
        pytest.param({"metadata.name": "y"}, {"metadata.name": "x"}, False, id="miss"),
        pytest.param({"spec.nodeName": ""}, {"spec.nodeName": ""}, True, id="unscheduled"),
        pytest.param({"spec.nodeName": ""}, {}, True, id="missing-field-reads-empty"),
        pytest.param({"spec.nodeName": "n1"}, {}, False, id="missing-field-miss"),
        pytest.param(
            {"metadata.name": "x", "spec.nodeName": "n1"},
            {"metadata.name": "x", "spec.nodeName": "n2"},
            False,
            id="anded",
        ),
    ],
)
def test_fields_match(fields: dict[str, str], obj: dict[str, str], expected: bool) -> None:
    assert fields_match(fields, obj) is expected
