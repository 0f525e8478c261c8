"""What the disruption controller keeps from the informers' handlers so that its 10 s pass
costs what changed, not what exists (issue 28's Karpenter day; ``Disruption``).

Each structure is the plain loop's answer kept up to date event by event; the plain loops stay
(``watching`` False: a test's stand-in informers) and the tests compare the two.

- ``WatchedDict``: the marks, the NodeClaims terminating, the queue's NodeClaims; it tells its
  owner of every key added or removed (``epoch``, ``dirty``), however it is changed.
- ``PassIndex.epoch``: bumped by every informer event of the five kinds the candidates read
  (pods, nodes, NodePools, NodeClaims, PDBs) and every mark, termination or queue change: while
  it and the instant stay the same, so does everything ``GetCandidates`` reads (the
  nominations aside, which only a provisioning batch sets: it counts itself).
- ``pods_on``/``pod_key``: each node's bound pods not terminal, by namespace and name, and
  their uids, DaemonSet pods aside (sorted); a node's list is a new list only when one of its
  pods changed.
- ``signature``: ``Cluster.ConsolidationState``'s fingerprint of the bound pods (``uid@node``)
  and the NodeClaims: their count and the sum of each one's 64-bit digest (order-free, so the
  same set gives the same fingerprint whatever happened in between, as the sorted hash did).
- ``reasoned``/``tainted``: the NodeClaims with a ``DisruptionReason`` condition and the nodes
  with the ``karpenter.sh/disrupted`` taint: the only ones the pass's clean-up writes to.
- ``expiry``: a heap of (creation + ``expireAfter``, NodeClaim) for every NodeClaim seen (both
  fixed at creation); while its least is in the future, no NodeClaim has expired.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Iterable
from typing import Any

from emulator.base.api.core import Pod
from emulator.base.runtime.clock import parse_duration, parse_timestamp

__all__ = ["PassIndex", "WatchedDict"]

_MASK = (1 << 64) - 1


class WatchedDict(dict[str, Any]):
    """A dict that calls ``on_change(key)`` whenever a key is added or removed (a value
    replaced under the same key is not a change)."""

    __slots__ = ("on_change",)

    def __init__(self, on_change: Callable[[str], None]) -> None:
        super().__init__()
        self.on_change = on_change

    def __setitem__(self, key: str, value: Any) -> None:
        new = key not in self
        super().__setitem__(key, value)
        if new:
            self.on_change(key)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.on_change(key)

    def pop(self, key: str, *default: Any) -> Any:
        had = key in self
        value = super().pop(key, *default)
        if had:
            self.on_change(key)
        return value

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def __ior__(self, other: Any) -> WatchedDict:  # type: ignore[override,misc]
        self.update(other)
        return self

    def popitem(self) -> tuple[str, Any]:
        key, value = super().popitem()
        self.on_change(key)
        return key, value

    def clear(self) -> None:
        keys = list(self)
        super().clear()
        for k in keys:
            self.on_change(k)


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def _daemon(pod: Pod) -> bool:
    return any(o.kind == "DaemonSet" and o.controller for o in pod.metadata.owner_references)


def expiry_of(claim: Any) -> float | None:
    """When ``claim`` expires (``expireAfter`` since creation; None: never)."""
    text = claim.spec.expire_after if claim.spec is not None else None
    created = claim.metadata.creation_timestamp
    if text is None or text == "Never" or not created:
        return None
    return parse_timestamp(created) + parse_duration(text)


class PassIndex:
    """The module docstring's structures, fed by ``agent``'s informers' handlers."""

    def __init__(self, agent: Any, taint_key: str) -> None:
        self.agent = agent
        self.taint_key = taint_key
        self.epoch = 0
        self.dirty: dict[str, dict[str, None]] = {"candidates": {}, "budgets": {}}
        """Per reader (``take_dirty``), the NodeClaim (or node) names whose inputs may have
        changed since it last asked."""
        self.everything = {"candidates": True, "budgets": True}
        """Every NodeClaim's inputs may have changed (a NodePool or PDB event)."""
        self._members: dict[str, dict[tuple[str, str], Pod]] = {}
        self._lists: dict[str, tuple[list[Pod], tuple[str, ...]]] = {}
        self.count = 0
        self.total = 1
        self.reasoned: dict[str, None] = {}
        self.tainted: dict[str, None] = {}
        self.expiry: list[tuple[float, str]] = []
        for pod in agent.pods.objects():
            self._pod_added(pod)
        for node in agent.nodes.objects():
            self._node(node)
        for claim in agent.claims.objects():
            self._claim(claim)
        agent.pods.add_handlers(self._pod_added, self._pod_updated, self._pod_deleted)
        agent.nodes.add_handlers(self._node, lambda old, new: self._node(new), self._node_gone)
        agent.claims.add_handlers(self._claim, self._claim_changed, self._claim_gone)
        agent.pools.add_handlers(self._all, lambda old, new: self._all(new), self._all)
        agent.pdbs.add_handlers(self._all, lambda old, new: self._all(new), self._all)

    # --- changes -----------------------------------------------------------------------

    def changed(self, name: str) -> None:
        """A mark, termination or queue change of NodeClaim ``name`` (``WatchedDict``)."""
        self.epoch += 1
        self._touch(name)

    def take_dirty(self, reader: str) -> tuple[bool, list[str]]:
        """(whether everything may have changed, the names changed) since ``reader``'s last
        call; both reset for it."""
        everything, names = self.everything[reader], list(self.dirty[reader])
        self.everything[reader] = False
        self.dirty[reader] = {}
        return everything, names

    def _touch(self, name: str) -> None:
        for names in self.dirty.values():
            names[name] = None

    def _all(self, obj: Any) -> None:
        self.epoch += 1
        self.everything["candidates"] = True  # the budgets' counts read no NodePool nor PDB

    def _node(self, node: Any) -> None:
        self.epoch += 1
        name = node.metadata.name
        self._touch(name)
        if any(t.key == self.taint_key for t in node.spec.taints):
            self.tainted[name] = None
        else:
            self.tainted.pop(name, None)

    def _node_gone(self, node: Any) -> None:
        self.epoch += 1
        self._touch(node.metadata.name)
        self.tainted.pop(node.metadata.name, None)

    def _claim_updated(self, claim: Any) -> None:
        self.epoch += 1
        name = claim.metadata.name
        self._touch(name)
        if any(c.type == "DisruptionReason" for c in claim.status.conditions):
            self.reasoned[name] = None
        else:
            self.reasoned.pop(name, None)

    def _claim_changed(self, old: Any, new: Any) -> None:
        self._claim_updated(new)
        if old.spec != new.spec or old.metadata.creation_timestamp != new.metadata.creation_timestamp:
            when = expiry_of(new)  # both are fixed at creation: only a test changes them
            if when is not None:
                heapq.heappush(self.expiry, (when, new.metadata.name))

    def _claim(self, claim: Any) -> None:
        self._claim_updated(claim)
        self._sign(claim.metadata.name, 1)
        when = expiry_of(claim)
        if when is not None:
            heapq.heappush(self.expiry, (when, claim.metadata.name))

    def _claim_gone(self, claim: Any) -> None:
        self.epoch += 1
        self._touch(claim.metadata.name)
        self.reasoned.pop(claim.metadata.name, None)
        self._sign(claim.metadata.name, -1)

    def _sign(self, text: str, sign: int) -> None:
        self.count += sign
        self.total = (self.total + sign * _digest(text)) & _MASK

    def _pod_added(self, pod: Any) -> None:
        self.epoch += 1
        self._place(pod, 1)

    def _pod_updated(self, old: Any, new: Any) -> None:
        self.epoch += 1
        self._place(old, -1)
        self._place(new, 1)

    def _pod_deleted(self, pod: Any) -> None:
        self.epoch += 1
        self._place(pod, -1)

    def _place(self, pod: Any, sign: int) -> None:
        node = pod.spec.node_name
        if not node:
            return
        self._sign(f"{pod.metadata.uid}@{node}", sign)
        key = (pod.metadata.namespace, pod.metadata.name)
        members = self._members.get(node)
        if sign > 0 and pod.status.phase not in ("Succeeded", "Failed"):
            if members is None:
                members = self._members[node] = {}
            members[key] = pod
        elif members is not None and key in members:
            del members[key]
        else:
            return
        self._lists.pop(node, None)
        self._touch(node)

    # --- what the pass asks -------------------------------------------------------------

    def pods_on(self, node: str) -> list[Pod]:
        """The node's bound pods not terminal, by namespace and name (the list is shared)."""
        kept = self._lists.get(node)
        if kept is None:
            kept = self._list(node)
        return kept[0]

    def pod_key(self, node: str) -> tuple[str, ...]:
        kept = self._lists.get(node)
        if kept is None:
            kept = self._list(node)
        return kept[1]

    def _list(self, node: str) -> tuple[list[Pod], tuple[str, ...]]:
        members = self._members.get(node)
        if not members:
            kept: tuple[list[Pod], tuple[str, ...]] = ([], ())
        else:
            pods = [members[k] for k in sorted(members)]
            kept = (pods, tuple(sorted(p.metadata.uid for p in pods if not _daemon(p))))
        self._lists[node] = kept
        return kept

    def signature(self) -> tuple[int, int]:
        return (self.count, self.total)

    def may_have_expired(self, now: float, listed: Callable[[str], bool]) -> bool:
        """Whether some NodeClaim seen may have expired by ``now`` (the heap's least is due);
        entries of NodeClaims neither stored nor ``listed`` are dropped on the way."""
        heap = self.expiry
        store = self.agent.claims
        while heap and heap[0][0] <= now:
            name = heap[0][1]
            if store.get(name, "") is not None or listed(name):
                return True
            heapq.heappop(heap)
        return False

    def suspects(self, names: Iterable[str]) -> list[str]:
        """Of ``names``, those a clean-up might write to."""
        return [n for n in names if n in self.reasoned or n in self.tainted]
