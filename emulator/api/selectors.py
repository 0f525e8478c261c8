"""Selector semantics: which objects a label, field, node or taint selector picks.

This module owns the *matching rules* behind every selector in the API, written to give
the same answer as upstream Kubernetes:

* label selectors (``metav1.LabelSelector``): ``metav1.LabelSelectorAsSelector`` and
  ``k8s.io/apimachinery/pkg/labels``. A ``None`` selector matches nothing, an empty one
  matches everything, ``matchLabels`` and ``matchExpressions`` are ANDed. An invalid
  selector raises ``ValueError`` (``validate_label_selector`` reports every problem
  under a field path);
* the kubectl string form of label selectors (``parse_label_selector`` /
  ``format_label_selector``): the grammar of ``labels.Parse`` converted the way
  ``metav1.ParseToLabelSelector`` does (requirements sorted by key, values as a sorted
  set; ``!=`` becomes ``NotIn`` with one value; ``>``/``<`` are rejected);
* node selectors (``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``): ``Gt`` /
  ``Lt``, ``matchFields`` on ``metadata.name``, empty terms ignored, and the scheduler's
  lenient handling of invalid requirements (an invalid term matches no node);
  ``pod_matches_node_selector_and_affinity`` is ``GetRequiredNodeAffinity(pod).Match``;
* taints and tolerations (``core/v1`` ``Toleration.ToleratesTaint`` and
  ``component-helpers/scheduling/corev1.FindMatchingUntoleratedTaint``);
* field selectors in their ``=`` / ``==`` string form (``fields.ParseSelector``).

Everything here is a pure function of its arguments. Matching runs per node per pod, so
the syntax checks of label keys and values are memoised (``functools.lru_cache``) and the
loops are plain.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache

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

__all__ = [
    "OP_DOES_NOT_EXIST",
    "OP_EXISTS",
    "OP_GT",
    "OP_IN",
    "OP_LT",
    "OP_NOT_IN",
    "fields_match",
    "find_untolerated_taint",
    "format_label_selector",
    "label_selector_matches",
    "node_selector_matches",
    "node_selector_requirement_matches",
    "node_selector_term_matches",
    "parse_field_selector",
    "parse_label_selector",
    "pod_matches_node_selector_and_affinity",
    "toleration_tolerates_taint",
    "tolerations_tolerate_taint",
    "validate_label_selector",
]

OP_IN = "In"
OP_NOT_IN = "NotIn"
OP_EXISTS = "Exists"
OP_DOES_NOT_EXIST = "DoesNotExist"
OP_GT = "Gt"
OP_LT = "Lt"

_TOLERATION_OP_EQUAL = "Equal"
_TOLERATION_OP_EXISTS = "Exists"

_NODE_NAME_FIELD = "metadata.name"

# --- label key / value syntax (k8s.io/apimachinery/pkg/util/validation) -----------------

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_QNAME_MAX_LEN = 63
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MAX_LEN = 63
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MAX_LEN = 253

_QNAME_RE = re.compile(_QNAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_INT64_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def _q(value: str) -> str:
    """A string quoted the way Go's ``%q`` shows it in an error message."""
    return json.dumps(value, ensure_ascii=False)


def _blen(value: str) -> int:
    """Length in bytes, as Go's ``len`` counts it."""
    return len(value) if value.isascii() else len(value.encode())


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _dns1123_subdomain_errors(value: str) -> list[str]:
    errs: list[str] = []
    if _blen(value) > _DNS1123_SUBDOMAIN_MAX_LEN:
        errs.append(f"must be no more than {_DNS1123_SUBDOMAIN_MAX_LEN} characters")
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def _qualified_name_errors(value: str) -> list[str]:
    """``validation.IsQualifiedName``: ``[DNS-subdomain "/"] name``, name ≤ 63 chars."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain_errors(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QNAME_ERR, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > _QNAME_MAX_LEN:
        errs.append(f"name part must be no more than {_QNAME_MAX_LEN} characters")
    if _QNAME_RE.fullmatch(name) is None:
        errs.append("name part " + _regex_error(_QNAME_ERR, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def _label_value_errors(value: str) -> list[str]:
    """``validation.IsValidLabelValue``: empty, or a qualified-name part ≤ 63 chars."""
    errs: list[str] = []
    if _blen(value) > _LABEL_VALUE_MAX_LEN:
        errs.append(f"must be no more than {_LABEL_VALUE_MAX_LEN} characters")
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errs.append(_regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


@lru_cache(maxsize=16384)
def _is_label_key(key: str) -> bool:
    return not _qualified_name_errors(key)


@lru_cache(maxsize=16384)
def _is_label_value(value: str) -> bool:
    return not _label_value_errors(value)


@lru_cache(maxsize=4096)
def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``; ``None`` where Go returns an error."""
    if _INT64_RE.fullmatch(text) is None:
        return None
    value = int(text)
    if value < _INT64_MIN or value > _INT64_MAX:
        return None
    return value


