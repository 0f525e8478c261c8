"""Node selectors and required node affinity (``emulator.base.api.nodeaffinity``) against upstream."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from emulator.base.api.core import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
)
from emulator.base.api.nodeaffinity import (
    node_selector_matches,
    node_selector_requirement_matches,
    node_selector_term_matches,
    pod_matches_node_selector_and_affinity,
)
from tests import builders


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def node(name: str = "n1", labels: dict[str, str] | None = None) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, labels=labels)


def nreq(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=operator, values=list(values))


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


# Hand-built from spec documents on purpose: shapes tests.builders cannot say (no terms, empty affinity).
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
