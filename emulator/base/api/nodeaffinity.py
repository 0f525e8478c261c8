"""Node selectors and required node affinity (upstream ``component-helpers/scheduling/corev1/nodeaffinity``).

What this module owns: whether a node satisfies a ``NodeSelector`` / ``NodeSelectorTerm`` /
``NodeSelectorRequirement``, and the scheduler-side parse errors of a term (``term_errors``,
upstream ``NewNodeSelector`` / ``nodeSelectorRequirementsAsSelector``, used by the NodeAffinity
plugin for its ``Error`` statuses):

* terms are ORed, a term's requirements ANDed; an empty term matches nothing;
* ``matchExpressions`` read node labels with the label operators plus ``Gt``/``Lt`` (int64
  compare of one integer value with a label value that parses as one);
* ``matchFields`` read the node's only selectable field, ``metadata.name`` (``In``/``NotIn``,
  exactly one value); any other field reads as ``""``;
* an invalid requirement makes its term match no node (the scheduler's leniency: the API
  server refuses such pods, see ``validation``);
* ``pod_matches_node_selector_and_affinity`` is ``GetRequiredNodeAffinity(pod).Match(node)``:
  ``spec.nodeSelector`` (each key=value) AND the required node affinity.

It does not own label selectors (``labelselector``) nor the API server's checks of these
fields (``podvalidation``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from emulator.base.api.core import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod
from emulator.base.api.labels import (
    go_quote,
    is_label_key,
    is_label_value,
    label_value_errors,
    parse_int64,
    qualified_name_errors,
)
from emulator.base.api.labelselector import OP_DOES_NOT_EXIST, OP_EXISTS, OP_GT, OP_IN, OP_LT, OP_NOT_IN

__all__ = [
    "NODE_NAME_FIELD",
    "NODE_SELECTOR_OPS",
    "node_selector_matches",
    "node_selector_requirement_matches",
    "node_selector_term_matches",
    "pod_matches_node_selector_and_affinity",
    "term_errors",
]

NODE_NAME_FIELD: Final = "metadata.name"
NODE_SELECTOR_OPS: Final = (OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST, OP_GT, OP_LT)


def node_selector_requirement_matches(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    """Whether node ``labels`` satisfy one ``matchExpressions`` requirement.

    ``Gt``/``Lt`` compare as int64: one value, an integer, and a label value that parses
    as one. An invalid requirement (bad operator, key or value count) matches nothing.
    """
    key = req.key
    values = req.values
    if not is_label_key(key):
        return False
    for value in values:
        if not is_label_value(value):
            return False
    op = req.operator
    if op == OP_IN:
        got = labels.get(key)
        return bool(values) and got is not None and got in values
    if op == OP_NOT_IN:
        got = labels.get(key)
        return bool(values) and (got is None or got not in values)
    if op == OP_EXISTS:
        return not values and key in labels
    if op == OP_DOES_NOT_EXIST:
        return not values and key not in labels
    if op in (OP_GT, OP_LT):
        if len(values) != 1:
            return False
        bound = parse_int64(values[0])
        got = labels.get(key)
        if bound is None or got is None:
            return False
        number = parse_int64(got)
        if number is None:
            return False
        return number > bound if op == OP_GT else number < bound
    return False


def _field_requirement_matches(req: NodeSelectorRequirement, node_name: str) -> bool | None:
    """One ``matchFields`` requirement: ``None`` when invalid (In/NotIn need one value).

    The node's only field is ``metadata.name``; any other key reads as ``""``.
    """
    values = req.values
    if len(values) != 1:
        return None
    got = node_name if req.key == NODE_NAME_FIELD else ""
    if req.operator == OP_IN:
        return got == values[0]
    if req.operator == OP_NOT_IN:
        return got != values[0]
    return None


def node_selector_term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """All of a term's ``matchExpressions`` (node labels) and ``matchFields`` hold.

    An empty term matches nothing; a term with an invalid requirement matches nothing.
    As upstream, ``matchFields`` are not checked against a node without a name.
    """
    expressions = term.match_expressions
    match_fields = term.match_fields
    if not expressions and not match_fields:
        return False
    labels = node.metadata.labels
    for req in expressions:
        if not node_selector_requirement_matches(req, labels):
            return False
    name = node.metadata.name
    for req in match_fields:
        matched = _field_requirement_matches(req, name)
        if matched is None or (name and not matched):
            return False
    return True


def node_selector_matches(selector: NodeSelector, node: Node) -> bool:
    """Terms are ORed; no (non-empty) term means no node matches."""
    return any(node_selector_term_matches(term, node) for term in selector.node_selector_terms)


def pod_matches_node_selector_and_affinity(pod: Pod, node: Node) -> bool:
    """``GetRequiredNodeAffinity(pod).Match(node)``: ``spec.nodeSelector`` (each key=value)
    and the required node affinity, when the pod has one."""
    spec = pod.spec
    labels = node.metadata.labels
    for key, value in spec.node_selector.items():
        if labels.get(key) != value:
            return False
    affinity = spec.affinity
    if affinity is not None and affinity.node_affinity is not None:
        required = affinity.node_affinity.required_during_scheduling_ignored_during_execution
        if required is not None:
            return node_selector_matches(required, node)
    return True


# --- the scheduler's parse errors (NewNodeSelector, nodeSelectorRequirementsAsSelector) ----------


def _invalid(path: str, bad: str | list[str], detail: str) -> str:
    return f"{path}: Invalid value: {json.dumps(bad, ensure_ascii=False)}: {detail}"


def _expression_errors(req: NodeSelectorRequirement, p: str) -> list[str]:
    op, vals = req.operator, req.values
    if op not in NODE_SELECTOR_OPS:
        return [f"{p}.operator: Unsupported value: {go_quote(op)}"]
    errs: list[str] = []
    if not is_label_key(req.key):
        errs.append(_invalid(f"{p}.key", req.key, "; ".join(qualified_name_errors(req.key))))
    if op in (OP_IN, OP_NOT_IN) and not vals:
        errs.append(_invalid(f"{p}.values", vals, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in (OP_EXISTS, OP_DOES_NOT_EXIST) and vals:
        errs.append(_invalid(f"{p}.values", vals, "values set must be empty for exists and does not exist"))
    elif op in (OP_GT, OP_LT):
        if len(vals) != 1:
            errs.append(_invalid(f"{p}.values", vals, "for 'Gt', 'Lt' operators, exactly one value is required"))
        errs.extend(
            _invalid(f"{p}.values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
            for i, v in enumerate(vals)
            if parse_int64(v) is None
        )
    for i, v in enumerate(vals):
        if not is_label_value(v):
            errs.append(_invalid(f"{p}.values[{i}][{req.key}]", v, "; ".join(label_value_errors(v))))
    return errs


def term_errors(term: NodeSelectorTerm, path: str) -> list[str]:
    """Why the scheduler cannot parse ``term`` (upstream's wording under ``path``); [] if it can.

    ``matchFields`` take ``In``/``NotIn`` with exactly one value."""
    errs: list[str] = []
    for j, req in enumerate(term.match_expressions):
        errs.extend(_expression_errors(req, f"{path}.matchExpressions[{j}]"))
    for j, req in enumerate(term.match_fields):
        p = f"{path}.matchFields[{j}]"
        if req.operator not in (OP_IN, OP_NOT_IN):
            errs.append(f'{p}.operator: Unsupported value: {go_quote(req.operator)}: supported values: "In", "NotIn"')
        elif len(req.values) != 1:
            errs.append(_invalid(f"{p}.values", req.values, "must have one element"))
    return errs