# --- label selectors (metav1.LabelSelectorAsSelector) ------------------------------------


def _label_selector_is_valid(selector: LabelSelector) -> bool:
    """The fast check behind ``label_selector_matches``; details come from
    ``validate_label_selector``."""
    for key, value in selector.match_labels.items():
        if not _is_label_key(key) or not _is_label_value(value):
            return False
    for req in selector.match_expressions:
        op = req.operator
        if op in (OP_IN, OP_NOT_IN):
            if not req.values:
                return False
        elif op in (OP_EXISTS, OP_DOES_NOT_EXIST):
            if req.values:
                return False
        else:
            return False
        if not _is_label_key(req.key):
            return False
        for value in req.values:
            if not _is_label_value(value):
                return False
    return True


def validate_label_selector(selector: LabelSelector | None, path: str) -> None:
    """Raise ``ValueError`` listing every problem of ``selector`` under field ``path``.

    The checks are upstream's ``ValidateLabelSelector``: keys are qualified names, values
    are label values, ``In``/``NotIn`` need values, ``Exists``/``DoesNotExist`` forbid
    them, and no other operator is allowed. ``None`` is valid (it selects nothing).
    """
    if selector is None:
        return
    errs: list[str] = []
    labels_path = f"{path}.matchLabels"
    for key, value in selector.match_labels.items():
        errs.extend(f"{labels_path}: Invalid value: {_q(key)}: {m}" for m in _qualified_name_errors(key))
        errs.extend(f"{labels_path}: Invalid value: {_q(value)}: {m}" for m in _label_value_errors(value))
    for i, req in enumerate(selector.match_expressions):
        req_path = f"{path}.matchExpressions[{i}]"
        op = req.operator
        if op in (OP_IN, OP_NOT_IN):
            if not req.values:
                errs.append(f"{req_path}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'")
        elif op in (OP_EXISTS, OP_DOES_NOT_EXIST):
            if req.values:
                errs.append(
                    f"{req_path}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
        else:
            errs.append(
                f"{req_path}.operator: Unsupported value: {_q(op)}: supported values: "
                '"In", "NotIn", "Exists", "DoesNotExist"'
            )
        errs.extend(f"{req_path}.key: Invalid value: {_q(req.key)}: {m}" for m in _qualified_name_errors(req.key))
        for j, value in enumerate(req.values):
            errs.extend(f"{req_path}.values[{j}]: Invalid value: {_q(value)}: {m}" for m in _label_value_errors(value))
    if errs:
        raise ValueError("; ".join(errs))


def label_selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy ``selector`` (``LabelSelectorAsSelector(sel).Matches``).

    ``None`` matches nothing; a selector with neither ``matchLabels`` nor
    ``matchExpressions`` matches everything. ``NotIn`` and ``DoesNotExist`` match a
    missing key. An invalid selector raises ``ValueError``, whatever the labels.
    """
    if selector is None:
        return False
    match_labels = selector.match_labels
    match_expressions = selector.match_expressions
    if not match_labels and not match_expressions:
        return True
    if not _label_selector_is_valid(selector):
        validate_label_selector(selector, "selector")
    for key, value in match_labels.items():
        if labels.get(key) != value:
            return False
    for req in match_expressions:
        op = req.operator
        if op == OP_IN:
            got = labels.get(req.key)
            if got is None or got not in req.values:
                return False
        elif op == OP_NOT_IN:
            got = labels.get(req.key)
            if got is not None and got in req.values:
                return False
        elif op == OP_EXISTS:
            if req.key not in labels:
                return False
        elif req.key in labels:  # DoesNotExist (the only operator left once valid)
            return False
    return True


# --- label selector string form (labels.Parse, metav1.ParseToLabelSelector) -------------

# Token kinds of upstream's lexer.
_T_EOS = 0
_T_IDENT = 1
_T_COMMA = 2
_T_NOT = 3
_T_EQ = 4
_T_DEQ = 5
_T_NEQ = 6
_T_GT = 7
_T_LT = 8
_T_IN = 9
_T_NOTIN = 10
_T_LPAR = 11
_T_RPAR = 12

_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_SYMBOLS = {
    "!=": _T_NEQ,
    "==": _T_DEQ,
    "=": _T_EQ,
    "!": _T_NOT,
    "(": _T_LPAR,
    ")": _T_RPAR,
    ",": _T_COMMA,
    ">": _T_GT,
    "<": _T_LT,
}
_KEYWORDS = {"in": _T_IN, "notin": _T_NOTIN}

# selection.Operator spellings, used in messages as upstream prints them.
_SEL_IN = "in"
_SEL_NOT_IN = "notin"
_SEL_EQUALS = "="
_SEL_DOUBLE_EQUALS = "=="
_SEL_NOT_EQUALS = "!="
_SEL_GT = "gt"
_SEL_LT = "lt"
_SEL_EXISTS = "exists"
_SEL_DOES_NOT_EXIST = "!"
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"
_OPERATOR_OF_TOKEN = {
    _T_IN: _SEL_IN,
    _T_NOTIN: _SEL_NOT_IN,
    _T_EQ: _SEL_EQUALS,
    _T_DEQ: _SEL_DOUBLE_EQUALS,
    _T_NEQ: _SEL_NOT_EQUALS,
    _T_GT: _SEL_GT,
    _T_LT: _SEL_LT,
}

_Token = tuple[int, str, int]  # kind, literal, position in the text
_Requirement = tuple[str, str, list[str]]  # key, selection operator, sorted values


class _SyntaxError(Exception):
    pass


def _lex(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    n = len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            tokens.append((_T_EOS, "", n))
            return tokens
        ch = text[i]
        if ch in _SPECIAL:
            two = text[i : i + 2]
            if two == "!=" or two == "==":
                tokens.append((_SYMBOLS[two], two, i))
                i += 2
            else:
                tokens.append((_SYMBOLS[ch], ch, i))
                i += 1
            continue
        start = i
        while i < n and text[i] not in _SPECIAL and text[i] not in _WHITESPACE:
            i += 1
        word = text[start:i]
        tokens.append((_KEYWORDS.get(word, _T_IDENT), word, start))


class _Parser:
    """Upstream's recursive-descent parser (``labels.Parser``), token for token."""

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self, values: bool) -> _Token:
        kind, lit, at = self.tokens[self.pos]
        if values and kind in (_T_IN, _T_NOTIN):
            kind = _T_IDENT
        return kind, lit, at

    def take(self, values: bool) -> _Token:
        token = self.peek(values)
        self.pos += 1
        return token

    @staticmethod
    def fail(message: str, at: int) -> _SyntaxError:
        return _SyntaxError(f"{message} (at position {at})")

    def parse(self) -> list[_Requirement]:
        reqs: list[_Requirement] = []
        while True:
            kind, lit, at = self.peek(True)
            if kind == _T_EOS:
                return reqs
            if kind != _T_IDENT and kind != _T_NOT:
                raise self.fail(f"found '{lit}', expected: !, identifier, or 'end of string'", at)
            try:
                reqs.append(self.requirement())
            except _SyntaxError as e:
                raise _SyntaxError(f"unable to parse requirement: {e}") from None
            kind, lit, at = self.take(True)
            if kind == _T_EOS:
                return reqs
            if kind != _T_COMMA:
                raise self.fail(f"found '{lit}', expected: ',' or 'end of string'", at)
            kind, lit, at = self.peek(True)
            if kind != _T_IDENT and kind != _T_NOT:
                raise self.fail(f"found '{lit}', expected: identifier after ','", at)

    def requirement(self) -> _Requirement:
        op = ""
        kind, key, at = self.take(True)
        if kind == _T_NOT:
            op = _SEL_DOES_NOT_EXIST
            kind, key, at = self.take(True)
        if kind != _T_IDENT:
            raise self.fail(f"found '{key}', expected: identifier", at)
        if not _is_label_key(key):
            detail = "; ".join(_qualified_name_errors(key))
            raise self.fail(f"Invalid value: {_q(key)}: {detail}", at)
        if op == _SEL_DOES_NOT_EXIST:
            return key, op, []
        if self.peek(True)[0] in (_T_EOS, _T_COMMA):
            return key, _SEL_EXISTS, []
        kind, lit, at = self.take(False)
        op = _OPERATOR_OF_TOKEN.get(kind, "")
        if not op:
            raise self.fail(f"found '{lit}', expected: {_BINARY_OPERATORS}", at)
        values_at = self.peek(True)[2]
        if op in (_SEL_IN, _SEL_NOT_IN):
            values = self.value_set()
        else:
            values = self.exact_value()
        ordered = sorted(values)
        if op in (_SEL_GT, _SEL_LT):
            for i, value in enumerate(ordered):
                if _parse_int64(value) is None:
                    raise self.fail(
                        f"values[{i}]: Invalid value: {_q(value)}: for 'Gt', 'Lt' operators, "
                        "the value must be an integer",
                        values_at,
                    )
        for i, value in enumerate(ordered):
            if not _is_label_value(value):
                detail = "; ".join(_label_value_errors(value))
                raise self.fail(f"values[{i}][{key}]: Invalid value: {_q(value)}: {detail}", values_at)
        return key, op, ordered

    def value_set(self) -> set[str]:
        kind, lit, at = self.take(True)
        if kind != _T_LPAR:
            raise self.fail(f"found '{lit}' expected: '('", at)
        kind, lit, at = self.peek(True)
        if kind == _T_RPAR:  # "()"
            self.take(True)
            return {""}
        if kind != _T_IDENT and kind != _T_COMMA:
            raise self.fail(f"found '{lit}', expected: ',', ')' or identifier", at)
        values = self.identifiers()
        self.take(True)  # the ")" identifiers() stopped at
        return values

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            kind, lit, at = self.take(True)
            if kind == _T_IDENT:
                values.add(lit)
                kind2, lit2, at2 = self.peek(True)
                if kind2 == _T_COMMA:
                    continue
                if kind2 == _T_RPAR:
                    return values
                raise self.fail(f"found '{lit2}', expected: ',' or ')'", at2)
            if kind == _T_COMMA:  # "(,", ",,", ",)" stand for empty values
                if not values:
                    values.add("")
                kind2 = self.peek(True)[0]
                if kind2 == _T_RPAR:
                    values.add("")
                    return values
                if kind2 == _T_COMMA:
                    self.take(True)
                    values.add("")
                continue
            raise self.fail(f"found '{lit}', expected: ',', or identifier", at)

    def exact_value(self) -> set[str]:
        kind = self.peek(True)[0]
        if kind in (_T_EOS, _T_COMMA):
            return {""}
        kind, lit, at = self.take(True)
        if kind != _T_IDENT:
            raise self.fail(f"found '{lit}', expected: identifier", at)
        return {lit}


