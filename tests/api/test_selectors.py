"""Selector semantics against upstream Kubernetes (labels, node affinity, taints, fields)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.api.core import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
)
from emulator.api.selectors import (
    fields_match,
    find_untolerated_taint,
    format_label_selector,
    label_selector_matches,
    node_selector_matches,
    node_selector_requirement_matches,
    node_selector_term_matches,
    parse_field_selector,
    parse_label_selector,
    pod_matches_node_selector_and_affinity,
    toleration_tolerates_taint,
    tolerations_tolerate_taint,
    validate_label_selector,
)


def sel(raw: dict[str, Any]) -> LabelSelector:
    return msgspec.convert(raw, LabelSelector)


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def node(name: str = "n1", labels: dict[str, str] | None = None) -> Node:
    return msgspec.convert({"metadata": {"name": name, "labels": labels or {}}}, Node)


def nreq(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=operator, values=list(values))


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
            r"matchExpressions\[0\]\.operator: Unsupported value: \"Gt\"",
            id="gt-not-a-label-selector-operator",
        ),
        pytest.param(
            sel({"matchExpressions": [expr("zone", "in", "a")]}),
            r"Unsupported value: \"in\"",
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
    with pytest.raises(ValueError, match="Unsupported value"):
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


# --- node selectors ---------------------------------------------------------------------

NODE_LABELS = {"zone": "a", "cpus": "8", "gpu": "", "name": "x"}


@pytest.mark.parametrize(
    ("req", "expected"),
    [
        pytest.param(nreq("zone", "In", "a", "b"), True, id="in-hit"),
        pytest.param(nreq("zone", "In", "b"), False, id="in-miss"),
        pytest.param(nreq("rack", "In", "a"), False, id="in-absent"),
        pytest.param(nreq("zone", "NotIn", "a"), False, id="notin-hit"),
        pytest.param(nreq("zone", "NotIn", "b"), True, id="notin-miss"),
        pytest.param(nreq("rack", "NotIn", "a"), True, id="notin-absent-key-is-true"),
        pytest.param(nreq("gpu", "Exists"), True, id="exists-empty-value"),
        pytest.param(nreq("rack", "Exists"), False, id="exists-absent"),
        pytest.param(nreq("rack", "DoesNotExist"), True, id="doesnotexist-absent"),
        pytest.param(nreq("zone", "DoesNotExist"), False, id="doesnotexist-present"),
        pytest.param(nreq("cpus", "Gt", "4"), True, id="gt-true"),
        pytest.param(nreq("cpus", "Gt", "8"), False, id="gt-equal-is-false"),
        pytest.param(nreq("cpus", "Lt", "9"), True, id="lt-true"),
        pytest.param(nreq("cpus", "Lt", "8"), False, id="lt-equal-is-false"),
        pytest.param(nreq("cpus", "Gt", "08"), False, id="gt-leading-zero-parses"),
        pytest.param(nreq("rack", "Gt", "1"), False, id="gt-absent"),
        pytest.param(nreq("zone", "Gt", "1"), False, id="gt-label-not-integer"),
        pytest.param(nreq("gpu", "Lt", "1"), False, id="lt-label-empty"),
        pytest.param(nreq("cpus", "Gt", "x"), False, id="gt-value-not-integer"),
        pytest.param(nreq("cpus", "Gt", "1", "2"), False, id="gt-two-values"),
        pytest.param(nreq("cpus", "Gt"), False, id="gt-no-value"),
        pytest.param(nreq("cpus", "Gt", "-1"), False, id="gt-negative-is-invalid-label-value"),
        pytest.param(nreq("cpus", "Gt", "99999999999999999999"), False, id="gt-overflow"),
        pytest.param(nreq("zone", "In"), False, id="invalid-in-without-values"),
        pytest.param(nreq("rack", "NotIn"), False, id="invalid-notin-without-values"),
        pytest.param(nreq("rack", "DoesNotExist", "a"), False, id="invalid-dne-with-values"),
        pytest.param(nreq("zone", "Equals", "a"), False, id="invalid-operator"),
        pytest.param(nreq("bad key", "DoesNotExist"), False, id="invalid-key"),
        pytest.param(nreq("rack", "NotIn", "bad value"), False, id="invalid-value"),
    ],
)
def test_node_selector_requirement_matches(req: NodeSelectorRequirement, expected: bool) -> None:
    assert node_selector_requirement_matches(req, NODE_LABELS) is expected


def test_gt_label_value_bounds() -> None:
    big = {"n": "9223372036854775807"}
    assert node_selector_requirement_matches(nreq("n", "Gt", "9223372036854775806"), big)
    too_big = {"n": "9223372036854775808"}
    assert not node_selector_requirement_matches(nreq("n", "Gt", "1"), too_big)
    assert not node_selector_requirement_matches(nreq("n", "Gt", "1"), {"n": "1_000"})
    assert not node_selector_requirement_matches(nreq("n", "Gt", "1"), {"n": " 5"})


N1 = node("n1", NODE_LABELS)


@pytest.mark.parametrize(
    ("term", "target", "expected"),
    [
        pytest.param(NodeSelectorTerm(), N1, False, id="empty-term-matches-nothing"),
        pytest.param(
            NodeSelectorTerm(match_expressions=[nreq("zone", "In", "a"), nreq("gpu", "Exists")]),
            N1,
            True,
            id="expressions-all-hold",
        ),
        pytest.param(
            NodeSelectorTerm(match_expressions=[nreq("zone", "In", "a"), nreq("gpu", "DoesNotExist")]),
            N1,
            False,
            id="expressions-anded",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=[nreq("metadata.name", "In", "n1")]),
            N1,
            True,
            id="fields-name-in",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=[nreq("metadata.name", "In", "n2")]),
            N1,
            False,
            id="fields-name-in-miss",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=[nreq("metadata.name", "NotIn", "n2")]),
            N1,
            True,
            id="fields-name-notin",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=[nreq("metadata.name", "NotIn", "n1")]),
            N1,
            False,
            id="fields-name-notin-miss",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=[nreq("metadata.name", "In", "n1", "n2")]),
            N1,
            False,
            id="fields-in-needs-exactly-one-value",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=[nreq("metadata.name", "Exists")]),
            N1,
            False,
            id="fields-exists-unsupported",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=[nreq("metadata.uid", "In", "n1")]),
            N1,
            False,
            id="fields-other-key-reads-empty",
        ),
        pytest.param(
            NodeSelectorTerm(
                match_expressions=[nreq("zone", "In", "a")],
                match_fields=[nreq("metadata.name", "In", "n1")],
            ),
            N1,
            True,
            id="expressions-and-fields",
        ),
        pytest.param(
            NodeSelectorTerm(
                match_expressions=[nreq("zone", "In", "b")],
                match_fields=[nreq("metadata.name", "In", "n1")],
            ),
            N1,
            False,
            id="expressions-and-fields-anded",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=[nreq("metadata.name", "In", "n1")]),
            node("", NODE_LABELS),
            True,
            id="fields-ignored-for-unnamed-node",
        ),
        pytest.param(
            NodeSelectorTerm(match_fields=[nreq("metadata.name", "In")]),
            node("", NODE_LABELS),
            False,
            id="invalid-fields-fail-even-unnamed",
        ),
    ],
)
def test_node_selector_term_matches(term: NodeSelectorTerm, target: Node, expected: bool) -> None:
    assert node_selector_term_matches(term, target) is expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param(NodeSelector(), False, id="no-terms-matches-nothing"),
        pytest.param(NodeSelector(node_selector_terms=[NodeSelectorTerm()]), False, id="only-empty-term"),
        pytest.param(
            NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(),
                    NodeSelectorTerm(match_expressions=[nreq("zone", "In", "a")]),
                ]
            ),
            True,
            id="empty-term-ignored",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(match_expressions=[nreq("zone", "In", "b")]),
                    NodeSelectorTerm(match_expressions=[nreq("cpus", "Gt", "2")]),
                ]
            ),
            True,
            id="terms-ored",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(match_expressions=[nreq("zone", "Bogus", "a")]),
                    NodeSelectorTerm(match_expressions=[nreq("zone", "In", "a")]),
                ]
            ),
            True,
            id="invalid-term-skipped",
        ),
        pytest.param(
            NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(match_expressions=[nreq("zone", "In", "b")]),
                    NodeSelectorTerm(match_fields=[nreq("metadata.name", "In", "n2")]),
                ]
            ),
            False,
            id="no-term-holds",
        ),
    ],
)
def test_node_selector_matches(selector: NodeSelector, expected: bool) -> None:
    assert node_selector_matches(selector, N1) is expected


def pod(spec: dict[str, Any]) -> Pod:
    return msgspec.convert({"metadata": {"name": "p"}, "spec": spec}, Pod)


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
        }
    }


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, True, id="no-constraints"),
        pytest.param({"nodeSelector": {"zone": "a"}}, True, id="node-selector-hit"),
        pytest.param({"nodeSelector": {"zone": "a", "cpus": "4"}}, False, id="node-selector-and"),
        pytest.param({"nodeSelector": {"rack": ""}}, False, id="node-selector-absent-key"),
        pytest.param({"nodeSelector": {"gpu": ""}}, True, id="node-selector-empty-value"),
        pytest.param({"affinity": {}}, True, id="empty-affinity"),
        pytest.param({"affinity": {"nodeAffinity": {}}}, True, id="no-required-affinity"),
        pytest.param(required(), False, id="required-without-terms-matches-nothing"),
        pytest.param(required({"matchExpressions": [expr("zone", "In", "a")]}), True, id="required-hit"),
        pytest.param(
            required({"matchFields": [expr("metadata.name", "In", "n2")]}),
            False,
            id="required-fields-miss",
        ),
        pytest.param(
            {"nodeSelector": {"zone": "b"}, **required({"matchExpressions": [expr("zone", "Exists")]})},
            False,
            id="node-selector-and-affinity",
        ),
        pytest.param(
            {"nodeSelector": {"zone": "a"}, **required({"matchExpressions": [expr("zone", "Exists")]})},
            True,
            id="node-selector-and-affinity-both-hold",
        ),
    ],
)
def test_pod_matches_node_selector_and_affinity(spec: dict[str, Any], expected: bool) -> None:
    assert pod_matches_node_selector_and_affinity(pod(spec), N1) is expected


# --- taints and tolerations -------------------------------------------------------------


def tol(key: str = "", operator: str = "", value: str = "", effect: str = "") -> Toleration:
    return Toleration(key=key, operator=operator, value=value, effect=effect)


DEDICATED = Taint(key="dedicated", value="gpu", effect="NoSchedule")


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        pytest.param(tol(operator="Exists"), DEDICATED, True, id="exists-empty-key-tolerates-all"),
        pytest.param(
            tol(operator="Exists"),
            Taint(key="x", effect="NoExecute", value="y"),
            True,
            id="exists-empty-key-any-effect",
        ),
        pytest.param(
            tol(operator="Exists", effect="NoExecute"),
            DEDICATED,
            False,
            id="exists-empty-key-effect-mismatch",
        ),
        pytest.param(tol(key="dedicated", operator="Exists"), DEDICATED, True, id="exists-ignores-value"),
        pytest.param(tol(key="other", operator="Exists"), DEDICATED, False, id="exists-key-mismatch"),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="gpu", effect="NoSchedule"),
            DEDICATED,
            True,
            id="equal-all-match",
        ),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="gpu"),
            DEDICATED,
            True,
            id="empty-effect-matches-all-effects",
        ),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="cpu"),
            DEDICATED,
            False,
            id="equal-value-mismatch",
        ),
        pytest.param(tol(key="dedicated", value="gpu"), DEDICATED, True, id="empty-operator-means-equal"),
        pytest.param(tol(key="dedicated", value=""), DEDICATED, False, id="empty-operator-compares-value"),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="gpu", effect="NoExecute"),
            DEDICATED,
            False,
            id="effect-mismatch",
        ),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="gpu", effect="PreferNoSchedule"),
            DEDICATED,
            False,
            id="prefer-effect-mismatch",
        ),
        pytest.param(
            tol(key="dedicated", operator="Equal"),
            Taint(key="dedicated", effect="NoSchedule"),
            True,
            id="equal-empty-values",
        ),
        pytest.param(tol(key="dedicated", operator="Gt", value="1"), DEDICATED, False, id="unknown-operator"),
    ],
)
def test_toleration_tolerates_taint(toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert toleration_tolerates_taint(toleration, taint) is expected


NOT_READY = Taint(key="node.kubernetes.io/not-ready", effect="NoExecute")
PREFER = Taint(key="soft", effect="PreferNoSchedule")
HARD = ("NoSchedule", "NoExecute")


@pytest.mark.parametrize(
    ("taints", "tolerations", "effects", "expected"),
    [
        pytest.param([], [], HARD, None, id="no-taints"),
        pytest.param([DEDICATED, NOT_READY], [], HARD, DEDICATED, id="first-untolerated"),
        pytest.param(
            [DEDICATED, NOT_READY],
            [tol(key="dedicated", operator="Exists")],
            HARD,
            NOT_READY,
            id="skips-tolerated",
        ),
        pytest.param([PREFER, NOT_READY], [], HARD, NOT_READY, id="effect-filter-skips-prefer"),
        pytest.param([PREFER], [], HARD, None, id="only-filtered-taints"),
        pytest.param([DEDICATED, NOT_READY], [tol(operator="Exists")], HARD, None, id="tolerate-everything"),
        pytest.param([DEDICATED, NOT_READY], [], ("NoExecute",), NOT_READY, id="noexecute-only"),
        pytest.param([DEDICATED], [], (), None, id="no-effects-selected"),
    ],
)
def test_find_untolerated_taint(
    taints: list[Taint],
    tolerations: list[Toleration],
    effects: tuple[str, ...],
    expected: Taint | None,
) -> None:
    assert find_untolerated_taint(taints, tolerations, effects) == expected


def test_tolerations_tolerate_taint() -> None:
    assert not tolerations_tolerate_taint([], DEDICATED)
    assert tolerations_tolerate_taint([tol(key="x", operator="Exists"), tol(operator="Exists")], DEDICATED)


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
