"""Parsed pod (anti-)affinity terms: upstream ``framework.AffinityTerm`` / ``WeightedAffinityTerm``
(``framework/types.go``) and ``metav1.LabelSelectorAsSelector``.

What this module owns: turning a pod's API ``PodAffinityTerm``s into matchable terms, once.

* ``Selector``: a label selector compiled to requirements. ``None`` → ``NOTHING`` (matches no
  labels), ``{}`` → ``EVERYTHING``. An invalid selector raises ``SelectorError`` with upstream's
  ``labels.NewRequirement`` message (e.g. ``values[0][service]: Invalid value: "{{x}}": …``).
* ``AffinityTerm``: namespaces (the term's list; the pod's own namespace when the term has neither
  ``namespaces`` nor ``namespaceSelector``), label selector, topology key, namespace selector.
  ``matches(pod, ns_labels)`` = (pod's namespace listed or namespace selector matches
  ``ns_labels``) and the label selector matches the pod's labels — upstream ``AffinityTerm.Matches``.
* ``ParsedTerms`` / ``parse_pod``: the four term lists of a pod plus the aggregated parse error
  ("requiredAffinityTerms: …", as upstream ``PodInfo.Update``); a list that failed to parse is empty.
* ``TermCache``: parsed terms by pod UID, reused while the pod object is the same one (or has an
  equal ``spec.affinity`` and labels), so per-cycle work over thousands of existing pods does not
  re-parse them. Bounded: cleared when it grows past ``TermCache.LIMIT`` entries.

matchLabelKeys / mismatchLabelKeys (GA in 1.33): upstream the API server merges them into the term's
``labelSelector`` when the pod is created (``key In [pod's value]`` / ``key NotIn [pod's value]``
for each listed key the pod has; nothing when ``labelSelector`` is null), and the scheduler never
looks at them. This emulator's API server does not, so the merge happens here while parsing, with
the pod's labels at parse time (upstream: at creation; labels rarely change afterwards).

It does not own: counting or scoring (``filtering.py``, ``scoring.py``), namespace lookups
(``plugin.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from emulator.api.core import LabelSelector, LabelSelectorRequirement, Pod, PodAffinityTerm, WeightedPodAffinityTerm
from emulator.api.selectors import _label_value_errors, _qualified_name_errors

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "AffinityTerm",
    "ParsedTerms",
    "Selector",
    "SelectorError",
    "TermCache",
    "TermsOf",
    "WeightedAffinityTerm",
    "compile_selector",
    "parse_pod",
    "pod_matches_all_terms",
]

_IN, _NOT_IN, _EXISTS, _DOES_NOT_EXIST = 0, 1, 2, 3
_OPERATORS: Final = {"In": _IN, "NotIn": _NOT_IN, "Exists": _EXISTS, "DoesNotExist": _DOES_NOT_EXIST}

Requirement = tuple[str, int, frozenset[str]]


class SelectorError(ValueError):
    """A label selector upstream's ``LabelSelectorAsSelector`` rejects; the message is upstream's."""


class Selector:
    """A compiled label selector: ``matches(labels)`` without re-validating."""

    __slots__ = ("everything", "nothing", "requirements")

    def __init__(self, requirements: tuple[Requirement, ...] = (), *, nothing: bool = False) -> None:
        self.requirements = requirements
        self.nothing = nothing
        self.everything = not nothing and not requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for key, op, values in self.requirements:
            if op == _IN:
                v = labels.get(key)
                if v is None or v not in values:
                    return False
            elif op == _NOT_IN:
                v = labels.get(key)
                if v is not None and v in values:
                    return False
            elif op == _EXISTS:
                if key not in labels:
                    return False
            elif key in labels:
                return False
        return True

    def __repr__(self) -> str:
        if self.nothing:
            return "<Selector nothing>"
        return f"<Selector {list(self.requirements)!r}>" if self.requirements else "<Selector everything>"


EVERYTHING: Final = Selector()
NOTHING: Final = Selector(nothing=True)


def _go_strings(values: Sequence[str]) -> str:
    """Go's ``%#v`` of a ``[]string`` (as ``field.Invalid`` prints a list value)."""
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "}"


def _requirement_errors(key: str, op: int, values: Sequence[str]) -> list[str]:
    """Upstream ``labels.NewRequirement`` validation, in its order: key, operator/values, each value."""
    errs: list[str] = []
    key_errs = _qualified_name_errors(key)
    if key_errs:
        errs.append(f"key: Invalid value: {json.dumps(key, ensure_ascii=False)}: {'; '.join(key_errs)}")
    if op in (_IN, _NOT_IN) and not values:
        errs.append(
            f"values: Invalid value: {_go_strings(values)}: for 'in', 'notin' operators, values set can't be empty"
        )
    if op in (_EXISTS, _DOES_NOT_EXIST) and values:
        errs.append(
            f"values: Invalid value: {_go_strings(values)}: values set must be empty for exists and does not exist"
        )
    for i, v in enumerate(values):
        v_errs = _label_value_errors(v)
        if v_errs:
            errs.append(f"values[{i}][{key}]: Invalid value: {json.dumps(v, ensure_ascii=False)}: {'; '.join(v_errs)}")
    return errs