def parse_label_selector(text: str) -> LabelSelector:
    """The kubectl form (``a=b,c!=d,e in (x,y),f notin (z),g,!h``) as a LabelSelector.

    ``=``/``==`` go to ``matchLabels`` (a repeated key keeps its last value, as upstream);
    ``in``, ``notin``, ``!=`` (``NotIn`` with one value), bare keys (``Exists``) and ``!key``
    (``DoesNotExist``) go to ``matchExpressions``, sorted by key, values as a sorted set.
    An empty string is the empty selector (matches everything). Bad syntax, invalid keys
    or values, and ``>``/``<`` raise ``ValueError``.
    """
    try:
        reqs = _Parser(text).parse()
    except _SyntaxError as e:
        raise ValueError(f"couldn't parse the selector string {_q(text)}: {e}") from None
    reqs.sort(key=lambda r: r[0])
    match_labels: dict[str, str] = {}
    expressions: list[LabelSelectorRequirement] = []
    for key, op, values in reqs:
        if op in (_SEL_EQUALS, _SEL_DOUBLE_EQUALS):
            match_labels[key] = values[0]
            continue
        if op == _SEL_IN:
            operator = OP_IN
        elif op in (_SEL_NOT_IN, _SEL_NOT_EQUALS):
            operator = OP_NOT_IN
        elif op == _SEL_EXISTS:
            operator = OP_EXISTS
        elif op == _SEL_DOES_NOT_EXIST:
            operator = OP_DOES_NOT_EXIST
        else:
            raise ValueError(f"{_q(op)} isn't supported in label selectors")
        expressions.append(LabelSelectorRequirement(key=key, operator=operator, values=values))
    return LabelSelector(match_labels=match_labels, match_expressions=expressions)


