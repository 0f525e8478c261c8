"""Disruption candidates, budgets and the scheduling simulation (kubernetes-sigs/karpenter v1.9.1
``pkg/controllers/disruption/types.go`` ``NewCandidate``, ``helpers.go`` ``GetCandidates``,
``BuildDisruptionBudgetMapping`` (a budget's own rules: ``budgets``), ``SimulateScheduling``;
``pkg/controllers/state/statenode.go``
``ValidateNodeDisruptable``/``ValidatePodsDisruptable``; ``pkg/utils/pdb``; ``pkg/utils/disruption``).

A candidate is an initialized Karpenter node (NodeClaim and Node) not in the orchestration
queue, not deleting or marked for deletion, not nominated for a pending pod, without the
``karpenter.sh/do-not-disrupt`` annotation, of a known NodePool; its pods must be disruptable
(no active pod with ``karpenter.sh/do-not-disrupt: "true"``; no evictable pod whose PDB
allows no disruption, nor one matched by two PDBs) unless the method is eventual and the
NodeClaim has a ``terminationGracePeriod``. Otherwise a ``DisruptionBlocked`` Event on the
Node and NodeClaim says why. Its disruption cost is the sum of its pods' eviction costs
(1 each, plus ``controller.kubernetes.io/pod-deletion-cost``/2^27 and priority/2^25, clamped
to [-10, 10]) times the fraction of its lifetime (``expireAfter``) remaining.

``simulate`` runs the provisioner's ``Scheduler`` over the pending pods, the candidates'
currently reschedulable pods (not ``do-not-disrupt``, not fully blocked by a PDB:
``maxUnavailable`` 0 or ``0%``, ``minAvailable`` ``100%``) and those of deleting nodes,
against every other node and the NodeClaims in flight; a non-pending pod placed on a node
that is not initialized is an error (``UninitializedNodeError``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from msgspec.structs import replace

from agents.autoscaler.karpenter import events as ev
from agents.autoscaler.karpenter.budgets import allowed_disruptions, unix_now
from agents.autoscaler.karpenter.scheduling import NewNodeClaim, Scheduler
from agents.autoscaler.karpenter.scheduling import claim_usage as claim_amounts  # the local name is taken
from emulator.base.api.core import Node, Pod
from emulator.base.api.karpenter import CAPACITY_TYPE_LABEL, NODEPOOL_LABEL, NodeClaim, NodePool
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.runtime.clock import parse_duration, parse_timestamp

__all__ = [
    "DO_NOT_DISRUPT",
    "Candidate",
    "Results",
    "budget_mapping",
    "condition",
    "get_candidates",
    "simulate",
]

DO_NOT_DISRUPT: Final = "karpenter.sh/do-not-disrupt"
INSTANCE_TYPE: Final = "node.kubernetes.io/instance-type"
ZONE: Final = "topology.kubernetes.io/zone"
DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"
GRACEFUL: Final = "graceful"
EVENTUAL: Final = "eventual"


def condition(claim: NodeClaim, type_: str) -> Any:
    return next((c for c in claim.status.conditions if c.type == type_), None)


def is_true(claim: NodeClaim, type_: str) -> bool:
    c = condition(claim, type_)
    return c is not None and c.status == "True"


def _owned_by(pod: Pod, kind: str) -> bool:
    return any(o.kind == kind and o.controller for o in pod.metadata.owner_references)


def _active(pod: Pod) -> bool:
    return pod.status.phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None


def reschedulable(pod: Pod) -> bool:
    """``pod.IsReschedulable``."""
    terminating_sts = _owned_by(pod, "StatefulSet") and pod.metadata.deletion_timestamp is not None
    return (_active(pod) or terminating_sts) and not _owned_by(pod, "DaemonSet") and not _owned_by(pod, "Node")


def do_not_disrupt(pod: Pod) -> bool:
    return pod.metadata.annotations.get(DO_NOT_DISRUPT) == "true"


class PdbLimits:
    """``pdb.Limits``: each PDB's selector, allowed disruptions and whether it blocks fully."""

    def __init__(self, pdbs: Sequence[Any]) -> None:
        self.items = []
        for p in sorted(pdbs, key=lambda p: (p.metadata.namespace, p.metadata.name)):
            s = p.spec
            full = s.max_unavailable in (0, "0%") or s.min_available == "100%"
            always = s.unhealthy_pod_eviction_policy == "AlwaysAllow"
            self.items.append((p, full, always))

    def _matching(self, pod: Pod) -> list[Any]:
        return [
            item
            for item in self.items
            if item[0].metadata.namespace == pod.metadata.namespace
            and item[0].spec.selector is not None
            and label_selector_matches(item[0].spec.selector, pod.metadata.labels)
        ]

    def _blocks(self, pod: Pod, fully: bool) -> list[str]:
        evictable = _active(pod) and not _owned_by(pod, "Node") and not do_not_disrupt(pod)
        if not evictable:
            return []
        matching = self._matching(pod)
        keys = [f"{p.metadata.namespace}/{p.metadata.name}" for p, _, _ in matching]
        if len(matching) > 1:
            return keys
        for p, full, always in matching:
            if always and any(c.type == "Ready" and c.status == "False" for c in pod.status.conditions):
                return []
            if full if fully else p.status.disruptions_allowed == 0:
                return keys
        return []

    def can_evict(self, pods: Sequence[Pod]) -> list[str]:
        """The PDB keys blocking the first pod that cannot be evicted (empty: all can)."""
        for pod in pods:
            if keys := self._blocks(pod, False):
                return keys
        return []

    def currently_reschedulable(self, pod: Pod) -> bool:
        return reschedulable(pod) and not do_not_disrupt(pod) and not self._blocks(pod, True)


