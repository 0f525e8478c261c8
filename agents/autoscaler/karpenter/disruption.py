"""Karpenter's disruption (kubernetes-sigs/karpenter v1.9.1): the NodeClaims' disruption
conditions, expiration, the disruption controller and termination (the NodePool hash:
``nodepoolhash.py``).

- ``Consolidatable`` (``pkg/controllers/nodeclaim/disruption/consolidation.go``): an initialized
  NodeClaim whose NodePool's ``consolidateAfter`` is not ``Never`` becomes consolidatable once
  that long has passed since its ``lastPodEventTime`` (a pod bound to or gone from its node,
  ``pkg/controllers/nodeclaim/podevents``), or since it was initialized; otherwise it loses it.
- ``Drifted`` (``nodeclaim/disruption/drift.go``): a launched NodeClaim whose
  ``karpenter.sh/nodepool-hash`` differs from its NodePool's (same
  ``karpenter.sh/nodepool-hash-version``) is ``NodePoolDrifted``; one whose labels no longer
  meet the NodePool's requirements (keys it has a label for) ``RequirementsDrifted``.
- The NodePool hash (``pkg/controllers/nodepool/hash``): ``nodepoolhash.py``, run first at
  every tick; ``Drifted`` compares the hashes it writes.
- Expiration (``nodeclaim/expiration``): ``expireAfter`` since creation deletes the NodeClaim,
  budgets aside.
- The disruption controller (``disruption/controller.go``), its own task: every
  ``POLLING_PERIOD`` (10s, at once after a command started) it untaints nodes left
  ``karpenter.sh/disrupted`` outside the queue, then tries the methods in order
  (``consolidation.methods``): the first that yields a command starts it in the queue.
- Termination (``pkg/controllers/node/termination``): ``termination``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any, Final

from msgspec.structs import replace

from agents.autoscaler.karpenter.budgetmapping import budget_mapping
from agents.autoscaler.karpenter.candidates import get_candidates
from agents.autoscaler.karpenter.conditions import ConditionSet, nodeclaim_conditions
from agents.autoscaler.karpenter.consolidation import Command, methods
from agents.autoscaler.karpenter.memo import SingleOutcomes
from agents.autoscaler.karpenter.nodepoolhash import NODEPOOL_HASH, NODEPOOL_HASH_VERSION_KEY, NodePoolHash
from agents.autoscaler.karpenter.passindex import PassIndex, WatchedDict
from agents.autoscaler.karpenter.queue import DISRUPTED_TAINT, Queue
from agents.autoscaler.karpenter.scheduling import req_matches
from agents.autoscaler.karpenter.termination import terminate
from agents.autoscaler.karpenter.tracking import ClaimTracking
from emulator.base.api.core import Node, Pod
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.karpenter import NODEPOOL_LABEL, NodeClaim, NodePool
from emulator.base.runtime.clock import parse_duration, parse_timestamp

__all__ = ["DISRUPTED_TAINT", "POLLING_PERIOD", "TERMINATION_FINALIZER", "Disruption"]

POLLING_PERIOD: Final = 10.0
REQUEUE_IMMEDIATELY: Final = 1e-3
STATE_REFRESH: Final = 300.0
"""``ConsolidationState``: unchanged for 5 minutes, it counts as changed (re-evaluate)."""
TERMINATION_FINALIZER: Final = "karpenter.sh/termination"


def _duration(text: str | None) -> float | None:
    """A NillableDuration: None for ``Never`` (or unset)."""
    if text is None or text == "Never":
        return None
    return parse_duration(text)


def _daemon(pod: Pod) -> bool:
    return any(o.kind == "DaemonSet" and o.controller for o in pod.metadata.owner_references)


class Disruption:
    """The disruption and termination side of the agent (module docstring). ``agent``: the
    ``Karpenter`` whose informers, client, clock, cloud and counters it shares."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.last_poll = -POLLING_PERIOD
        self.pod_sets: dict[str, tuple[str, ...]] = {}
        self.terminating: dict[str, None] = {}
        self.by_node: dict[str, list[Pod]] = {}
        self.indexed_at: Any = None
        """What ``by_node`` was indexed at: the pods' event count (or, unwatched, the instant)."""
        self.queue = Queue(agent)
        self.methods = methods(agent)
        self.outcomes = SingleOutcomes(agent)
        """Single-node consolidation's attempts that made no command (``memo``)."""
        self.marked: dict[str, None] = {}
        self.disrupted: dict[str, int] = {}
        """reason (snake case) -> NodeClaims disrupted (``NodeClaimsDisruptedTotal``)"""
        self._reconciled: dict[str, tuple[tuple[str, str, tuple[str, ...]], float]] = {}
        """NodeClaim -> (what its conditions were computed from, when they are due again)."""
        self._pod_keys: dict[str, tuple[str, ...]] = {}
        self._signature: tuple[int, int] = (0, 0)
        self.sim_base: tuple[Any, set[str]] | None = None
        """What the simulator was last built from for disruption (``simulation._base``)."""
        self.budget_counts: tuple[Any, dict[str, int], dict[str, int], dict[str, Any]] = (None, {}, {}, {})
        """``budgetmapping._budget_counts``: (its stamp, nodes, disrupting, each NodeClaim's part)."""
        self.entry_parts: dict[str, Any] = {}
        """``candidates._entries``' per-NodeClaim parts, kept across passes."""
        self.rows: dict[str, Any] = {}
        """``candidates._all_entries``' rows: NodeClaim -> its part (None: not a candidate)."""
        self.rows_inputs: tuple[Any, Any] = (None, None)
        """What every row was computed with: the instance types, the PDB limits."""
        self.pdb_limits: tuple[list[Any], Any] | None = None
        """``candidates._pdb_limits``: (the PDB objects, their ``PdbLimits``)."""
        self.sim_inputs: Any = None
        """The simulations' per-pass inputs (``simulation._inputs``)."""
        self.sim_reference: Any = None
        """Each pod shape's fitting nodes on the simulations' base (``fits``, ``simulation._searcher``)."""
        self._state = 0.0
        self.state_reads = 0
        self.evaluations = 0
        self.changes = 0
        """Informer events seen (pods, nodes, NodePools, NodeClaims, PDBs): while it stays the
        same, so do their stores (the simulation's per-pass caches key on it)."""
        informers = [getattr(agent, kind, None) for kind in ("pods", "nodes", "pools", "claims", "pdbs")]
        self.watching = all(hasattr(i, "add_handlers") for i in informers)
        """Whether ``changes`` counts every event (a test's stand-in informers may not say)."""
        for informer in informers if self.watching else []:
            informer.add_handlers(self._event, lambda old, new: self._event(new), self._event)  # type: ignore[union-attr]
        self.pod_changes = 0
        """Pod events seen (``pods_on``'s index is kept while it stays the same)."""
        if self.watching:
            agent.pods.add_handlers(self._pod_event, lambda old, new: self._pod_event(new), self._pod_event)
        self._signed: tuple[int, tuple[int, int]] = (-1, (0, 0))
        """(``changes`` when the signature below was computed, that signature)."""
        self.track = ClaimTracking(agent, self.watching)
        self.index: PassIndex | None = None
        """The handlers' structures (``passindex``); None when not watching."""
        if self.watching:
            self.index = PassIndex(agent, DISRUPTED_TAINT.key)
            self.marked = WatchedDict(self.index.changed)
            self.terminating = WatchedDict(self.index.changed)
            self.queue.by_claim = WatchedDict(self.index.changed)
        self.prepared: tuple[Any, Any, list[Any]] = (None, None, [])
        """``get_candidates``' kept entries: (their stamp, context, entries)."""
        self.hashes = NodePoolHash(agent)

    # --- shared state ------------------------------------------------------------------

    def pods_on(self, node: str) -> list[Pod]:
        if self.index is not None:
            return self.index.pods_on(node)
        stamp = ("events", self.pod_changes) if self.watching else ("at", self.agent.clock.now())
        if self.indexed_at != stamp:
            self.indexed_at = stamp
            self.by_node = {}
            for p in self.agent.pods.objects():
                if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed"):
                    self.by_node.setdefault(p.spec.node_name, []).append(p)
            self._pod_keys = {}
            for name, pods in self.by_node.items():
                pods.sort(key=lambda p: (p.metadata.namespace, p.metadata.name))
                self._pod_keys[name] = tuple(sorted(p.metadata.uid for p in pods if not _daemon(p)))
        return self.by_node.get(node, [])

    def pod_key(self, node: str) -> tuple[str, ...]:
        """The uids of the node's pods, DaemonSet pods aside (sorted)."""
        if self.index is not None:
            return self.index.pod_key(node)
        self.pods_on(node)
        return self._pod_keys.get(node, ())

    def marked_for_deletion(self, claim: str) -> bool:
        return claim in self.marked or claim in self.terminating

    def mark(self, claim: str) -> None:
        self.marked[claim] = None

    def unmark(self, claim: str) -> None:
        self.marked.pop(claim, None)

    def count_disrupted(self, reason: str) -> None:
        self.disrupted[reason] = self.disrupted.get(reason, 0) + 1
        self.agent.counters["scaleDowns"] += 1

    def _event(self, obj: Any) -> None:
        self.changes += 1

    def _pod_event(self, obj: Any) -> None:
        self.pod_changes += 1

    def consolidation_state(self) -> float:
        """``Cluster.ConsolidationState``: when the pods' placement or the nodes last changed.
        The signature is computed again only after an informer event."""
        now = self.agent.clock.now()
        self.state_reads += 1
        if self.index is not None:
            signature = self.index.signature()
        elif self._signed[0] == self.changes and self.watching:
            signature = self._signed[1]
        else:
            bound = [f"{p.metadata.uid}@{p.spec.node_name}" for p in self.agent.pods.objects() if p.spec.node_name]
            claims = [c.metadata.name for c in self.agent.claims.objects()]
            signature = (
                len(bound) + len(claims),
                int(hashlib.sha256("|".join(sorted(bound + claims)).encode()).hexdigest()[:15], 16),
            )
            self._signed = (self.changes, signature)
        if signature != self._signature or now - self._state >= STATE_REFRESH:
            self._signature, self._state = signature, now
        return self._state

    async def set_taint(self, node_name: str, on: bool) -> bool:
        """``RequireNoScheduleTaint``: add or remove ``karpenter.sh/disrupted:NoSchedule``."""
        node: Node | None = self.agent.nodes.get(node_name, "")
        if node is None:
            return not on
        has = any(t.key == DISRUPTED_TAINT.key for t in node.spec.taints)
        if has == on:
            return True
        taints = (
            [*node.spec.taints, DISRUPTED_TAINT]
            if on
            else [t for t in node.spec.taints if t.key != DISRUPTED_TAINT.key]
        )
        try:
            await self.agent.client.update(replace(node, spec=replace(node.spec, taints=taints)))
        except ApiError:
            return False
        return True

    async def clear_reason(self, name: str) -> None:
        claim = self.agent.claims.get(name, "")
        if claim is None or not any(c.type == "DisruptionReason" for c in claim.status.conditions):
            return  # nothing to clear (every pass asks of every NodeClaim)
        cs = nodeclaim_conditions(claim, self.agent.clock.timestamp)
        if cs.clear("DisruptionReason"):  # ClearNodeClaimsCondition
            await self.agent.write_status(replace(claim, status=replace(claim.status, conditions=cs.items)))

    # --- the per-tick controllers ------------------------------------------------------------

    async def tick(self, claims: Sequence[NodeClaim], pools: dict[str, NodePool]) -> None:
        now = self.agent.clock.now()
        await self.hashes.reconcile(pools, claims)
        track = self.track
        track.due_until(now)
        i = -1
        while (i := track.next_to_check(claims, i + 1)) < len(claims):
            claim = claims[i]
            if claim.metadata.deletion_timestamp is not None:
                await self._terminate(claim)
                continue
            if not track.needs_check(claim.metadata.name):
                continue  # the key below is unchanged and not due (``tracking``)
            pool = pools.get(claim.metadata.labels.get(NODEPOOL_LABEL, ""))
            track.checked(claim, pool)
            # the conditions only move with the NodeClaim, its NodePool, its pods or the clock
            # (upstream's watches and RequeueAfter): skip a NodeClaim none of them changed for
            key = (
                claim.metadata.resource_version,
                pool.metadata.resource_version if pool is not None else "",
                self.pod_key(claim.status.node_name),
            )
            seen = self._reconciled.get(claim.metadata.name)
            if seen is not None and seen[0] == key and now < seen[1]:
                continue
            due = await self._conditions(claim, pool, now)
            self._reconciled[claim.metadata.name] = (key, due)
            track.schedule(due, claim.metadata.name)
        await self.queue.tick()
        if now - self.last_poll < POLLING_PERIOD:
            return
        self.last_poll = now
        if self.index is not None and not self.index.may_have_expired(
            now, lambda name: any(c.metadata.name == name for c in claims)
        ):
            return  # no NodeClaim listed has expired (``passindex``: the loop below would find none)
        for claim in claims:
            if claim.metadata.deletion_timestamp is not None:
                continue
            pool = pools.get(claim.metadata.labels.get(NODEPOOL_LABEL, ""))
            expire = _duration(claim.spec.expire_after if claim.spec is not None else None)
            created = claim.metadata.creation_timestamp
            if pool is not None and expire is not None and created and parse_timestamp(created) + expire <= now:
                await self._delete(claim, "expired")

    async def _conditions(self, claim: NodeClaim, pool: NodePool | None, now: float) -> float:
        """``lastPodEventTime``, ``Consolidatable`` and ``Drifted``; when they may change next
        with nothing else changing (``RequeueAfter``)."""
        due = math.inf
        if pool is None:
            return due
        cs = nodeclaim_conditions(claim, self.agent.clock.timestamp)
        self._drifted(claim, pool, cs)
        status = claim.status
        initialized = cs.get("Initialized")
        if initialized is not None and initialized.status == "True" and claim.status.node_name:
            pods = self.pod_key(claim.status.node_name)
            previous = self.pod_sets.get(claim.metadata.name)
            self.pod_sets[claim.metadata.name] = pods
            if previous is not None and previous != pods:
                status = replace(status, last_pod_event_time=self.agent.clock.timestamp())
            after = _duration(pool.spec.disruption.consolidate_after if pool.spec and pool.spec.disruption else None)
            since = status.last_pod_event_time or initialized.last_transition_time
            ready = after is not None and since is not None and parse_timestamp(since) + after <= now
            if after is not None and since is not None and not ready:
                due = parse_timestamp(since) + after
            if ready:
                cs.set_true("Consolidatable")
            else:
                cs.clear("Consolidatable")
        else:  # "removing consolidatable status condition, isn't initialized"
            cs.clear("Consolidatable")
        status = replace(status, conditions=cs.items)
        if status != claim.status:
            await self.agent.write_status(replace(claim, status=status))
        return due

    def _drifted(self, claim: NodeClaim, pool: NodePool, cs: ConditionSet) -> None:
        """``Drift.Reconcile``'s condition (``isDrifted``: the NodePool hash, then the
        requirements)."""
        if not cs.is_true("Launched"):
            cs.clear("Drifted")
            return
        reason = ""
        ann, pann = claim.metadata.annotations, pool.metadata.annotations
        keys = (NODEPOOL_HASH, NODEPOOL_HASH_VERSION_KEY)
        if (
            all(k in ann for k in keys)
            and all(k in pann for k in keys)
            and ann[NODEPOOL_HASH_VERSION_KEY] == pann[NODEPOOL_HASH_VERSION_KEY]
            and ann[NODEPOOL_HASH] != pann[NODEPOOL_HASH]
        ):
            reason = "NodePoolDrifted"
        if not reason and self._requirements_drifted(claim, pool):
            reason = "RequirementsDrifted"
        if not reason:
            cs.clear("Drifted")
        else:
            cs.set("Drifted", "True", reason, reason)

    @staticmethod
    def _requirements_drifted(claim: NodeClaim, pool: NodePool) -> bool:
        template = pool.spec.template if pool.spec is not None else None
        reqs = (template.spec.requirements or []) if template is not None and template.spec is not None else []
        labels = claim.metadata.labels
        # NewLabelRequirements(labels).Compatible(pool): a key the NodeClaim has no label for
        # is compatible only with NotIn and DoesNotExist
        return any(
            not req_matches(r.key, r.operator, r.values, labels)
            if r.key in labels
            else r.operator not in ("NotIn", "DoesNotExist")
            for r in reqs
        )

    async def _delete(self, claim: NodeClaim, reason: str) -> None:
        name = claim.metadata.name
        if name in self.terminating:
            return
        self.terminating[name] = None
        self.count_disrupted(reason)
        try:
            await self.agent.client.delete("NodeClaim", name, "")
        except NotFound:
            return

    # --- the disruption controller ---------------------------------------------------------

    async def run(self) -> None:
        """``Controller.Reconcile`` in a loop (module docstring)."""
        while True:
            started = await self.reconcile()
            await self.agent.clock.sleep(REQUEUE_IMMEDIATELY if started else POLLING_PERIOD)

    async def reconcile(self) -> bool:
        self.evaluations += 1
        await self._clean_up()
        for method in self.methods:
            cands = await get_candidates(self.agent, method.should_disrupt, method.klass)
            if not cands:
                continue
            budgets = await self._budgets(method.reason)
            commands: list[Command] = [c for c in await method.compute(budgets, cands) if c.decision != "no-op"]
            started = False
            for cmd in commands:
                cmd.created = self.agent.clock.now()
                cmd.id = f"{self.agent.rng.getrandbits(128):032x}"
                started = await self.queue.start(cmd) or started
            if commands:
                return started
        return False

    async def _clean_up(self) -> None:
        """Every NodeClaim by name not in the queue, deleting or marked: its node untainted,
        its ``DisruptionReason`` cleared. Watching with NodeClaims named as their nodes
        (``ClaimTracking.exact``), only those with the condition or the taint (``passindex``)
        are visited: for the others both calls return without a write or an await."""
        index, track = self.index, self.track
        if index is None or not track.exact:
            for claim in sorted(self.agent.claims.objects(), key=lambda c: c.metadata.name):
                await self._clean(claim)
            return
        claims = track.sorted_claims()
        positions = track.positions()
        start = 0
        while True:
            best = len(claims)
            for names in (index.reasoned, index.tainted):
                for name in names:
                    i = positions.get(name, -1)
                    if start <= i < best and self._cleanable(claims[i]):
                        best = i
            if best == len(claims):
                return
            await self._clean(claims[best])
            start = best + 1

    def _cleanable(self, claim: NodeClaim) -> bool:
        """Whether ``_clean`` may write for ``claim`` (the index's sets are the live stores')."""
        name = claim.metadata.name
        if self.queue.has(name) or claim.metadata.deletion_timestamp is not None or name in self.marked:
            return False
        index = self.index
        assert index is not None
        node = claim.status.node_name
        return name in index.reasoned or bool(node and node in index.tainted)

    async def _clean(self, claim: NodeClaim) -> None:
        name = claim.metadata.name
        if self.queue.has(name) or claim.metadata.deletion_timestamp is not None or name in self.marked:
            return
        if claim.status.node_name:
            await self.set_taint(claim.status.node_name, False)
        await self.clear_reason(name)

    async def _budgets(self, reason: str) -> dict[str, int]:
        return await budget_mapping(self.agent, reason)

    # --- termination ---------------------------------------------------------------------

    async def _terminate(self, claim: NodeClaim) -> None:
        await terminate(self, claim)
