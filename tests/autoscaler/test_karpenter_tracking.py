"""What the Karpenter agent keeps between ticks and passes (issue 28's Karpenter day), each
checked against what computing afresh gives: ``tracking.ClaimTracking`` (which NodeClaims a
tick must look at), ``memo.EmptySearch``/``memo.SingleOutcomes`` (consolidation searches that
found nothing, answered again) and ``candidates.get_candidates`` (entries kept across the
methods of a pass, resumed afresh after a change)."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter import candidates as cand_mod
from agents.autoscaler.karpenter.memo import EmptySearch, SingleOutcomes
from agents.autoscaler.karpenter.tracking import ClaimTracking
from emulator.base.api.core import Node, NodeCondition, NodeStatus, Pod, PodSpec
from emulator.base.api.karpenter import NodeClaim, NodeClaimStatus
from emulator.base.api.meta import Condition, ObjectMeta


class _Informer:
    """A store calling its handlers as the real informer does (store first, then handlers)."""

    def __init__(self) -> None:
        self.store: dict[str, Any] = {}
        self.handlers: list[tuple[Any, Any, Any]] = []

    def add_handlers(self, on_add: Any, on_update: Any, on_delete: Any) -> None:
        self.handlers.append((on_add, on_update, on_delete))

    def objects(self) -> list[Any]:
        return list(self.store.values())

    def get(self, name: str, namespace: str = "") -> Any:
        return self.store.get(name)

    def put(self, obj: Any) -> None:
        old = self.store.get(obj.metadata.name)
        self.store[obj.metadata.name] = obj
        for add, update, _ in self.handlers:
            add(obj) if old is None else update(old, obj)

    def drop(self, name: str) -> None:
        obj = self.store.pop(name)
        for _, _, delete in self.handlers:
            delete(obj)


def _agent() -> Any:
    a = SimpleNamespace(
        pods=_Informer(), nodes=_Informer(), pools=_Informer(), claims=_Informer(), pdbs=_Informer(), batches=0
    )
    a.disruption = SimpleNamespace(
        pod_changes=0,
        marked={},
        terminating={},
        queue=SimpleNamespace(by_claim={}),
        marked_for_deletion=lambda n: False,
    )
    a.disruption.track = ClaimTracking(a, watching=True)
    return a


def _claim(name: str, *, provider: str = "kwok://x", node_name: str = "", initialized: bool = False) -> NodeClaim:
    conds = [Condition(type="Initialized", status="True" if initialized else "Unknown", reason="r")]
    return NodeClaim(
        metadata=ObjectMeta(name=name, labels={"karpenter.sh/nodepool": "p"}, resource_version="1"),
        status=NodeClaimStatus(provider_id=provider, node_name=node_name, conditions=conds),
    )


def test_lifecycle_looks_only_at_open_claims() -> None:
    """registration.go / initialization.go: a NodeClaim registered and Initialized (or not
    launched, or deleting) is skipped whatever its Node says; the others, by name."""
    a = _agent()
    t = a.disruption.track
    a.claims.put(_claim("b"))
    a.claims.put(_claim("a", node_name="a"))
    a.claims.put(_claim("c", provider=""))
    a.claims.put(_claim("d", node_name="d", initialized=True))
    assert [c.metadata.name for c in t.lifecycle_claims()] == ["a", "b"]
    a.claims.put(_claim("a", node_name="a", initialized=True))
    assert [c.metadata.name for c in t.lifecycle_claims()] == ["b"]
    a.claims.drop("b")
    assert t.lifecycle_claims() == []
    assert [c.metadata.name for c in t.sorted_claims()] == ["a", "c", "d"]


def test_stale_marks_follow_pods_pools_claims_and_time() -> None:
    """The disruption conditions of a NodeClaim are checked again after a change to it, its
    NodePool or the pods on its node, or once their RequeueAfter is due; not otherwise."""
    a = _agent()
    t = a.disruption.track
    for n in ("n1", "n2"):
        a.claims.put(_claim(n, node_name=n))
    claims = {c.metadata.name: c for c in a.claims.objects()}
    for c in claims.values():
        t.checked(c, None)
    assert not t.needs_check("n1")
    assert not t.needs_check("n2")
    a.pods.put(Pod(metadata=ObjectMeta(name="p", namespace="d"), spec=PodSpec(node_name="n2")))
    assert t.needs_check("n2")
    assert not t.needs_check("n1")
    t.checked(claims["n2"], None)
    t.schedule(50.0, "n1")
    t.due_until(49.0)
    assert not t.needs_check("n1")
    t.due_until(50.0)
    assert t.needs_check("n1")
    t.checked(claims["n1"], None)
    a.pools.put(SimpleNamespace(metadata=ObjectMeta(name="p")))
    assert t.needs_check("n1")
    assert t.needs_check("n2")


def test_a_claim_updated_after_the_ticks_snapshot_stays_stale() -> None:
    """Race: the tick reads its sorted snapshot, an update arrives before the check reaches the
    NodeClaim; the check reads the old object, so the NodeClaim must be checked again next tick."""
    a = _agent()
    t = a.disruption.track
    a.claims.put(_claim("n1", node_name="n1"))
    snapshot = a.claims.get("n1")
    a.claims.put(replace(snapshot, metadata=replace(snapshot.metadata, resource_version="2")))
    t.checked(snapshot, None)
    assert t.needs_check("n1")


def test_a_claim_named_apart_from_its_node_turns_tracking_off() -> None:
    a = _agent()
    t = a.disruption.track
    a.claims.put(_claim("c1", node_name="other"))
    t.checked(a.claims.get("c1"), None)
    assert t.needs_check("c1")
    assert t.needs_check("anything")


def test_content_ignores_node_heartbeats_only() -> None:
    a = _agent()
    t = a.disruption.track
    node = Node(metadata=ObjectMeta(name="n", labels={"a": "1"}), status=NodeStatus())
    a.nodes.put(node)
    before = t.content()
    beat = NodeCondition(type="Ready", status="True", last_heartbeat_time="2026-01-01T00:00:10Z")
    a.nodes.put(replace(node, status=replace(node.status, conditions=[beat])))
    assert t.content() == before
    a.nodes.put(replace(node, metadata=replace(node.metadata, labels={"a": "2"})))
    assert t.content() != before


def _memo_agent() -> Any:
    a = _agent()
    a.sim = SimpleNamespace(_last=3)
    a._sim_names = 0
    a.recorder = SimpleNamespace(published={})
    a.disruption.state_reads = 0
    a.disruption.consolidation_state = lambda: setattr(a.disruption, "state_reads", a.disruption.state_reads + 1)
    return a


def test_empty_search_is_answered_again_with_its_traces_replayed() -> None:
    a = _memo_agent()
    runs: list[int] = []

    async def search(cands: Any, most: int) -> Any:
        runs.append(most)
        a.sim._last = 7
        a._sim_names += 2
        a.disruption.consolidation_state()
        return None

    memo = EmptySearch(a)
    cands = [SimpleNamespace(name="x"), SimpleNamespace(name="y")]
    assert asyncio.run(memo.run(search, cands, 2)) is None
    a.sim._last = 3  # the provisioner's pass moved it back
    assert asyncio.run(memo.run(search, cands, 2)) is None
    assert runs == [2]
    assert memo.answered == 1
    assert (a.sim._last, a._sim_names, a.disruption.state_reads) == (7, 4, 2)
    a.pods.put(Pod(metadata=ObjectMeta(name="p", namespace="d"), spec=PodSpec()))
    a.disruption.pod_changes += 1
    asyncio.run(memo.run(search, cands, 2))
    assert runs == [2, 2]


def test_single_outcome_republishes_its_messages() -> None:
    a = _memo_agent()
    published: list[str] = []

    class Method:
        async def publish(self, c: Any, msg: str) -> None:
            if (record := a.disruption.outcomes.messages) is not None:
                record.append(msg)
            published.append(f"{c.name}:{msg}")

        async def compute_one(self, cands: Any) -> Any:
            await self.publish(cands[0], "Can't replace with a cheaper node")
            return None

    a.disruption.outcomes = SingleOutcomes(a)
    c = SimpleNamespace(name="x")
    asyncio.run(a.disruption.outcomes.run(Method(), c))
    asyncio.run(a.disruption.outcomes.run(Method(), c))
    assert a.disruption.outcomes.answered == 1
    assert published == ["x:Can't replace with a cheaper node"] * 2


def test_get_candidates_resumes_afresh_after_a_change_during_an_await() -> None:
    """A NodeClaim deleted while the pass awaits an earlier NodeClaim's filter is not a
    candidate, as computing everything afresh would have found; untouched, the kept entries
    serve the next method."""
    a = _agent()
    a.clock = SimpleNamespace(now=lambda: 100.0)
    a.cloud = SimpleNamespace(instance_types=list)
    a.recorder = SimpleNamespace(publish=None)
    d = a.disruption
    d.watching, d.changes, d.prepared = True, 0, (None, None, [])
    d.queue.has = lambda name: False
    d.pods_on = lambda node: []
    a.nominated_node = lambda name, now: False
    pool = SimpleNamespace(metadata=ObjectMeta(name="p"))
    a.pools.put(pool)
    for n in ("n1", "n2", "n3"):
        a.claims.put(_claim(n, node_name=n, initialized=True))
        a.nodes.put(Node(metadata=ObjectMeta(name=n, labels={"karpenter.sh/nodepool": "p"})))
    seen: list[str] = []

    async def should(c: Any) -> bool:
        seen.append(c.name)
        if c.name == "n1" and "n2" in a.nodes.store:
            a.nodes.drop("n2")
            d.changes += 1
        return True

    got = asyncio.run(cand_mod.get_candidates(a, should, cand_mod.GRACEFUL))
    assert [c.name for c in got] == ["n1", "n3"]
    seen.clear()
    again = asyncio.run(cand_mod.get_candidates(a, should, cand_mod.GRACEFUL))
    assert [c.name for c in again] == ["n1", "n3"]
    assert d.prepared[0] is not None
    third = asyncio.run(cand_mod.get_candidates(a, should, cand_mod.GRACEFUL))
    assert [c.name for c in third] == ["n1", "n3"]
    assert third[0] is again[0]
    assert third[1] is again[1]
    assert [e[2].metadata.name for e in d.prepared[2]] == ["n1", "n3"]


def _walk(t: ClaimTracking, claims: list[Any], act: Any) -> list[int]:
    """The disruption tick's walk through ``next_to_check``; ``act(i)`` runs where it acts."""
    out, i = [], -1
    while (i := t.next_to_check(claims, i + 1)) < len(claims):
        c = claims[i]
        if c.metadata.deletion_timestamp is None and not t.needs_check(c.metadata.name):
            continue
        out.append(i)
        act(i)
    return out


