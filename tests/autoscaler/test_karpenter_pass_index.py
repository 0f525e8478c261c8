"""``passindex.PassIndex``: what the disruption pass keeps from the informers' handlers
(issue 28's Karpenter day), checked after random events against computing afresh from the
stores: the candidates and the Events of every method (``candidates.get_candidates``), each
node's pods, the budgets' node counts, the consolidation fingerprint, the NodeClaims the
clean-up may write to, and whether a NodeClaim may have expired."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter import budgetmapping
from agents.autoscaler.karpenter import candidates as cand_mod
from agents.autoscaler.karpenter.disruption import DISRUPTED_TAINT, Disruption
from agents.autoscaler.karpenter.passindex import WatchedDict, _digest, expiry_of
from emulator.base.api.core import Node, NodeCondition, NodeSpec, NodeStatus, Pod, PodSpec, PodStatus
from emulator.base.api.karpenter import NodeClaim, NodeClaimSpec, NodeClaimStatus
from emulator.base.api.meta import Condition, LabelSelector, ObjectMeta, OwnerReference
from tests.autoscaler.test_karpenter_pass_caches import _plain_counts, _seen
from tests.autoscaler.test_karpenter_tracking import _Informer

NAMES = [f"n{i}" for i in range(10)]


def _pool(name: str, after: str) -> Any:
    disruption = SimpleNamespace(consolidate_after=after, consolidation_policy="WhenEmptyOrUnderutilized")
    return SimpleNamespace(metadata=ObjectMeta(name=name), spec=SimpleNamespace(disruption=disruption))


def _pdb(r: random.Random) -> Any:
    spec = SimpleNamespace(
        selector=r.choice([None, LabelSelector(match_labels={})]),
        max_unavailable=None,
        min_available=None,
        unhealthy_pod_eviction_policy="",
    )
    status = SimpleNamespace(disruptions_allowed=r.choice([0, 1, 1]))
    return SimpleNamespace(metadata=ObjectMeta(name="pdb", namespace="d"), spec=spec, status=status)


def _agent() -> tuple[Any, list[float], list[str]]:
    now = [1000.0]
    published: list[str] = []

    async def publish(*events: Any) -> None:
        published.extend(f"{e.involved.metadata.name}:{e.reason}:{e.message}" for e in events)

    types = [SimpleNamespace(name="t1", offerings=[]), SimpleNamespace(name="t2", offerings=[])]
    a = SimpleNamespace(
        pods=_Informer(), nodes=_Informer(), pools=_Informer(), claims=_Informer(), pdbs=_Informer(),
        batches=0, nominations={}, clock=SimpleNamespace(now=lambda: now[0]),
        cloud=SimpleNamespace(instance_types=lambda: types), recorder=SimpleNamespace(publish=publish),
    )  # fmt: skip
    a.nominated_node = lambda name, t: a.nominations.get(name, -1.0) > t
    a.disruption = Disruption(a)
    for name, after in (("p", "5m"), ("q", "Never")):
        a.pools.put(_pool(name, after))
    return a, now, published


def _claim(name: str, r: random.Random) -> NodeClaim:
    conds = [Condition(type="Initialized", status=r.choice(["True", "True", "True", "Unknown"]), reason="r")]
    conds += [Condition(type=t, status=r.choice(["True", "False"]), reason="r") for t in ("Consolidatable", "Drifted")]
    conds += [Condition(type="InstanceTerminating", status=r.choice(["True", "False", "False", "False"]), reason="r")]
    if r.random() < 0.2:
        conds.append(Condition(type="DisruptionReason", status="True", reason="Underutilized"))
    meta = ObjectMeta(
        name=name,
        labels={},
        creation_timestamp=r.choice(["2026-01-01T00:00:00Z", "2026-01-01T00:10:00Z"]),
        resource_version=str(r.random()),
    )
    if r.random() < 0.05:
        meta = replace(meta, deletion_timestamp="2026-01-01T00:00:00Z")
    spec = NodeClaimSpec(expire_after=r.choice([None, "720h", "Never", "1000s"]))
    node_name = name if r.random() < 0.9 else ""
    return NodeClaim(metadata=meta, spec=spec, status=NodeClaimStatus(node_name=node_name, conditions=conds))


def _node(name: str, r: random.Random) -> Node:
    labels = {"karpenter.sh/nodepool": r.choice(["p", "p", "p", "q", "gone"]), "node.kubernetes.io/instance-type": "t1"}
    if r.random() < 0.8:
        labels.update({"karpenter.sh/capacity-type": "on-demand", "topology.kubernetes.io/zone": "z"})
    ann = {"karpenter.sh/do-not-disrupt": "true"} if r.random() < 0.05 else {}
    meta = ObjectMeta(name=name, labels=labels, annotations=ann)
    if r.random() < 0.05:
        meta = replace(meta, deletion_timestamp="2026-01-01T00:00:00Z")
    taints = [DISRUPTED_TAINT] if r.random() < 0.2 else []
    ready = NodeCondition(type="Ready", status=r.choice(["True", "True", "False"]))
    return Node(metadata=meta, spec=NodeSpec(taints=taints), status=NodeStatus(conditions=[ready]))


def _pod(name: str, r: random.Random) -> Pod:
    ann = {"karpenter.sh/do-not-disrupt": "true"} if r.random() < 0.05 else {}
    owners = [OwnerReference(kind="DaemonSet", name="ds", uid="ds", controller=True)] if r.random() < 0.2 else []
    meta = ObjectMeta(name=name, namespace="d", uid=f"u-{name}", annotations=ann, owner_references=owners)
    spec = PodSpec(node_name=r.choice(["", *NAMES]), priority=r.choice([None, 0, 1000]))
    phase = r.choice(["Running", "Running", "Pending", "Succeeded"])
    return Pod(metadata=meta, spec=spec, status=PodStatus(phase=phase))


def _step(a: Any, now: list[float], r: random.Random, step: int) -> None:
    """One random event: an informer's, a mark, a termination, the queue, a nomination, time."""
    d = a.disruption
    op, name = r.random(), r.choice(NAMES)
    if op < 0.15:
        a.claims.put(_claim(name, r))
    elif op < 0.2 and name in a.claims.store:
        a.claims.drop(name)
    elif op < 0.32:
        a.nodes.put(_node(name, r))
    elif op < 0.35 and name in a.nodes.store:
        a.nodes.drop(name)
    elif op < 0.5:
        pod = f"p{r.randrange(25)}"
        if r.random() < 0.25 and pod in a.pods.store:
            a.pods.drop(pod)
        else:
            a.pods.put(_pod(pod, r))
    elif op < 0.55:
        d.mark(name)
    elif op < 0.6:
        d.unmark(name)
    elif op < 0.63:
        d.terminating[name] = None
    elif op < 0.66:
        d.terminating.pop(name, None)
    elif op < 0.7:
        d.queue.by_claim[name] = None
    elif op < 0.74:
        d.queue.by_claim.pop(name, None)
    elif op < 0.78:
        a.nominations[name] = now[0] + r.choice([-1.0, 5.0, 30.0])
        a.batches += 1
    elif op < 0.82:
        a.pdbs.put(_pdb(r))
    elif op < 0.85:
        a.pools.put(_pool("p", r.choice(["5m", "Never"])))
    now[0] += r.choice([0.0, 0.0, 0.5, 10.0, 400.0])


