"""What the disruption controller keeps from one pass to the next (issue 28's Karpenter day),
each against computing afresh: ``budgetmapping._budget_counts`` (the disruption budgets' node
counts, upstream ``BuildDisruptionBudgetMapping``'s loop over the state nodes) and
``candidates._entries``' per-NodeClaim parts (``GetCandidates``' checks of each NodeClaim)."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter import budgetmapping, consolidation
from agents.autoscaler.karpenter import candidates as cand_mod
from emulator.base.api.core import Node, NodeCondition, NodeStatus, Pod, PodSpec
from emulator.base.api.karpenter import NodeClaim, NodeClaimSpec, NodeClaimStatus
from emulator.base.api.meta import Condition, LabelSelector, ObjectMeta, OwnerReference
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
        assert budgetmapping._budget_counts(a) == _plain_counts(a), (seed, step)
        assert budgetmapping._budget_counts(a) == _plain_counts(a), (seed, step)  # kept


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
    assert budgetmapping._budget_counts(a) == ({"p": 1}, {})
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
    assert budgetmapping._budget_counts(a) == _plain_counts(a)
    assert budgetmapping._budget_counts(a) != ({"p": 1}, {})


def _entries_agent(r: random.Random) -> Any:
    a = _agent()
    now = [1000.0]
    a.clock = SimpleNamespace(now=lambda: now[0])
    types = [SimpleNamespace(name="t1"), SimpleNamespace(name="t2")]
    a.cloud = SimpleNamespace(instance_types=lambda: types)
    published: list[str] = []

    async def publish(*events: Any) -> None:
        published.extend(f"{e.involved.metadata.name}:{e.message}" for e in events)

    a.recorder = SimpleNamespace(publish=publish)
    d = a.disruption
    d.watching, d.changes, d.prepared = False, 0, (None, None, [])
    d.queue.has = lambda name: name in d.queue.by_claim
    d.marked_for_deletion = lambda name: name in d.marked or name in d.terminating
    d.pods = {}
    d.pods_on = lambda node: d.pods.get(node, [])
    a.nominations = {}
    a.nominated_node = lambda name, t: a.nominations.get(name, -1.0) > t
    for name, after in (("p", "5m"), ("q", "Never")):
        disruption = SimpleNamespace(consolidate_after=after, consolidation_policy="WhenEmptyOrUnderutilized")
        a.pools.put(SimpleNamespace(metadata=ObjectMeta(name=name), spec=SimpleNamespace(disruption=disruption)))
    return a, now, published


def _pod(name: str, r: random.Random) -> Pod:
    ann = {"karpenter.sh/do-not-disrupt": "true"} if r.random() < 0.05 else {}
    if r.random() < 0.2:
        ann["controller.kubernetes.io/pod-deletion-cost"] = str(r.randint(-5, 5) * 2**26)
    owners = [OwnerReference(kind="DaemonSet", name="ds", uid="ds", controller=True)] if r.random() < 0.2 else []
    meta = ObjectMeta(name=name, namespace="d", uid=name, annotations=ann, owner_references=owners)
    return Pod(metadata=meta, spec=PodSpec(priority=r.choice([None, 0, 1000])))


def _entry_claim(name: str, r: random.Random) -> NodeClaim:
    conds = [Condition(type="Initialized", status=r.choice(["True", "True", "True", "Unknown"]), reason="r")]
    conds += [Condition(type=t, status=r.choice(["True", "False"]), reason="r") for t in ("Consolidatable", "Drifted")]
    meta = ObjectMeta(name=name, labels={}, creation_timestamp="2026-01-01T00:00:00Z", resource_version=str(r.random()))
    if r.random() < 0.05:
        meta = replace(meta, deletion_timestamp="2026-01-01T00:00:00Z")
    spec = NodeClaimSpec(expire_after=r.choice([None, "720h", "Never"]))
    return NodeClaim(metadata=meta, spec=spec, status=NodeClaimStatus(node_name=name, conditions=conds))


def _entry_node(name: str, r: random.Random) -> Node:
    labels = {"karpenter.sh/nodepool": r.choice(["p", "p", "p", "q", "gone"]), "node.kubernetes.io/instance-type": "t1"}
    if r.random() < 0.8:
        labels.update({"karpenter.sh/capacity-type": "on-demand", "topology.kubernetes.io/zone": "z"})
    ann = {"karpenter.sh/do-not-disrupt": "true"} if r.random() < 0.05 else {}
    return Node(metadata=ObjectMeta(name=name, labels=labels, annotations=ann))


def _seen(cands: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (c.name, c.claim, c.node, c.pool, c.instance_type.name, [p.metadata.uid for p in c.pods],
         [p.metadata.uid for p in c.reschedulable], c.cost)
        for c in cands
    ]  # fmt: skip


@pytest.mark.parametrize("seed", range(16))
def test_kept_parts_give_the_candidates_computed_afresh(seed: int) -> None:
    """Random NodeClaims, Nodes, pods (the same list, an equal new list, other pods), marks,
    nominations, the queue, PDBs and the clock moving between passes: every pass gives the
    same candidates (the same objects, the same cost) and the same DisruptionBlocked Events
    with the parts kept as without them."""
    r = random.Random(seed)
    a, now, published = _entries_agent(r)
    d = a.disruption
    names = [f"n{i}" for i in range(10)]
    for name in names:
        a.claims.put(_entry_claim(name, r))
        a.nodes.put(_entry_node(name, r))
    pdb = SimpleNamespace(
        metadata=ObjectMeta(name="pdb", namespace="d"),
        spec=SimpleNamespace(selector=None, max_unavailable=None, min_available=None, unhealthy_pod_eviction_policy=""),
        status=SimpleNamespace(disruptions_allowed=1),
    )

    d.outcomes = SimpleNamespace(messages=None)
    methods = consolidation.methods(a)

    reused = 0
    for step in range(120):
        op, name = r.random(), r.choice(names)
        if op < 0.15:
            a.claims.put(_entry_claim(name, r))
        elif op < 0.25:
            a.nodes.put(_entry_node(name, r))
        elif op < 0.4:
            d.pods[name] = [_pod(f"{name}-{step}-{k}", r) for k in range(r.randint(0, 3))]
        elif op < 0.45:
            d.pods[name] = list(d.pods.get(name, []))
        elif op < 0.5:
            d.marked[name] = None
        elif op < 0.55:
            d.marked.pop(name, None)
        elif op < 0.6:
            a.nominations[name] = now[0] + r.choice([-1.0, 5.0, 30.0])
        elif op < 0.65:
            d.queue.by_claim[name] = None
        elif op < 0.7:
            d.queue.by_claim.pop(name, None)
        elif op < 0.75:
            a.pdbs.put(replace_pdb(pdb, r))
        elif op < 0.8:  # the NodePool updated: a new object
            after = r.choice(["5m", "Never"])
            disruption = SimpleNamespace(consolidate_after=after, consolidation_policy="WhenEmptyOrUnderutilized")
            a.pools.put(SimpleNamespace(metadata=ObjectMeta(name="p"), spec=SimpleNamespace(disruption=disruption)))
        now[0] += r.choice([0.0, 0.5, 10.0])
        runs = []
        for keep in (True, False):
            if keep:
                d.entry_parts = getattr(d, "kept_parts", {})
                d.pdb_limits = getattr(d, "kept_limits", None)
            else:
                for attr in ("entry_parts", "pdb_limits"):
                    if hasattr(d, attr):
                        delattr(d, attr)
            published.clear()
            got = [asyncio.run(cand_mod.get_candidates(a, m.should_disrupt, m.klass)) for m in methods]
            runs.append(([_seen(g) for g in got], list(published)))
            if keep:
                d.kept_parts, d.kept_limits = d.entry_parts, d.pdb_limits
        assert runs[0] == runs[1], (seed, step)
        reused += sum(1 for g in runs[0][0] for c in g if c[1] is d.kept_parts[c[0]].claim)
    assert reused > 50  # the kept parts were used


def replace_pdb(pdb: Any, r: random.Random) -> Any:
    """A PDB object changed (a new object): its selector and allowed disruptions."""
    spec = SimpleNamespace(**vars(pdb.spec))
    spec.selector = r.choice([None, LabelSelector(match_labels={})])
    return SimpleNamespace(
        metadata=pdb.metadata, spec=spec, status=SimpleNamespace(disruptions_allowed=r.choice([0, 1]))
    )
