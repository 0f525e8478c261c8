"""The kubectl string form of label selectors (``a=b,c!=d,e in (x,y),f notin (z),g,!h``).

What this module owns: upstream's lexer and recursive-descent parser (``labels.Parse``), token
for token with its error messages, and the conversion ``metav1.ParseToLabelSelector`` makes
(requirements sorted by key, values as a sorted set; ``!=`` becomes ``NotIn`` with one value;
``>``/``<`` are rejected), plus the inverse ``format_label_selector``; for list queries,
``parse_label_query`` keeps ``>``/``<`` apart (``compares`` evaluates them).

It does not own matching or the structured form's validation (``labelselector``), nor key and
value syntax (``labels``).
"""

from __future__ import annotations

from collections.abc import Mapping

from emulator.base.api.core import LabelSelector, LabelSelectorRequirement
from emulator.base.api.labels import (
    go_quote,
    is_label_key,
    is_label_value,
    label_value_errors,
    parse_int64,
    qualified_name_errors,
)
from emulator.base.api.labelselector import (
    OP_DOES_NOT_EXIST,
    OP_EXISTS,
    OP_IN,
    OP_NOT_IN,
    validate_label_selector,
)

__all__ = ["compares", "format_label_selector", "parse_label_query", "parse_label_selector"]

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
        if not is_label_key(key):
            detail = "; ".join(qualified_name_errors(key))
            raise self.fail(f"Invalid value: {go_quote(key)}: {detail}", at)
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
                if parse_int64(value) is None:
                    raise self.fail(
                        f"values[{i}]: Invalid value: {go_quote(value)}: for 'Gt', 'Lt' operators, "
                        "the value must be an integer",
                        values_at,
                    )
        for i, value in enumerate(ordered):
            if not is_label_value(value):
                detail = "; ".join(label_value_errors(value))
                raise self.fail(f"values[{i}][{key}]: Invalid value: {go_quote(value)}: {detail}", values_at)
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


def _parse(text: str) -> list[_Requirement]:
    try:
        reqs = _Parser(text).parse()
    except _SyntaxError as e:
        raise ValueError(f"couldn't parse the selector string {go_quote(text)}: {e}") from None
    reqs.sort(key=lambda r: r[0])
    return reqs


def _to_selector(reqs: list[_Requirement]) -> LabelSelector:
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
            raise ValueError(f"{go_quote(op)} isn't supported in label selectors")
        expressions.append(LabelSelectorRequirement(key=key, operator=operator, values=values))
    return LabelSelector(match_labels=match_labels, match_expressions=expressions)


def parse_label_selector(text: str) -> LabelSelector:
    """The kubectl form (``a=b,c!=d,e in (x,y),f notin (z),g,!h``) as a LabelSelector.

    ``=``/``==`` go to ``matchLabels`` (a repeated key keeps its last value, as upstream);
    ``in``, ``notin``, ``!=`` (``NotIn`` with one value), bare keys (``Exists``) and ``!key``
    (``DoesNotExist``) go to ``matchExpressions``, sorted by key, values as a sorted set.
    An empty string is the empty selector (matches everything). Bad syntax, invalid keys
    or values, and ``>``/``<`` raise ``ValueError``.
    """
    return _to_selector(_parse(text))


def parse_label_query(text: str) -> tuple[LabelSelector, list[tuple[str, bool, int]]]:
    """A list's ``labelSelector`` as upstream's ``labels.Parse`` reads it: the selector of
    ``parse_label_selector`` and, apart, the ``key>n``/``key<n`` requirements as (key,
    greater, n), which the structured form cannot hold (``ValueError`` as there for bad
    syntax)."""
    reqs = _parse(text)
    ordered: list[_Requirement] = []
    compare: list[tuple[str, bool, int]] = []
    for key, op, values in reqs:
        if op in (_SEL_GT, _SEL_LT):
            n = parse_int64(values[0])
            assert n is not None  # the parser checked it
            compare.append((key, op == _SEL_GT, n))
        else:
            ordered.append((key, op, values))
    return _to_selector(ordered), compare


def compares(labels: Mapping[str, str], compare: list[tuple[str, bool, int]]) -> bool:
    """Whether ``labels`` meet every (key, greater, n) of ``parse_label_query``: as upstream,
    the label must be present and an int64."""
    for key, greater, n in compare:
        value = labels.get(key)
        have = None if value is None else parse_int64(value)
        if have is None or not (have > n if greater else have < n):
            return False
    return True


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
