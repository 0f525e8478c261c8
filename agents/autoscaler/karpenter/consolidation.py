"""The disruption methods (kubernetes-sigs/karpenter v1.9.1 ``pkg/controllers/disruption``:
``emptiness.go``, ``drift.go``, ``multinodeconsolidation.go``, ``singlenodeconsolidation.go``,
``consolidation.go``, ``validation.go``, ``types.go``), tried in this order every pass.

- ``Emptiness`` (reason ``Empty``): consolidatable candidates without reschedulable pods
  (either policy), cheapest disruption first, as many as the budgets allow, in one command;
  validated after ``CONSOLIDATION_TTL`` (15s): those still candidates within the budgets go.
- ``Drift`` (``Drifted``, eventual): the NodeClaims with ``Drifted=True``, oldest condition
  first, empty ones before the rest; the first whose pods all schedule (onto the other nodes
  and any number of new NodeClaims) within its NodePool's budget is replaced. No wait.
- ``MultiNodeConsolidation`` and ``SingleNodeConsolidation`` (``Underutilized``, policy
  ``WhenEmptyOrUnderutilized``, ``Consolidatable=True``, non-empty): multi-node binary-searches
  the longest prefix (at least 2, at most ``MAX_PARALLEL`` = 100) of the candidates, cheapest
  disruption first and within budgets, that can go with at most one new NodeClaim;
  single-node tries one candidate at a time (NodePools interleaved). ``compute`` follows
  ``computeConsolidation``: all the pods must schedule; no new NodeClaim → delete; one → a
  replacement whose instance types are cheaper than the candidates together (types whose
  cheapest offering is not are dropped; a mixed on-demand/spot replacement is held to spot);
  all-spot candidates with a spot replacement go through spot-to-spot consolidation (off
  unless the ``SpotToSpotConsolidation`` feature gate: then at least 15 cheaper instance types
  for one candidate, the replacement keeping the 15 cheapest). Multi-node replacements also
  drop the types being removed and dearer (``filterOutSameInstanceType``). A command is
  validated after 15s: the same candidates, budgets, and a scheduling simulation that still
  agrees; otherwise ``ConsolidationRejected`` (budget, scheduling, churn). A method that found
  nothing remembers the cluster's consolidation state and is skipped until it changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from agents.autoscaler.karpenter import events as ev
from agents.autoscaler.karpenter.budgetmapping import budget_mapping
from agents.autoscaler.karpenter.candidates import (
    EVENTUAL,
    GRACEFUL,
    Candidate,
    condition,
    get_candidates,
    is_true,
    kept_verdict,
)
from agents.autoscaler.karpenter.memo import EmptySearch
from agents.autoscaler.karpenter.scheduling import NewNodeClaim, Option
from agents.autoscaler.karpenter.simulation import Results, simulate
from emulator.base.api.karpenter import CAPACITY_TYPE_LABEL
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "CONSOLIDATION_TTL",
    "MAX_PARALLEL",
    "MIN_SPOT_TO_SPOT_TYPES",
    "Command",
    "Drift",
    "Emptiness",
    "MultiNodeConsolidation",
    "SingleNodeConsolidation",
    "methods",
]

CONSOLIDATION_TTL: Final = 15.0
MAX_PARALLEL: Final = 100
MIN_SPOT_TO_SPOT_TYPES: Final = 15
"""``MinInstanceTypesForSpotToSpotConsolidation``."""


@dataclass(slots=True)
class Command:
    method: Any
    candidates: list[Candidate]
    replacements: list[NewNodeClaim] = field(default_factory=list)
    results: Results | None = None
    id: str = ""
    created: float = 0.0
    names: list[str] = field(default_factory=list)
    """The replacement NodeClaims' names once launched."""
    initialized: list[bool] = field(default_factory=list)

    @property
    def decision(self) -> str:
        if self.candidates and self.replacements:
            return "replace"
        return "delete" if self.candidates else "no-op"

    def savings(self) -> float:
        source = sum(c.price for c in self.candidates)
        return source - sum(r.options[0].price for r in self.replacements if r.options)

    def text(self) -> str:
        """``Command.String``: the short form until the controller gives the command its ID
        (the form the candidate and rejection Events carry, as upstream's)."""
        sources = ", ".join(c.name for c in self.candidates)
        tail = ""
        if self.replacements:
            n = len(self.replacements)
            tail = f" -> [{n} replacement{'' if n == 1 else 's'}]"
        if not self.id:
            return f"{self.decision}: [{sources}]{tail}"
        return f"{self.method.reason}/{self.id}: {self.decision}: [{sources}]{tail} (savings: ${self.savings():.2f})"

    def text_for(self, c: Candidate) -> str:
        if len(self.candidates) == 1:
            return self.text()
        return f"{self.decision}: [{c.name}] (part of {len(self.candidates)}-node consolidation)"

    async def emit_candidates(self, recorder: Any) -> None:
        for c in self.candidates:
            await recorder.publish(*ev.consolidation_candidate(c.node, c.claim, self.text_for(c), self.savings()))

    async def emit_rejected(self, recorder: Any, reason: str) -> None:
        for c in self.candidates:
            await recorder.publish(
                *ev.consolidation_rejected(c.node, c.claim, self.text_for(c), reason, self.savings())
            )


