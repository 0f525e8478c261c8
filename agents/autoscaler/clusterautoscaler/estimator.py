"""The binpacking estimator (``estimator/binpacking_estimator.go`` with the
``DecreasingPodOrderer`` and the threshold-based limiter, 1.34): how many template nodes a
list of pod equivalence groups needs.

On a fork of the simulator's snapshot: the groups in decreasing order of their exemplar's
``cpu/allocatable + memory/allocatable`` on the template (stable for ties); for each group,
its pods first go onto the new nodes added so far (any of them, from the last hit on); the
rest onto the last new node, else onto a fresh template node (``template-node-for-<group>-e-<i>``)
while the limiter allows one; a fresh node the pod does not fit ends the group; a last node
left empty stops adding nodes for the group (upstream's "new node would be empty"). The
result: the nodes that got pods, and the pods placed. The fork is reverted.

Limiter (``threshold_based_limiter.go``): at most ``MaxNodesPerScaleUp`` (1000) nodes, the
group's room (``maxSize - targetSize``) and the cluster's (``maxNodesTotal - nodes``, when set).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from msgspec.structs import replace

from agents.autoscaler.clusterautoscaler.daemonsets import add_template_node
from emulator.base.api.core import Node, Pod
from emulator.base.api.resources import node_allocatable, pod_requests

__all__ = ["MAX_NODES_PER_SCALE_UP", "estimate", "sanitized_node"]

MAX_NODES_PER_SCALE_UP: Final = 1000
HOSTNAME: Final = "kubernetes.io/hostname"


def sanitized_node(template: Node, name: str) -> Node:
    """``SanitizedNodeInfo``: the template under ``name`` (and its hostname label)."""
    labels = {**template.metadata.labels, HOSTNAME: name}
    return replace(template, metadata=replace(template.metadata, name=name, labels=labels))


def _score(pod: Pod, template: Node) -> float:
    alloc = node_allocatable(template)
    req = pod_requests(pod)
    score = 0.0
    for r in ("cpu", "memory"):
        if alloc.get(r, 0) > 0:
            score += req.get(r, 0) / alloc[r]
    return score


def estimate(
    sim: Any, groups: Sequence[Sequence[Pod]], template: Node, group: str, limit: int, daemonsets: Sequence[Any] = ()
) -> tuple[int, list[Pod]]:
    """``Estimate``: (new nodes with pods, pods scheduled on them); ``sim`` a ``SchedulingSimulator``."""
    ordered = sorted(groups, key=lambda g: -_score(g[0], template))
    limit = min(limit, MAX_NODES_PER_SCALE_UP)
    new: dict[str, None] = {}
    with_pods: dict[str, None] = {}
    scheduled: list[Pod] = []
    last = ""
    available = True
    sim.fork()
    try:
        for pods in ordered:
            k = 0
            while k < len(pods) and new:
                name = sim.schedule_anywhere(pods[k], lambda n: n in new)
                if name is None:
                    break
                with_pods[name] = None
                scheduled.append(pods[k])
                k += 1
            if not available:
                continue
            for pod in pods[k:]:
                if last and not sim.schedule_on(pod, last):
                    with_pods[last] = None
                    scheduled.append(pod)
                    continue
                if last and last not in with_pods:
                    break  # the last new node stayed empty: this group fits no fresh node
                if len(new) >= limit:
                    available = False
                    break
                last = f"template-node-for-{group}-e-{len(new)}"
                new[last] = None
                add_template_node(sim, sanitized_node(template, last), daemonsets)
                if sim.schedule_on(pod, last):
                    break
                with_pods[last] = None
                scheduled.append(pod)
    finally:
        sim.revert()
    return len(with_pods), scheduled
