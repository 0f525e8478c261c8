"""A consolidation search that found nothing, answered again without its simulations while
nothing it reads has changed (issue 28's Karpenter day).

Upstream runs ``MultiNodeConsolidation.ComputeCommands`` every disruption poll (10s) while the
budgets keep it from being marked consolidated (the default budget, 10 % of the nodes, always
constrains), and recomputes the same binary search over the same cluster. The search is a
function of what it reads: the candidates in their order, the stores (``ClaimTracking.content``:
pods, NodeClaims, Nodes but for their heartbeats, NodePools, PDBs, marks, queue, nominations)
and the simulator's round-robin position (``SchedulingSimulator._last``); the instant enters
only through the candidates' order. So when a search that returned no command, published
nothing and found the stores unchanged throughout is asked again with the same inputs, the
answer is the same: none. What the search leaves behind is replayed: the round-robin position
it ended at, the simulated NodeClaim names it used (``Karpenter.sim_name``), and the
``Cluster.ConsolidationState`` read its simulations made (``Disruption.consolidation_state``,
idempotent within an instant).

``SingleOutcomes`` does the same for single-node consolidation's one-candidate attempts
(``compute_one([candidate])``), which a pass makes for every candidate whenever the
consolidation state moved, or every 5 minutes (``STATE_REFRESH``) when it did not: an attempt
that made no command is answered again, with the same Unconsolidatable messages published
again in the same order (on the candidate as it is now), while the stores, the candidate and
the round-robin position are the same.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

__all__ = ["EmptySearch", "SingleOutcomes"]


class EmptySearch:
    """The last search that found nothing (module docstring)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.kept: tuple[Any, int, int, bool] | None = None
        """(key, round-robin position after, simulated names used, state read)."""
        self.answered = 0
        """Searches answered from ``kept`` (for tests and profiles)."""

    def _key(self, cands: Sequence[Any], most: int) -> tuple[Any, ...] | None:
        content = self.agent.disruption.track.content()
        if content is None:
            return None
        return (content, tuple(c.name for c in cands), most, self.agent.sim._last)

    async def run(self, search: Callable[[Any, int], Awaitable[Any]], cands: Sequence[Any], most: int) -> Any:
        agent, d = self.agent, self.agent.disruption
        key = self._key(cands, most)
        kept = self.kept
        if key is not None and kept is not None and kept[0] == key:
            agent.sim._last = kept[1]
            agent._sim_names += kept[2]
            if kept[3]:
                d.consolidation_state()
            self.answered += 1
            return None
        names, reads = agent._sim_names, d.state_reads
        published = sum(agent.recorder.published.values())
        found = await search(cands, most)
        self.kept = None
        if (
            key is not None
            and found is None
            and sum(agent.recorder.published.values()) == published
            and agent.disruption.track.content() == key[0]
        ):
            self.kept = (key, agent.sim._last, agent._sim_names - names, d.state_reads > reads)
        return found


class SingleOutcomes:
    """One-candidate attempts that made no command, under one ``content`` stamp (module
    docstring)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.content: Any = None
        self.kept: dict[tuple[str, int], tuple[list[str], int, int, bool]] = {}
        """(candidate, round-robin position) -> (messages, position after, names used, state read)"""
        self.messages: list[str] | None = None
        """While an attempt runs: the messages it publishes (``_Base.publish``)."""
        self.answered = 0

    async def run(self, method: Any, cand: Any) -> Any:
        agent, d = self.agent, self.agent.disruption
        content = d.track.content()
        if content != self.content:
            self.content, self.kept = content, {}
        key = (cand.name, agent.sim._last)
        kept = self.kept.get(key) if content is not None else None
        if kept is not None:
            agent.sim._last = kept[1]
            agent._sim_names += kept[2]
            if kept[3]:
                d.consolidation_state()
            self.answered += 1
            for msg in kept[0]:
                await method.publish(cand, msg)
            return None
        names, reads = agent._sim_names, d.state_reads
        self.messages = []
        try:
            cmd = await method.compute_one([cand])
            messages = self.messages
        finally:
            self.messages = None
        if content is not None and cmd is None and d.track.content() == content:
            self.kept[key] = (messages, agent.sim._last, agent._sim_names - names, d.state_reads > reads)
        return cmd