@dataclass(slots=True)
class Candidate:
    claim: NodeClaim
    node: Node
    pool: NodePool
    instance_type: Any | None
    pods: list[Pod]
    reschedulable: list[Pod]
    cost: float

    @property
    def name(self) -> str:
        return self.node.metadata.name

    @property
    def capacity_type(self) -> str:
        return self.node.metadata.labels.get(CAPACITY_TYPE_LABEL, "")

    @property
    def price(self) -> float:
        """The cheapest offering of its instance type compatible with its labels (0 if none)."""
        if self.instance_type is None:
            return 0.0
        labels = self.node.metadata.labels
        prices = [
            float(o.price)
            for o in self.instance_type.offerings
            if all(r.operator != "In" or labels.get(r.key) in r.values for r in o.requirements)
        ]
        return min(prices) if prices else 0.0


def _eviction_cost(pod: Pod) -> float:
    cost = 1.0
    text = pod.metadata.annotations.get(DELETION_COST)
    if text is not None:
        with contextlib.suppress(ValueError):
            cost += float(text) / 2**27
    if pod.spec.priority is not None:
        cost += pod.spec.priority / 2**25
    return min(10.0, max(-10.0, cost))


def _lifetime_remaining(claim: NodeClaim, now: float) -> float:
    text = claim.spec.expire_after if claim.spec is not None else None
    created = claim.metadata.creation_timestamp
    if text is None or text == "Never" or not created:
        return 1.0
    total = parse_duration(text)
    if total <= 0:
        return 0.0
    return min(1.0, max(0.0, (total - (now - parse_timestamp(created))) / total))


@dataclass(slots=True)
class Results:
    """``scheduling.Results``: the new NodeClaims and the pods that could not be placed."""

    claims: list[NewNodeClaim]
    errors: dict[str, str] = field(default_factory=dict)
    """uid of a non-pending pod -> why it has nowhere to go"""
    gave_up: bool = False
    """The solve stopped early (``simulate``'s ``most_claims``): ``claims`` are more than that
    and ``errors`` may be incomplete."""

    def all_non_pending_scheduled(self) -> bool:
        return not self.errors

    def error_text(self) -> str:
        return "; ".join(f"{v}" for _, v in sorted(self.errors.items()))