def _by_cost(cands: Sequence[Candidate]) -> list[Candidate]:
    return sorted(cands, key=lambda c: (c.cost, c.name))


def _types(options: Sequence[Option]) -> list[str]:
    names: list[str] = []
    for o in options:
        if o.instance_type.name not in names:
            names.append(o.instance_type.name)
    return names


def _cheaper(options: Sequence[Option], price: float) -> list[Option]:
    """``RemoveInstanceTypeOptionsByPriceAndMinValues``: keep the instance types whose cheapest
    offering here costs less than ``price``."""
    cheapest: dict[str, float] = {}
    for o in options:
        cheapest[o.instance_type.name] = min(cheapest.get(o.instance_type.name, o.price), o.price)
    return [o for o in options if cheapest[o.instance_type.name] < price]


def _spot(options: Sequence[Option]) -> list[Option]:
    return [o for o in options if o.labels.get(CAPACITY_TYPE_LABEL) == "spot"]


class _Base:
    reason = ""
    klass = GRACEFUL
    kind = ""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.last_state = -1.0

    def is_consolidated(self) -> bool:
        return bool(self.last_state == self.agent.disruption.consolidation_state())

    def mark_consolidated(self) -> None:
        self.last_state = self.agent.disruption.consolidation_state()

    @kept_verdict
    async def should_disrupt(self, c: Candidate) -> bool:
        """The method's filter: ``verdict`` (kept on the candidate, ``Candidate.verdicts``),
        its message published each time, as upstream's filter publishes it on every pass."""
        v = c.verdicts.get(self.__class__.__name__)
        if v is None:
            v = c.verdicts[self.__class__.__name__] = self.verdict(c)
        if isinstance(v, str):
            await self.publish(c, v)
            return False
        return bool(v)

    def verdict(self, c: Candidate) -> bool | str:
        """Whether the method may disrupt ``c``, or the Unconsolidatable message saying why not.
        It reads only the candidate's NodeClaim, Node, NodePool, instance type and pods."""
        raise NotImplementedError

    async def publish(self, c: Candidate, msg: str) -> None:
        if (record := self.agent.disruption.outcomes.messages) is not None:
            record.append(msg)
        await self.agent.recorder.publish(*ev.unconsolidatable(c.node, c.claim, msg))


class Emptiness(_Base):
    reason, kind = "Empty", "empty"

    def verdict(self, c: Candidate) -> bool | str:
        d = c.pool.spec.disruption if c.pool.spec is not None else None
        if d is None or d.consolidate_after in (None, "Never"):
            return f'NodePool "{c.pool.metadata.name}" has consolidation disabled'
        return not c.reschedulable and is_true(c.claim, "Consolidatable")

    async def compute(self, budgets: dict[str, int], cands: list[Candidate]) -> list[Command]:
        if self.is_consolidated():
            return []
        empty: list[Candidate] = []
        constrained = False
        for c in _by_cost(cands):
            if c.reschedulable:
                continue
            if budgets.get(c.pool.metadata.name, 0) == 0:
                constrained = True
                continue
            empty.append(c)
            budgets[c.pool.metadata.name] -= 1
        if not empty:
            if not constrained:
                self.mark_consolidated()
            return []
        await self.agent.clock.sleep(CONSOLIDATION_TTL)
        now = await get_candidates(self.agent, self.should_disrupt, GRACEFUL)
        names = {c.name for c in empty}
        valid = [c for c in now if c.name in names]
        budgets = await budget_mapping(self.agent, self.reason)
        kept = []
        for c in valid:
            if self.agent.nominated_node(c.name, self.agent.clock.now()) or budgets.get(c.pool.metadata.name, 0) == 0:
                continue
            budgets[c.pool.metadata.name] -= 1
            kept.append(c)
        return [Command(self, kept)] if kept else []