def _aggregate(errs: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message as is, several as ``[a, b]``."""
    unique = list(dict.fromkeys(errs))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def compile_selector(selector: LabelSelector | None) -> Selector:
    """``LabelSelectorAsSelector``; ``SelectorError`` at the first invalid requirement."""
    if selector is None:
        return NOTHING
    if not selector.match_labels and not selector.match_expressions:
        return EVERYTHING
    reqs: list[Requirement] = []
    for key in sorted(selector.match_labels):  # Go iterates the map randomly; sorted is deterministic
        value = selector.match_labels[key]
        errs = _requirement_errors(key, _IN, [value])
        if errs:
            raise SelectorError(_aggregate(errs))
        reqs.append((key, _IN, frozenset((value,))))
    for expr in selector.match_expressions:
        op = _OPERATORS.get(expr.operator)
        if op is None:
            raise SelectorError(f"{json.dumps(expr.operator)} is not a valid label selector operator")
        errs = _requirement_errors(expr.key, op, expr.values)
        if errs:
            raise SelectorError(_aggregate(errs))
        reqs.append((expr.key, op, frozenset(expr.values)))
    return Selector(tuple(reqs))


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A processed ``PodAffinityTerm`` (upstream ``framework.AffinityTerm``)."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """The pod is in one of the term's namespaces (listed or selected) and has matching labels."""
        meta = pod.metadata
        if meta.namespace in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(meta.labels)
        return False

    def with_namespaces(self, names: Sequence[str]) -> AffinityTerm:
        """The term with ``names`` added and its namespace selector resolved away (``Nothing``)."""
        return replace(self, namespaces=self.namespaces.union(names), namespace_selector=NOTHING)


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def _merged_selector(term: PodAffinityTerm, labels: Mapping[str, str]) -> LabelSelector | None:
    """The API server's matchLabelKeys / mismatchLabelKeys merge (see the module docstring)."""
    sel = term.label_selector
    if sel is None or not (term.match_label_keys or term.mismatch_label_keys):
        return sel
    extra = [
        LabelSelectorRequirement(key=k, operator="In", values=[labels[k]]) for k in term.match_label_keys if k in labels
    ]
    extra += [
        LabelSelectorRequirement(key=k, operator="NotIn", values=[labels[k]])
        for k in term.mismatch_label_keys
        if k in labels
    ]
    if not extra:
        return sel
    return LabelSelector(match_labels=dict(sel.match_labels), match_expressions=[*sel.match_expressions, *extra])


def _term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    """Upstream ``newAffinityTerm``: label selector first, then namespaces, then namespace selector."""
    selector = compile_selector(_merged_selector(term, pod.metadata.labels))
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.metadata.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    return AffinityTerm(namespaces, selector, term.topology_key, compile_selector(term.namespace_selector))


@dataclass(frozen=True, slots=True)
class ParsedTerms:
    """A pod's four term lists (upstream ``PodInfo`` fields) and its parse error ("" if none)."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()
    error: str = ""


_EMPTY: Final = ParsedTerms()


def parse_pod(pod: Pod) -> ParsedTerms:
    """All of a pod's terms; a list with an invalid selector is left empty and reported in ``error``."""
    aff = pod.spec.affinity
    pa = aff.pod_affinity if aff is not None else None
    paa = aff.pod_anti_affinity if aff is not None else None
    if pa is None and paa is None:
        return _EMPTY
    errs: list[str] = []

    def required(name: str, terms: list[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
        try:
            return tuple(_term(pod, t) for t in terms)
        except SelectorError as e:
            errs.append(f"{name}: {e}")
            return ()

    def preferred(name: str, terms: list[WeightedPodAffinityTerm]) -> tuple[WeightedAffinityTerm, ...]:
        try:
            return tuple(WeightedAffinityTerm(_term(pod, t.pod_affinity_term), t.weight) for t in terms)
        except SelectorError as e:
            errs.append(f"{name}: {e}")
            return ()

    parsed = ParsedTerms(
        required("requiredAffinityTerms", pa.required_during_scheduling_ignored_during_execution if pa else []),
        required("requiredAntiAffinityTerms", paa.required_during_scheduling_ignored_during_execution if paa else []),
        preferred("preferredAffinityTerms", pa.preferred_during_scheduling_ignored_during_execution if pa else []),
        preferred(
            "preferredAntiAffinityTerms", paa.preferred_during_scheduling_ignored_during_execution if paa else []
        ),
    )
    return replace(parsed, error=_aggregate(errs)) if errs else parsed


TermsOf = Callable[[Pod], ParsedTerms]
"""``terms_of(pod) -> ParsedTerms`` (``TermCache.get``)."""


def pod_matches_all_terms(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """Upstream ``podMatchesAllAffinityTerms``: False for no terms; namespace labels not consulted."""
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


class TermCache:
    """Parsed terms by pod UID, valid while the pod's affinity and labels are unchanged."""

    LIMIT: Final = 65536

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Pod, ParsedTerms]] = {}

    def get(self, pod: Pod) -> ParsedTerms:
        if pod.spec.affinity is None:
            return _EMPTY
        uid = pod.metadata.uid
        entry = self._entries.get(uid) if uid else None
        if entry is not None:
            cached, parsed = entry
            if cached is pod:
                return parsed
            if (
                cached.spec.affinity == pod.spec.affinity
                and cached.metadata.namespace == pod.metadata.namespace
                and cached.metadata.labels == pod.metadata.labels
            ):
                self._entries[uid] = (pod, parsed)
                return parsed
        parsed = parse_pod(pod)
        if uid:
            if len(self._entries) >= self.LIMIT:
                self._entries.clear()
            self._entries[uid] = (pod, parsed)
        return parsed

    def __len__(self) -> int:
        return len(self._entries)
