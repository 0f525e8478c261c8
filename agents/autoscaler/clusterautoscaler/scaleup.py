"""Scale-up: which pods need new nodes, and how many of which group
(``core/podlistprocessor/filter_out_schedulable.go``, ``core/scaleup/equivalence/groups.go``,
``core/scaleup/orchestrator/orchestrator.go``, ``processors/status/eventing_scale_up_processor.go``, 1.34).

``filter_out_schedulable``: the unschedulable pods, highest priority first, each tried on the
snapshot (ready nodes, their pods, and a template node per upcoming node); a pod that fits is
placed there and needs no scale-up (upstream: "pods that would fit on existing nodes").

``scale_up``: the rest in equivalence groups (same controller and same spec and labels);
for each node group, in the cloud's order: skipped when in backoff ("in backoff after failed
scale-up"), at its max size ("max node group size reached"); else each equivalence group's
exemplar is checked on a template node (a group that does not fit is *rejected* with the
failing predicates' reasons), the binpacking estimator sizes the option for the fitting ones
(at most the room of the group and of its similar groups, and ``maxNodesTotal``'s); the
expander chain picks one; ``balance_scale_up`` splits its nodes between the group and, with
``balanceSimilarNodeGroups``, the groups similar to it (``nodegroupset``: valid for a scale-up,
every pod group fitting the chosen one fitting them too), each capped at its max. The status
carries the pods that triggered it, the groups' sizes (upstream's ``ScaleUpInfo``, printed
``{group 1->3 (max: 10)}``), and, for every pod no option helps, its reasons ("pod didn't
trigger scale-up: 2 max node group size reached, 1 Insufficient cpu",
reasons sorted here: upstream iterates a map).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from agents.autoscaler.clusterautoscaler.daemonsets import add_template_node, daemon_pods_for_node
from agents.autoscaler.clusterautoscaler.estimator import estimate, sanitized_node
from agents.autoscaler.clusterautoscaler.expander import Option, best_option
from agents.autoscaler.clusterautoscaler.nodegroupset import (
    Comparator,
    DifferenceRatios,
    NodeInfo,
    ScaleUpInfo,
    balance_scale_up,
    find_similar_node_groups,
    generic_comparator,
    label_comparator,
)
from agents.autoscaler.clusterautoscaler.options import AutoscalingOptions, NodeGroup
from emulator.base.api.codec import enc_hook
from emulator.base.api.core import Pod

__all__ = [
    "BACKOFF_REASON",
    "MAX_LIMIT_REACHED_REASON",
    "ScaleUpInfo",
    "ScaleUpStatus",
    "filter_out_schedulable",
    "pod_groups",
    "reasons_message",
    "scale_up",
    "similar_node_groups",
]

BACKOFF_REASON: Final = "in backoff after failed scale-up"
MAX_LIMIT_REACHED_REASON: Final = "max node group size reached"
MAX_TOTAL_REACHED: Final = "max total nodes in cluster reached"


@dataclass(slots=True)
class ScaleUpStatus:
    result: str = "NoOptionsAvailable"
    """``Successful``, ``NoOptionsAvailable``, ``LimitedByMaxNodesTotal``, ``NotNeeded``."""
    infos: list[ScaleUpInfo] = field(default_factory=list)
    triggered: list[Pod] = field(default_factory=list)
    remaining: list[tuple[Pod, dict[str, list[str]]]] = field(default_factory=list)
    """Pods no option helps, with each considered group's reasons."""

    def infos_text(self) -> str:
        return "[" + " ".join(str(i) for i in self.infos) + "]"


def _priority(pod: Pod) -> int:
    return pod.spec.priority or 0


def filter_out_schedulable(sim: Any, pods: Sequence[Pod]) -> list[Pod]:
    """The pods that fit nowhere in the snapshot (those that fit are placed there). A pod
    similar to one that fit nowhere (same controller, spec and labels) is not tried again
    (upstream's ``SimilarPodsScheduling``, ``simulator/scheduling/similar_pods.go``)."""
    ordered = sorted(pods, key=lambda p: -_priority(p))
    failed: set[tuple[str, str]] = set()
    out = []
    for p in ordered:
        controlled = any(r.controller for r in p.metadata.owner_references)
        key = _group_key(p) if controlled else None
        if key is not None and key in failed:
            out.append(p)
        elif sim.schedule_anywhere(p) is None:
            out.append(p)
            if key is not None:
                failed.add(key)
    return out


def _group_key(pod: Pod) -> tuple[str, str]:
    ref = next((r for r in pod.metadata.owner_references if r.controller), None)
    spec = msgspec.structs.replace(pod.spec, node_name="")
    body = msgspec.json.encode([spec, sorted(pod.metadata.labels.items())], enc_hook=enc_hook).decode()
    return (ref.uid if ref is not None else pod.metadata.uid), body


def pod_groups(pods: Sequence[Pod]) -> list[list[Pod]]:
    """``BuildPodGroups``: pods of one controller with equal specs and labels, first-seen order."""
    groups: dict[tuple[str, str], list[Pod]] = {}
    for p in pods:
        groups.setdefault(_group_key(p), []).append(p)
    return list(groups.values())


def reasons_message(reasons: dict[str, list[str]]) -> str:
    """``ReasonsMessage``: each reason with the number of groups giving it."""
    counts: dict[str, int] = {}
    for rs in reasons.values():
        for r in dict.fromkeys(rs):
            counts[r] = counts.get(r, 0) + 1
    return ", ".join(f"{n} {r}" for r, n in sorted(counts.items()))


