"""InterPodAffinity PreScore / Score / NormalizeScore (upstream ``interpodaffinity/scoring.go``).

What this module owns: the per-cycle topology score map — ``topology key → value → score`` — and
the node score derived from it.

For every existing pod (all pods when the incoming pod has preferred terms, otherwise only pods
with affinity terms), on a node with labels, each matching term adds its weight to the pair
(key, that node's value for the key):

=====================================================  ==========  ===========================
term                                                   matched     weight
=====================================================  ==========  ===========================
incoming pod's preferred affinity                      existing    +weight
incoming pod's preferred anti-affinity                 existing    −weight
existing pod's required affinity                       incoming    +hardPodAffinityWeight (if > 0)
existing pod's preferred affinity                      incoming    +weight
existing pod's preferred anti-affinity                 incoming    −weight
=====================================================  ==========  ===========================

The incoming pod's terms are matched without namespace labels (their namespace selectors are
already resolved); existing pods' terms are matched with the incoming pod's namespace labels.

Score(node) = Σ over topology keys the node has of ``map[key][node's value]``. NormalizeScore
(only when the map is non-empty): ``int(100.0 * ((s − min) / (max − min)))`` in float64 and
truncated, as upstream, 0 for every node when max == min; min/max over the scored nodes only.

PreScore is Skip when ``ignorePreferredTermsOfExistingPods`` is set and the pod has no preferred
terms, and when no existing pod contributed to the map.

It does not own: term parsing (``terms.py``), the plugin and namespace lookups (``plugin.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from agents.scheduler.framework.types import MAX_NODE_SCORE, NodeInfo, NodeScore
from emulator.base.api.core import Pod

from .terms import AffinityTerm, ParsedTerms, TermsOf, WeightedAffinityTerm

__all__ = [
    "PRE_SCORE_STATE_KEY",
    "PreScoreState",
    "ScoreMap",
    "build_topology_score",
    "normalize",
    "process_existing_pod",
    "score_node",
]

PRE_SCORE_STATE_KEY: Final = "PreScoreInterPodAffinity"

ScoreMap = dict[str, dict[str, int]]
"""Upstream ``scoreMap``: topology key → topology value → accumulated weight."""

Labels = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class PreScoreState:
    topology_score: ScoreMap

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore, as upstream


def _process_term(
    m: ScoreMap, term: AffinityTerm, weight: int, pod: Pod, ns_labels: Labels | None, labels: Labels
) -> None:
    if term.matches(pod, ns_labels):
        tv = labels.get(term.topology_key)
        if tv is not None:
            values = m.setdefault(term.topology_key, {})
            values[tv] = values.get(tv, 0) + weight


def _process_weighted(
    m: ScoreMap, terms: Sequence[WeightedAffinityTerm], pod: Pod, ns_labels: Labels | None, labels: Labels, sign: int
) -> None:
    for wt in terms:
        _process_term(m, wt.term, wt.weight * sign, pod, ns_labels, labels)


def process_existing_pod(
    m: ScoreMap,
    incoming: Pod,
    incoming_terms: ParsedTerms,
    ns_labels: Labels,
    existing: Pod,
    existing_terms: ParsedTerms,
    labels: Labels,
    hard_weight: int,
) -> None:
    """Upstream ``processExistingPod``."""
    if not labels:
        return
    _process_weighted(m, incoming_terms.preferred_affinity, existing, None, labels, 1)
    _process_weighted(m, incoming_terms.preferred_anti_affinity, existing, None, labels, -1)
    if hard_weight > 0:
        for t in existing_terms.required_affinity:
            _process_term(m, t, hard_weight, incoming, ns_labels, labels)
    _process_weighted(m, existing_terms.preferred_affinity, incoming, ns_labels, labels, 1)
    _process_weighted(m, existing_terms.preferred_anti_affinity, incoming, ns_labels, labels, -1)


def build_topology_score(
    incoming: Pod,
    incoming_terms: ParsedTerms,
    ns_labels: Labels,
    nodes: Iterable[NodeInfo],
    all_pods: bool,
    terms_of: TermsOf,
    hard_weight: int,
) -> ScoreMap | None:
    """The merged score map over ``nodes``; ``None`` when no node contributed (PreScore Skip).

    ``all_pods``: process every pod (the incoming pod has preferred terms), not only those with
    affinity terms. ``terms_of(pod) -> ParsedTerms`` parses existing pods (cached).
    """
    merged: ScoreMap | None = None
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        m: ScoreMap = {}
        for pi in ni.pods if all_pods else ni.pods_with_affinity:
            existing = pi.pod
            process_existing_pod(
                m, incoming, incoming_terms, ns_labels, existing, terms_of(existing), labels, hard_weight
            )
        if not m:
            continue
        if merged is None:
            merged = m
            continue
        for key, values in m.items():
            into = merged.setdefault(key, {})
            for v, s in values.items():
                into[v] = into.get(v, 0) + s
    return merged


def score_node(state: PreScoreState, node_info: NodeInfo) -> int:
    node = node_info.node
    labels: Labels = node.metadata.labels if node is not None else {}
    score = 0
    for key, values in state.topology_score.items():
        tv = labels.get(key)
        if tv is not None:
            score += values.get(tv, 0)
    return score


def normalize(state: PreScoreState, scores: list[NodeScore]) -> None:
    """Upstream ``NormalizeScore``, in place."""
    if not state.topology_score or not scores:
        return
    lo = min(s.score for s in scores)
    hi = max(s.score for s in scores)
    diff = hi - lo
    for s in scores:
        s.score = int(float(MAX_NODE_SCORE) * ((s.score - lo) / diff)) if diff > 0 else 0
