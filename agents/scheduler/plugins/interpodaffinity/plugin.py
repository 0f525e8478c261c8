"""The ``InterPodAffinity`` plugin (upstream ``interpodaffinity/plugin.go``): PreFilter (with
AddPod/RemovePod extensions), Filter, PreScore, Score (with NormalizeScore) and its queueing hints.

What this module owns: the plugin object, its args (``hardPodAffinityWeight`` default 1,
``ignorePreferredTermsOfExistingPods``), namespace resolution, and the events it registers.

Namespaces. Upstream reads Namespace objects through the informer factory's lister: a term's
``namespaceSelector`` on the incoming pod is resolved into namespace names
(``mergeAffinityTermNamespacesIfNotEmpty``: an empty selector ``{}`` stays "all namespaces"), and
existing pods' selectors are matched against the incoming pod's namespace labels
(``GetNamespaceLabelsSnapshot``; a missing namespace has no labels). Here the lister comes from an
optional handle hook, ``handle.namespace_lister() -> NamespaceLister | None`` (``get(name)``,
``list()``). Without it the only namespace known is the incoming pod's own, labelled as the API
server always labels namespaces (``kubernetes.io/metadata.name=<name>``): a non-empty selector
resolves to that namespace when it matches those labels, to none otherwise.

Events (v1.34, QueueingHints GA):

==========================================  =================================================
event                                       Queue when
==========================================  =================================================
Pod Add | UpdatePodLabel | Delete           (only assigned pods count) an added pod matches ALL
                                            the pod's required affinity terms; an updated pod
                                            starts matching all affinity terms or stops
                                            matching all anti-affinity terms; a deleted pod
                                            matched all anti-affinity terms
Node Add | UpdateNodeLabel                  affinity: an added node has a term's topology key,
                                            or an update adds the key or changes its value;
                                            anti-affinity: any added node, or an update removes
                                            the key or changes its value
==========================================  =================================================

(v1.35 later also queues on the deletion of a pod whose anti-affinity rejected this pod, on the
pod's own label change, and matches anti-affinity terms individually; v1.34 does not.)

Fast paths (exact): a pod without required terms while no node holds a pod with required
anti-affinity Skips PreFilter before any namespace or term work, and PreScore Skips at once when
there is no candidate pod; sums over more than ``small_lists`` nodes come from the memo
(``memo.py``), fewer from the reference functions; ``filter_all`` is Filter over NodeTable rows.

It does not own: term parsing (``terms.py``), the filter state (``filtering.py``), the score map
(``scoring.py``), the cross-cycle sums (``memo.py``, ``aggregate.py``), ``filter_all`` (``vector.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, Protocol

from agents.scheduler.args import InterPodAffinityArgs, decode_args
from agents.scheduler.framework.interface import FilterCodes, Handle
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    PodInfo,
    QueueingHint,
    Status,
)
from emulator.base.api.core import Namespace, Node, Pod

from .filtering import (
    PRE_FILTER_STATE_KEY,
    Counts,
    PreFilterState,
    existing_anti_affinity_counts,
    filter_node,
)
from .memo import SMALL, AffinityMemo
from .scoring import PRE_SCORE_STATE_KEY, PreScoreState, build_topology_score, normalize, score_node
from .terms import AffinityTerm, ParsedTerms, TermCache, WeightedAffinityTerm, pod_matches_all_terms
from .vector import filter_codes

__all__ = ["METADATA_NAME_LABEL", "NAME", "InterPodAffinity", "NamespaceLister"]

NAME: Final = "InterPodAffinity"
METADATA_NAME_LABEL: Final = "kubernetes.io/metadata.name"
_SKIP: Final = Status(Code.Skip)


class NamespaceLister(Protocol):
    """What the plugin needs from a handle's ``namespace_lister()`` (upstream ``NamespaceLister``)."""

    def get(self, name: str) -> Namespace | None: ...

    def list(self) -> Sequence[Namespace]: ...