def _check_on_template(sim: Any, pod: Pod, group: NodeGroup, daemonsets: Sequence[Any]) -> list[str]:
    name = f"template-node-for-{group.id}-check"
    sim.fork()
    try:
        add_template_node(sim, sanitized_node(group.template_node(), name), daemonsets)
        return list(sim.check(pod, name))
    finally:
        sim.revert()


def _comparator(o: AutoscalingOptions) -> Comparator:
    """``main.go``: the label comparator with ``--balancing-label``, else the generic one."""
    if o.balancing_labels:
        return label_comparator(o.balancing_labels)
    ratios = DifferenceRatios(
        o.memory_difference_ratio, o.max_allocatable_difference_ratio, o.max_free_difference_ratio
    )
    return generic_comparator(o.balancing_ignore_labels, ratios)


def similar_node_groups(
    groups: Sequence[NodeGroup],
    schedulable: dict[str, list[list[Pod]]],
    options: AutoscalingOptions,
    daemonsets: Sequence[Any] = (),
) -> dict[str, list[NodeGroup]]:
    """``ComputeSimilarNodeGroups`` for each group with pods to help: the groups the comparator
    finds similar to it among those valid for a scale-up (not backed off, below their max:
    the keys of ``schedulable``) on which every pod group that fits the group fits too."""
    if not options.balance_similar_node_groups:
        return {}
    compare = _comparator(options)
    infos = {}
    for g in groups:
        node = sanitized_node(g.template_node(), f"template-node-for-{g.id}")
        infos[g.id] = NodeInfo(node, daemon_pods_for_node(node, daemonsets))
    by_id = {g.id: g for g in groups}
    out: dict[str, list[NodeGroup]] = {}
    for g in groups:
        mine = schedulable.get(g.id)
        if not mine:
            continue
        exemplars = [id(pods[0]) for pods in mine]
        similar = []
        for other in find_similar_node_groups(compare, g.id, list(by_id), infos):
            theirs = schedulable.get(other)
            if theirs is not None and set(exemplars) <= {id(pods[0]) for pods in theirs}:
                similar.append(by_id[other])
        out[g.id] = similar
    return out


def _room(group: NodeGroup) -> int:
    return max(0, group.max_size - group.target_size())


def scale_up(
    sim: Any,
    pods: Sequence[Pod],
    groups: Sequence[NodeGroup],
    options: AutoscalingOptions,
    rng: random.Random,
    *,
    node_count: int,
    in_backoff: Callable[[str], bool],
    daemonsets: Sequence[Any] = (),
) -> ScaleUpStatus:
    """Choose the scale-up for ``pods`` (module docstring); nothing is executed here."""
    pod_lists = pod_groups(pods)
    reasons: list[dict[str, list[str]]] = [{} for _ in pod_lists]
    if options.max_nodes_total and node_count >= options.max_nodes_total:
        remaining = [(p, {"": [MAX_TOTAL_REACHED]}) for g in pod_lists for p in g]
        return ScaleUpStatus(result="LimitedByMaxNodesTotal", remaining=remaining)
    valid: list[NodeGroup] = []
    schedulable: dict[str, list[list[Pod]]] = {}
    for group in groups:
        target = group.target_size()
        skip = BACKOFF_REASON if in_backoff(group.id) else MAX_LIMIT_REACHED_REASON if target >= group.max_size else ""
        if skip:
            for r in reasons:
                r[group.id] = [skip]
            continue
        valid.append(group)
        fitting: list[list[Pod]] = []
        for i, g in enumerate(pod_lists):
            rejected = _check_on_template(sim, g[0], group, daemonsets)
            if rejected:
                reasons[i][group.id] = rejected
            else:
                fitting.append(g)
        schedulable[group.id] = fitting
    similar = similar_node_groups(valid, schedulable, options, daemonsets)
    candidates: list[Option] = []
    for group in valid:
        fitting = schedulable[group.id]
        if not fitting:
            continue
        # the limiter's sngCapacityThreshold: the room of the group and of its similar groups
        limit = _room(group) + sum(_room(s) for s in similar.get(group.id, []))
        if options.max_nodes_total:
            limit = min(limit, options.max_nodes_total - node_count)
        count, placed = estimate(sim, fitting, group.template_node(), group.id, limit, daemonsets)
        if count and placed:
            candidates.append(Option(group.id, count, placed, group.template_node(), group.price_per_hour))
    chain = [e.strip() for e in options.expander.split(",")]
    best = best_option(candidates, chain, rng, cluster_size=node_count, priorities=options.priorities)
    if best is None:
        remaining = [(p, reasons[i]) for i, g in enumerate(pod_lists) for p in g]
        return ScaleUpStatus(remaining=remaining)
    group = next(g for g in valid if g.id == best.group)
    new_nodes = best.node_count
    if options.max_nodes_total:
        new_nodes = min(new_nodes, options.max_nodes_total - node_count)
    members = [group, *similar.get(group.id, [])]
    infos = balance_scale_up([(g.id, g.target_size(), g.max_size) for g in members], new_nodes)
    helped = {id(p) for p in best.pods}
    remaining = [(p, reasons[i]) for i, g in enumerate(pod_lists) for p in g if id(p) not in helped]
    return ScaleUpStatus(result="Successful", infos=infos, triggered=list(best.pods), remaining=remaining)
