"""Parsed pod (anti-)affinity terms: upstream ``framework.AffinityTerm`` / ``WeightedAffinityTerm``
(``framework/types.go``) and ``metav1.LabelSelectorAsSelector``.

What this module owns: turning a pod's API ``PodAffinityTerm``s into matchable terms, once.

* Label and namespace selectors are ``emulator.base.api.labelselector``'s compiled ``Selector``
  (``compile_selector``: ``None`` → ``NOTHING``, ``{}`` → ``EVERYTHING``; an invalid selector
  raises ``SelectorError`` with upstream's ``labels.NewRequirement`` message, e.g.
  ``values[0][service]: Invalid value: "{{x}}": …``). They are re-exported here for the plugin.
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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from emulator.base.api.core import (
    LabelSelector,
    LabelSelectorRequirement,
    Pod,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from emulator.base.api.labelselector import (
    EVERYTHING,
    NOTHING,
    Selector,
    SelectorError,
    aggregate,
    compile_selector,
)

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
    return replace(parsed, error=aggregate(errs)) if errs else parsed


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
