"""What the disruption controller keeps from one pass to the next (issue 28's Karpenter day),
each against computing afresh: ``candidates._budget_counts`` (the disruption budgets' node
counts, upstream ``BuildDisruptionBudgetMapping``'s loop over the state nodes)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter import candidates as cand_mod
from emulator.base.api.core import Node, NodeCondition, NodeStatus
from emulator.base.api.karpenter import NodeClaim, NodeClaimStatus
from emulator.base.api.meta import Condition, ObjectMeta
from tests.autoscaler.test_karpenter_tracking import _agent


def _plain_counts(agent: Any) -> tuple[dict[str, int], dict[str, int]]:
    """The loop as it was before the parts were kept."""
    d = agent.disruption
    nodes: dict[str, int] = {}
    disrupting: dict[str, int] = {}
    for claim in agent.claims.objects():
        node = agent.nodes.get(claim.status.node_name, "") if claim.status.node_name else None
        if node is None or not cand_mod.is_true(claim, "Initialized") or cand_mod.is_true(claim, "InstanceTerminating"):
            continue
        pool = node.metadata.labels.get("karpenter.sh/nodepool", "")
        nodes[pool] = nodes.get(pool, 0) + 1
        ready = any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)
        marked = claim.metadata.deletion_timestamp is not None or d.marked_for_deletion(claim.metadata.name)
        if not ready or marked or node.metadata.deletion_timestamp is not None:
            disrupting[pool] = disrupting.get(pool, 0) + 1
    return nodes, disrupting


def _budget_agent() -> Any:
    a = _agent()
    d = a.disruption
    d.watching, d.changes, d.budget_counts = True, 0, (None, {}, {}, {})
    d.marked_for_deletion = lambda name: name in d.marked or name in d.terminating
    for inf in (a.claims, a.nodes, a.pods, a.pools, a.pdbs):
        inf.add_handlers(*(lambda *args: setattr(d, "changes", d.changes + 1),) * 3)
    return a


def _claim(name: str, r: random.Random) -> NodeClaim:
    conds = [
        Condition(type="Initialized", status=r.choice(["True", "Unknown"]), reason="r"),
        Condition(type="InstanceTerminating", status=r.choice(["True", "False", "False"]), reason="r"),
    ]
    meta = ObjectMeta(name=name, labels={"karpenter.sh/nodepool": r.choice("pq")}, resource_version=str(r.random()))
    if r.random() < 0.1:
        meta = replace(meta, deletion_timestamp="2026-01-01T00:00:00Z")
    status = NodeClaimStatus(node_name=name if r.random() < 0.9 else "", conditions=conds)
    return NodeClaim(metadata=meta, status=status)


def _node(name: str, r: random.Random) -> Node:
    meta = ObjectMeta(name=name, labels={"karpenter.sh/nodepool": r.choice("pq")})
    if r.random() < 0.1:
        meta = replace(meta, deletion_timestamp="2026-01-01T00:00:00Z")
    ready = NodeCondition(type="Ready", status=r.choice(["True", "True", "False"]))
    return Node(metadata=meta, status=NodeStatus(conditions=[ready]))


@pytest.mark.parametrize("seed", range(20))
def test_budget_counts_are_the_plain_loops(seed: int) -> None:
    """Random NodeClaims, Nodes and marks changing between passes: the same counts."""
    r = random.Random(seed)
    a = _budget_agent()
    d = a.disruption
    names = [f"n{i}" for i in range(12)]
    for step in range(150):
        op = r.random()
        name = r.choice(names)
        if op < 0.3:
            a.claims.put(_claim(name, r))
        elif op < 0.55:
            a.nodes.put(_node(name, r))
        elif op < 0.62 and name in a.claims.store:
            a.claims.drop(name)
        elif op < 0.68 and name in a.nodes.store:
            a.nodes.drop(name)
        elif op < 0.78:
            d.marked[name] = None
        elif op < 0.85:
            d.marked.pop(name, None)
        elif op < 0.9:
            d.terminating[name] = None
        assert cand_mod._budget_counts(a) == _plain_counts(a), (seed, step)
        assert cand_mod._budget_counts(a) == _plain_counts(a), (seed, step)  # kept


@pytest.mark.parametrize(
    "change",
    [
        pytest.param("mark", id="a NodeClaim marked (no informer event)"),
        pytest.param("ready", id="its Node NotReady"),
        pytest.param("terminating", id="its instance terminating"),
        pytest.param("unwatched", id="informers that do not say: computed afresh"),
    ],
)
def test_budget_counts_follow_each_input(change: str) -> None:
    a = _budget_agent()
    d = a.disruption
    ok = [Condition(type="Initialized", status="True", reason="r")]
    status = NodeClaimStatus(node_name="n", conditions=ok)
    a.claims.put(NodeClaim(metadata=ObjectMeta(name="n", labels={}), status=status))
    node = Node(
        metadata=ObjectMeta(name="n", labels={"karpenter.sh/nodepool": "p"}),
        status=NodeStatus(conditions=[NodeCondition(type="Ready", status="True")]),
    )
    a.nodes.put(node)
    assert cand_mod._budget_counts(a) == ({"p": 1}, {})
    if change == "mark":
        d.marked["n"] = None
    elif change == "ready":
        a.nodes.put(replace(node, status=NodeStatus(conditions=[NodeCondition(type="Ready", status="False")])))
    elif change == "terminating":
        gone = [*ok, Condition(type="InstanceTerminating", status="True", reason="r")]
        a.claims.put(NodeClaim(metadata=ObjectMeta(name="n"), status=NodeClaimStatus(node_name="n", conditions=gone)))
    else:
        d.watching = False
        d.terminating["n"] = None
    assert cand_mod._budget_counts(a) == _plain_counts(a)
    assert cand_mod._budget_counts(a) != ({"p": 1}, {})
