"""The kubectl string form of label selectors (``emulator.base.api.labelparse``) against upstream ``labels.Parse``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api.core import (
    LabelSelector,
    LabelSelectorRequirement,
)
from emulator.base.api.labelparse import format_label_selector, parse_label_selector
from emulator.base.api.labelselector import label_selector_matches

# --- label selector string form ---------------------------------------------------------


def lsr(key: str, operator: str, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key=key, operator=operator, values=list(values))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", LabelSelector(), id="empty"),
        pytest.param("   ", LabelSelector(), id="blank"),
        pytest.param("a=b", LabelSelector(match_labels={"a": "b"}), id="equals"),
        pytest.param("a==b", LabelSelector(match_labels={"a": "b"}), id="double-equals"),
        pytest.param("a=", LabelSelector(match_labels={"a": ""}), id="equals-empty-value"),
        pytest.param("a!=b", LabelSelector(match_expressions=[lsr("a", "NotIn", "b")]), id="not-equals"),
        pytest.param(
            "e in (y,x,x)",
            LabelSelector(match_expressions=[lsr("e", "In", "x", "y")]),
            id="in-sorted-set",
        ),
        pytest.param("f notin (z)", LabelSelector(match_expressions=[lsr("f", "NotIn", "z")]), id="notin"),
        pytest.param("g", LabelSelector(match_expressions=[lsr("g", "Exists")]), id="exists"),
        pytest.param("!h", LabelSelector(match_expressions=[lsr("h", "DoesNotExist")]), id="doesnotexist"),
        pytest.param(
            "a=b,c!=d,e in (x,y),f notin (z),g,!h",
            LabelSelector(
                match_labels={"a": "b"},
                match_expressions=[
                    lsr("c", "NotIn", "d"),
                    lsr("e", "In", "x", "y"),
                    lsr("f", "NotIn", "z"),
                    lsr("g", "Exists"),
                    lsr("h", "DoesNotExist"),
                ],
            ),
            id="everything",
        ),
        pytest.param(
            "z, !y ,x in (a)",
            LabelSelector(match_expressions=[lsr("x", "In", "a"), lsr("y", "DoesNotExist"), lsr("z", "Exists")]),
            id="sorted-by-key-whitespace",
        ),
        pytest.param(
            "x in (foo,,baz),z notin ()",
            LabelSelector(match_expressions=[lsr("x", "In", "", "baz", "foo"), lsr("z", "NotIn", "")]),
            id="empty-values-in-sets",
        ),
        pytest.param(
            "in in (in,notin)",
            LabelSelector(match_expressions=[lsr("in", "In", "in", "notin")]),
            id="keywords-as-key-and-values",
        ),
        pytest.param(
            "example.com/tier=web",
            LabelSelector(match_labels={"example.com/tier": "web"}),
            id="prefixed-key",
        ),
        pytest.param("a=b,a=c", LabelSelector(match_labels={"a": "c"}), id="repeated-key-last-wins"),
    ],
)
def test_parse_label_selector(text: str, expected: LabelSelector) -> None:
    assert parse_label_selector(text) == expected


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param("a=b c", r"found 'c', expected: ',' or 'end of string' \(at position 4\)", id="junk"),
        pytest.param("a,", r"found '', expected: identifier after ','", id="trailing-comma"),
        pytest.param(",a", r"found ',', expected: !, identifier", id="leading-comma"),
        pytest.param("a in b", r"found 'b' expected: '\('", id="in-without-parens"),
        pytest.param("a in (b", r"found '', expected: ',' or '\)'", id="unclosed-paren"),
        pytest.param("a in (b c)", r"found 'c', expected: ',' or '\)'", id="missing-comma"),
        pytest.param("a b", r"found 'b', expected: in, notin, =, ==, !=, gt, lt", id="no-operator"),
        pytest.param("a=(", r"found '\(', expected: identifier", id="paren-as-value"),
        pytest.param("!a=b", r"found '=', expected: ',' or 'end of string'", id="not-with-value"),
        pytest.param("!", r"found '', expected: identifier", id="bare-not"),
        pytest.param("-a=b", r"Invalid value: \"-a\": name part", id="bad-key"),
        pytest.param("a=-b", r"Invalid value: \"-b\": a valid label", id="bad-value"),
        pytest.param("a=" + "v" * 64, r"must be no more than 63 characters", id="long-value"),
        pytest.param("a>5", r"\"gt\" isn't supported in label selectors", id="gt"),
        pytest.param("a<5", r"\"lt\" isn't supported in label selectors", id="lt"),
        pytest.param("a>x", r"for 'Gt', 'Lt' operators, the value must be an integer", id="gt-nan"),
    ],
)
def test_parse_label_selector_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_label_selector(text)


def test_parse_error_names_the_string() -> None:
    with pytest.raises(ValueError, match=r"^couldn't parse the selector string \"a b\": "):
        parse_label_selector("a b")


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param(LabelSelector(), "", id="empty"),
        pytest.param(LabelSelector(match_labels={"b": "2", "a": "1"}), "a=1,b=2", id="labels-sorted"),
        pytest.param(
            LabelSelector(
                match_labels={"z": "1"},
                match_expressions=[
                    lsr("y", "NotIn", "b", "a"),
                    lsr("x", "In", "q", "p", "p"),
                    lsr("w", "Exists"),
                    lsr("v", "DoesNotExist"),
                ],
            ),
            "z=1,y notin (a,b),x in (p,q),w,!v",
            id="expressions-in-order",
        ),
        pytest.param(
            LabelSelector(match_expressions=[lsr("x", "In", "", "a")]),
            "x in (,a)",
            id="empty-value",
        ),
    ],
)
def test_format_label_selector(selector: LabelSelector, expected: str) -> None:
    assert format_label_selector(selector) == expected


def test_format_rejects_invalid_selector() -> None:
    with pytest.raises(ValueError, match="not a valid selector operator"):
        format_label_selector(LabelSelector(match_expressions=[lsr("x", "Gt", "1")]))


# Hypothesis: random kubectl strings round-trip through format, and mean what they say.

KEYS = ["a", "b", "in", "notin", "x.io/y"]
VALUES = ["", "1", "v", "in", "notin", "x_y.z"]
keys = st.sampled_from(KEYS)
values = st.sampled_from(VALUES)
spaces = st.sampled_from(["", " ", "  "])


@st.composite
def requirement(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """(text, operator, values) of one requirement of a kubectl label selector."""
    key = draw(keys)
    op = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!"]))
    sp = draw(spaces)
    if op in ("=", "==", "!="):
        value = draw(values)
        return f"{key}{sp}{op}{sp}{value}", op, [key, value]
    if op in ("in", "notin"):
        vals = draw(st.lists(values, min_size=1, max_size=3))
        # Upstream's parser rejects a list that ends in two empty values ("(,,)"); one empty
        # value is written as a leading comma: "(,)" or "(,b)".
        if "" in vals:
            vals = ["", *sorted({v for v in vals if v})]
        return f"{key} {op}{sp}({','.join(vals)})", op, [key, *vals]
    if op == "exists":
        return key, op, [key]
    return f"!{sp}{key}", op, [key]


def reference_match(reqs: list[tuple[str, str, list[str]]], labels: dict[str, str]) -> bool:
    """labels.Requirement.Matches, straight from upstream's doc comment."""
    for _, op, (key, *vals) in reqs:
        has = key in labels
        if op in ("=", "==", "in"):
            ok = has and labels[key] in vals
        elif op in ("!=", "notin"):
            ok = not has or labels[key] not in vals
        elif op == "exists":
            ok = has
        else:
            ok = not has
        if not ok:
            return False
    return True


@given(
    reqs=st.lists(requirement(), max_size=5),
    sep=st.sampled_from([",", ", ", " ,"]),
    label_maps=st.lists(st.dictionaries(keys, values, max_size=5), min_size=1, max_size=5),
)
def test_format_parse_round_trip(
    reqs: list[tuple[str, str, list[str]]], sep: str, label_maps: list[dict[str, str]]
) -> None:
    text = sep.join(r[0] for r in reqs)
    parsed = parse_label_selector(text)
    again = parse_label_selector(format_label_selector(parsed))
    assert again == parsed
    equality_keys = [vals[0] for _, op, vals in reqs if op in ("=", "==")]
    lossless = len(equality_keys) == len(set(equality_keys))  # "a=b,a=c" keeps only a=c
    for labels in label_maps:
        assert label_selector_matches(again, labels) == label_selector_matches(parsed, labels)
        if lossless:
            assert label_selector_matches(parsed, labels) == reference_match(reqs, labels)