class _Namespaces:
    """One cycle's view of the namespaces: labels of one, names matching a selector."""

    __slots__ = ("_lister", "_pod_ns")

    def __init__(self, lister: NamespaceLister | None, pod_namespace: str) -> None:
        self._lister = lister
        self._pod_ns = pod_namespace

    def labels(self, name: str) -> Mapping[str, str]:
        if self._lister is None:
            return {METADATA_NAME_LABEL: name}
        ns = self._lister.get(name)
        return dict(ns.metadata.labels) if ns is not None else {}

    def resolve(self, term: AffinityTerm) -> AffinityTerm:
        """Upstream ``mergeAffinityTermNamespacesIfNotEmpty``."""
        sel = term.namespace_selector
        if sel.everything:
            return term
        if sel.nothing:
            return term.with_namespaces(())
        if self._lister is None:
            own = self._pod_ns
            return term.with_namespaces([own] if sel.matches({METADATA_NAME_LABEL: own}) else [])
        names = [ns.metadata.name for ns in self._lister.list() if sel.matches(ns.metadata.labels)]
        return term.with_namespaces(names)

    def resolve_all(self, terms: Sequence[AffinityTerm]) -> tuple[AffinityTerm, ...]:
        return tuple(self.resolve(t) for t in terms)

    def resolve_weighted(self, terms: Sequence[WeightedAffinityTerm]) -> tuple[WeightedAffinityTerm, ...]:
        return tuple(WeightedAffinityTerm(self.resolve(wt.term), wt.weight) for wt in terms)


def _state_error(key: str, verb: str) -> Status:
    return Status(Code.Error, f'{verb} "{key}" from cycleState: not found')