async def get_candidates(agent: Any, should: Any, klass: str) -> list[Candidate]:
    """``GetCandidates`` (module docstring); ``should`` the method's filter.

    The methods of one pass ask in turn, so what does not depend on the method (``_entries``:
    each NodeClaim's Node, why it is blocked, its ``Candidate``) is kept while nothing it reads
    changed (``_stamp``). A pass that finds it changed after one of its awaits (an Event, the
    method's filter) goes on from the next NodeClaim reading the stores again, as computing
    everything afresh would have."""
    d = agent.disruption
    stamp = _stamp(agent)
    kept = d.prepared
    building: list[_Entry] | None = None
    if stamp is not None and kept[0] == stamp:
        ctx: _Context = kept[1]
        source: Iterator[_Entry] = iter(kept[2])
    else:
        ctx = _Context(
            agent.clock.now(),
            sorted(agent.claims.objects(), key=lambda c: c.metadata.name),
            {p.metadata.name: p for p in agent.pools.objects()},
            {t.name: t for t in agent.cloud.instance_types()},
            PdbLimits(agent.pdbs.objects()),
        )
        source = _entries(agent, ctx, 0)
        building = []
    out: list[Candidate] = []
    for entry in _resuming(agent, ctx, source, stamp):
        if building is not None:
            building.append(entry)
        _, node, claim, why, always, cand = entry
        tgp = claim.spec is not None and claim.spec.termination_grace_period is not None
        if why and (always or not (tgp and klass == EVENTUAL)):
            await agent.recorder.publish(*ev.blocked(node, claim, why))
        elif cand is not None and await should(cand):
            out.append(cand)
    if building is not None and stamp is not None and _stamp(agent) == stamp:
        d.prepared = (stamp, ctx, building)
    return out


_Entry = tuple[int, Node, NodeClaim, str, bool, "Candidate | None"]
"""(index in the sorted NodeClaims, Node, NodeClaim, why it is blocked ("": it is not), whether
for every method (else unless the method is eventual and the NodeClaim has a
``terminationGracePeriod``), its ``Candidate`` (None if blocked for every method))."""


@dataclass(slots=True)
class _Context:
    """What ``GetCandidates`` takes once at its start."""

    now: float
    claims: list[NodeClaim]
    pools: dict[str, NodePool]
    types: dict[str, Any]
    limits: PdbLimits


def _stamp(agent: Any) -> tuple[Any, ...] | None:
    """What ``_entries`` reads besides its context: the instant, the informers' stores, the
    marks, the queue, the nominations (set only by a provisioning batch, which counts itself)."""
    d = agent.disruption
    if not d.watching:
        return None
    return (agent.clock.now(), d.changes, tuple(d.marked), tuple(d.terminating), tuple(d.queue.by_claim), agent.batches)


def _resuming(agent: Any, ctx: _Context, source: Iterator[_Entry], stamp: Any) -> Iterator[_Entry]:
    """``source``'s entries until ``_stamp`` moves; then fresh ones from the next NodeClaim."""
    for entry in source:
        yield entry
        if stamp is not None and _stamp(agent) != stamp:
            yield from _entries(agent, ctx, entry[0] + 1)
            return


def _entries(agent: Any, ctx: _Context, first: int) -> Iterator[_Entry]:
    d = agent.disruption
    now = ctx.now
    for i in range(first, len(ctx.claims)):
        claim = ctx.claims[i]
        node = agent.nodes.get(claim.status.node_name, "") if claim.status.node_name else None
        if node is None or d.queue.has(claim.metadata.name):
            continue
        why = ""
        if not is_true(claim, "Initialized"):
            why = "node isn't initialized"
        elif claim.metadata.deletion_timestamp is not None or d.marked_for_deletion(claim.metadata.name):
            why = "node is deleting or marked for deletion"
        elif agent.nominated_node(node.metadata.name, now):
            why = "node is nominated for a pending pod"
        elif node.metadata.annotations.get(DO_NOT_DISRUPT) == "true":
            why = f'disruption is blocked through the "{DO_NOT_DISRUPT}" annotation'
        if why:
            yield (i, node, claim, why[:1].upper() + why[1:], True, None)
            continue
        pool_name = node.metadata.labels.get(NODEPOOL_LABEL, "")
        pool = ctx.pools.get(pool_name)
        if pool is None:
            yield (i, node, claim, f"NodePool not found (NodePool={pool_name})", True, None)
            continue
        pods = d.pods_on(node.metadata.name)
        block = ""
        if any(_active(p) and do_not_disrupt(p) for p in pods):
            p = next(p for p in pods if _active(p) and do_not_disrupt(p))
            block = f'Pod has "{DO_NOT_DISRUPT}" annotation (Pod={p.metadata.namespace}/{p.metadata.name})'
        elif keys := ctx.limits.can_evict(pods):
            many = len(keys) > 1
            what = "Eviction does not support multiple PDBs" if many else "Pdb prevents pod evictions"
            block = f"{what} (PodDisruptionBudget{'(s)' if many else ''}=[{' '.join(keys)}])"
        rank = sum(_eviction_cost(p) for p in pods) * _lifetime_remaining(claim, now)
        c = Candidate(
            claim, node, pool, ctx.types.get(node.metadata.labels.get(INSTANCE_TYPE, "")),
            pods, [p for p in pods if reschedulable(p)], rank,
        )  # fmt: skip
        yield (i, node, claim, block, False, c)


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


