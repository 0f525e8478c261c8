"""Karpenter's Events (kubernetes-sigs/karpenter v1.9.1 ``pkg/events``,
``pkg/controllers/disruption/events/events.go``, ``provisioning/scheduling/events.go``).

``Recorder.publish`` is upstream's ``recorder.Publish``: an Event with ``dedupe`` values is
written only when no Event with the same reason and values was written within its
``timeout`` (``defaultDedupeTimeout``, 2 minutes, unless the Event says otherwise); a rate
limited Event (``Nominated``: a token bucket of 5 per second, burst 10,
``PodNominationRateLimiter``) is dropped when the bucket is empty. What passes goes to the
controller-runtime recorder (``record.EventRecorder`` with its correlator: this project's
``EventRecorder`` with ``aggregate``). The constructors below carry upstream's reasons,
messages, dedupe values and timeouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from emulator.base.api.meta import reference_to
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.runtime.clock import Clock

__all__ = [
    "DEFAULT_DEDUPE_TIMEOUT",
    "KEvent",
    "Recorder",
    "blocked",
    "consolidation_candidate",
    "consolidation_rejected",
    "evict_pod",
    "launching",
    "node_awaiting_volume_detachment",
    "node_failed_to_drain",
    "nodepool_blocked_for_reason",
    "nominated",
    "pod_failed_to_schedule",
    "pretty_slice",
    "terminating",
    "unconsolidatable",
    "waiting_on_readiness",
]

DEFAULT_DEDUPE_TIMEOUT: Final = 120.0
COMPONENT: Final = "karpenter"


@dataclass(frozen=True, slots=True)
class KEvent:
    involved: Any
    type: str
    reason: str
    message: str
    dedupe: tuple[str, ...] = ()
    timeout: float = 0.0
    rate_limited: bool = False


class _TokenBucket:
    """``flowcontrol.NewTokenBucketRateLimiter(qps, burst)`` on the injected clock."""

    def __init__(self, clock: Clock, qps: float, burst: int) -> None:
        self.clock, self.qps, self.burst = clock, qps, burst
        self.tokens = float(burst)
        self.last = clock.now()

    def try_accept(self) -> bool:
        now = self.clock.now()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.qps)
        self.last = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


class Recorder:
    """Upstream's ``events.Recorder`` over this project's ``EventRecorder`` (module docstring)."""

    def __init__(self, client: Client, clock: Clock) -> None:
        self.clock = clock
        self.inner = EventRecorder(client, clock, COMPONENT, aggregate=True)
        self.cache: dict[str, float] = {}
        """dedupe key -> when it expires"""
        self.nominations = _TokenBucket(clock, 5.0, 10)
        self.published: dict[str, int] = {}
        """reason -> Events written (for reports and tests)"""

    async def publish(self, *events: KEvent) -> None:
        for e in events:
            if e.dedupe:
                key = f"{e.reason.lower()}-{'-'.join(e.dedupe)}"
                now = self.clock.now()
                if self.cache.get(key, -1.0) > now:
                    continue
                self.cache[key] = now + (e.timeout or DEFAULT_DEDUPE_TIMEOUT)
            if e.rate_limited and not self.nominations.try_accept():
                continue
            self.published[e.reason] = self.published.get(e.reason, 0) + 1
            await self.inner.event(reference_to(e.involved), e.type, e.reason, e.message)


def _title(reason: str) -> str:
    """``cases.Title(language.Und, cases.NoLower)``: the first letter upper-cased, the rest kept."""
    return reason[:1].upper() + reason[1:]


def _uid(obj: Any) -> str:
    return str(obj.metadata.uid)


def launching(claim: Any, reason: str) -> KEvent:
    return KEvent(
        claim, "Normal", "DisruptionLaunching", f"Launching NodeClaim: {_title(reason)}", (_uid(claim), reason)
    )


def waiting_on_readiness(claim: Any) -> KEvent:
    return KEvent(
        claim, "Normal", "DisruptionWaitingReadiness", "Waiting on readiness to continue disruption", (_uid(claim),)
    )


def terminating(node: Any, claim: Any, reason: str) -> list[KEvent]:
    out = []
    if node is not None:
        out.append(
            KEvent(node, "Normal", "DisruptionTerminating", f"Disrupting Node: {_title(reason)}", (_uid(node), reason))
        )
    out.append(
        KEvent(
            claim, "Normal", "DisruptionTerminating", f"Disrupting NodeClaim: {_title(reason)}", (_uid(claim), reason)
        )
    )
    return out


def unconsolidatable(node: Any, claim: Any, msg: str) -> list[KEvent]:
    return [
        KEvent(node, "Normal", "Unconsolidatable", msg, (_uid(node),), 15 * 60.0),
        KEvent(claim, "Normal", "Unconsolidatable", msg, (_uid(claim),), 15 * 60.0),
    ]


def blocked(node: Any, claim: Any, msg: str) -> list[KEvent]:
    return [KEvent(o, "Normal", "DisruptionBlocked", msg, (_uid(o),)) for o in (node, claim) if o is not None]


def nodepool_blocked_for_reason(pool: Any, reason: str) -> KEvent:
    return KEvent(
        pool, "Normal", "DisruptionBlocked",
        f"No allowed disruptions for disruption reason {reason} due to blocking budget", (_uid(pool), reason), 60.0,
    )  # fmt: skip


def consolidation_candidate(node: Any, claim: Any, command: str, savings: float) -> list[KEvent]:
    msg = f"Consolidation candidate: {command} (savings: ${savings:.2f})"
    return [KEvent(o, "Normal", "ConsolidationCandidate", msg, (_uid(o), command)) for o in (node, claim)]


def consolidation_rejected(node: Any, claim: Any, command: str, reason: str, savings: float) -> list[KEvent]:
    msg = f"Consolidation rejected: {command}, reason: {reason} (savings: ${savings:.2f})"
    return [KEvent(o, "Normal", "ConsolidationRejected", msg, (_uid(o), command, reason)) for o in (node, claim)]


def nominated(pod: Any, claim_name: str) -> KEvent:
    """``NominatePodEvent`` for a pod headed to a new NodeClaim (no node yet)."""
    return KEvent(
        pod, "Normal", "Nominated", f"Pod should schedule on: nodeclaim/{claim_name}", (_uid(pod),), 0.0, True
    )


def evict_pod(pod: Any, reason: str) -> KEvent:
    """``terminator/events`` ``EvictPod``."""
    return KEvent(pod, "Normal", "Evicted", f"Evicted pod: {reason}", (pod.metadata.name,))


def node_failed_to_drain(node: Any, err: str) -> KEvent:
    """``terminator/events`` ``NodeFailedToDrain``."""
    return KEvent(node, "Warning", "FailedDraining", f"Failed to drain node, {err}", (node.metadata.name,))


def pretty_slice(items: list[str], max_items: int) -> str:
    """``pretty.Slice``: the first ``max_items`` joined by ", ", then " and N other(s)"."""
    head = ", ".join(items[:max_items])
    return head + (f" and {len(items) - max_items} other(s)" if len(items) > max_items else "")


def node_awaiting_volume_detachment(node: Any, attachments: list[str]) -> KEvent:
    """``terminator/events`` ``NodeAwaitingVolumeDetachmentEvent`` (``attachments``: the
    VolumeAttachments' names)."""
    msg = f"Awaiting deletion of bound volumeattachments ({pretty_slice(attachments, 5)})"
    return KEvent(node, "Normal", "AwaitingVolumeDetachment", msg, (node.metadata.name,))


def pod_failed_to_schedule(pod: Any, err: str) -> KEvent:
    """``scheduling/events.go`` ``PodFailedToScheduleEvent`` (deduplicated by pod for 5 minutes)."""
    return KEvent(pod, "Warning", "FailedScheduling", f"Failed to schedule pod, {err}", (_uid(pod),), 300.0)
