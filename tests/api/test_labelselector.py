"""Label selectors (``emulator.base.api.labelselector``) against upstream: ``LabelSelectorAsSelector`` matching,
``ValidateLabelSelector``, and the compiled ``Selector``."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api.core import LabelSelector, LabelSelectorRequirement
from emulator.base.api.labelselector import (
    EVERYTHING,
    NOTHING,
    Selector,
    SelectorError,
    _compiled_of,
    compile_selector,
    label_selector_errors,
    label_selector_matches,
    validate_label_selector,
)


# Hand-built from documents on purpose: the tables hold invalid selectors for validation to refuse.
def sel(raw: dict[str, Any]) -> LabelSelector:
    return msgspec.convert(raw, LabelSelector)


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


ZONE_A = {"zone": "a", "disk": "ssd"}


# --- label selectors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        pytest.param(None, ZONE_A, False, id="none-matches-nothing"),
        pytest.param(None, {}, False, id="none-matches-nothing-even-empty-labels"),
        pytest.param(sel({}), ZONE_A, True, id="empty-matches-everything"),
        pytest.param(sel({}), {}, True, id="empty-matches-empty-labels"),
        pytest.param(sel({"matchLabels": {"zone": "a"}}), ZONE_A, True, id="matchLabels-hit"),
        pytest.param(sel({"matchLabels": {"zone": "b"}}), ZONE_A, False, id="matchLabels-miss"),
        pytest.param(sel({"matchLabels": {"rack": ""}}), ZONE_A, False, id="matchLabels-absent"),
        pytest.param(sel({"matchLabels": {"zone": "a", "disk": "hdd"}}), ZONE_A, False, id="matchLabels-and"),
        pytest.param(sel({"matchExpressions": [expr("zone", "In", "a", "b")]}), ZONE_A, True, id="in-hit"),
        pytest.param(sel({"matchExpressions": [expr("zone", "In", "b", "c")]}), ZONE_A, False, id="in-miss"),
        pytest.param(sel({"matchExpressions": [expr("rack", "In", "a")]}), ZONE_A, False, id="in-absent"),
        pytest.param(sel({"matchExpressions": [expr("zone", "NotIn", "a")]}), ZONE_A, False, id="notin-hit"),
        pytest.param(sel({"matchExpressions": [expr("zone", "NotIn", "b")]}), ZONE_A, True, id="notin-miss"),
        pytest.param(
            sel({"matchExpressions": [expr("rack", "NotIn", "a")]}),
            ZONE_A,
            True,
            id="notin-absent-key-is-true",
        ),
        pytest.param(sel({"matchExpressions": [expr("zone", "Exists")]}), ZONE_A, True, id="exists-present"),
        pytest.param(sel({"matchExpressions": [expr("rack", "Exists")]}), ZONE_A, False, id="exists-absent"),
        pytest.param(
            sel({"matchExpressions": [expr("zone", "Exists")]}),
            {},
            False,
            id="exists-on-empty-labels",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("rack", "DoesNotExist")]}),
            ZONE_A,
            True,
            id="doesnotexist-absent",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("zone", "DoesNotExist")]}),
            ZONE_A,
            False,
            id="doesnotexist-present",
        ),
        pytest.param(
            sel({"matchLabels": {"zone": "a"}, "matchExpressions": [expr("disk", "In", "hdd")]}),
            ZONE_A,
            False,
            id="labels-and-expressions-anded",
        ),
        pytest.param(
            sel({"matchLabels": {"zone": "a"}, "matchExpressions": [expr("disk", "Exists")]}),
            ZONE_A,
            True,
            id="labels-and-expressions-both-hold",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("zone", "In", "")]}),
            {"zone": ""},
            True,
            id="in-empty-string-value",
        ),
    ],
)
def test_label_selector_matches(selector: LabelSelector | None, labels: dict[str, str], expected: bool) -> None:
    assert label_selector_matches(selector, labels) is expected


@pytest.mark.parametrize(
    ("selector", "match"),
    [
        pytest.param(
            sel({"matchExpressions": [expr("zone", "Gt", "1")]}),
            r"matchExpressions\[0\]\.operator: Invalid value: \"Gt\": not a valid selector operator",
            id="gt-not-a-label-selector-operator",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("zone", "in", "a")]}),
            r"Invalid value: \"in\": not a valid selector operator",
            id="operator-is-case-sensitive",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("zone", "In")]}),
            r"matchExpressions\[0\]\.values: Required value",
            id="in-without-values",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("zone", "NotIn")]}),
            r"values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            id="notin-without-values",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("zone", "Exists", "a")]}),
            r"values: Forbidden: may not be specified",
            id="exists-with-values",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("zone", "DoesNotExist", "a")]}),
            r"values: Forbidden",
            id="doesnotexist-with-values",
        ),
        pytest.param(
            sel({"matchLabels": {"bad key": "a"}}),
            r"matchLabels: Invalid value: \"bad key\": name part must consist",
            id="invalid-key",
        ),
        pytest.param(
            sel({"matchLabels": {"zone": "-a"}}),
            r"matchLabels: Invalid value: \"-a\": a valid label must be",
            id="invalid-value",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("Example.com/zone", "Exists")]}),
            r"key: Invalid value: \"Example.com/zone\": prefix part a lowercase RFC 1123",
            id="invalid-prefix",
        ),
    ],
)
def test_invalid_label_selector_raises(selector: LabelSelector, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        label_selector_matches(selector, ZONE_A)
    with pytest.raises(ValueError, match=r"^spec\.selector\."):
        validate_label_selector(selector, "spec.selector")


def test_invalid_selector_raises_even_when_an_earlier_requirement_fails() -> None:
    selector = sel({"matchLabels": {"zone": "z"}, "matchExpressions": [expr("a", "Bogus")]})
    with pytest.raises(ValueError, match="Bogus"):
        label_selector_matches(selector, ZONE_A)


def test_validate_label_selector_accepts_valid_and_none() -> None:
    validate_label_selector(None, "spec.selector")
    validate_label_selector(sel({"matchLabels": {"app.kubernetes.io/name": "web"}, "matchExpressions": []}), "x")


def test_validate_label_selector_reports_every_problem() -> None:
    selector = sel({"matchExpressions": [expr("a", "In"), expr("b", "Exists", "x")]})
    with pytest.raises(ValueError, match=r"matchExpressions\[0\].*; .*matchExpressions\[1\]"):
        validate_label_selector(selector, "s")


# --- the compiled Selector ---------------------------------------------------------------------


def test_selector_shapes() -> None:
    assert compile_selector(None) is NOTHING
    assert compile_selector(sel({})) is EVERYTHING
    assert (NOTHING.nothing, NOTHING.everything, NOTHING.empty()) == (True, False, False)
    assert (EVERYTHING.nothing, EVERYTHING.everything, EVERYTHING.empty()) == (False, True, True)
    assert not NOTHING.matches({})
    assert EVERYTHING.matches({})


def test_compiled_requirements_are_sorted_by_key_as_upstream_add_does() -> None:
    compiled = compile_selector(sel({"matchLabels": {"b": "1"}, "matchExpressions": [expr("a", "Exists")]}))
    assert compiled.requirements == (("a", "Exists", frozenset()), ("b", "In", frozenset({"1"})))
    assert repr(compiled) == "<Selector a Exists, b In ['1']>"


def test_equal_selectors_hash_alike_whatever_the_order() -> None:
    one = compile_selector(sel({"matchExpressions": [expr("a", "In", "x", "y"), expr("b", "Exists")]}))
    two = compile_selector(sel({"matchExpressions": [expr("b", "Exists"), expr("a", "In", "y", "x")]}))
    assert one == two
    assert hash(one) == hash(two)
    assert one != EVERYTHING
    assert NOTHING != EVERYTHING


def test_add_and_from_set() -> None:
    merged = Selector.from_set({"rev": "2"}).add(compile_selector(sel({"matchLabels": {"app": "web"}})))
    assert merged.matches({"app": "web", "rev": "2"})
    assert not merged.matches({"app": "web", "rev": "1"})
    assert merged.add(NOTHING) is NOTHING
    assert Selector.from_set({}).empty()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            {"matchExpressions": [expr("a", "Gt", "1")]}, '"Gt" is not a valid label selector operator', id="operator"
        ),
        pytest.param(
            {"matchExpressions": [expr("a", "In")]},
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
            id="in-without-values",
        ),
        pytest.param(
            {"matchLabels": {"a": "-x"}},
            'values[0][a]: Invalid value: "-x": a valid label must be an empty string',
            id="match-labels-value",
        ),
    ],
)
def test_compile_selector_raises_upstream_new_requirement_messages(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(SelectorError) as info:
        compile_selector(sel(raw))
    assert str(info.value).startswith(message)


def test_label_selector_matches_compiles_a_selector_object_once() -> None:
    selector = sel({"matchExpressions": [expr("zone", "In", "a")]})
    assert label_selector_matches(selector, ZONE_A)
    first = _compiled_of(selector)
    assert label_selector_matches(selector, {"zone": "b"}) is False
    assert _compiled_of(selector) is first


SEL_KEYS = ["a", "b", "c"]
SEL_VALUES = ["", "1", "2"]


@st.composite
def label_selectors(draw: st.DrawFn) -> LabelSelector:
    match_labels = draw(st.dictionaries(st.sampled_from(SEL_KEYS), st.sampled_from(SEL_VALUES), max_size=2))
    expressions = []
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
        values = draw(st.lists(st.sampled_from(SEL_VALUES), min_size=1, max_size=2)) if op in ("In", "NotIn") else []
        expressions.append(LabelSelectorRequirement(key=draw(st.sampled_from(SEL_KEYS)), operator=op, values=values))
    return LabelSelector(match_labels=match_labels, match_expressions=expressions)


def naive_match(selector: LabelSelector, labels: dict[str, str]) -> bool:
    """The API documentation's reading, requirement by requirement (the reference)."""
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    for r in selector.match_expressions:
        present = r.key in labels
        ok = {
            "In": present and labels.get(r.key) in r.values,
            "NotIn": not present or labels.get(r.key) not in r.values,
            "Exists": present,
            "DoesNotExist": not present,
        }[r.operator]
        if not ok:
            return False
    return True


