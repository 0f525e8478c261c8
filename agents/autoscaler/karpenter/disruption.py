"""Karpenter's disruption (kubernetes-sigs/karpenter v1.9.1): expiration, emptiness consolidation,
budgets and termination.

- ``Consolidatable`` (``pkg/controllers/nodeclaim/disruption/consolidation.go``): an initialized
  NodeClaim whose NodePool's ``consolidateAfter`` is not ``Never`` becomes consolidatable once
  that long has passed since its ``lastPodEventTime`` (a pod bound to or gone from its node,
  ``pkg/controllers/nodeclaim/podevents``), or since it was initialized.
- Every ``POLLING_PERIOD`` (10s, ``disruption/controller.go``): expired NodeClaims
  (``expireAfter`` since creation, ``pkg/controllers/nodeclaim/expiration``) are deleted, budgets
  aside; then the empty consolidatable ones (``disruption/emptiness.go``: no reschedulable pod,
  DaemonSet pods aside; either consolidation policy) within the NodePool's budget for
  ``Empty`` (the most restrictive active budget: a percentage of the NodePool's nodes rounded
  up, or a count, minus the NodeClaims being deleted: ``GetAllowedDisruptionsByReason``); an
  empty candidate is validated again after ``CONSOLIDATION_TTL`` (15s, ``validation.go``).
- Termination (``pkg/controllers/node/termination``): a deleted NodeClaim's node is tainted
  ``karpenter.sh/disrupted:NoSchedule``, its pods evicted (DaemonSet pods stay), then the
  instance is deleted through the cloud and the ``karpenter.sh/termination`` finalizer removed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.core import Node, Pod, Taint
from emulator.base.api.errors import ApiError, NotFound, TooManyRequests
from emulator.base.api.karpenter import NODEPOOL_LABEL, NodeClaim, NodePool
from emulator.base.api.meta import Condition
from emulator.base.runtime.clock import parse_duration, parse_timestamp

__all__ = ["CONSOLIDATION_TTL", "DISRUPTED_TAINT", "POLLING_PERIOD", "TERMINATION_FINALIZER", "Disruption"]

POLLING_PERIOD: Final = 10.0
CONSOLIDATION_TTL: Final = 15.0
TERMINATION_FINALIZER: Final = "karpenter.sh/termination"
DISRUPTED_TAINT: Final = Taint(key="karpenter.sh/disrupted", effect="NoSchedule")


def _duration(text: str | None) -> float | None:
    """A NillableDuration: None for ``Never`` (or unset)."""
    if text is None or text == "Never":
        return None
    return parse_duration(text)


def _daemon(pod: Pod) -> bool:
    return any(o.kind == "DaemonSet" and o.controller for o in pod.metadata.owner_references)


def _condition(claim: NodeClaim, type_: str) -> Condition | None:
    return next((c for c in claim.status.conditions if c.type == type_), None)


def allowed_disruptions(pool: NodePool, nodes: int, deleting: int, reason: str) -> int:
    """``GetAllowedDisruptionsByReason``: the most restrictive budget for ``reason`` (schedules
    are treated as always active), minus the NodeClaims already being deleted."""
    d = pool.spec.disruption if pool.spec is not None else None
    allowed = nodes
    for b in (d.budgets or []) if d is not None else []:
        if b.reasons and reason not in b.reasons:
            continue
        text = b.nodes or "10%"
        value = math.ceil(int(text[:-1]) * nodes / 100) if text.endswith("%") else int(text)
        allowed = min(allowed, value)
    return max(0, allowed - deleting)


class Disruption:
    """The disruption and termination side of the agent (module docstring). ``agent``: the
    ``Karpenter`` whose informers, client, clock, cloud and counters it shares."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.last_poll = -POLLING_PERIOD
        self.pod_sets: dict[str, tuple[str, ...]] = {}
        self.candidates: dict[str, float] = {}
        """Empty NodeClaim -> when it was first chosen (validated ``CONSOLIDATION_TTL`` later)."""
        self.terminating: dict[str, None] = {}
        self.by_node: dict[str, list[Pod]] = {}
        self._by_node_revision = -1
        self._flip = math.inf
        """When the next NodeClaim becomes consolidatable (its ``consolidateAfter`` passes)."""

    def _pods_on(self, node: str) -> list[Pod]:
        return self.by_node.get(node, [])

    async def tick(self, claims: Sequence[NodeClaim], pools: dict[str, NodePool]) -> None:
        agent = self.agent
        now = agent.clock.now()
        if self._by_node_revision != agent.pods.revision:
            self._by_node_revision = agent.pods.revision
            self.by_node = {}  # node -> its running pods, once per change of the pods
            for p in agent.pods.objects():
                if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed"):
                    self.by_node.setdefault(p.spec.node_name, []).append(p)
        # The per-NodeClaim pass finds nothing new while no pod, NodeClaim or NodePool changed,
        # none is being deleted (the last pass said so) and no consolidateAfter has passed.
        key = (agent.pods.revision, agent.claims.revision, agent.pools.revision)
        if not agent.quiet("conditions", key) or now >= self._flip:
            quiet, self._flip = True, math.inf
            for claim in claims:
                if claim.metadata.deletion_timestamp is not None:
                    quiet = False
                    await self._terminate(claim)
                    continue
                pool = pools.get(claim.metadata.labels.get(NODEPOOL_LABEL, ""))
                wrote, flip = await self._conditions(claim, pool, now)
                quiet = quiet and not wrote
                self._flip = min(self._flip, flip)
            agent.mark("conditions", key, quiet)
        if now - self.last_poll < POLLING_PERIOD:
            return
        self.last_poll = now
        live = [c for c in claims if c.metadata.deletion_timestamp is None]
        for claim in live:
            pool = pools.get(claim.metadata.labels.get(NODEPOOL_LABEL, ""))
            expire = _duration(claim.spec.expire_after if claim.spec is not None else None)
            created = claim.metadata.creation_timestamp
            if pool is not None and expire is not None and created and parse_timestamp(created) + expire <= now:
                await self._delete(claim)
        await self._emptiness([c for c in live if c.metadata.name not in self.terminating], pools, claims, now)

    async def _conditions(self, claim: NodeClaim, pool: NodePool | None, now: float) -> tuple[bool, float]:
        """``lastPodEventTime`` and ``Consolidatable``: (whether it wrote, when the claim becomes
        consolidatable if nothing changes, ``inf``: not by waiting)."""
        initialized = _condition(claim, "Initialized")
        if pool is None or initialized is None or initialized.status != "True" or not claim.status.node_name:
            return False, math.inf
        pods = tuple(sorted(p.metadata.uid for p in self._pods_on(claim.status.node_name) if not _daemon(p)))
        status = claim.status
        previous = self.pod_sets.get(claim.metadata.name)
        self.pod_sets[claim.metadata.name] = pods
        if previous is not None and previous != pods:
            status = replace(status, last_pod_event_time=self.agent.clock.timestamp())
        after = _duration(pool.spec.disruption.consolidate_after if pool.spec and pool.spec.disruption else None)
        since = status.last_pod_event_time or initialized.last_transition_time
        at = parse_timestamp(since) + after if after is not None and since is not None else math.inf
        ready = at <= now
        has = _condition(claim, "Consolidatable") is not None
        conditions = [c for c in status.conditions if c.type != "Consolidatable"]
        if ready and not has:
            conditions = sorted(
                [*conditions, Condition(type="Consolidatable", status="True", reason="Consolidatable",
                                        last_transition_time=self.agent.clock.timestamp(),
                                        observed_generation=claim.metadata.generation)],
                key=lambda c: c.type,
            )  # fmt: skip
        elif ready or not has:
            conditions = list(status.conditions)
        status = replace(status, conditions=conditions)
        if status != claim.status:
            await self.agent.write_status(replace(claim, status=status))
            return True, math.inf
        return False, math.inf if ready else at

    async def _emptiness(
        self, live: list[NodeClaim], pools: dict[str, NodePool], claims: Sequence[NodeClaim], now: float
    ) -> None:
        empty = {
            c.metadata.name: c
            for c in live
            if (k := _condition(c, "Consolidatable")) is not None
            and k.status == "True"
            and c.status.node_name
            and not any(not _daemon(p) for p in self._pods_on(c.status.node_name))
        }
        self.candidates = {name: t for name, t in self.candidates.items() if name in empty}
        for name in empty:
            self.candidates.setdefault(name, now)
        for name, claim in sorted(empty.items()):
            if self.candidates[name] + CONSOLIDATION_TTL > now:
                continue
            pool = pools.get(claim.metadata.labels.get(NODEPOOL_LABEL, ""))
            if pool is None:
                continue
            mine = [c for c in claims if c.metadata.labels.get(NODEPOOL_LABEL) == pool.metadata.name]
            deleting = sum(
                1 for c in mine if c.metadata.deletion_timestamp is not None or c.metadata.name in self.terminating
            )
            if allowed_disruptions(pool, len(mine), deleting, "Empty") <= 0:
                continue
            await self._delete(claim)

    async def _delete(self, claim: NodeClaim) -> None:
        name = claim.metadata.name
        if name in self.terminating:
            return
        self.terminating[name] = None
        self.candidates.pop(name, None)
        self.agent.counters["scaleDowns"] += 1
        try:
            await self.agent.client.delete("NodeClaim", name, "")
        except NotFound:
            return

    async def _terminate(self, claim: NodeClaim) -> None:
        """Taint, drain, delete the instance, drop the finalizer (module docstring)."""
        name = claim.metadata.name
        self.terminating[name] = None
        node: Node | None = self.agent.nodes.get(claim.status.node_name or name, "")
        if node is not None:
            if DISRUPTED_TAINT not in node.spec.taints:
                tainted = replace(node, spec=replace(node.spec, taints=[*node.spec.taints, DISRUPTED_TAINT]))
                try:
                    await self.agent.client.update(tainted)
                except ApiError:
                    return
            pods = [p for p in self._pods_on(node.metadata.name) if not _daemon(p)]
            for pod in pods:
                if pod.metadata.deletion_timestamp is not None:
                    continue
                try:
                    await self.agent.client.evict(pod.metadata.namespace, pod.metadata.name, uid=pod.metadata.uid)
                    self.agent.counters["podsDisrupted"] += 1
                except (NotFound, TooManyRequests):
                    continue
            if pods:
                return
            await self.agent.cloud.delete(node.metadata.name)
        try:
            await self.agent.client.update(replace(claim, metadata=replace(claim.metadata, finalizers=[])))
        except ApiError:
            return
        self.terminating.pop(name, None)
        self.pod_sets.pop(name, None)
