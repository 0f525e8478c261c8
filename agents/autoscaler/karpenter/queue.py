"""The orchestration queue (kubernetes-sigs/karpenter v1.9.1 ``pkg/controllers/disruption/queue.go``).

``start`` (``StartCommand``): each candidate's node is tainted ``karpenter.sh/disrupted:NoSchedule``
and its NodeClaim gets ``DisruptionReason=True`` (reason the method's); the replacements are
created (``DisruptionLaunching`` when the queue looks at them); the candidates are marked for
deletion and each replacement's pods get a ``Nominated`` Event. Then every ``QUEUE_BASE_DELAY``
(1s) ``tick`` (``Reconcile``/``waitOrTerminate``) checks the replacements: one not
initialized yet is waited for (``DisruptionWaitingReadiness``); once all are, the candidates'
NodeClaims are deleted (``DisruptionTerminating`` on the Node and NodeClaim; termination
drains them) and the disruption counted by reason. A replacement deleted meanwhile, or a
command older than its retry duration (80ms per command in the queue, clamped to [10m, 1h]),
fails: the candidates lose the taint and the condition and are no longer marked.
"""

from __future__ import annotations

from typing import Any, Final

from msgspec.structs import replace

from agents.autoscaler.karpenter import events as ev
from agents.autoscaler.karpenter.candidates import is_true
from agents.autoscaler.karpenter.conditions import nodeclaim_conditions
from agents.autoscaler.karpenter.consolidation import Command
from emulator.base.api.core import Taint
from emulator.base.api.errors import ApiError, NotFound

__all__ = ["DISRUPTED_TAINT", "QUEUE_BASE_DELAY", "Queue"]

QUEUE_BASE_DELAY: Final = 1.0
MIN_RETRY: Final = 600.0
MAX_RETRY: Final = 3600.0
RETRY_SCALE: Final = 0.08
DISRUPTED_TAINT: Final = Taint(key="karpenter.sh/disrupted", effect="NoSchedule")


def snake(reason: str) -> str:
    """``pretty.ToSnakeCase``."""
    return "".join(("_" + ch.lower()) if ch.isupper() and i else ch.lower() for i, ch in enumerate(reason))


class Queue:
    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.by_claim: dict[str, Command] = {}
        self.commands: list[Command] = []
        self.next_try: dict[str, float] = {}
        self.seen: dict[str, None] = {}
        """Replacements the informer has shown (one gone from it afterwards was deleted)."""

    def has(self, name: str) -> bool:
        return name in self.by_claim

    def retry_duration(self) -> float:
        return min(MAX_RETRY, max(MIN_RETRY, RETRY_SCALE * len(self.by_claim)))

    async def start(self, cmd: Command) -> bool:
        agent = self.agent
        if any(self.has(c.claim.metadata.name) for c in cmd.candidates):
            return False
        marked = []
        for c in cmd.candidates:
            if await agent.disruption.set_taint(c.node.metadata.name, True) and await self._reason(
                c.claim.metadata.name, cmd
            ):
                marked.append(c)
        if len(marked) != len(cmd.candidates) and (cmd.replacements or not marked):
            return False
        cmd.candidates = marked
        for r in cmd.replacements:
            name = await agent.launch(r, cmd.method.reason.lower())
            if name is None:
                return False
            cmd.names.append(name)
            cmd.initialized.append(False)
        for c in cmd.candidates:
            agent.disruption.mark(c.claim.metadata.name)
        for r, name in zip(cmd.replacements, cmd.names, strict=True):
            for pod in r.pods:
                await agent.recorder.publish(ev.nominated(pod, name))
        for c in cmd.candidates:
            self.by_claim[c.claim.metadata.name] = cmd
        self.commands.append(cmd)
        self.next_try[cmd.id] = agent.clock.now()
        key = f"{cmd.decision}/{snake(cmd.method.reason)}"
        agent.decisions[key] = agent.decisions.get(key, 0) + 1
        return True

    async def _reason(self, name: str, cmd: Command) -> bool:
        """``DisruptionReason=True`` with the method's reason on the NodeClaim."""
        claim = self.agent.claims.get(name, "")
        if claim is None:
            return False
        reason = cmd.method.reason
        cs = nodeclaim_conditions(claim, self.agent.clock.timestamp)
        cs.set("DisruptionReason", "True", reason, reason)
        status = replace(claim.status, conditions=cs.items)
        try:
            await self.agent.client.update_status(replace(claim, status=status))
        except ApiError:
            return False
        return True

    async def tick(self) -> None:
        now = self.agent.clock.now()
        for cmd in list(self.commands):
            if self.next_try.get(cmd.id, 0.0) > now:
                continue
            outcome = await self._wait_or_terminate(cmd)
            if outcome == "wait":
                if now - cmd.created > self.retry_duration():
                    outcome = "failed"
                else:
                    self.next_try[cmd.id] = now + QUEUE_BASE_DELAY
                    continue
            if outcome == "failed":
                for c in cmd.candidates:
                    await self.agent.disruption.set_taint(c.node.metadata.name, False)
                    await self.agent.disruption.clear_reason(c.claim.metadata.name)
                    self.agent.disruption.unmark(c.claim.metadata.name)
            self._complete(cmd)

    def _complete(self, cmd: Command) -> None:
        self.commands = [c for c in self.commands if c is not cmd]
        self.next_try.pop(cmd.id, None)
        for c in cmd.candidates:
            self.by_claim.pop(c.claim.metadata.name, None)
        for name in cmd.names:
            self.seen.pop(name, None)

    async def _wait_or_terminate(self, cmd: Command) -> str:
        agent = self.agent
        waiting = False
        for i, name in enumerate(cmd.names):
            if cmd.initialized[i]:
                continue
            claim = agent.claims.get(name, "")
            if claim is None:
                if name in self.seen:
                    return "failed"  # "replacement was deleted"
                waiting = True  # created, not in the informer yet
                continue
            self.seen[name] = None
            await agent.recorder.publish(ev.launching(claim, cmd.method.reason))
            if not is_true(claim, "Initialized"):
                await agent.recorder.publish(ev.waiting_on_readiness(claim))
                waiting = True
                continue
            cmd.initialized[i] = True
        if waiting:
            return "wait"
        for c in cmd.candidates:
            try:
                await agent.client.delete("NodeClaim", c.claim.metadata.name, "")
            except NotFound:
                continue
            except ApiError:
                return "wait"
            await agent.recorder.publish(*ev.terminating(c.node, c.claim, cmd.method.reason))
            agent.disruption.count_disrupted(snake(cmd.method.reason))
        return "done"