@given(label_selectors(), st.dictionaries(st.sampled_from(SEL_KEYS), st.sampled_from(SEL_VALUES)))
def test_compiled_selector_agrees_with_the_naive_reading(selector: LabelSelector, labels: dict[str, str]) -> None:
    """Differential: every specialised ``matches`` (one In, one Exists, the loop) against the reference."""
    assert compile_selector(selector).matches(labels) is naive_match(selector, labels)
    assert label_selector_matches(selector, labels) is naive_match(selector, labels)


ANY_KEYS = ["a", "example.com/b", "-bad", "a/b/c", ""]
ANY_VALUES = ["", "1", "x_y", "-bad", "a b"]


@st.composite
def any_label_selectors(draw: st.DrawFn) -> LabelSelector:
    match_labels = draw(st.dictionaries(st.sampled_from(ANY_KEYS), st.sampled_from(ANY_VALUES), max_size=2))
    expressions = [
        LabelSelectorRequirement(
            key=draw(st.sampled_from(ANY_KEYS)),
            operator=draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "in"])),
            values=draw(st.lists(st.sampled_from(ANY_VALUES), max_size=2)),
        )
        for _ in range(draw(st.integers(0, 2)))
    ]
    return LabelSelector(match_labels=match_labels, match_expressions=expressions)


@given(any_label_selectors())
def test_api_validation_and_compile_accept_the_same_selectors(selector: LabelSelector) -> None:
    """``ValidateLabelSelector`` (the API server) and ``LabelSelectorAsSelector`` (the scheduler)
    word their errors differently but refuse exactly the same selectors."""
    try:
        compile_selector(selector)
    except SelectorError:
        compiles = False
    else:
        compiles = True
    assert compiles is (not label_selector_errors(selector, "s"))
