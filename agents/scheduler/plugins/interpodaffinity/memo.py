"""InterPodAffinity's PreFilter and PreScore sums kept across cycles (same results as the reference).

What this module owns: ``AffinityMemo``, three kinds of ``Aggregate`` (``aggregate.py``) and the
rows they sum, each the loop body of a reference function in ``filtering.py`` / ``scoring.py``:

==============================  ===============================================  ==================
sum (reference)                 a node's row                                     memo key
==============================  ===============================================  ==================
existing anti-affinity          each required anti-affinity term of the node's   incoming pod's
(``existing_anti_affinity_      pods with such terms that matches the incoming   namespace, labels,
counts``)                       pod: (0, key, node's value, 1)                   namespace labels
incoming affinity / anti-       each pod matching ALL the incoming pod's         the incoming pod's
affinity (``incoming_affinity_  required affinity terms: (0, term key, value,    resolved required
anti_affinity_counts``)         1) per term; each anti-affinity term a pod       terms
                                matches: (1, term key, value, 1)
topology score                  the node's ``processExistingPod`` map over its   the incoming pod's
(``build_topology_score``)      pods (all, or those with affinity): (0, key,     namespace, labels,
                                value, sum) per pair it names                    namespace labels,
                                                                                 resolved preferred
                                                                                 terms and weights,
                                                                                 hardPodAffinity-
                                                                                 Weight, all pods?
==============================  ===============================================  ==================

A term's key is its *signature*: namespaces, both selectors' requirements and ``nothing``
flags, topology key — everything ``AffinityTerm.matches`` reads. Rows are summed over the
snapshot's whole ``node_info_list`` by position: the reference's sub-lists
(``have_pods_with_(required_anti_)affinity_node_info_list``) are that list filtered on a non-empty
``pods_with_(required_anti_)affinity``, and a node outside them has an empty row here too.

Totals are handed out as copies (the PreFilter state is updated by AddPod/RemovePod). A sub-list
of at most ``SMALL`` nodes takes the reference function directly (cheaper than a generation
scan over every node). At most ``MAX_KEYS`` aggregates are kept (all dropped past that).

It does not own: the generation bookkeeping (``aggregate.py``), the Filter over code arrays
(``vector.py``), the plugin's flow (``plugin.py``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Final

from agents.scheduler.framework.types import NodeInfo
from emulator.base.api.core import Pod

from .aggregate import Aggregate, Codes, Entry, Row, generations
from .filtering import Counts
from .scoring import ScoreMap, process_existing_pod
from .terms import AffinityTerm, ParsedTerms, TermsOf, WeightedAffinityTerm, pod_matches_all_terms

__all__ = ["MAX_KEYS", "SMALL", "AffinityMemo", "term_signature"]

MAX_KEYS: Final = 64
SMALL: Final = 32
"""Sub-lists up to this many nodes take the reference functions."""

Labels = Mapping[str, str]
Signature = tuple[object, ...]


def term_signature(t: AffinityTerm) -> Signature:
    """Everything ``t.matches`` reads, hashable."""
    s, ns = t.selector, t.namespace_selector
    return (t.namespaces, s.nothing, s.requirements, t.topology_key, ns.nothing, ns.requirements)


def _labels_key(labels: Labels) -> frozenset[tuple[str, str]]:
    return frozenset(labels.items())


class _Gens:
    """One call's generation scans, shared by the sums over the same list object."""

    __slots__ = ("_lists",)

    def __init__(self) -> None:
        self._lists: list[tuple[Sequence[NodeInfo], list[int]]] = []

    def of(self, nodes: Sequence[NodeInfo]) -> list[int]:
        for listed, gens in self._lists:
            if listed is nodes:
                return gens
        gens = generations(nodes)
        self._lists.append((nodes, gens))
        return gens


