"""Label selectors: ``metav1.LabelSelector`` checked, compiled once, then matched.

What this module owns (upstream ``k8s.io/apimachinery/pkg/labels`` and ``apis/meta/v1``):

* ``Selector``: the one compiled label selector every matcher in the emulator uses
  (``labels.Selector``). ``compile_selector`` is ``metav1.LabelSelectorAsSelector``: ``None`` →
  ``NOTHING`` (matches no labels), ``{}`` → ``EVERYTHING``, otherwise ``matchLabels`` and
  ``matchExpressions`` become ANDed requirements sorted by key (``Selector.Add``). An invalid
  selector raises ``SelectorError`` with ``labels.NewRequirement``'s message. ``matches`` is
  specialised per shape (nothing, everything, one ``key=value``, one ``Exists``, the general
  loop) because the scheduler calls it per pod per node.
* ``label_selector_problems`` / ``validate_label_selector``: the API server's
  ``ValidateLabelSelector`` (and ``ValidateLabels``), every problem under a field path
  (``…matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator``).
* ``label_selector_matches(selector, labels)``: compile-and-match for callers holding an API
  ``LabelSelector``; compiled selectors are remembered by object identity, so a caller that
  asks again with the same object (a stored pod's term, a scenario's selector) compiles once.

The kubectl string form (``a=b,c in (x)``) is ``labelparse``; node selectors (``Gt``/``Lt``,
``matchFields``) are ``nodeaffinity``; key and value syntax is ``labels``.

=================  =========================  ==========================  =================
shape              ``nothing``                ``everything`` / empty()    ``requirements``
=================  =========================  ==========================  =================
``NOTHING``        True                       False                       ()
``EVERYTHING``     False                      True                        ()
compiled           False                      False                       ≥ 1, sorted by key
=================  =========================  ==========================  =================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Final

from emulator.base.api.core import LabelSelector
from emulator.base.api.labels import (
    go_quote,
    go_strings,
    is_label_key,
    is_label_value,
    label_value_errors,
    qualified_name_errors,
)

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "OP_DOES_NOT_EXIST",
    "OP_EXISTS",
    "OP_GT",
    "OP_IN",
    "OP_LT",
    "OP_NOT_IN",
    "Requirement",
    "Selector",
    "SelectorError",
    "aggregate",
    "compile_selector",
    "label_name_problems",
    "label_problems",
    "label_selector_errors",
    "label_selector_matches",
    "label_selector_problems",
    "requirement_errors",
    "validate_label_selector",
]

OP_IN: Final = "In"
OP_NOT_IN: Final = "NotIn"
OP_EXISTS: Final = "Exists"
OP_DOES_NOT_EXIST: Final = "DoesNotExist"
OP_GT: Final = "Gt"
OP_LT: Final = "Lt"
_LABEL_SELECTOR_OPS: Final = (OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST)

Requirement = tuple[str, str, frozenset[str]]
"""(key, operator ``In``/``NotIn``/``Exists``/``DoesNotExist``, values)."""


class SelectorError(ValueError):
    """A label selector ``LabelSelectorAsSelector`` rejects; the message is upstream's."""


def _false(labels: Mapping[str, str]) -> bool:
    return False


def _true(labels: Mapping[str, str]) -> bool:
    return True