def format_label_selector(selector: LabelSelector) -> str:
    """The kubectl string form of ``selector``; ``parse_label_selector`` reads it back.

    ``matchLabels`` come first sorted by key (``k=v``), then ``matchExpressions`` in order
    (``k in (a,b)``, ``k notin (a)``, ``k``, ``!k``; values sorted, duplicates dropped).
    An invalid selector raises ``ValueError``.
    """
    validate_label_selector(selector, "selector")
    parts = [f"{key}={selector.match_labels[key]}" for key in sorted(selector.match_labels)]
    for req in selector.match_expressions:
        op = req.operator
        if op in (OP_IN, OP_NOT_IN):
            # An empty value is written as a leading comma, the one form the parser reads back.
            values = sorted(set(req.values))
            text = ",".join(["", *values[1:]]) if values[0] == "" else ",".join(values)
            if values == [""]:
                text = ","
            parts.append(f"{req.key} {'in' if op == OP_IN else 'notin'} ({text})")
        elif op == OP_EXISTS:
            parts.append(req.key)
        else:
            parts.append(f"!{req.key}")
    return ",".join(parts)


# --- node selectors (component-helpers nodeaffinity) -------------------------------------


def node_selector_requirement_matches(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    """Whether node ``labels`` satisfy one ``matchExpressions`` requirement.

    ``Gt``/``Lt`` compare as int64: one value, an integer, and a label value that parses
    as one. An invalid requirement (bad operator, key or value count) matches nothing.
    """
    key = req.key
    values = req.values
    if not _is_label_key(key):
        return False
    for value in values:
        if not _is_label_value(value):
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
        bound = _parse_int64(values[0])
        got = labels.get(key)
        if bound is None or got is None:
            return False
        number = _parse_int64(got)
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
    got = node_name if req.key == _NODE_NAME_FIELD else ""
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


# --- taints and tolerations --------------------------------------------------------------


def toleration_tolerates_taint(tol: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint``: an empty effect matches every effect, an empty key
    every key; ``Exists`` ignores the value, ``Equal`` (or no operator) compares it."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    op = tol.operator
    if op == "" or op == _TOLERATION_OP_EQUAL:
        return tol.value == taint.value
    return op == _TOLERATION_OP_EXISTS


def tolerations_tolerate_taint(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    """Whether any of ``tolerations`` tolerates ``taint``."""
    return any(toleration_tolerates_taint(tol, taint) for tol in tolerations)


def find_untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: Collection[str]
) -> Taint | None:
    """The first taint, among those with an effect in ``effects``, that no toleration
    tolerates (``FindMatchingUntoleratedTaint``); ``None`` when all are tolerated."""
    for taint in taints:
        if taint.effect in effects and not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


# --- field selectors (fields.ParseSelector) ----------------------------------------------


def _split_terms(text: str) -> list[str]:
    """Split on the commas that no backslash escapes."""
    terms: list[str] = []
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape_field_value(value: str) -> str:
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise ValueError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise ValueError(f"invalid field selector: unescaped character in value: {ch}")
        else:
            out.append(ch)
    if escaped:
        raise ValueError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(text: str) -> dict[str, str]:
    """``metadata.name=x,spec.nodeName=`` as ``{field: value}``.

    ``=`` and ``==`` only (``!=`` raises); empty terms are skipped, an empty value is
    allowed, values may escape ``\\``, ``,`` and ``=`` with a backslash. A field given two
    different values raises (upstream ANDs them: nothing would match).
    """
    result: dict[str, str] = {}
    for term in _split_terms(text) if text else []:
        if not term:
            continue
        cut = -1
        op = ""
        for i, ch in enumerate(term):
            if ch == "!" and term.startswith("!=", i):
                op = "!="
            elif ch == "=":
                op = "==" if term.startswith("==", i) else "="
            else:
                continue
            cut = i
            break
        if cut < 0:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{term}'")
        if op == "!=":
            raise ValueError(f"invalid selector: '{text}'; '!=' is not supported in '{term}' (only = and ==)")
        field = term[:cut]
        value = _unescape_field_value(term[cut + len(op) :])
        if result.get(field, value) != value:
            raise ValueError(f"invalid selector: '{text}'; field {_q(field)} is given two different values")
        result[field] = value
    return result


def fields_match(fields: Mapping[str, str], obj_fields: Mapping[str, str]) -> bool:
    """Every selected field equals the object's (a field the object lacks reads as ``""``)."""
    return all(obj_fields.get(field, "") == value for field, value in fields.items())