class AffinityMemo:
    """The plugin's aggregates, by kind and key; ``codes`` interns topology values for Filter."""

    __slots__ = ("_aggregates", "_terms_of", "codes")

    def __init__(self, terms_of: TermsOf) -> None:
        self._terms_of = terms_of
        self._aggregates: dict[Hashable, Aggregate] = {}
        self.codes = Codes()

    def _aggregate(self, key: Hashable, n_maps: int, *, weighted: bool = False, vector: bool = False) -> Aggregate:
        agg = self._aggregates.get(key)
        if agg is None:
            if len(self._aggregates) >= MAX_KEYS:
                self._aggregates.clear()
            agg = self._aggregates[key] = Aggregate(n_maps, weighted=weighted, codes=self.codes if vector else None)
        return agg

    @staticmethod
    def scans() -> _Gens:
        return _Gens()

    # --- PreFilter ----------------------------------------------------------------------------

    def existing_anti_affinity(
        self, pod: Pod, ns_labels: Labels, all_nodes: Sequence[NodeInfo], scans: _Gens
    ) -> tuple[Counts, Aggregate]:
        """``existing_anti_affinity_counts`` (a copy) and the aggregate it came from."""
        meta = pod.metadata
        key = ("existing", meta.namespace, _labels_key(meta.labels), _labels_key(ns_labels))
        agg = self._aggregate(key, 1, vector=True)
        terms_of = self._terms_of

        def row_of(ni: NodeInfo) -> Row:
            node = ni.node
            if node is None or not ni.pods_with_required_anti_affinity:
                return ()
            labels = node.metadata.labels
            out: list[Entry] = []
            for pi in ni.pods_with_required_anti_affinity:
                for t in terms_of(pi.pod).required_anti_affinity:
                    if t.matches(pod, ns_labels):
                        tv = labels.get(t.topology_key)
                        if tv is not None:
                            out.append((0, t.topology_key, tv, 1))
            return tuple(out)

        agg.update(all_nodes, scans.of(all_nodes), row_of)
        return dict(agg.counts[0]), agg

    def incoming(self, terms: ParsedTerms, nodes: Sequence[NodeInfo], scans: _Gens) -> tuple[Counts, Counts, Aggregate]:
        """``incoming_affinity_anti_affinity_counts`` (copies) and the aggregate they came from;
        ``terms`` has a required term (else the reference returns two empty maps at once)."""
        required, anti = terms.required_affinity, terms.required_anti_affinity
        key = ("incoming", tuple(map(term_signature, required)), tuple(map(term_signature, anti)))
        agg = self._aggregate(key, 2, vector=True)

        def row_of(ni: NodeInfo) -> Row:
            node = ni.node
            if node is None or not ni.pods:
                return ()
            labels = node.metadata.labels
            out: list[Entry] = []
            for pi in ni.pods:
                p = pi.pod
                if pod_matches_all_terms(required, p):
                    for t in required:
                        tv = labels.get(t.topology_key)
                        if tv is not None:
                            out.append((0, t.topology_key, tv, 1))
                for t in anti:
                    if t.matches(p, None):
                        tv = labels.get(t.topology_key)
                        if tv is not None:
                            out.append((1, t.topology_key, tv, 1))
            return tuple(out)

        agg.update(nodes, scans.of(nodes), row_of)
        return dict(agg.counts[0]), dict(agg.counts[1]), agg

    # --- PreScore -----------------------------------------------------------------------------

    def topology_score(
        self,
        incoming: Pod,
        terms: ParsedTerms,
        ns_labels: Labels,
        all_nodes: Sequence[NodeInfo],
        all_pods: bool,
        hard_weight: int,
    ) -> ScoreMap | None:
        """``build_topology_score`` over ``all_nodes`` (all pods) or their sub-list with affinity."""
        meta = incoming.metadata

        def weighted(ts: Sequence[WeightedAffinityTerm]) -> tuple[tuple[Signature, int], ...]:
            return tuple((term_signature(wt.term), wt.weight) for wt in ts)

        key = (
            "score",
            all_pods,
            hard_weight,
            meta.namespace,
            _labels_key(meta.labels),
            _labels_key(ns_labels),
            weighted(terms.preferred_affinity),
            weighted(terms.preferred_anti_affinity),
        )
        agg = self._aggregate(key, 1, weighted=True)
        terms_of = self._terms_of

        def row_of(ni: NodeInfo) -> Row:
            node = ni.node
            pods = ni.pods if all_pods else ni.pods_with_affinity
            if node is None or not pods:
                return ()
            labels = node.metadata.labels
            m: ScoreMap = {}
            for pi in pods:
                existing = pi.pod
                process_existing_pod(m, incoming, terms, ns_labels, existing, terms_of(existing), labels, hard_weight)
            return tuple((0, k, v, s) for k, values in m.items() for v, s in values.items())

        agg.update(all_nodes, generations(all_nodes), row_of)
        counts = agg.counts[0]
        if not counts:
            return None
        out: ScoreMap = {}
        for (k, v), s in counts.items():
            values = out.get(k)
            if values is None:
                values = out[k] = {}
            values[v] = s
        return out
