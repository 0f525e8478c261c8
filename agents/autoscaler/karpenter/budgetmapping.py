"""``BuildDisruptionBudgetMapping`` (kubernetes-sigs/karpenter v1.9.1
``pkg/controllers/disruption/helpers.go``; a budget's own rules: ``budgets``): per NodePool,
its allowed disruptions for a reason among its initialized nodes (``Initialized``, not
``InstanceTerminating``, with a Node), minus those of them NotReady, deleting or marked for
deletion; a ``DisruptionBlocked`` Event on a NodePool with nodes and no allowed disruption.

The node counts are kept from pass to pass (``_budget_counts``).
"""

from __future__ import annotations

from typing import Any

from agents.autoscaler.karpenter import events as ev
from agents.autoscaler.karpenter.budgets import allowed_disruptions, unix_now
from agents.autoscaler.karpenter.candidates import is_true
from emulator.base.api.karpenter import NODEPOOL_LABEL, NodeClaim

__all__ = ["budget_mapping"]


async def budget_mapping(agent: Any, reason: str) -> dict[str, int]:
    """``BuildDisruptionBudgetMapping``: per NodePool, its allowed disruptions for ``reason``
    among its initialized nodes, minus those NotReady or being disrupted; a
    ``DisruptionBlocked`` Event on a NodePool with nodes and no allowed disruption."""
    nodes, disrupting = _budget_counts(agent)
    out: dict[str, int] = {}
    for pool in sorted(agent.pools.objects(), key=lambda p: p.metadata.name):
        name = pool.metadata.name
        allowed = allowed_disruptions(pool, nodes.get(name, 0), reason, unix_now(agent.clock.now()))
        out[name] = max(0, allowed - disrupting.get(name, 0))
        if nodes.get(name, 0) and allowed == 0:
            await agent.recorder.publish(ev.nodepool_blocked_for_reason(pool, reason))
    return out


def _budget_part(agent: Any, claim: NodeClaim, previous: Any) -> tuple[Any, Any, bool, str | None, bool]:
    """(NodeClaim, Node, marked, its NodePool if counted, whether NotReady or being disrupted),
    ``previous`` kept while its object, its Node's object and its mark are."""
    d = agent.disruption
    name = claim.metadata.name
    node = agent.nodes.get(claim.status.node_name, "") if claim.status.node_name else None
    marked = claim.metadata.deletion_timestamp is not None or d.marked_for_deletion(name)
    if previous is not None and previous[0] is claim and previous[1] is node and previous[2] == marked:
        return previous  # type: ignore[no-any-return]
    pool: str | None = None
    out = False
    if node is not None and is_true(claim, "Initialized") and not is_true(claim, "InstanceTerminating"):
        pool = node.metadata.labels.get(NODEPOOL_LABEL, "")
        ready = any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)
        out = not ready or marked or node.metadata.deletion_timestamp is not None
    return (claim, node, marked, pool, out)


def _count(nodes: dict[str, int], disrupting: dict[str, int], part: Any, sign: int) -> None:
    pool = part[3]
    if pool is None:
        return
    for counts, counted in ((nodes, True), (disrupting, part[4])):
        if counted:
            n = counts.get(pool, 0) + sign
            if n:
                counts[pool] = n
            else:
                counts.pop(pool, None)


def _budget_counts(agent: Any) -> tuple[dict[str, int], dict[str, int]]:
    """Per NodePool, its initialized nodes and those of them NotReady or being disrupted. Kept
    while the informers' stores and the marks are the same (``Disruption.changes``); each
    NodeClaim's part is kept while its object, its Node's object and its mark are. With the
    index (``passindex``) and NodeClaims named as their nodes, only the NodeClaims it names
    changed are looked at, the counts moved by their parts' difference."""
    d = agent.disruption
    index = getattr(d, "index", None)
    if index is not None:
        everything, dirty = index.take_dirty("budgets")
        if not everything and d.track.exact:
            _, counted, out, kept_parts = d.budget_counts
            for name in dirty:
                old = kept_parts.pop(name, None)
                claim = agent.claims.get(name, "")
                new = _budget_part(agent, claim, old) if claim is not None else None
                if new is old:
                    if new is not None:
                        kept_parts[name] = new
                    continue
                if old is not None:
                    _count(counted, out, old, -1)
                if new is not None:
                    kept_parts[name] = new
                    _count(counted, out, new, 1)
            return counted, out
        d.budget_counts = (None, *d.budget_counts[1:])
    stamp = (d.changes, tuple(d.marked), tuple(d.terminating)) if d.watching else None
    kept = d.budget_counts
    if stamp is not None and kept[0] == stamp:
        return kept[1], kept[2]
    parts: dict[str, tuple[Any, Any, bool, str | None, bool]] = {}
    previous = kept[3] if d.watching else {}
    nodes: dict[str, int] = {}
    disrupting: dict[str, int] = {}
    for claim in agent.claims.objects():
        name = claim.metadata.name
        part = parts[name] = _budget_part(agent, claim, previous.get(name))
        if part[3] is not None:
            nodes[part[3]] = nodes.get(part[3], 0) + 1
            if part[4]:
                disrupting[part[3]] = disrupting.get(part[3], 0) + 1
    d.budget_counts = (stamp, nodes, disrupting, parts)
    return nodes, disrupting
