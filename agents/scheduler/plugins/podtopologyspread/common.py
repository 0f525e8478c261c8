"""What PodTopologySpread's filtering and scoring share (upstream ``podtopologyspread/common.go``).

What this module owns:

* Selectors are ``emulator.base.api.labelselector``'s compiled ``Selector`` (re-exported), built once
  per pod per cycle. Three shapes matter, as upstream: *nothing* (a ``null`` ``labelSelector``:
  matches no pod), *empty* (``{}``: matches every pod, but ``empty()`` is true and counting
  treats it as "count nothing"), and a list of ANDed requirements.
* ``Constraint``: one ``topologySpreadConstraints`` entry with upstream's defaults applied
  (``minDomains`` 1, ``nodeAffinityPolicy`` Honor, ``nodeTaintsPolicy`` Ignore) and the pod's
  ``matchLabelKeys`` values ANDed into its selector.
* The counting rule (``count_pods_match_selector``): a pod counts when it is in the incoming pod's
  namespace, has no ``deletionTimestamp`` and its labels match; an *empty* selector counts 0.
  ``MatchCounts`` memoises it across cycles per (selector, namespace) and NodeInfo
  ``generation``: every change to a NodeInfo's pods takes a fresh global generation and a clone
  keeps its original's pods and generation, so a generation names one list of pods (exact).
* Node eligibility (``NodeEligibility``): a node takes part in the counts of a constraint when it
  has all topology keys and passes the constraint's inclusion policies (Honor affinity: the pod's
  ``nodeSelector`` / required node affinity match; Honor taints: no untolerated NoSchedule /
  NoExecute taint). Both node checks are evaluated at most once per node.
* The default constraints: ``SYSTEM_DEFAULT_CONSTRAINTS`` and ``build_default_constraints``, whose
  selector comes from a pluggable ``DefaultSelectorFn`` (upstream: the union of the Services,
  ReplicationControllers, ReplicaSets and StatefulSets selecting the pod, ``helper.DefaultSelector``).
  The emulator stores none of those objects yet, so the stock source
  (``no_default_selector``) yields an empty selector, which means "no default constraints" and the
  plugin Skips for pods without their own constraints, as upstream does in a cluster with no such
  object.

What it does not own: the PreFilter/Filter state (``filtering.py``), the PreScore/Score state
(``scoring.py``), the plugin and its queueing hints (``plugin.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from agents.scheduler.framework.types import NodeInfo, PodInfo
from emulator.base.api.core import Node, Pod, Toleration, TopologySpreadConstraint
from emulator.base.api.labelselector import EVERYTHING, Selector, compile_selector
from emulator.base.api.nodeaffinity import pod_matches_node_selector_and_affinity
from emulator.base.api.taints import find_untolerated_taint

__all__ = [
    "DO_NOT_SCHEDULE",
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "HONOR",
    "IGNORE",
    "LABEL_HOSTNAME",
    "LABEL_TOPOLOGY_ZONE",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "Constraint",
    "DefaultSelectorFn",
    "MatchCounts",
    "NodeEligibility",
    "Selector",
    "build_default_constraints",
    "count_pods_match_selector",
    "filter_constraints",
    "no_default_selector",
    "node_labels_match_spread_constraints",
    "pod_labels_match_spread_constraints",
    "selector_slots",
    "tolerates_no_schedule_taints",
    "with_default_selector",
]

ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE: Final = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HONOR: Final = "Honor"
IGNORE: Final = "Ignore"
_NO_SCHEDULE_EFFECTS: Final = ("NoSchedule", "NoExecute")  # helper.DoNotScheduleTaintsFilterFunc

SYSTEM_DEFAULT_CONSTRAINTS: Final = (
    TopologySpreadConstraint(max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    TopologySpreadConstraint(max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)
"""Used when ``defaultingType: System`` and the pod has no constraints of its own."""

DefaultSelectorFn = Callable[[Pod], Selector]
"""``fn(pod)``: the selector of the workload objects that select or own ``pod``."""


def no_default_selector(pod: Pod) -> Selector:
    """The emulator has no Services, RCs, ReplicaSets or StatefulSets: an empty selector (one
    shared instance: selectors are immutable)."""
    return EVERYTHING


@dataclass(frozen=True, slots=True)
class Constraint:
    """Upstream ``topologySpreadConstraint``: a spread constraint with its selector parsed."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def filter_constraints(
    constraints: Sequence[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> list[Constraint]:
    """Upstream ``filterTopologySpreadConstraints``: the constraints whose ``whenUnsatisfiable`` is
    ``action``, parsed. ``ValueError`` if a selector is invalid."""
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = compile_selector(c.label_selector)
        if c.match_label_keys:
            own = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if own and not selector.nothing:  # mergeLabelSetWithSelector keeps Nothing as is
                selector = Selector.from_set(own).add(selector)
        out.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=1 if c.min_domains is None else c.min_domains,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
            )
        )
    return out