def _budget_counts(agent: Any) -> tuple[dict[str, int], dict[str, int]]:
    """Per NodePool, its initialized nodes and those of them NotReady or being disrupted. Kept
    while the informers' stores and the marks are the same (``Disruption.changes``); each
    NodeClaim's part is kept while its object, its Node's object and its mark are."""
    d = agent.disruption
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
        node = agent.nodes.get(claim.status.node_name, "") if claim.status.node_name else None
        marked = claim.metadata.deletion_timestamp is not None or d.marked_for_deletion(name)
        part = previous.get(name)
        if part is None or part[0] is not claim or part[1] is not node or part[2] != marked:
            pool: str | None = None
            out = False
            if node is not None and is_true(claim, "Initialized") and not is_true(claim, "InstanceTerminating"):
                pool = node.metadata.labels.get(NODEPOOL_LABEL, "")
                ready = any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)
                out = not ready or marked or node.metadata.deletion_timestamp is not None
            part = (claim, node, marked, pool, out)
        parts[name] = part
        if part[3] is not None:
            nodes[part[3]] = nodes.get(part[3], 0) + 1
            if part[4]:
                disrupting[part[3]] = disrupting.get(part[3], 0) + 1
    d.budget_counts = (stamp, nodes, disrupting, parts)
    return nodes, disrupting


@dataclass(slots=True)
class _Inputs:
    """What every simulation of one pass reads that the candidates do not change, kept while
    ``_token`` is the same (the same instant, no informer event, the same NodeClaims marked or
    terminating): each value is what computing it again would give."""

    token: tuple[Any, ...]
    pending: list[Pod]
    deleting_claims: set[str]
    limits: PdbLimits
    deleting_pods: list[Pod]
    usage: dict[str, dict[str, int]]
    """``agent.usage()``: every NodeClaim's."""
    claim_usage: dict[str, list[tuple[str, dict[str, int]]]]
    """node name -> (NodePool, what its NodeClaim adds to ``usage``) per NodeClaim on it"""
    options: dict[str, Any] = field(default_factory=dict)
    base_key: tuple[Any, ...] | None = None
    """``_base``'s key, once computed under this token."""


def _token(agent: Any) -> tuple[Any, ...] | None:
    d = agent.disruption
    if not d.watching:
        return None
    return (agent.clock.now(), d.changes, tuple(d.marked), tuple(d.terminating))


def _inputs(agent: Any) -> _Inputs:
    d = agent.disruption
    token = _token(agent)
    cached: _Inputs | None = d.sim_inputs
    if token is not None and cached is not None and cached.token == token:
        return cached
    claims = list(agent.claims.objects())
    deleting_claims = {
        c.status.node_name
        for c in claims
        if c.metadata.deletion_timestamp is not None or d.marked_for_deletion(c.metadata.name)
    }
    limits = PdbLimits(agent.pdbs.objects())
    deleting_pods = [
        p for n in sorted(deleting_claims) for p in d.pods_on(n) if n and limits.currently_reschedulable(p)
    ]
    claim_usage: dict[str, list[tuple[str, dict[str, int]]]] = {}
    for c in claims:
        if c.status.node_name:
            claim_usage.setdefault(c.status.node_name, []).append(claim_amounts(c))
    out = _Inputs(token or (), agent.pending_pods(), deleting_claims, limits, deleting_pods, agent.usage(), claim_usage)
    d.sim_inputs = out if token is not None else None
    return out