class InterPodAffinity:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle | None) -> None:
        if handle is None:
            raise ValueError("SnapshotSharedlister is nil")
        self.args = decode_args(InterPodAffinityArgs, args)
        self.hard_pod_affinity_weight: int = self.args.hard_pod_affinity_weight or 0
        self._handle = handle
        self._terms = TermCache()
        self._memo = AffinityMemo(self._terms.get)
        self.small_lists = SMALL
        """Sub-lists up to this many nodes take the reference functions, not the memo."""

    def _namespaces(self, pod: Pod) -> _Namespaces:
        hook = getattr(self._handle, "namespace_lister", None)
        lister: NamespaceLister | None = hook() if callable(hook) else None
        return _Namespaces(lister, pod.metadata.namespace)

    # --- PreFilter / Filter ----------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        lister = self._handle.snapshot_shared_lister()
        with_anti = lister.have_pods_with_required_anti_affinity_node_info_list
        parsed = self._terms.get(pod)
        if parsed.error:
            return None, Status(Code.UnschedulableAndUnresolvable, f"parsing pod: {parsed.error}")
        if not with_anti and not parsed.required_affinity and not parsed.required_anti_affinity:
            return None, _SKIP  # the common case: nothing to count, as the reference concludes
        nss = self._namespaces(pod)
        terms = replace(
            parsed,
            required_affinity=nss.resolve_all(parsed.required_affinity),
            required_anti_affinity=nss.resolve_all(parsed.required_anti_affinity),
        )
        ns_labels = nss.labels(pod.metadata.namespace)
        scans = self._memo.scans()
        existing_src = incoming_src = None
        if len(with_anti) <= self.small_lists:
            existing = existing_anti_affinity_counts(pod, ns_labels, with_anti, self._terms.get)
        else:
            existing, agg = self._memo.existing_anti_affinity(pod, ns_labels, lister.node_info_list, scans)
            existing_src = (agg, agg.version)
        if not terms.required_affinity and not terms.required_anti_affinity:
            if not existing:
                return None, _SKIP
            affinity: Counts = {}
            anti: Counts = {}
        else:
            affinity, anti, agg = self._memo.incoming(terms, nodes, scans)
            incoming_src = (agg, agg.version)
        s = PreFilterState(existing, affinity, anti, pod, terms, ns_labels, (existing_src, incoming_src))
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, SUCCESS

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def _update(self, state: CycleState, pi: PodInfo, node_info: NodeInfo, multiplier: int) -> Status:
        try:
            s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return _state_error(PRE_FILTER_STATE_KEY, "error reading")
        node = node_info.node
        s.update_with_pod(pi.pod, self._terms.get(pi.pod), node.metadata.labels if node else {}, multiplier)
        return SUCCESS

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        return self._update(state, pod_info_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._update(state, pod_info_to_remove, node_info, -1)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        try:
            s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return _state_error(PRE_FILTER_STATE_KEY, "error reading")
        return filter_node(s, node_info)

    def filter_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        """``filter`` over NodeTable rows (``vector.py``); None: Filter per node."""
        try:
            s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return None  # ``filter`` reports the error per node
        return filter_codes(s, self._memo.codes, table, rows)

    # --- PreScore / Score -------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        aff = pod.spec.affinity
        pa = aff.pod_affinity if aff is not None else None
        paa = aff.pod_anti_affinity if aff is not None else None
        has_constraints = bool(
            (pa is not None and pa.preferred_during_scheduling_ignored_during_execution)
            or (paa is not None and paa.preferred_during_scheduling_ignored_during_execution)
        )
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return _SKIP
        lister = self._handle.snapshot_shared_lister()
        candidates = lister.node_info_list if has_constraints else lister.have_pods_with_affinity_node_info_list
        parsed = self._terms.get(pod)
        if parsed.error:
            return Status(Code.Error, f"failed to parse pod: {parsed.error}")
        if not candidates:
            return _SKIP  # no existing pod to process: the reference's map stays empty
        nss = self._namespaces(pod)
        terms = replace(
            parsed,
            preferred_affinity=nss.resolve_weighted(parsed.preferred_affinity),
            preferred_anti_affinity=nss.resolve_weighted(parsed.preferred_anti_affinity),
        )
        ns_labels = nss.labels(pod.metadata.namespace)
        weight = self.hard_pod_affinity_weight
        if len(candidates) <= self.small_lists:
            topology_score = build_topology_score(
                pod, terms, ns_labels, candidates, has_constraints, self._terms.get, weight
            )
        else:
            topology_score = self._memo.topology_score(
                pod, terms, ns_labels, lister.node_info_list, has_constraints, weight
            )
        if topology_score is None:
            return _SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(topology_score))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        try:
            s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            return 0, _state_error(PRE_SCORE_STATE_KEY, "failed to read")
        return score_node(s, node_info), SUCCESS

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        try:
            s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            return _state_error(PRE_SCORE_STATE_KEY, "failed to read")
        normalize(s, scores)
        return SUCCESS

    # --- queueing ---------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change,
            ),
        ]

    def _hint_terms(self, pod: Pod) -> ParsedTerms | None:
        parsed = self._terms.get(pod)
        return None if parsed.error else parsed

    def is_schedulable_after_pod_change(self, pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        if (new is not None and not new.spec.node_name) or (old is not None and not old.spec.node_name):
            return QueueingHint.QueueSkip  # an unscheduled pod changes nothing for this plugin
        parsed = self._hint_terms(pod)
        if parsed is None:
            return QueueingHint.Queue
        terms, anti = parsed.required_affinity, parsed.required_anti_affinity
        if new is not None and old is not None:
            if not pod_matches_all_terms(terms, old) and pod_matches_all_terms(terms, new):
                return QueueingHint.Queue
            if pod_matches_all_terms(anti, old) and not pod_matches_all_terms(anti, new):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if new is not None:
            return QueueingHint.Queue if pod_matches_all_terms(terms, new) else QueueingHint.QueueSkip
        if old is not None and pod_matches_all_terms(anti, old):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        if new is None:
            return QueueingHint.Queue  # not a Node add/update: be conservative, as upstream on errors
        parsed = self._hint_terms(pod)
        if parsed is None:
            return QueueingHint.Queue
        new_labels = new.metadata.labels
        old_labels = old.metadata.labels if old is not None else None
        for t in parsed.required_affinity:
            key = t.topology_key
            if old_labels is None:
                if key in new_labels:
                    return QueueingHint.Queue
                continue
            if key in new_labels and (key not in old_labels or old_labels[key] != new_labels[key]):
                return QueueingHint.Queue
        for t in parsed.required_anti_affinity:
            if old_labels is None:
                return QueueingHint.Queue  # anti-affinity passes nodes without the key: any new node may fit
            key = t.topology_key
            if key in old_labels and (key not in new_labels or old_labels[key] != new_labels[key]):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def __repr__(self) -> str:
        return (
            f"<InterPodAffinity hardPodAffinityWeight={self.hard_pod_affinity_weight} "
            f"ignorePreferredTermsOfExistingPods={self.args.ignore_preferred_terms_of_existing_pods}>"
        )
