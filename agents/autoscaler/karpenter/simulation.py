"""The disruption methods' scheduling simulation (kubernetes-sigs/karpenter v1.9.1
``pkg/controllers/disruption/helpers.go`` ``SimulateScheduling``).

``simulate`` runs the provisioner's ``Scheduler`` over the pending pods, the candidates'
currently reschedulable pods (not ``do-not-disrupt``, not fully blocked by a PDB:
``maxUnavailable`` 0 or ``0%``, ``minAvailable`` ``100%``) and those of deleting nodes,
against every other node and the NodeClaims in flight; a non-pending pod placed on a node
that is not initialized is an error (``UninitializedNodeError``). A simulation finds the pods'
existing nodes through ``fits`` (the answers the searches would give).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from agents.autoscaler.karpenter.candidates import Candidate, PdbLimits, _pdb_limits
from agents.autoscaler.karpenter.fits import BaseFits, FitSearch
from agents.autoscaler.karpenter.scheduling import NewNodeClaim, Scheduler
from agents.autoscaler.karpenter.scheduling import claim_usage as claim_amounts  # the local name is taken
from emulator.base.api.core import Pod

__all__ = ["Results", "simulate"]


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
    limits = _pdb_limits(agent)
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
    agent.sim.reset(nodes, [*bound, *agent.reservations(nodes, bound)])
    d.sim_base = (key, inflight)
    return inflight


def _searcher(agent: Any, names: set[str], pods: list[Pod]) -> FitSearch | None:
    """The search stand-in of a simulation removing ``names`` and solving ``pods`` (``fits``),
    the simulator holding the base."""
    d = agent.disruption
    fits: BaseFits | None = d.sim_reference
    if fits is None or fits.base is not d.sim_base:
        fits = d.sim_reference = BaseFits(agent.sim, d.sim_base)
    return fits.search(pods, sorted(names))


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
    pods = [*pending, *unbound]
    scheduler.searcher = _searcher(agent, names, pods) or agent.sim
    agent.sim.fork()
    try:
        for name in sorted(names):  # the candidates go, with every pod on them
            if agent.sim.node_info(name) is not None:
                agent.sim.remove_node(name)
        new = scheduler.solve(pods, most_claims)
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