def build_default_constraints(
    defaults: Sequence[TopologySpreadConstraint], pod: Pod, action: str, selector_fn: DefaultSelectorFn
) -> list[Constraint]:
    """Upstream ``buildDefaultConstraints``: ``defaults`` of kind ``action`` with the workload
    selector; none when that selector is empty."""
    return with_default_selector(filter_constraints(defaults, pod.metadata.labels, action), pod, selector_fn)


def with_default_selector(
    constraints: Sequence[Constraint], pod: Pod, selector_fn: DefaultSelectorFn
) -> list[Constraint]:
    """The second half of ``buildDefaultConstraints``: the filtered default ``constraints`` with
    ``pod``'s workload selector; none when there are none or that selector is empty."""
    if not constraints:
        return []
    selector = selector_fn(pod)
    if selector.empty():
        return []
    return [
        Constraint(c.max_skew, c.topology_key, selector, c.min_domains, c.node_affinity_policy, c.node_taints_policy)
        for c in constraints
    ]


def node_labels_match_spread_constraints(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """Does the node carry every constraint's topology key?"""
    return all(c.topology_key in labels for c in constraints)


def pod_labels_match_spread_constraints(constraints: Sequence[Constraint], labels: Mapping[str, str]) -> bool:
    """Does any constraint's selector match these labels?"""
    return any(c.selector.matches(labels) for c in constraints)


def count_pods_match_selector(pod_infos: Iterable[PodInfo], selector: Selector, namespace: str) -> int:
    """Matching, non-terminating pods of ``namespace``; an empty selector counts none."""
    if selector.empty():
        return 0
    matches = selector.matches
    count = 0
    for pi in pod_infos:
        meta = pi.pod.metadata
        if meta.deletion_timestamp is None and meta.namespace == namespace and matches(meta.labels):
            count += 1
    return count


class MatchCounts:
    """``count_pods_match_selector`` memoised per (selector, namespace) and NodeInfo generation.

    Owned by a plugin instance and shared by its cycles: a pod's PreFilter/PreScore then counts
    only the NodeInfos changed since an earlier pod with the same selector looked at them. Each
    memo is dropped whole when it reaches ``MAX_ENTRIES`` (stale generations accumulate)."""

    MAX_ENTRIES: Final = 1 << 16
    MAX_KEYS: Final = 256

    __slots__ = ("_memos",)

    def __init__(self) -> None:
        self._memos: dict[tuple[Selector, str], dict[int, int]] = {}

    def memo(self, selector: Selector, namespace: str) -> dict[int, int]:
        """The generation → count map for one (selector, namespace)."""
        key = (selector, namespace)
        memo = self._memos.get(key)
        if memo is None:
            if len(self._memos) >= self.MAX_KEYS:
                self._memos.clear()
            memo = self._memos[key] = {}
        elif len(memo) >= self.MAX_ENTRIES:
            memo.clear()
        return memo

    def count(self, node_info: NodeInfo, selector: Selector, namespace: str) -> int:
        """Matching pods on ``node_info`` (``count_pods_match_selector``)."""
        memo = self.memo(selector, namespace)
        got = memo.get(node_info.generation)
        if got is None:
            got = memo[node_info.generation] = count_pods_match_selector(node_info.pods, selector, namespace)
        return got


def selector_slots(constraints: Sequence[Constraint]) -> tuple[list[int], int]:
    """Constraint index → slot of its (equal) selector, and the number of slots: lets a node's
    pods be counted once per distinct selector (zone and hostname constraints often share one)."""
    slots: dict[Selector, int] = {}
    out = [slots.setdefault(c.selector, len(slots)) for c in constraints]
    return out, len(slots)


def tolerates_no_schedule_taints(node: Node, tolerations: Sequence[Toleration]) -> bool:
    """No NoSchedule / NoExecute taint of ``node`` is left untolerated (the Honor taints policy)."""
    return find_untolerated_taint(node.spec.taints, tolerations, _NO_SCHEDULE_EFFECTS) is None


class NodeEligibility:
    """Per incoming pod: whether a node passes a constraint's inclusion policies.

    The affinity and taint verdicts are computed lazily, once per node, whatever the number of
    constraints (upstream ``matchNodeInclusionPolicies``)."""

    __slots__ = ("_affinity", "_pod", "_taints", "_tolerations")

    def __init__(self, pod: Pod) -> None:
        self._pod = pod
        self._tolerations = pod.spec.tolerations
        self._affinity: dict[str, bool] = {}
        self._taints: dict[str, bool] = {}

    def matches_affinity(self, node: Node) -> bool:
        name = node.metadata.name
        ok = self._affinity.get(name)
        if ok is None:
            ok = self._affinity[name] = pod_matches_node_selector_and_affinity(self._pod, node)
        return ok

    def tolerates(self, node: Node) -> bool:
        name = node.metadata.name
        ok = self._taints.get(name)
        if ok is None:
            ok = self._taints[name] = tolerates_no_schedule_taints(node, self._tolerations)
        return ok

    def includes(self, c: Constraint, node: Node) -> bool:
        if c.node_affinity_policy == HONOR and not self.matches_affinity(node):
            return False
        return not (c.node_taints_policy == HONOR and not self.tolerates(node))
