"""InterPodAffinity PreFilter / Filter state (upstream ``interpodaffinity/filtering.go``).

What this module owns: the per-cycle ``PreFilterState`` — three maps from a topology pair
``(topology key, value)`` to a count — how it is built, incrementally updated (AddPod/RemovePod
extensions: preemption and nominated pods) and checked per node.

==============================  ================================================================
map                             counts, per topology pair of the node hosting the existing pod
==============================  ================================================================
``existing_anti_affinity``      existing pods' required anti-affinity terms matching the incoming
                                pod (namespace selectors checked against the incoming pod's
                                namespace labels)
``affinity``                    one per term of the incoming pod's required affinity, for each
                                existing pod matching ALL of those terms
``anti_affinity``               each term of the incoming pod's required anti-affinity an
                                existing pod matches
==============================  ================================================================

A pod on a node without the term's topology key counts nowhere. Filter, in upstream's order:

====  ===================================================================  =========================
step  node fails when                                                      status
====  ===================================================================  =========================
1     it lacks a topology key of the pod's affinity terms, or some term's  UnschedulableAndUnresolv.
      pair count is 0 — unless no existing pod matches at all
      (``affinity`` empty) and the pod matches all its own terms
      (the first pod of a self-affine group)                               "node(s) didn't match pod
                                                                           affinity rules"
2     a pair of the pod's anti-affinity terms on the node has count > 0    Unschedulable "node(s)
                                                                           didn't match pod
                                                                           anti-affinity rules"
3     any of the node's label pairs has ``existing_anti_affinity`` > 0     Unschedulable "node(s)
                                                                           didn't satisfy existing
                                                                           pods anti-affinity rules"
====  ===================================================================  =========================

The incoming pod's terms have their namespace selector already resolved into namespaces
(``plugin.py``), so matching them against existing pods needs no namespace labels.

It does not own: term parsing (``terms.py``), namespace lookups and the plugin (``plugin.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from agents.scheduler.framework.types import SUCCESS, Code, NodeInfo, Status
from emulator.base.api.core import Pod

from .aggregate import Aggregate
from .terms import AffinityTerm, ParsedTerms, TermsOf, pod_matches_all_terms

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "Counts",
    "PreFilterState",
    "existing_anti_affinity_counts",
    "filter_node",
    "incoming_affinity_anti_affinity_counts",
]

PRE_FILTER_STATE_KEY: Final = "PreFilterInterPodAffinity"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"

TopologyPair = tuple[str, str]
Counts = dict[TopologyPair, int]
"""Upstream ``topologyToMatchedTermCount``."""

Labels = Mapping[str, str]


def _update(counts: Counts, labels: Labels, key: str, value: int) -> None:
    """Add ``value`` to the node's pair for ``key``; a pair dropping to 0 is removed."""
    tv = labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = counts.get(pair, 0) + value
    if n:
        counts[pair] = n
    else:
        counts.pop(pair, None)


def _add_affinity(counts: Counts, terms: Sequence[AffinityTerm], pod: Pod, labels: Labels, value: int) -> None:
    """Every term counts once when ``pod`` matches ALL of them."""
    if pod_matches_all_terms(terms, pod):
        for t in terms:
            _update(counts, labels, t.topology_key, value)


def _add_anti_affinity(
    counts: Counts, terms: Sequence[AffinityTerm], pod: Pod, ns_labels: Labels | None, labels: Labels, value: int
) -> None:
    """Each term ``pod`` matches counts once."""
    for t in terms:
        if t.matches(pod, ns_labels):
            _update(counts, labels, t.topology_key, value)


