"""Which NodeClaims the agent's 0.5 s tick must look at, kept from the informers' events
(issue 28's Karpenter day: the tick walked every NodeClaim twice per tick, 172,800 ticks a day).

Upstream's controllers are event-driven (a watch event or a ``RequeueAfter`` enqueues one
NodeClaim); here one tick reconciles them all, and the passes below only skip NodeClaims for
which the full check would find nothing to do, so the same writes happen at the same instants.

- ``open``: the NodeClaims the lifecycle pass (registration, initialization) may still act on:
  launched (``providerID``), not deleting, and not both registered (``status.nodeName`` is the
  Node named after it) and ``Initialized=True``. The pass skips every other NodeClaim whatever
  its Node says, so it needs only these.
- ``stale``: the NodeClaims whose disruption conditions (``Disruption.tick``) must be checked in
  full: those whose object, NodePool or node's pods changed since their last check, and those
  whose ``RequeueAfter`` came (``schedule``/``due_until``). For any other NodeClaim the check
  would compare an unchanged key and skip. A pod event marks the NodeClaim named after its node:
  a NodeClaim's ``status.nodeName`` is its own name or empty (``lifecycle``); one that is not
  turns the tracking off (``exact``), every NodeClaim then being checked in full as before.
- ``node_content``: bumped by a Node added or deleted, or updated in anything but its status
  conditions (the kubelet's heartbeats): the disruption simulations' base snapshot, and the
  candidates, read nothing else of a Node.
- ``content``: a stamp that moves whenever anything the disruption methods read may have:
  pods, NodeClaims, Nodes (``node_content``), NodePools, PDBs, the marks, the queue, the
  nominations (set only by a provisioning batch, which counts itself).
- ``next_to_check``: the disruption tick walks ``sorted_claims`` jumping straight to the next
  NodeClaim it acts on (deleting, or stale), not over all of them every 0.5 s.
- ``changes``: NodeClaim events seen; ``sorted_claims``, the NodeClaims by name, and
  ``pool_usage``, the NodePool counters' sums, kept while it (and the marks) stay the same.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from agents.autoscaler.karpenter.scheduling import claim_usage

__all__ = ["ClaimTracking"]


def _settled(claim: Any) -> bool:
    """The lifecycle pass has nothing left to do for this NodeClaim, whatever its Node."""
    if not claim.status.provider_id or claim.metadata.deletion_timestamp is not None:
        return True
    if claim.status.node_name != claim.metadata.name:
        return False
    return any(c.type == "Initialized" and c.status == "True" for c in claim.status.conditions)


class ClaimTracking:
    """The module docstring's sets, fed by the pod, NodePool and NodeClaim informers'
    handlers; ``watching`` False (a test's stand-in informers): every NodeClaim, every time."""

    def __init__(self, agent: Any, watching: bool) -> None:
        self.agent = agent
        self.watching = watching
        self.exact = watching
        self.changes = 0
        self.node_content = 0
        self.other = 0
        """NodePool and PDB events seen."""
        self.open: dict[str, None] = {}
        self.stale: dict[str, None] = {}
        self._due: list[tuple[float, str]] = []
        self._sorted: tuple[int, list[Any]] = (-1, [])
        self._walk: tuple[dict[str, int], list[int]] | None = None
        """For ``sorted_claims``' list: each name's position, the deleting NodeClaims' positions."""
        self._usage: tuple[Any, dict[str, dict[str, int]]] = (None, {})
        if watching:
            agent.claims.add_handlers(self._claim, lambda old, new: self._claim(new), self._claim_gone)
            agent.pools.add_handlers(self._pool, lambda old, new: self._pool(new), self._pool)
            agent.pods.add_handlers(self._pod, self._pod_moved, self._pod)
            agent.nodes.add_handlers(self._node, self._node_updated, self._node)
            agent.pdbs.add_handlers(self._other, lambda old, new: self._other(new), self._other)
            for claim in agent.claims.objects():  # stored before the handlers (none in the agent)
                self._claim(claim)

    # --- handlers ------------------------------------------------------------------------

    def _claim(self, claim: Any) -> None:
        self.changes += 1
        name = claim.metadata.name
        self.stale[name] = None
        if claim.status.node_name and claim.status.node_name != name:
            self.exact = False
        if _settled(claim):
            self.open.pop(name, None)
        else:
            self.open[name] = None

    def _claim_gone(self, claim: Any) -> None:
        self.changes += 1
        self.open.pop(claim.metadata.name, None)
        self.stale.pop(claim.metadata.name, None)

    def _other(self, obj: Any) -> None:
        self.other += 1

    def _pool(self, pool: Any) -> None:
        self.other += 1
        self.stale.update(dict.fromkeys(c.metadata.name for c in self.agent.claims.objects()))

    def _pod(self, pod: Any) -> None:
        if pod.spec.node_name:
            self.stale[pod.spec.node_name] = None

    def _pod_moved(self, old: Any, new: Any) -> None:
        if old.spec.node_name:
            self.stale[old.spec.node_name] = None
        if new.spec.node_name:
            self.stale[new.spec.node_name] = None

    def _node(self, node: Any) -> None:
        self.node_content += 1

    def _node_updated(self, old: Any, new: Any) -> None:
        a, b = old.metadata, new.metadata
        if (
            a.labels != b.labels
            or a.annotations != b.annotations
            or a.deletion_timestamp != b.deletion_timestamp
            or old.spec != new.spec
            or replace(old.status, conditions=new.status.conditions) != new.status
        ):
            self.node_content += 1

    # --- what the tick asks --------------------------------------------------------------

    def sorted_claims(self) -> list[Any]:
        """Every NodeClaim, by name (the list is shared: do not change it)."""
        if not self.watching or self._sorted[0] != self.changes:
            self._sorted = (self.changes, sorted(self.agent.claims.objects(), key=lambda c: c.metadata.name))
            self._walk = None
        return self._sorted[1]

    def positions(self) -> dict[str, int]:
        """Each NodeClaim's position in ``sorted_claims``' list (shared: do not change it)."""
        return self._walked(self.sorted_claims())[0]

    def _walked(self, claims: list[Any]) -> tuple[dict[str, int], list[int]]:
        """``_walk`` for ``claims``, ``sorted_claims``' current list."""
        if self._walk is None:
            positions = {c.metadata.name: i for i, c in enumerate(claims)}
            self._walk = (positions, [i for i, c in enumerate(claims) if c.metadata.deletion_timestamp is not None])
        return self._walk

    def next_to_check(self, claims: Sequence[Any], start: int) -> int:
        """The first position from ``start`` in ``claims`` whose NodeClaim the disruption tick
        acts on (deleting in ``claims``, or ``needs_check``); ``len(claims)`` if none. Every
        other position would be passed over without an await, so jumping over them reads the
        same ``stale`` the walk would. ``claims`` must be ``sorted_claims``' list; another
        list, or tracking off, gives ``start`` (the caller then walks every position)."""
        if not self.exact or claims is not self._sorted[1]:
            return start
        positions, deleting = self._walked(self._sorted[1])
        best = next((i for i in deleting if i >= start), len(claims))
        for name in self.stale:
            i = positions.get(name)
            if i is not None and start <= i < best:
                best = i
        return best

    def lifecycle_claims(self) -> list[Any]:
        """The NodeClaims the lifecycle pass must look at, by name."""
        if not self.watching:
            return self.sorted_claims()
        claims = self.agent.claims
        return [c for c in (claims.get(n, "") for n in sorted(self.open)) if c is not None]

    def due_until(self, now: float) -> None:
        """Every NodeClaim whose ``RequeueAfter`` is due by ``now`` is stale."""
        due = self._due
        while due and due[0][0] <= now:
            self.stale[heapq.heappop(due)[1]] = None

    def needs_check(self, name: str) -> bool:
        return not self.exact or name in self.stale

    def checked(self, claim: Any, pool: Any) -> None:
        """The full check is about to read ``claim`` and ``pool``: if they are the stored ones,
        the NodeClaim is no longer stale (an event from here on marks it again)."""
        name = claim.metadata.name
        label = claim.metadata.labels.get("karpenter.sh/nodepool", "")
        if claim is self.agent.claims.get(name, "") and pool is self.agent.pools.get(label, ""):
            self.stale.pop(name, None)

    def schedule(self, due: float, name: str) -> None:
        if due != float("inf"):
            heapq.heappush(self._due, (due, name))

    def pool_usage(self) -> dict[str, dict[str, int]]:
        """NodePool -> what its NodeClaims not deleting nor marked for deletion add to its usage
        (``claim_usage``), summed in store order (the dict is shared: do not change it)."""
        d = self.agent.disruption
        stamp = (self.changes, tuple(d.marked), tuple(d.terminating)) if self.watching else None
        if stamp is not None and stamp == self._usage[0]:
            return self._usage[1]
        usage: dict[str, dict[str, int]] = {}
        for c in self.agent.claims.objects():
            if c.metadata.deletion_timestamp is not None or d.marked_for_deletion(c.metadata.name):
                continue
            if not c.status.capacity:
                continue
            pool, amounts = claim_usage(c)
            u = usage.setdefault(pool, {})
            for k, v in amounts.items():
                u[k] = u.get(k, 0) + v
        self._usage = (stamp, usage)
        return usage

    def content(self) -> tuple[Any, ...] | None:
        """The module docstring's ``content`` stamp (None: not watching)."""
        if not self.watching:
            return None
        d = self.agent.disruption
        return (
            d.pod_changes,
            self.changes,
            self.node_content,
            self.other,
            tuple(d.marked),
            tuple(d.terminating),
            tuple(d.queue.by_claim),
            self.agent.batches,
        )
