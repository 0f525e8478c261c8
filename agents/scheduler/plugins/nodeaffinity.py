"""``NodeAffinity`` (upstream ``plugins/nodeaffinity/node_affinity.go`` over
``component-helpers/scheduling/corev1/nodeaffinity``): PreFilter, Filter, PreScore, Score (with
NormalizeScore).

What this module owns: the pod's required node constraints (``spec.nodeSelector`` AND
``requiredDuringSchedulingIgnoredDuringExecution``), the profile's scheduler-enforced
``addedAffinity`` (``NodeAffinityArgs``), and the preferred-terms score. Matching one
term/requirement, and a term's parse errors, are ``emulator.base.api.nodeaffinity`` (terms ORed,
requirements ANDed, an empty term matches nothing, an invalid requirement makes its term match
nothing).

==============  ===========================================================================
point           behaviour
==============  ===========================================================================
PreFilter       Skip when the pod has no nodeSelector, no required node affinity and the
                profile no ``addedAffinity``. When every required term names nodes with
                ``matchFields metadata.name In``: PreFilterResult = union over terms of the
                intersection within a term; all terms empty → UnschedulableAndUnresolvable
                "pod affinity terms conflict". State: ``PreFilterNodeAffinity``
Filter          ``addedAffinity`` required terms not matched → UnschedulableAndUnresolvable
                "node(s) didn't match scheduler-enforced node affinity"; the pod's required
                constraints not matched → UnschedulableAndUnresolvable "node(s) didn't match
                Pod's node affinity/selector" (computed here if PreFilter did not run)
PreScore        Skip when the pod has no preferred terms and ``addedAffinity`` none; an
                invalid preferred requirement → Error with upstream's field-path message
Score           Σ weights of matching preferred terms (pod's + ``addedAffinity``'s); terms
                with weight 0 or no requirements are ignored
NormalizeScore  ``default_normalize_score(100, reverse=False)``: 100 * s // max (max 0: as is)
==============  ===========================================================================

Vectorised (``filter_all`` / ``score_all`` / ``normalize_score_all``): the per-node matchers
above, evaluated once per node and constraint as ``NodeTable`` derived columns keyed by the
constraint's content (the JSON of the selector), re-evaluated only when a node object changes.

Events (v1.34, QueueingHints on): Node Add|UpdateNodeLabel — Queue when the node matches
``addedAffinity`` and the pod's required constraints and, for an update, did not match them
before (unmatch → match), or when matching failed on an invalid requirement (upstream's hint
error counts as Queue). Upstream registers no Pod event: nodeSelector and required affinity are
immutable except on gated pods, which wait for their gates, not for this plugin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import numpy as np

from agents.scheduler.args import NodeAffinityArgs, decode_args
from agents.scheduler.framework.interface import ALL_PASS, FilterCodes, Handle, PreFilterResult
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    QueueingHint,
    Status,
)
from agents.scheduler.plugins.helper import default_normalize_score, default_normalize_score_all
from emulator.base.api.core import Node, NodeSelector, NodeSelectorTerm, Pod, PreferredSchedulingTerm
from emulator.base.api.labelselector import aggregate
from emulator.base.api.nodeaffinity import (
    NODE_NAME_FIELD,
    node_selector_matches,
    node_selector_term_matches,
    term_errors,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "NodeAffinity",
    "preferred_terms_errors",
]

NAME: Final = "NodeAffinity"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"

_Weighted = tuple[tuple[int, NodeSelectorTerm], ...]
_FILTER_STATUSES: Final = (
    SUCCESS,
    Status(Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED),
    Status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD),
)


def preferred_terms_errors(terms: Sequence[PreferredSchedulingTerm]) -> list[str]:
    """Parse errors of the terms ``NewPreferredSchedulingTerms`` keeps (weight ≠ 0, non-empty)."""
    errs: list[str] = []
    for i, t in enumerate(terms):
        if t.weight and (t.preference.match_expressions or t.preference.match_fields):
            errs.extend(term_errors(t.preference, f"[{i}]"))
    return errs


def _weighted(terms: Sequence[PreferredSchedulingTerm]) -> _Weighted:
    return tuple(
        (t.weight, t.preference)
        for t in terms
        if t.weight and (t.preference.match_expressions or t.preference.match_fields)
    )


def _required_of(pod: Pod) -> NodeSelector | None:
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    return na.required_during_scheduling_ignored_during_execution if na is not None else None


def _preferred_of(pod: Pod) -> list[PreferredSchedulingTerm]:
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    return na.preferred_during_scheduling_ignored_during_execution if na is not None else []


# --- per-cycle state ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """Upstream ``RequiredNodeAffinity``: the nodeSelector pairs and the required selector."""

    node_selector: tuple[tuple[str, str], ...]
    required: NodeSelector | None

    @classmethod
    def of(cls, pod: Pod) -> _PreFilterState:
        return cls(tuple(pod.spec.node_selector.items()), _required_of(pod))

    def match(self, node: Node) -> bool:
        labels = node.metadata.labels
        for key, value in self.node_selector:
            if labels.get(key) != value:
                return False
        return self.required is None or node_selector_matches(self.required, node)

    def match_or_error(self, node: Node) -> bool | None:
        """Upstream ``Match`` with its error: ``None`` when the nodeSelector holds, no required
        term matches and some term is invalid (the hint then queues, as on any hint error)."""
        if self.match(node):
            return True
        labels = node.metadata.labels
        if self.required is None or any(labels.get(k) != v for k, v in self.node_selector):
            return False
        terms = self.required.node_selector_terms
        if any(term_errors(t, "") for t in terms if t.match_expressions or t.match_fields):
            return None
        return False

    def clone(self) -> _PreFilterState:
        return self


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    preferred: _Weighted

    def clone(self) -> _PreScoreState:
        return self


def _score(terms: _Weighted, node: Node) -> int:
    return sum(weight for weight, term in terms if node_selector_term_matches(term, node))


class NodeAffinity:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.args = decode_args(NodeAffinityArgs, args)
        added = self.args.added_affinity
        self._added_selector: NodeSelector | None = None
        self._added_preferred: _Weighted | None = None
        if added is not None:
            self._added_selector = added.required_during_scheduling_ignored_during_execution
            if added.preferred_during_scheduling_ignored_during_execution:
                self._added_preferred = _weighted(added.preferred_during_scheduling_ignored_during_execution)

    # PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        required = _required_of(pod)
        if required is None and self._added_selector is None and not pod.spec.node_selector:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState.of(pod))
        if required is None or not required.node_selector_terms:
            return None, SUCCESS
        names: set[str] = set()
        for term in required.node_selector_terms:
            term_names: set[str] | None = None
            for r in term.match_fields:
                if r.key == NODE_NAME_FIELD and r.operator == "In":
                    term_names = set(r.values) if term_names is None else term_names & set(r.values)
            if term_names is None:
                return None, SUCCESS  # an unrestricted term: every node is eligible (terms are ORed)
            names |= term_names
        if not names:
            return None, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return PreFilterResult(frozenset(names)), SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return Status(Code.Error, "node not found")
        if self._added_selector is not None and not node_selector_matches(self._added_selector, node):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED)
        try:
            s: _PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:  # PreFilter disabled or skipped: compute here, as upstream
            s = _PreFilterState.of(pod)
        if not s.match(node):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD)
        return SUCCESS

    def filter_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        try:
            s: _PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            s = _PreFilterState.of(pod)
        required = msgspec.json.encode(s.required) if s.required is not None else b""

        def pod_fails(ni: NodeInfo) -> int:
            return int(ni.node is not None and not s.match(ni.node))

        codes = table.derived(("NodeAffinity/required", s.node_selector, required), pod_fails)[rows] * 2
        added = self._added_selector
        if added is not None:

            def added_fails(ni: NodeInfo) -> int:
                return int(ni.node is not None and not node_selector_matches(added, ni.node))

            codes = np.where(table.derived((self, "added"), added_fails)[rows] != 0, 1, codes)
        return FilterCodes(codes, _FILTER_STATUSES) if np.count_nonzero(codes) else ALL_PASS

    # PreScore / Score / NormalizeScore

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        terms = _preferred_of(pod)
        if terms and (errs := preferred_terms_errors(terms)):  # (no terms, no errors)
            return Status(Code.Error, aggregate(errs))
        if not terms and self._added_preferred is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(_weighted(terms)))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        node = node_info.node
        if node is None:
            return 0, Status(Code.Error, "node not found")
        count = _score(self._added_preferred, node) if self._added_preferred is not None else 0
        try:
            s: _PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:  # PreScore disabled: compute here, as upstream
            terms = _preferred_of(pod)
            if errs := preferred_terms_errors(terms):
                return 0, Status(Code.Error, aggregate(errs))
            s = _PreScoreState(_weighted(terms))
        return count + _score(s.preferred, node), SUCCESS

    def score_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        try:
            s: _PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            return None

        def column(key: Any, terms: _Weighted) -> IntArray:
            return table.derived(key, lambda ni: _score(terms, ni.node) if ni.node is not None else 0)[rows]

        out = column(("NodeAffinity/preferred", msgspec.json.encode(s.preferred)), s.preferred)
        if self._added_preferred is not None:
            out = out + column((self, "added-preferred"), self._added_preferred)
        return out

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_score_all(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        return default_normalize_score_all(MAX_NODE_SCORE, False, scores)

    # Events

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        if new is None:
            return QueueingHint.QueueSkip
        if self._added_selector is not None and not node_selector_matches(self._added_selector, new):
            return QueueingHint.QueueSkip
        required = _PreFilterState.of(pod)
        is_matched = required.match_or_error(new)
        if is_matched is None:
            return QueueingHint.Queue
        if not is_matched:
            return QueueingHint.QueueSkip
        if old is None:  # a new node the pod's constraints accept
            return QueueingHint.Queue
        # An update: only unmatch -> match can help (an error on the old node counts as Queue).
        return QueueingHint.QueueSkip if required.match_or_error(old) else QueueingHint.Queue

    def __repr__(self) -> str:
        added = " addedAffinity" if self.args.added_affinity is not None else ""
        return f"<NodeAffinity{added}>"