def _usage_without(inputs: _Inputs, names: set[str]) -> dict[str, dict[str, int]]:
    """``agent.usage(exclude=names)`` from the pass's totals (the same amounts: integer sums)."""
    usage = {pool: dict(u) for pool, u in inputs.usage.items()}
    for name in sorted(names):
        for pool, amounts in inputs.claim_usage.get(name, []):
            u = usage[pool]
            for k, v in amounts.items():
                u[k] -= v
    return usage


def _base(agent: Any, deleting: set[str], deleting_pods: set[str], inputs: _Inputs) -> set[str]:
    """The simulator holding every active node and in-flight NodeClaim but the deleting ones,
    with their pods (those leaving deleting nodes aside): built once and reused, each
    simulation forking it, while nothing it was built from changed. Returns the names of its
    nodes that are not initialized."""
    d = agent.disruption
    d.consolidation_state()
    key = inputs.base_key if inputs.token else None
    if key is None or key[0] != agent.sim_generation:
        if d.watching:  # what it is built from: the pods, the NodeClaims, the Nodes (heartbeats aside)
            key = (
                agent.sim_generation,
                tuple(sorted(deleting)),
                tuple(sorted(deleting_pods)),
                d.pod_changes,
                d.track.changes,
                d.track.node_content,
            )
        else:
            key = (
                agent.sim_generation,
                agent.clock.now(),
                tuple(sorted(deleting)),
                d._signature,
                tuple(sorted((c.metadata.name, c.metadata.resource_version) for c in agent.claims.objects())),
                tuple(sorted((n.metadata.name, n.metadata.resource_version) for n in agent.nodes.objects())),
            )
        inputs.base_key = key
    if d.sim_base is not None and d.sim_base[0] == key:
        inflight: set[str] = d.sim_base[1]
        return inflight
    nodes, inflight = agent.state_nodes(exclude=deleting)
    kept = {n.metadata.name for n in nodes}
    bound = [p for p in agent.pods.objects() if p.spec.node_name in kept and p.metadata.uid not in deleting_pods]
    agent.sim.reset(nodes, bound)
    d.sim_base = (key, inflight)
    return inflight


def simulate(agent: Any, candidates: Sequence[Candidate], most_claims: int | None = None) -> Results | None:
    """``SimulateScheduling`` (module docstring); None when a candidate is deleting meanwhile.
    ``most_claims``: the caller fails any result needing more new NodeClaims, so the solve may
    stop early (``Scheduler.solve``; ``Results.gave_up``)."""
    names = {c.name for c in candidates}
    inputs = _inputs(agent)
    deleting_claims = inputs.deleting_claims
    if names & deleting_claims:
        return None
    limits = inputs.limits
    pending = inputs.pending
    moving: list[Pod] = []
    for c in candidates:
        moving.extend(p for p in c.reschedulable if limits.currently_reschedulable(p))
    deleting_pods = inputs.deleting_pods
    inflight = _base(agent, deleting_claims, {p.metadata.uid for p in deleting_pods}, inputs)
    usage = _usage_without(inputs, names)
    scheduler = Scheduler(
        agent.sim,
        agent.live_pools(),
        agent.cloud.instance_types(),
        usage,
        agent.sim_name,
        options=inputs.options,
        daemons=agent.daemon_pods(),
    )
    unbound = [replace(p, spec=replace(p.spec, node_name="")) for p in [*moving, *deleting_pods]]
    agent.sim.fork()
    try:
        for name in sorted(names):  # the candidates go, with every pod on them
            if agent.sim.node_info(name) is not None:
                agent.sim.remove_node(name)
        new = scheduler.solve([*pending, *unbound], most_claims)
    finally:
        agent.sim.revert()
    results = Results(new, gave_up=scheduler.gave_up)
    pending_uids = {p.metadata.uid for p in pending}
    deleting_uids = {p.metadata.uid for p in deleting_pods}
    for key, why in scheduler.errors.items():
        if key not in pending_uids:
            results.errors[key] = why
    for uid, node_name in scheduler.placed.items():
        if node_name in inflight and uid not in pending_uids and uid not in deleting_uids:
            results.errors[uid] = f"would schedule against uninitialized nodeclaim/{node_name}"
    return results
