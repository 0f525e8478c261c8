"""PodTopologySpread's hard constraints: PreFilter state, AddPod/RemovePod, Filter (upstream
``podtopologyspread/filtering.go``, v1.34).

What this module owns, as pure functions over the cycle's NodeInfos:

* ``PreFilterState``: per ``DoNotSchedule`` constraint, ``tp_value_to_match_num`` (topology value →
  matching pods summed over the *eligible* nodes of that domain) and two ``CriticalPaths`` whose
  first entry holds the global minimum. A node is eligible for a constraint when it carries every
  constraint's topology key and passes the constraint's inclusion policies (``common.py``).
* ``update_with_pod``: the ±1 update used by the AddPod/RemovePod extensions (nominated pods,
  preemption simulation). It counts the pod whenever its namespace and the selector match; unlike
  the initial count it ignores ``deletionTimestamp`` and counts for an *empty* selector too, as
  upstream.
* ``filter_node``: the Filter verdict.

``CriticalPaths`` is upstream's two-slot approximation (v1.34 and earlier): after PreFilter slot 0
is the exact minimum; after AddPod/RemovePod updates it is kept cheaply and can drift from the
true minimum in rare update sequences. That drift is reproduced on purpose (the exact per-count
histogram replaced it after v1.34).

Filter, per constraint in order (first failure wins):

==================================================  ===========================================
condition                                           status
==================================================  ===========================================
node lacks the constraint's topology key            UnschedulableAndUnresolvable
                                                    ``ERR_REASON_NODE_LABEL_NOT_MATCH``
``count[domain] + self - min > maxSkew``, where     Unschedulable ``ERR_REASON_CONSTRAINTS_NOT_MATCH``
``self`` is 1 if the selector matches the incoming
pod, ``min`` is 0 when fewer domains than
``minDomains`` exist, else critical path 0
==================================================  ===========================================

What it does not own: constraint parsing and the counting rule (``common.py``), the plugin
(``plugin.py``), the cross-cycle memo the plugin computes this state with (``memo.py``;
``cal_pre_filter_state`` stays the reference it is tested against).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from agents.scheduler.framework.types import SUCCESS, Code, NodeInfo, Status
from emulator.base.api.core import Node, Pod

from .common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    Constraint,
    NodeEligibility,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
    selector_slots,
)

__all__ = ["MAX_INT32", "CriticalPaths", "PreFilterState", "cal_pre_filter_state", "filter_node", "update_with_pod"]

MAX_INT32: Final = 2**31 - 1


@dataclass(slots=True)
class CriticalPaths:
    """Upstream ``criticalPaths``: two (topology value, match count) slots; slot 0 holds the
    minimum, slot 1 something ≥ it (not necessarily the second minimum)."""

    paths: list[tuple[str, int]] = field(default_factory=lambda: [("", MAX_INT32), ("", MAX_INT32)])

    @property
    def min_match(self) -> int:
        return self.paths[0][1]

    def update(self, tp_val: str, num: int) -> None:
        p = self.paths
        if tp_val == p[0][0]:
            i = 0
        elif tp_val == p[1][0]:
            i = 1
        else:
            i = -1
        if i >= 0:
            p[i] = (tp_val, num)
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = (tp_val, num)
        elif num < p[1][1]:
            p[1] = (tp_val, num)

    def clone(self) -> CriticalPaths:
        return CriticalPaths(list(self.paths))


@dataclass(slots=True)
class PreFilterState:
    """Written at PreFilter under ``PreFilterPodTopologySpread``; cloned for nominated-pod and
    preemption simulations (constraints are shared, counts copied)."""

    constraints: list[Constraint]
    critical_paths: list[CriticalPaths]
    tp_value_to_match_num: list[dict[str, int]]

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum for constraint ``i``: 0 while there are fewer domains than
        ``minDomains``."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].min_match

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.constraints, [p.clone() for p in self.critical_paths], [dict(m) for m in self.tp_value_to_match_num]
        )


def cal_pre_filter_state(pod: Pod, nodes: Sequence[NodeInfo], constraints: list[Constraint]) -> PreFilterState:
    """Upstream ``calPreFilterState`` for the pod's (non-empty) hard constraints."""
    n = len(constraints)
    counts: list[dict[str, int]] = [{} for _ in range(n)]
    eligibility = NodeEligibility(pod)
    namespace = pod.metadata.namespace
    slot_of, n_slots = selector_slots(constraints)
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        labels = node.metadata.labels
        if not node_labels_match_spread_constraints(labels, constraints):
            continue
        per_slot: list[int | None] = [None] * n_slots
        for i, c in enumerate(constraints):
            if not eligibility.includes(c, node):
                continue
            got = per_slot[slot_of[i]]
            if got is None:
                got = per_slot[slot_of[i]] = count_pods_match_selector(node_info.pods, c.selector, namespace)
            value = labels[c.topology_key]
            counts[i][value] = counts[i].get(value, 0) + got
    paths = [CriticalPaths() for _ in range(n)]
    for i in range(n):
        for value, num in counts[i].items():
            paths[i].update(value, num)
    return PreFilterState(constraints, paths, counts)


def update_with_pod(s: PreFilterState, updated: Pod, preemptor: Pod, node: Node | None, delta: int) -> None:
    """Upstream ``updateWithPod``: count ``updated`` on ``node`` in or out (``delta`` ±1)."""
    if updated.metadata.namespace != preemptor.metadata.namespace or node is None:
        return
    labels = node.metadata.labels
    if not node_labels_match_spread_constraints(labels, s.constraints):
        return
    eligibility = NodeEligibility(preemptor)
    pod_labels = updated.metadata.labels
    for i, c in enumerate(s.constraints):
        if not c.selector.matches(pod_labels) or not eligibility.includes(c, node):
            continue
        value = labels[c.topology_key]
        num = s.tp_value_to_match_num[i].get(value, 0) + delta
        s.tp_value_to_match_num[i][value] = num
        s.critical_paths[i].update(value, num)


def filter_node(s: PreFilterState, pod: Pod, node_info: NodeInfo) -> Status:
    """Upstream ``Filter`` once the state is read (no constraints: Success)."""
    node = node_info.node
    labels = node.metadata.labels if node is not None else {}
    pod_labels = pod.metadata.labels
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
        min_match = s.min_match_num(i, c.min_domains)
        self_match = 1 if c.selector.matches(pod_labels) else 0
        skew = s.tp_value_to_match_num[i].get(value, 0) + self_match - min_match
        if skew > c.max_skew:
            return Status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return SUCCESS