class Selector:
    """A compiled label selector (``labels.Selector``). Immutable: ``add`` returns a new one.

    Two selectors with the same requirements (in any order, values as sets) are equal and hash
    alike, so they can key memo tables."""

    __slots__ = ("_key", "everything", "matches", "nothing", "requirements")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        self.requirements: tuple[Requirement, ...] = () if nothing else tuple(requirements)
        self.nothing = nothing
        self.everything = not nothing and not self.requirements
        self._key: tuple[object, ...] | None = None
        self.matches: Callable[[Mapping[str, str]], bool] = self._compile()
        """``matches(labels)``: whether the selector selects these labels."""

    @classmethod
    def from_set(cls, labels: Mapping[str, str]) -> Selector:
        """``labels.SelectorFromSet``: ``key=value`` for each entry (an empty map: everything)."""
        return cls((k, OP_IN, frozenset((v,))) for k, v in sorted(labels.items()))

    def add(self, other: Selector) -> Selector:
        """Both selectors' requirements ANDed (``Selector.Add``); *nothing* stays nothing."""
        if self.nothing or other.nothing:
            return NOTHING
        return Selector(sorted(self.requirements + other.requirements, key=_by_key))

    def empty(self) -> bool:
        """No requirement at all (``Selector.Empty``); *nothing* is not empty."""
        return self.everything

    def _compile(self) -> Callable[[Mapping[str, str]], bool]:
        if self.nothing:
            return _false
        if not self.requirements:
            return _true
        if len(self.requirements) == 1:
            key, op, values = self.requirements[0]
            if op == OP_IN and len(values) == 1:
                (value,) = values
                return lambda labels: labels.get(key) == value
            if op == OP_EXISTS:
                return lambda labels: key in labels
        return self._match_all

    def _match_all(self, labels: Mapping[str, str]) -> bool:
        for key, op, values in self.requirements:
            got = labels.get(key)
            if op == OP_IN:
                if got is None or got not in values:
                    return False
            elif op == OP_NOT_IN:
                if got is not None and got in values:
                    return False
            elif op == OP_EXISTS:
                if got is None:
                    return False
            elif got is not None:  # DoesNotExist
                return False
        return True

    def _identity(self) -> tuple[object, ...]:
        key = self._key
        if key is None:
            reqs = tuple(sorted({(k, op, tuple(sorted(v))) for k, op, v in self.requirements}))
            key = self._key = (self.nothing, reqs)
        return key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        if self.nothing:
            return "<Selector nothing>"
        parts = [f"{k} {op} {sorted(v)}" if v else f"{k} {op}" for k, op, v in self.requirements]
        return f"<Selector {', '.join(parts) or 'everything'}>"


def _by_key(req: Requirement) -> str:
    return req[0]


EVERYTHING: Final = Selector()
NOTHING: Final = Selector(nothing=True)


# --- LabelSelectorAsSelector ---------------------------------------------------------------------


def requirement_errors(key: str, op: str, values: list[str] | tuple[str, ...]) -> list[str]:
    """``labels.NewRequirement``'s checks in its order: the key, the operator's value count, each
    value. ``op`` is one of the six node/label operators (``Gt``/``Lt``: one integer value)."""
    errs: list[str] = []
    if not is_label_key(key):
        errs.append(f"key: Invalid value: {go_quote(key)}: {'; '.join(qualified_name_errors(key))}")
    if op in (OP_IN, OP_NOT_IN) and not values:
        errs.append(
            f"values: Invalid value: {go_strings(values)}: for 'in', 'notin' operators, values set can't be empty"
        )
    elif op in (OP_EXISTS, OP_DOES_NOT_EXIST) and values:
        errs.append(
            f"values: Invalid value: {go_strings(values)}: values set must be empty for exists and does not exist"
        )
    for i, v in enumerate(values):
        if not is_label_value(v):
            errs.append(f"values[{i}][{key}]: Invalid value: {go_quote(v)}: {'; '.join(label_value_errors(v))}")
    return errs