class Drift(_Base):
    reason, klass = "Drifted", EVENTUAL

    def verdict(self, c: Candidate) -> bool | str:
        return is_true(c.claim, "Drifted")

    async def compute(self, budgets: dict[str, int], cands: list[Candidate]) -> list[Command]:
        def since(c: Candidate) -> tuple[float, str]:
            k = condition(c.claim, "Drifted")
            return (parse_timestamp(k.last_transition_time) if k and k.last_transition_time else 0.0, c.name)

        ordered = sorted(cands, key=since)
        for c in [*(c for c in ordered if not c.reschedulable), *(c for c in ordered if c.reschedulable)]:
            if budgets.get(c.pool.metadata.name, 0) == 0:
                continue
            results = simulate(self.agent, [c])
            if results is None:
                continue
            if not results.all_non_pending_scheduled():
                text = results.error_text()
                await self.agent.recorder.publish(*ev.blocked(c.node, c.claim, text[:1].upper() + text[1:]))
                continue
            return [Command(self, [c], list(results.claims), results)]
        return []


class _Consolidation(_Base):
    reason = "Underutilized"

    def verdict(self, c: Candidate) -> bool | str:
        label = c.node.metadata.labels
        name = c.pool.metadata.name
        d = c.pool.spec.disruption if c.pool.spec is not None else None
        if c.instance_type is None:
            msg = f'Instance Type "{label.get("node.kubernetes.io/instance-type", "")}" not found'
        elif CAPACITY_TYPE_LABEL not in label:
            msg = f'Node does not have label "{CAPACITY_TYPE_LABEL}"'
        elif "topology.kubernetes.io/zone" not in label:
            msg = 'Node does not have label "topology.kubernetes.io/zone"'
        elif d is None or d.consolidate_after in (None, "Never"):
            msg = f'NodePool "{name}" has consolidation disabled'
        elif d.consolidation_policy != "WhenEmptyOrUnderutilized":
            msg = f'NodePool "{name}" has non-empty consolidation disabled'
        else:
            return is_true(c.claim, "Consolidatable")
        return msg

    async def compute_one(self, cands: list[Candidate]) -> Command | None:
        """``computeConsolidation`` (module docstring)."""
        single = cands[0] if len(cands) == 1 else None
        # several candidates fail alike however many NodeClaims the solve would open past one
        results = simulate(self.agent, cands, None if single else 1)
        if results is None or results.gave_up:
            return None
        if not results.all_non_pending_scheduled():
            if single:
                text = results.error_text()
                await self.publish(single, text[:1].upper() + text[1:])
            return None
        if not results.claims:
            return Command(self, list(cands), [], results)
        if len(results.claims) != 1:
            if single:
                await self.publish(single, f"Can't remove without creating {len(results.claims)} candidates")
            return None
        price = sum(c.price for c in cands)
        new = results.claims[0]
        if all(c.capacity_type == "spot" for c in cands) and _spot(new.options):
            return await self._spot_to_spot(cands, results, new, price)
        mixed = {o.labels.get(CAPACITY_TYPE_LABEL) for o in new.options} >= {"spot", "on-demand"}
        new.options = _cheaper(new.options, price)
        if not new.options:
            if single:
                await self.publish(single, "Can't replace with a cheaper node")
            return None
        if mixed:  # held to spot: without a cheaper spot offering the launch could only fail
            new.options, new.spot_only = _spot(new.options), True
            if not new.options:
                return None
        cmd = Command(self, list(cands), [new], results)
        await cmd.emit_candidates(self.agent.recorder)
        return cmd

    async def _spot_to_spot(
        self, cands: list[Candidate], results: Results, new: NewNodeClaim, price: float
    ) -> Command | None:
        single = cands[0] if len(cands) == 1 else None
        if not self.agent.spot_to_spot:
            if single:
                await self.publish(
                    single, "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
                )
            return None
        new.spot_only = True
        new.options = _cheaper(_spot(new.options), price)
        if not new.options:
            if single:
                await self.publish(single, "Can't replace with a cheaper node")
            return None
        if single:
            names = _types(new.options)
            if len(names) < MIN_SPOT_TO_SPOT_TYPES:
                await self.publish(
                    single,
                    f"SpotToSpotConsolidation requires {MIN_SPOT_TO_SPOT_TYPES} cheaper instance type options than "
                    f"the current candidate to consolidate, got {len(names)}",
                )
                return None
            keep = set(names[:MIN_SPOT_TO_SPOT_TYPES])
            new.options = [o for o in new.options if o.instance_type.name in keep]
        cmd = Command(self, list(cands), [new], results)
        await cmd.emit_candidates(self.agent.recorder)
        return cmd

    async def validate(self, cmd: Command) -> str:
        """``ConsolidationValidator.isValid`` after the wait: "" or why it failed."""
        await self.agent.clock.sleep(CONSOLIDATION_TTL)
        why, valid = await self._still_candidates(cmd)
        if why:
            return why
        results = simulate(self.agent, valid)
        if results is None or not results.all_non_pending_scheduled():
            return "scheduling"
        if not results.claims:
            why = "scheduling" if cmd.replacements else ""
        elif (
            len(results.claims) > 1
            or not cmd.replacements
            or not set(_types(cmd.replacements[0].options)) <= set(_types(results.claims[0].options))
        ):
            why = "scheduling"
        if why:
            return why
        why, valid = await self._still_candidates(cmd)
        cmd.candidates = valid or cmd.candidates
        return why

    async def _still_candidates(self, cmd: Command) -> tuple[str, list[Candidate]]:
        now = await get_candidates(self.agent, self.should_disrupt, GRACEFUL)
        names = [c.name for c in cmd.candidates]
        valid = [c for c in now if c.name in names]
        if len(valid) != len(names):
            return "churn", []
        budgets = await budget_mapping(self.agent, self.reason)
        for c in valid:
            if self.agent.nominated_node(c.name, self.agent.clock.now()) or budgets.get(c.pool.metadata.name, 0) == 0:
                return "budget", []
            budgets[c.pool.metadata.name] -= 1
        return "", valid

    async def _finish(self, cmd: Command) -> list[Command]:
        why = await self.validate(cmd)
        if why:
            await cmd.emit_rejected(self.agent.recorder, why)
            return []
        return [cmd]