def _plain(t: ClaimTracking, claims: list[Any], act: Any) -> list[int]:
    """The walk over every position, as before ``next_to_check``."""
    out = []
    for i, c in enumerate(claims):
        if c.metadata.deletion_timestamp is None and not t.needs_check(c.metadata.name):
            continue
        out.append(i)
        act(i)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_the_ticks_jumps_act_where_the_plain_walk_acts(seed: int) -> None:
    """Random NodeClaims (some deleting), stale names (some of no NodeClaim), and checks that
    clear or mark names while the walk goes on (the awaits): the same positions acted on."""
    runs: list[list[int]] = []
    for walk in (_walk, _plain):
        r = random.Random(seed)
        a = _agent()
        t = a.disruption.track
        for k in range(r.randint(0, 30)):
            c = _claim(f"n{k:02d}", node_name=f"n{k:02d}", initialized=True)
            if r.random() < 0.15:
                c = replace(c, metadata=replace(c.metadata, deletion_timestamp="2026-01-01T00:00:00Z"))
            a.claims.put(c)
        claims = t.sorted_claims()
        for c in claims:
            t.checked(c, None)
        for _ in range(r.randint(0, 10)):
            t.stale[f"n{r.randint(0, 40):02d}"] = None

        def act(i: int, r: random.Random = r, t: ClaimTracking = t, claims: list[Any] = claims) -> None:
            t.checked(claims[i], None)
            if r.random() < 0.4:  # an event during the check's await marks another NodeClaim
                t.stale[f"n{r.randint(0, 40):02d}"] = None

        runs.append(walk(t, claims, act))
    assert runs[0] == runs[1], seed


