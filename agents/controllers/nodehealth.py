"""The node lifecycle controller's pure logic (upstream ``node_lifecycle_controller.go``
and ``scheduler/rate_limited_queue.go``), kept apart from the agent that acts on it.

- ``Probes``: when each node last showed a sign of life. A renewal (a new Lease
  ``renewTime`` or a new Ready ``lastHeartbeatTime``) noticed since the last monitor pass
  stamps the node with that pass's time, as upstream stamps ``probeTimestamp`` with the
  time of the pass that noticed it. Nodes sit in an ``OrderedDict`` ordered by that stamp,
  so a pass finds the overdue ones from the front in O(overdue), never scanning them all.
- ``unknown_conditions``: what the controller writes for an overdue node (Ready,
  MemoryPressure, DiskPressure, PIDPressure → Unknown, ``NodeStatusUnknown``, "Kubelet
  stopped posting node status."; a condition never posted → ``NodeStatusNeverUpdated``).
- ``no_schedule_diff``: the NoSchedule taints node conditions and ``spec.unschedulable``
  call for (``doNoScheduleTaintingPass``).
- ``zone_key``, ``compute_zone_state``: zones and their disruption states.
- ``TokenBucket`` and ``ZoneTainter``: the rate-limited, de-duplicating queue of nodes
  waiting for a NoExecute taint, one per zone.

Zone states (``ComputeZoneState``, ``unhealthyZoneThreshold`` 0.55):

================  =========================================================================
state             when                                       NoExecute tainting rate
================  =========================================================================
Normal            otherwise                                  ``nodeEvictionRate`` (0.1/s)
PartialDisruption > 2 nodes not Ready and >= 55 % of the zone ``secondaryNodeEvictionRate``
                                                             (0.01/s) if the zone has > 50
                                                             nodes, else 0 (stop)
FullDisruption    no node Ready                              ``nodeEvictionRate``, unless
                                                             every zone is fully disrupted:
                                                             then no tainting at all and the
                                                             NoExecute taints are removed
================  =========================================================================
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from agents.controllers.common import (
    TAINT_NODE_NOT_READY,
    TAINT_NODE_UNREACHABLE,
    TAINT_NODE_UNSCHEDULABLE,
    node_condition,
)
from emulator.base.api.core import Node, NodeCondition, Taint

__all__ = [
    "FULL_DISRUPTION",
    "INITIAL",
    "NORMAL",
    "NOT_READY_NO_EXECUTE",
    "PARTIAL_DISRUPTION",
    "UNREACHABLE_NO_EXECUTE",
    "Probes",
    "TokenBucket",
    "ZoneTainter",
    "compute_zone_state",
    "no_schedule_diff",
    "ready_status",
    "unknown_conditions",
    "zone_key",
]

INITIAL: Final = "Initial"
NORMAL: Final = "Normal"
FULL_DISRUPTION: Final = "FullDisruption"
PARTIAL_DISRUPTION: Final = "PartialDisruption"

UNREACHABLE_NO_EXECUTE: Final = Taint(key=TAINT_NODE_UNREACHABLE, effect="NoExecute")
NOT_READY_NO_EXECUTE: Final = Taint(key=TAINT_NODE_NOT_READY, effect="NoExecute")

_CONDITION_TAINTS: Final = {
    "Ready": {"False": TAINT_NODE_NOT_READY, "Unknown": TAINT_NODE_UNREACHABLE},
    "MemoryPressure": {"True": "node.kubernetes.io/memory-pressure"},
    "DiskPressure": {"True": "node.kubernetes.io/disk-pressure"},
    "NetworkUnavailable": {"True": "node.kubernetes.io/network-unavailable"},
    "PIDPressure": {"True": "node.kubernetes.io/pid-pressure"},
}
_CONDITION_TAINT_KEYS: Final = frozenset(k for m in _CONDITION_TAINTS.values() for k in m.values())
_UNKNOWN_TYPES: Final = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
_LABEL_ZONE: Final = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
_LABEL_REGION: Final = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


def ready_status(node: Node) -> str:
    """The Ready condition's status (``True``/``False``/``Unknown``), ``""`` if never posted."""
    cond = node_condition(node, "Ready")
    return "" if cond is None else cond.status


def zone_key(node: Node) -> str:
    """Upstream ``GetZoneKey``: ``region:\\x00:zone``, or ``""`` without both labels."""
    labels = node.metadata.labels
    zone = next((labels[k] for k in _LABEL_ZONE if k in labels), "")
    region = next((labels[k] for k in _LABEL_REGION if k in labels), "")
    return "" if not zone and not region else f"{region}:\x00:{zone}"