def _afresh(a: Any, published: list[str]) -> tuple[list[Any], list[str]]:
    """Every method's candidates and Events as the plain loops give them (no index, nothing
    kept from earlier passes)."""
    d = a.disruption
    kept = (d.index, d.watching, d.entry_parts, d.prepared)
    d.index, d.watching, d.entry_parts, d.prepared = None, False, {}, (None, None, [])
    d.indexed_at = None  # the plain pods index, built afresh
    try:
        return _run(a, published)
    finally:
        d.index, d.watching, d.entry_parts, d.prepared = kept


def _run(a: Any, published: list[str]) -> tuple[list[Any], list[str]]:
    published.clear()
    got = [asyncio.run(cand_mod.get_candidates(a, m.should_disrupt, m.klass)) for m in a.disruption.methods]
    return [_seen(g) for g in got], list(published)


def _plain_pods(a: Any, node: str) -> list[Pod]:
    pods = [p for p in a.pods.objects() if p.spec.node_name == node and p.status.phase not in ("Succeeded", "Failed")]
    return sorted(pods, key=lambda p: (p.metadata.namespace, p.metadata.name))


@pytest.mark.parametrize("seed", range(12))
def test_the_index_is_what_the_stores_say(seed: int) -> None:
    r = random.Random(seed)
    a, now, published = _agent()
    d = a.disruption
    index = d.index
    assert index is not None
    rows_kept = quiet = 0
    for step in range(250):
        _step(a, now, r, step)
        if r.random() < 0.5:
            continue  # several events between passes
        # the candidates and Events of every method, twice (the second from the kept entries)
        got = _run(a, published)
        assert got == _afresh(a, published), (seed, step)
        assert _run(a, published) == got, (seed, step)
        rows_kept += sum(1 for part in d.rows.values() if part is not None)
        for node in NAMES:
            assert d.pods_on(node) == _plain_pods(a, node), (seed, step, node)
            daemon = [p for p in _plain_pods(a, node) if p.metadata.owner_references]
            uids = sorted(p.metadata.uid for p in _plain_pods(a, node) if p not in daemon)
            assert d.pod_key(node) == tuple(uids), (seed, step, node)
        assert budgetmapping._budget_counts(a) == _plain_counts(a), (seed, step)
        bound = [f"{p.metadata.uid}@{p.spec.node_name}" for p in a.pods.objects() if p.spec.node_name]
        claims = [c.metadata.name for c in a.claims.objects()]
        total = (1 + sum(_digest(t) for t in bound + claims)) & ((1 << 64) - 1)
        assert index.signature() == (len(bound) + len(claims), total), (seed, step)
        reasoned = {c.metadata.name for c in a.claims.objects() if cand_mod.condition(c, "DisruptionReason")}
        tainted = {n.metadata.name for n in a.nodes.objects() if DISRUPTED_TAINT in n.spec.taints}
        assert (set(index.reasoned), set(index.tainted)) == (reasoned, tainted), (seed, step)
        due = any((e := expiry_of(c)) is not None and e <= now[0] for c in a.claims.objects())
        may = index.may_have_expired(now[0], lambda name: False)
        assert may or not due, (seed, step)  # conservative: an earlier NodeClaim of the name may be due
        quiet += not may
    assert rows_kept > 100  # the rows were used
    assert quiet > 0  # and the heap spared some loops