@pytest.mark.parametrize(
    ("stale", "deleting", "start", "want"),
    [
        pytest.param([], [], 0, 4, id="nothing to do"),
        pytest.param(["n2"], [], 0, 2, id="a stale NodeClaim"),
        pytest.param(["n2"], [1], 0, 1, id="a deleting one first"),
        pytest.param(["n0", "n3"], [], 1, 3, id="stale before the start is passed"),
        pytest.param(["gone"], [], 0, 4, id="a stale name of no NodeClaim"),
        pytest.param([], [3], 3, 3, id="at the start"),
    ],
)
def test_next_to_check_table(stale: list[str], deleting: list[int], start: int, want: int) -> None:
    a = _agent()
    t = a.disruption.track
    for k in range(4):
        c = _claim(f"n{k}", node_name=f"n{k}", initialized=True)
        if k in deleting:
            c = replace(c, metadata=replace(c.metadata, deletion_timestamp="2026-01-01T00:00:00Z"))
        a.claims.put(c)
    claims = t.sorted_claims()
    for c in claims:
        t.checked(c, None)
    t.stale.update(dict.fromkeys(stale))
    assert t.next_to_check(claims, start) == want
    assert t.next_to_check(list(claims), start) == start  # another list: every position walked
    a.claims.put(_claim("n9", node_name="elsewhere"))  # a NodeClaim named apart: tracking off
    assert t.next_to_check(claims, start) == start