def no_schedule_diff(node: Node) -> tuple[list[Taint], list[Taint]]:
    """(taints to add, taints to remove) so that the node's condition and unschedulable
    NoSchedule taints match its conditions and ``spec.unschedulable``."""
    want: list[Taint] = []
    for cond in node.status.conditions:
        key = _CONDITION_TAINTS.get(cond.type, {}).get(cond.status)
        if key is not None:
            want.append(Taint(key=key, effect="NoSchedule"))
    if node.spec.unschedulable:
        want.append(Taint(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule"))
    have = [
        t
        for t in node.spec.taints
        if t.effect == "NoSchedule" and (t.key == TAINT_NODE_UNSCHEDULABLE or t.key in _CONDITION_TAINT_KEYS)
    ]
    add = [t for t in want if not any(h.key == t.key for h in have)]
    remove = [h for h in have if not any(t.key == h.key for t in want)]
    return add, remove


def unknown_conditions(node: Node, now: str) -> list[NodeCondition] | None:
    """The node's conditions with Ready and the pressure conditions made Unknown, or
    None when Ready already is (upstream then writes nothing)."""
    ready = node_condition(node, "Ready")
    if ready is not None and ready.status == "Unknown":
        return None
    out = list(node.status.conditions)
    for ctype in _UNKNOWN_TYPES:
        i = next((j for j, c in enumerate(out) if c.type == ctype), None)
        if i is None:
            out.append(
                NodeCondition(
                    type=ctype,
                    status="Unknown",
                    reason="NodeStatusNeverUpdated",
                    message="Kubelet never posted node status.",
                    last_heartbeat_time=node.metadata.creation_timestamp,
                    last_transition_time=now,
                )
            )
        elif out[i].status != "Unknown":
            c = out[i]
            out[i] = NodeCondition(
                type=ctype,
                status="Unknown",
                reason="NodeStatusUnknown",
                message="Kubelet stopped posting node status.",
                last_heartbeat_time=c.last_heartbeat_time,
                last_transition_time=now,
            )
    return out


def compute_zone_state(ready: int, not_ready: int, unhealthy_threshold: float) -> str:
    """Upstream ``ComputeZoneState``."""
    if ready == 0 and not_ready > 0:
        return FULL_DISRUPTION
    if not_ready > 2 and not_ready / (not_ready + ready) >= unhealthy_threshold:
        return PARTIAL_DISRUPTION
    return NORMAL


class Probes:
    """Last-probe stamps, oldest first; ``renewed`` marks, ``tick`` stamps and expires."""

    def __init__(self) -> None:
        self._stamps: OrderedDict[str, float] = OrderedDict()
        self._renewed: dict[str, None] = {}

    def __len__(self) -> int:
        return len(self._stamps)

    def renewed(self, node: str) -> None:
        self._renewed[node] = None

    def forget(self, node: str) -> None:
        self._stamps.pop(node, None)
        self._renewed.pop(node, None)

    def stamp(self, node: str) -> float | None:
        return self._stamps.get(node)

    def tick(self, now: float, grace: float) -> tuple[list[str], list[str]]:
        """A monitor pass at ``now``: (nodes renewed since the last pass, nodes whose last
        probe is more than ``grace`` old; those leave the table until renewed)."""
        renewed = list(self._renewed)
        self._renewed.clear()
        for node in renewed:
            self._stamps[node] = now
            self._stamps.move_to_end(node)
        expired: list[str] = []
        while self._stamps:
            node, stamp = next(iter(self._stamps.items()))
            if now <= stamp + grace:
                break
            self._stamps.popitem(last=False)
            expired.append(node)
        return renewed, expired

    def reset(self, nodes: list[str], now: float) -> None:
        """Stamp every one of ``nodes`` with ``now`` (leaving full disruption mode)."""
        for node in nodes:
            self._stamps[node] = now
            self._stamps.move_to_end(node)


class TokenBucket:
    """``flowcontrol.NewTokenBucketRateLimiter(qps, 1)``: starts full; ``qps`` 0 never
    accepts (upstream's fake never-limiter)."""

    __slots__ = ("_last", "_tokens", "qps")

    def __init__(self, qps: float, now: float) -> None:
        self.qps = qps
        self._tokens = 1.0
        self._last = now

    def _refill(self, now: float) -> None:
        if now > self._last:
            self._tokens = min(1.0, self._tokens + (now - self._last) * self.qps)
            self._last = now

    def try_accept(self, now: float) -> bool:
        if self.qps <= 0:
            return False
        self._refill(now)
        if self._tokens >= 1.0 - 1e-9:
            self._tokens -= 1.0
            return True
        return False

    def next_time(self, now: float) -> float | None:
        """When a token will be there (None: never)."""
        if self.qps <= 0:
            return None
        self._refill(now)
        return now if self._tokens >= 1.0 - 1e-9 else now + (1.0 - self._tokens) / self.qps


class ZoneTainter:
    """One zone's ``RateLimitedTimedQueue`` of nodes waiting for a NoExecute taint: FIFO,
    a node added once until ``remove``d (done ones are remembered, as upstream's set)."""

    def __init__(self, qps: float, now: float) -> None:
        self.bucket = TokenBucket(qps, now)
        self._pending: OrderedDict[str, None] = OrderedDict()
        self._known: set[str] = set()

    def __repr__(self) -> str:
        return f"<ZoneTainter qps={self.bucket.qps} pending={len(self._pending)}>"

    def __contains__(self, node: str) -> bool:
        return node in self._known

    @property
    def pending(self) -> list[str]:
        return list(self._pending)

    def add(self, node: str) -> bool:
        if node in self._known:
            return False
        self._known.add(node)
        self._pending[node] = None
        return True

    def remove(self, node: str) -> bool:
        if node not in self._known:
            return False
        self._known.discard(node)
        self._pending.pop(node, None)
        return True

    def swap_limiter(self, qps: float, now: float) -> None:
        if qps != self.bucket.qps:
            self.bucket = TokenBucket(qps, now)

    def take(self, now: float) -> str | None:
        """The next node to taint, if one waits and the rate allows it now."""
        if not self._pending or not self.bucket.try_accept(now):
            return None
        return next(iter(self._pending))

    def done(self, node: str) -> None:
        """Tainted (or nothing to do): out of the queue, still remembered."""
        self._pending.pop(node, None)

    def next_time(self, now: float) -> float | None:
        return self.bucket.next_time(now) if self._pending else None
