"""Disruption candidates, budgets and the scheduling simulation (kubernetes-sigs/karpenter v1.9.1
``pkg/controllers/disruption/types.go`` ``NewCandidate``, ``helpers.go`` ``GetCandidates``,
(``BuildDisruptionBudgetMapping``: ``budgetmapping``);
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

The scheduling simulation (``SimulateScheduling``) is ``simulation.simulate``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import is_
from typing import Any, Final

from agents.autoscaler.karpenter import events as ev
from emulator.base.api.core import Node, Pod
from emulator.base.api.karpenter import CAPACITY_TYPE_LABEL, NODEPOOL_LABEL, NodeClaim, NodePool
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.runtime.clock import parse_duration, parse_timestamp

__all__ = [
    "DO_NOT_DISRUPT",
    "Candidate",
    "PdbLimits",
    "condition",
    "get_candidates",
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
    verdicts: dict[str, Any] = field(default_factory=dict)
    """Each disruption method's filter on this NodeClaim as it is (``consolidation``), shared
    by the candidates of one ``_Part``: what the filters read is what the part is kept on."""

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


def _life(claim: NodeClaim) -> tuple[float, float] | None:
    """(``expireAfter``, creation) in seconds; None when it never expires."""
    text = claim.spec.expire_after if claim.spec is not None else None
    created = claim.metadata.creation_timestamp
    if text is None or text == "Never" or not created:
        return None
    total = parse_duration(text)
    return (total, parse_timestamp(created) if total > 0 else 0.0)


def _lifetime_remaining(life: tuple[float, float] | None, now: float) -> float:
    if life is None:
        return 1.0
    total, created = life
    if total <= 0:
        return 0.0
    return min(1.0, max(0.0, (total - (now - created)) / total))


def kept_verdict(fn: Any) -> Any:
    """Marks a method's filter ``fn(self, candidate)`` as ``self.verdict(candidate)`` kept in
    ``Candidate.verdicts`` under the class's name, its message (a ``str`` verdict) published:
    ``get_candidates`` then reads a ``bool`` verdict itself, without the call."""
    fn.kept_verdict = True
    return fn


async def get_candidates(agent: Any, should: Any, klass: str) -> list[Candidate]:
    """``GetCandidates`` (module docstring); ``should`` the method's filter.

    The methods of one pass ask in turn, so what does not depend on the method (``_entries``:
    each NodeClaim's Node, why it is blocked, its ``Candidate``) is kept while nothing it reads
    changed (``_stamp``). A pass that finds it changed after one of its awaits (an Event, the
    method's filter) goes on from the next NodeClaim reading the stores again, as computing
    everything afresh would have. Nothing it reads changes but across an await, so the
    entries are computed at once and the stamp read again only after one."""
    d = agent.disruption
    stamp = _stamp(agent)
    kept = d.prepared
    source: Iterator[_Entry]
    if stamp is not None and kept[0] == stamp:
        ctx: _Context = kept[1]
        source = iter(kept[2])
    else:
        ctx = _Context(
            agent.clock.now(),
            _sorted_claims(agent),
            {p.metadata.name: p for p in agent.pools.objects()},
            {t.name: t for t in agent.cloud.instance_types()},
            _pdb_limits(agent),
        )
        source = _entries(agent, ctx, 0)
        if stamp is not None:
            entries = _all_entries(agent, ctx) if getattr(d, "index", None) is not None else list(source)
            d.prepared = (stamp, ctx, entries)
            source = iter(entries)
    fn = getattr(should, "__func__", None)
    key, verdict = "", None
    if getattr(fn, "kept_verdict", False):
        key, verdict = should.__self__.__class__.__name__, should.__self__.verdict
    eventual = klass == EVENTUAL
    publish = agent.recorder.publish
    out: list[Candidate] = []
    while (entry := next(source, None)) is not None:
        _, node, claim, why, always, cand = entry
        if why and (always or not (eventual and _has_grace(claim))):
            await publish(*ev.blocked(node, claim, why))
        elif cand is None:
            continue
        else:
            if verdict is not None:
                v = cand.verdicts.get(key)
                if v is None:
                    v = cand.verdicts[key] = verdict(cand)
                if v.__class__ is bool:
                    if v:
                        out.append(cand)
                    continue  # no await: nothing read can have changed
            if await should(cand):
                out.append(cand)
        if stamp is not None and _stamp(agent) != stamp:
            source, stamp = _entries(agent, ctx, entry[0] + 1), None
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


def _sorted_claims(agent: Any) -> list[NodeClaim]:
    """The stored NodeClaims by name (with the index, ``ClaimTracking``'s list: the same)."""
    d = agent.disruption
    if getattr(d, "index", None) is not None:
        return d.track.sorted_claims()  # type: ignore[no-any-return]
    return sorted(agent.claims.objects(), key=lambda c: c.metadata.name)


def _has_grace(claim: NodeClaim) -> bool:
    return claim.spec is not None and claim.spec.termination_grace_period is not None


def _stamp(agent: Any) -> tuple[Any, ...] | None:
    """What ``_entries`` reads besides its context: the instant, the informers' stores, the
    marks, the queue (``PassIndex.epoch`` counts all four), the nominations (set only by a
    provisioning batch, which counts itself)."""
    d = agent.disruption
    if not d.watching:
        return None
    index = getattr(d, "index", None)
    if index is not None:
        return (agent.clock.now(), index.epoch, agent.batches)
    return (agent.clock.now(), d.changes, tuple(d.marked), tuple(d.terminating), tuple(d.queue.by_claim), agent.batches)


def _same_objects(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """The same objects (by identity) in the same order."""
    return a is b or (len(a) == len(b) and all(map(is_, a, b)))


def _pdb_limits(agent: Any) -> PdbLimits:
    """``PdbLimits`` of the stored PDBs, the same object while they are the same objects."""
    d = agent.disruption
    pdbs = list(agent.pdbs.objects())
    kept = getattr(d, "pdb_limits", None)
    if kept is not None and _same_objects(kept[0], pdbs):
        limits: PdbLimits = kept[1]
        return limits
    limits = PdbLimits(pdbs)
    if hasattr(d, "pdb_limits"):  # a test's stand-in may not keep it
        d.pdb_limits = (pdbs, limits)
    return limits


@dataclass(slots=True)
class _Part:
    """What ``_entries`` found for one NodeClaim, kept across passes while everything it was
    computed from is the same (``same``): the objects (NodeClaim, Node, NodePool, instance
    type, PDB limits, the pods on the node, by identity), whether the NodeClaim is marked for
    deletion and whether its node is nominated. Only the instant changes the disruption cost
    (the lifetime remaining), which each pass computes again from the kept sum."""

    claim: NodeClaim
    node: Node
    marked: bool
    nominated: bool
    pool: NodePool | None
    instance_type: Any
    limits: PdbLimits
    pods: list[Pod]
    why: str
    always: bool
    reschedulable: list[Pod] = field(default_factory=list)
    eviction: float = 0.0
    verdicts: dict[str, Any] = field(default_factory=dict)
    life: tuple[float, float] | None = None
    """(``expireAfter``, creation) in seconds for ``_lifetime_remaining`` (None: 1)."""

    def same(self, claim: NodeClaim, node: Node, marked: bool, nominated: bool, pool: Any, it: Any,
             limits: PdbLimits, pods: list[Pod]) -> bool:  # fmt: skip
        mine = self.pods
        return (
            self.claim is claim
            and self.node is node
            and self.marked == marked
            and self.nominated == nominated
            and self.pool is pool
            and self.instance_type is it
            and self.limits is limits
            and _same_objects(mine, pods)
        )


def _part(claim: NodeClaim, node: Node, marked: bool, nominated: bool, pool: NodePool | None, it: Any,
          limits: PdbLimits, pods: list[Pod]) -> _Part:  # fmt: skip
    """``GetCandidates``' checks of one NodeClaim (module docstring), the instant aside."""
    why = ""
    if not is_true(claim, "Initialized"):
        why = "node isn't initialized"
    elif marked:
        why = "node is deleting or marked for deletion"
    elif nominated:
        why = "node is nominated for a pending pod"
    elif node.metadata.annotations.get(DO_NOT_DISRUPT) == "true":
        why = f'disruption is blocked through the "{DO_NOT_DISRUPT}" annotation'
    if why:
        return _Part(claim, node, marked, nominated, pool, it, limits, pods, why[:1].upper() + why[1:], True)
    if pool is None:
        why = f"NodePool not found (NodePool={node.metadata.labels.get(NODEPOOL_LABEL, '')})"
        return _Part(claim, node, marked, nominated, pool, it, limits, pods, why, True)
    block = ""
    if any(_active(p) and do_not_disrupt(p) for p in pods):
        p = next(p for p in pods if _active(p) and do_not_disrupt(p))
        block = f'Pod has "{DO_NOT_DISRUPT}" annotation (Pod={p.metadata.namespace}/{p.metadata.name})'
    elif keys := limits.can_evict(pods):
        many = len(keys) > 1
        what = "Eviction does not support multiple PDBs" if many else "Pdb prevents pod evictions"
        block = f"{what} (PodDisruptionBudget{'(s)' if many else ''}=[{' '.join(keys)}])"
    return _Part(
        claim, node, marked, nominated, pool, it, limits, pods, block, False,
        [p for p in pods if reschedulable(p)], sum(_eviction_cost(p) for p in pods), life=_life(claim),
    )  # fmt: skip


def _row(agent: Any, ctx: _Context, claim: NodeClaim, parts: dict[str, _Part] | None) -> _Part | None:
    """``GetCandidates``' checks of one NodeClaim now (None: not a candidate, no Event: no
    Node, or in the queue), the part kept in ``parts`` reused while ``same``."""
    d = agent.disruption
    node = agent.nodes.get(claim.status.node_name, "") if claim.status.node_name else None
    name = claim.metadata.name
    if node is None or d.queue.has(name):
        return None
    marked = claim.metadata.deletion_timestamp is not None or d.marked_for_deletion(name)
    nominated = agent.nominated_node(node.metadata.name, ctx.now)
    labels = node.metadata.labels
    pool = ctx.pools.get(labels.get(NODEPOOL_LABEL, ""))
    it = ctx.types.get(labels.get(INSTANCE_TYPE, ""))
    pods = d.pods_on(node.metadata.name)
    part = parts.get(name) if parts is not None else None
    if part is None or not part.same(claim, node, marked, nominated, pool, it, ctx.limits, pods):
        part = _part(claim, node, marked, nominated, pool, it, ctx.limits, pods)
        if parts is not None:
            parts[name] = part
    else:
        part.pods = pods  # the same pods (``same``), the list the store gives now
    return part


def _entry(i: int, part: _Part, now: float) -> _Entry:
    if part.always:
        return (i, part.node, part.claim, part.why, True, None)
    assert part.pool is not None
    rank = part.eviction * _lifetime_remaining(part.life, now)
    claim, node = part.claim, part.node
    c = Candidate(claim, node, part.pool, part.instance_type, part.pods, part.reschedulable, rank, part.verdicts)
    return (i, node, claim, part.why, False, c)


def _entries(agent: Any, ctx: _Context, first: int) -> Iterator[_Entry]:
    parts: dict[str, _Part] | None = getattr(agent.disruption, "entry_parts", None)
    for i in range(first, len(ctx.claims)):
        part = _row(agent, ctx, ctx.claims[i], parts)
        if part is not None:
            yield _entry(i, part, ctx.now)


_MISSING: Final = object()


def _all_entries(agent: Any, ctx: _Context) -> list[_Entry]:
    """``_entries(agent, ctx, 0)`` at the start of a call (``ctx.claims`` the store's), each
    NodeClaim's row (``_row``) kept in ``Disruption.rows`` while the index (``passindex``)
    names none of its inputs changed: its object, its Node's (named as it:
    ``ClaimTracking.exact``), its node's pods, its mark, termination or queue entry; any
    NodePool or PDB event, or other instance types, and every row is checked again. The
    nomination (it ends with time) is checked on every row; the cost is computed anew."""
    d = agent.disruption
    index = d.index
    everything, dirty = index.take_dirty("candidates")
    rows: dict[str, Any] = d.rows
    types = agent.cloud.instance_types()
    kept_types = d.rows_inputs[0]
    # a list the cloud changed in place is other instance types too
    same_types = kept_types is not None and _same_objects(types, kept_types)
    if everything or not d.track.exact or not same_types or ctx.limits is not d.rows_inputs[1]:
        rows.clear()
        d.rows_inputs = (list(types), ctx.limits)
    else:
        for name in dirty:
            rows.pop(name, None)
    parts = d.entry_parts
    now = ctx.now
    nominated_node = agent.nominated_node
    out: list[_Entry] = []
    for i, claim in enumerate(ctx.claims):
        name = claim.metadata.name
        part = rows.get(name, _MISSING)
        if part is _MISSING or (part is not None and part.nominated != nominated_node(part.node.metadata.name, now)):
            part = rows[name] = _row(agent, ctx, claim, parts)
        if part is not None:
            out.append(_entry(i, part, now))
    return out