def test_a_watched_dict_tells_of_keys_added_and_removed() -> None:
    seen: list[str] = []
    w = WatchedDict(seen.append)
    w["a"] = None
    w["a"] = 1  # the same key: no change
    w.setdefault("b")
    w.update({"c": 2})
    w.pop("a")
    w.pop("zz", None)
    del w["b"]
    w.clear()
    w |= {"d": 3}
    assert seen == ["a", "b", "c", "a", "b", "c", "d"]
    assert dict(w) == {"d": 3}


def test_an_instance_type_replaced_in_the_clouds_list_is_seen() -> None:
    """The rows are kept while the cloud's instance types are the same objects, not merely the
    same list: a type swapped inside it reaches the candidates as a fresh computation's would."""
    r = random.Random(3)
    a, now, _ = _agent()
    types = a.cloud.instance_types()
    for n in ("n1", "n2", "n3"):
        a.claims.put(_claim(n, r))
        a.nodes.put(_node(n, r))
    method = a.disruption.methods[-1]

    def instance_types() -> list[Any]:
        cands = asyncio.run(cand_mod.get_candidates(a, method.should_disrupt, method.klass))
        return [c.instance_type for c in cands]

    assert instance_types()
    types[0] = SimpleNamespace(name="t1", offerings=[])
    now[0] += 1
    assert all(t is types[0] for t in instance_types())


def test_nodeclaims_stored_before_the_disruption_is_built_are_tracked() -> None:
    """A NodeClaim already stored when ``Disruption`` is built counts as its handlers would
    have counted it: its Node named otherwise turns the name-keyed tracking off, so a node left
    with the disrupted taint is still untainted by the clean-up."""
    a = SimpleNamespace(
        pods=_Informer(), nodes=_Informer(), pools=_Informer(), claims=_Informer(), pdbs=_Informer(),
        batches=0, nominations={}, clock=SimpleNamespace(now=lambda: 0.0),
    )  # fmt: skip
    a.claims.put(
        NodeClaim(metadata=ObjectMeta(name="c1"), spec=NodeClaimSpec(), status=NodeClaimStatus(node_name="x1"))
    )
    a.nodes.put(Node(metadata=ObjectMeta(name="x1"), spec=NodeSpec(taints=[DISRUPTED_TAINT]), status=NodeStatus()))
    d = a.disruption = Disruption(a)
    writes: list[str] = []

    async def set_taint(node: str, on: bool) -> bool:
        writes.append(node)
        return True

    async def clear_reason(name: str) -> None:
        return None

    d.set_taint, d.clear_reason = set_taint, clear_reason  # type: ignore[method-assign]
    assert not d.track.exact
    asyncio.run(d._clean_up())
    assert writes == ["x1"]


@pytest.mark.parametrize("seed", range(8))
def test_the_clean_up_writes_as_the_plain_loop(seed: int) -> None:
    """``Disruption._clean_up`` with the index visits only NodeClaims with the condition or
    the taint: the same writes, in the same order, as visiting every NodeClaim by name."""
    r = random.Random(seed)
    a, now, _ = _agent()
    d = a.disruption
    writes: list[tuple[str, str]] = []

    async def set_taint(node: str, on: bool) -> bool:
        n = a.nodes.get(node)
        if n is not None and DISRUPTED_TAINT in n.spec.taints:
            writes.append(("untaint", node))
        return True

    async def clear_reason(name: str) -> None:
        c = a.claims.get(name)
        if c is not None and cand_mod.condition(c, "DisruptionReason"):
            writes.append(("clear", name))

    d.set_taint, d.clear_reason = set_taint, clear_reason
    visited = 0
    for step in range(200):
        _step(a, now, r, step)
        writes.clear()
        asyncio.run(d._clean_up())
        got = list(writes)
        index, d.index = d.index, None
        writes.clear()
        asyncio.run(d._clean_up())
        d.index = index
        assert got == writes, (seed, step)
        visited += len(got)
    assert visited > 20