@dataclass(slots=True)
class PreFilterState:
    """Computed at PreFilter, read at Filter, updated by AddPod/RemovePod."""

    existing_anti_affinity_counts: Counts
    affinity_counts: Counts
    anti_affinity_counts: Counts
    pod: Pod
    terms: ParsedTerms
    """The incoming pod's terms, namespace selectors resolved."""
    namespace_labels: Labels
    """The incoming pod's namespace labels (for existing pods' namespace selectors)."""
    sources: tuple[tuple[Aggregate, int] | None, tuple[Aggregate, int] | None] | None = field(
        default=None, compare=False, repr=False
    )
    """Where the maps were copied from (``memo.py``): (aggregate, its version) for the existing
    anti-affinity map and for the incoming pair, so ``filter_all`` can read the aggregates' code
    arrays while both are unchanged. Dropped by ``update_with_pod``."""

    def clone(self) -> PreFilterState:
        return PreFilterState(
            dict(self.existing_anti_affinity_counts),
            dict(self.affinity_counts),
            dict(self.anti_affinity_counts),
            self.pod,
            self.terms,
            self.namespace_labels,
            self.sources,
        )

    def update_with_pod(self, other: Pod, other_terms: ParsedTerms, node_labels: Labels, multiplier: int) -> None:
        """Upstream ``updateWithPod``: account for ``other`` added (+1) to / removed (-1) from a node."""
        self.sources = None
        _add_anti_affinity(
            self.existing_anti_affinity_counts,
            other_terms.required_anti_affinity,
            self.pod,
            self.namespace_labels,
            node_labels,
            multiplier,
        )
        _add_affinity(self.affinity_counts, self.terms.required_affinity, other, node_labels, multiplier)
        _add_anti_affinity(
            self.anti_affinity_counts, self.terms.required_anti_affinity, other, None, node_labels, multiplier
        )


def existing_anti_affinity_counts(pod: Pod, ns_labels: Labels, nodes: Iterable[NodeInfo], terms_of: TermsOf) -> Counts:
    """Upstream ``getExistingAntiAffinityCounts`` over the nodes holding pods with required anti-affinity."""
    counts: Counts = {}
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        for pi in ni.pods_with_required_anti_affinity:
            _add_anti_affinity(counts, terms_of(pi.pod).required_anti_affinity, pod, ns_labels, labels, 1)
    return counts


def incoming_affinity_anti_affinity_counts(terms: ParsedTerms, nodes: Iterable[NodeInfo]) -> tuple[Counts, Counts]:
    """Upstream ``getIncomingAffinityAntiAffinityCounts`` over all nodes' pods."""
    affinity: Counts = {}
    anti: Counts = {}
    required, required_anti = terms.required_affinity, terms.required_anti_affinity
    if not required and not required_anti:
        return affinity, anti
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.metadata.labels
        for pi in ni.pods:
            _add_affinity(affinity, required, pi.pod, labels, 1)
            _add_anti_affinity(anti, required_anti, pi.pod, None, labels, 1)
    return affinity, anti


def _satisfy_existing_pods_anti_affinity(state: PreFilterState, labels: Labels) -> bool:
    counts = state.existing_anti_affinity_counts
    if counts:
        for pair in labels.items():
            if counts.get(pair, 0) > 0:
                return False
    return True


def _satisfy_pod_anti_affinity(state: PreFilterState, labels: Labels) -> bool:
    counts = state.anti_affinity_counts
    if counts:
        for t in state.terms.required_anti_affinity:
            tv = labels.get(t.topology_key)
            if tv is not None and counts.get((t.topology_key, tv), 0) > 0:
                return False
    return True


def _satisfy_pod_affinity(state: PreFilterState, labels: Labels) -> bool:
    pods_exist = True
    counts = state.affinity_counts
    terms = state.terms.required_affinity
    for t in terms:
        tv = labels.get(t.topology_key)
        if tv is None:
            return False  # every topology key must be on the node
        if counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: nothing matches anywhere yet.
    return not counts and pod_matches_all_terms(terms, state.pod)


def filter_node(state: PreFilterState, node_info: NodeInfo) -> Status:
    """Upstream ``Filter`` after reading the state: the first failing check decides."""
    node = node_info.node
    labels: Labels = node.metadata.labels if node is not None else {}
    if not _satisfy_pod_affinity(state, labels):
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
    if not _satisfy_pod_anti_affinity(state, labels):
        return Status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    if not _satisfy_existing_pods_anti_affinity(state, labels):
        return Status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    return SUCCESS