def aggregate(errs: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several as ``[a, b]``."""
    unique = list(dict.fromkeys(errs))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def compile_selector(selector: LabelSelector | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``; ``SelectorError`` at the first invalid requirement
    (``matchLabels`` in key order: Go's map order is random, sorted is deterministic)."""
    if selector is None:
        return NOTHING
    match_labels = selector.match_labels
    if not match_labels and not selector.match_expressions:
        return EVERYTHING
    reqs: list[Requirement] = []
    for key in sorted(match_labels):
        value = match_labels[key]
        if not is_label_key(key) or not is_label_value(value):
            raise SelectorError(aggregate(requirement_errors(key, OP_IN, [value])))
        reqs.append((key, OP_IN, frozenset((value,))))
    for expr in selector.match_expressions:
        op = expr.operator
        if op not in _LABEL_SELECTOR_OPS:
            raise SelectorError(f"{go_quote(op)} is not a valid label selector operator")
        if errs := requirement_errors(expr.key, op, expr.values):
            raise SelectorError(aggregate(errs))
        reqs.append((expr.key, op, frozenset(expr.values)))
    reqs.sort(key=_by_key)
    return Selector(reqs)


# --- ValidateLabelSelector -----------------------------------------------------------------------


def label_name_problems(key: str, path: str) -> Iterator[tuple[str, str]]:
    """``ValidateLabelName``: one problem per ``IsQualifiedName`` message."""
    if not is_label_key(key):
        for msg in qualified_name_errors(key):
            yield path, f"Invalid value: {go_quote(key)}: {msg}"


def label_problems(labels: Mapping[str, str], path: str) -> Iterator[tuple[str, str]]:
    """``ValidateLabels`` as ``(path, detail)`` pairs: keys are qualified names, values label
    values (keys in sorted order: Go's map order is random)."""
    for key in sorted(labels):
        yield from label_name_problems(key, path)
        value = labels[key]
        if not is_label_value(value):
            for msg in label_value_errors(value):
                yield path, f"Invalid value: {go_quote(value)}: {msg}"


def label_selector_problems(selector: LabelSelector | None, path: str) -> Iterator[tuple[str, str]]:
    """``ValidateLabelSelector`` as ``(path, detail)`` pairs, in upstream's order: ``matchLabels``,
    then each expression's operator and value count, key, values (checked: on create
    ``AllowInvalidLabelValueInSelector`` is false). ``None`` is valid (it selects nothing)."""
    if selector is None:
        return
    if selector.match_labels:
        yield from label_problems(selector.match_labels, f"{path}.matchLabels")
    for i, req in enumerate(selector.match_expressions):
        p = f"{path}.matchExpressions[{i}]"
        op = req.operator
        if op in (OP_IN, OP_NOT_IN):
            if not req.values:
                yield f"{p}.values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"
        elif op in (OP_EXISTS, OP_DOES_NOT_EXIST):
            if req.values:
                yield f"{p}.values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        else:
            yield f"{p}.operator", f"Invalid value: {go_quote(op)}: not a valid selector operator"
        yield from label_name_problems(req.key, f"{p}.key")
        for j, value in enumerate(req.values):
            if not is_label_value(value):
                for msg in label_value_errors(value):
                    yield f"{p}.values[{j}]", f"Invalid value: {go_quote(value)}: {msg}"


def label_selector_errors(selector: LabelSelector | None, path: str) -> list[str]:
    """Every problem ``label_selector_problems`` finds, each as ``path: detail``."""
    return [f"{p}: {detail}" for p, detail in label_selector_problems(selector, path)]


def validate_label_selector(selector: LabelSelector | None, path: str) -> None:
    """Raise ``ValueError`` listing (``; ``-joined) every problem ``label_selector_errors`` finds."""
    if errs := label_selector_errors(selector, path):
        raise ValueError("; ".join(errs))


# --- compile-and-match ---------------------------------------------------------------------------

_COMPILED_LIMIT: Final = 4096
_compiled: dict[int, tuple[LabelSelector, Selector]] = {}
"""``id(selector)`` → (the selector, kept alive so the id stays its own; its compiled form)."""


def _compiled_of(selector: LabelSelector) -> Selector:
    entry = _compiled.get(id(selector))
    if entry is not None and entry[0] is selector:
        return entry[1]
    try:
        compiled = compile_selector(selector)
    except SelectorError:
        validate_label_selector(selector, "selector")  # the API server's wording, with paths
        raise
    if len(_compiled) >= _COMPILED_LIMIT:
        _compiled.clear()
    _compiled[id(selector)] = (selector, compiled)
    return compiled


def label_selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy ``selector`` (``LabelSelectorAsSelector(sel).Matches``).

    ``None`` matches nothing; a selector with neither ``matchLabels`` nor ``matchExpressions``
    matches everything. ``NotIn`` and ``DoesNotExist`` match a missing key. An invalid selector
    raises ``ValueError`` (``validate_label_selector``'s message), whatever the labels.
    """
    if selector is None:
        return False
    if not selector.match_labels and not selector.match_expressions:
        return True
    return _compiled_of(selector).matches(labels)