class MultiNodeConsolidation(_Consolidation):
    kind = "multi"

    def __init__(self, agent: Any) -> None:
        super().__init__(agent)
        self.empty = EmptySearch(agent)

    async def compute(self, budgets: dict[str, int], cands: list[Candidate]) -> list[Command]:
        if self.is_consolidated():
            return []
        usable: list[Candidate] = []
        constrained = False
        for c in _by_cost(cands):
            if budgets.get(c.pool.metadata.name, 0) == 0:
                constrained = True
                continue
            if not c.reschedulable:
                continue
            usable.append(c)
            budgets[c.pool.metadata.name] -= 1
        cmd = await self.empty.run(self._first_n, usable, min(len(usable), MAX_PARALLEL))
        if cmd is None:
            if not constrained:
                self.mark_consolidated()
            return []
        return await self._finish(cmd)

    async def _first_n(self, cands: list[Candidate], most: int) -> Command | None:
        if len(cands) < 2:
            return None
        lo = 1
        hi = len(cands) - 1 if len(cands) <= most else most
        saved: Command | None = None
        while lo <= hi:
            mid = (lo + hi) // 2
            batch = cands[: mid + 1]
            cmd = await self.compute_one(batch)
            ok = cmd is not None and cmd.decision == "delete"
            if cmd is not None and cmd.decision == "replace":
                cmd.replacements[0].options = _without_same_type(cmd.replacements[0].options, batch)
                ok = bool(cmd.replacements[0].options)
            if ok:
                saved, lo = cmd, mid + 1
            else:
                hi = mid - 1
        return saved


def _without_same_type(options: list[Option], batch: Sequence[Candidate]) -> list[Option]:
    """``filterOutSameInstanceType``."""
    prices: dict[str, float] = {}
    for c in batch:
        if c.instance_type is not None and c.price > 0:
            name = c.instance_type.name
            prices[name] = min(prices.get(name, c.price), c.price)
    ceiling = min((prices[n] for n in _types(options) if n in prices), default=float("inf"))
    return _cheaper(options, ceiling)


class SingleNodeConsolidation(_Consolidation):
    kind = "single"

    def __init__(self, agent: Any) -> None:
        super().__init__(agent)
        self.unseen: list[str] = []

    def order(self, cands: list[Candidate]) -> list[Candidate]:
        """``SortCandidates``: by disruption cost, NodePools interleaved (unseen ones first)."""
        groups: dict[str, list[Candidate]] = {}
        for c in _by_cost(cands):
            groups.setdefault(c.pool.metadata.name, []).append(c)
        pools = [p for p in self.unseen if p in groups] + sorted(p for p in groups if p not in self.unseen)
        out: list[Candidate] = []
        for i in range(max((len(g) for g in groups.values()), default=0)):
            out.extend(groups[p][i] for p in pools if i < len(groups[p]))
        return out

    async def compute(self, budgets: dict[str, int], cands: list[Candidate]) -> list[Command]:
        if self.is_consolidated():
            return []
        constrained = False
        for c in self.order(cands):
            if budgets.get(c.pool.metadata.name, 0) == 0:
                constrained = True
                continue
            if not c.reschedulable:
                continue
            cmd = await self.agent.disruption.outcomes.run(self, c)
            if cmd is None or cmd.decision == "no-op":
                continue
            return await self._finish(cmd)
        if not constrained:
            self.mark_consolidated()
        self.unseen = []
        return []


def methods(agent: Any) -> list[Any]:
    """``NewMethods``, in upstream's order (static drift aside: no static NodePools here)."""
    return [Emptiness(agent), Drift(agent), MultiNodeConsolidation(agent), SingleNodeConsolidation(agent)]
