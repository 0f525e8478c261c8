"""``NodeLifecycleController``: upstream's node lifecycle controller
(``pkg/controller/nodelifecycle``) as an agent of the emulator, client
``controller:nodelifecycle``, Events from ``node-controller``.

It watches Nodes and the node Leases (``kube-node-lease``) and, every
``nodeMonitorPeriod`` (5 s):

1. stamps the nodes whose Lease or Ready heartbeat changed since the last pass
   (``nodehealth.Probes``), and marks Unknown every node with a Lease whose last probe is
   more than ``nodeMonitorGracePeriod`` (50 s since v1.32, kubernetes#126287) old: Ready,
   MemoryPressure, DiskPressure, PIDPressure → Unknown, reason ``NodeStatusUnknown``,
   "Kubelet stopped posting node status.", and a ``NodeNotReady`` Event;
2. for nodes observed not Ready (or still carrying its NoExecute taints), does upstream's
   ``processTaintBaseEviction``: queue the node for ``node.kubernetes.io/unreachable:
   NoExecute`` (Ready Unknown) or ``not-ready:NoExecute`` (Ready False) in its zone's
   rate-limited queue, swap one for the other at once, or remove both once Ready again;
3. recomputes the zone states and the queues' rates (``handleDisruption``).

A node it turns from Ready True to Unknown has its pods marked not Ready, and so has a pod
bound to a node whose Ready is not True (``MarkPodsNotReady``: ``markpods.py``).

A tainter task drains the zone queues as their rates allow (upstream: every 100 ms); a
worker keeps the NoSchedule taints in line with the node conditions and
``spec.unschedulable`` on every node change (``unreachable:NoSchedule`` while Ready is
Unknown, ``unschedulable:NoSchedule`` while cordoned...). Evicting the pods of a
NoExecute-tainted node is the taint eviction controller's job (``tainteviction.py``).

Cost: no per-node timer; a pass touches the renewed, the overdue and the not-Ready nodes
only. Unlike the other informers of a direct stream, the Lease informer is not handed a
renewal in place (``Informer.deliver_in_place`` off): woken, it applies a renewal committed at
a monitor pass's own instant after that pass in either order of their timers, as
``LeaseRenewals.mark`` assumes of a held one, so held and written renewals give the same writes
(in place, a written one would be seen by that very pass when the ticker's timer comes first,
a held one by the next).
What the controller has seen of the Leases' renewals (which nodes have one, the last
``renewTime``, the standing renewals the API server holds for a quiet kubelet,
``ApiServer.stand_lease``) is ``leaserenewals.py``'s: the Lease informer is ``standing_aware``
and each pass first marks the renewals held and due before it, in due order
(``LeaseRenewals.mark``), as their events would have been applied before the pass; a renewal
due at the pass's own instant is the next pass's, as an eagerly woken informer applies it
after the pass.
Deviations, on purpose: only nodes that have posted a Lease are monitored (no
``nodeStartupGracePeriod`` / ``NodeStatusNeverUpdated`` for nodes that never did); the
runner does not start this controller when heartbeats are off (``heartbeatInterval: 0``),
or every node would go Unknown; no ``RegisteredNode`` Events, no label reconciliation.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.common import node_condition, swap_node_taints
from agents.controllers.leaserenewals import LEASE_NAMESPACE, LeaseRenewals
from agents.controllers.markpods import NotReadyMarker
from agents.controllers.nodehealth import (
    FULL_DISRUPTION,
    INITIAL,
    NORMAL,
    NOT_READY_NO_EXECUTE,
    PARTIAL_DISRUPTION,
    UNREACHABLE_NO_EXECUTE,
    Probes,
    ZoneTainter,
    compute_zone_state,
    no_schedule_diff,
    ready_status,
    unknown_conditions,
    zone_key,
)
from emulator.base.api.core import Node, Taint
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.api.meta import ObjectReference
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.client.informer import Informer
from emulator.base.client.retry import Backoff, retry_on_conflict
from emulator.base.runtime.clock import Clock

__all__ = ["COMPONENT", "NodeLifecycleController", "NodeLifecycleSettings"]

COMPONENT: Final = "node-controller"
EXCLUDE_DISRUPTION: Final = "node.kubernetes.io/exclude-disruption"
_RETRY_PERIOD: Final = 0.1
"""Upstream ``NodeEvictionPeriod``: how soon a failed NoExecute tainting is retried."""
MARK_UNKNOWN_RETRY: Final = Backoff(steps=5)
"""Posting Ready=Unknown: five tries back to back, re-reading the node after a Conflict
(upstream's ``monitorNodeHealth`` loop, ``nodeStatusUpdateRetry`` = 5)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeLifecycleSettings:
    """kube-controller-manager's flags for this controller, with their defaults."""

    node_monitor_period: float = 5.0
    node_monitor_grace_period: float = 50.0
    node_eviction_rate: float = 0.1
    secondary_node_eviction_rate: float = 0.01
    large_cluster_size_threshold: int = 50
    unhealthy_zone_threshold: float = 0.55


@dataclass(eq=False, slots=True)
class _Zone:
    tainter: ZoneTainter
    ready: int = 0
    not_ready: int = 0


def _has(node: Node, taint: Taint) -> bool:
    return any(t.key == taint.key and t.effect == taint.effect for t in node.spec.taints)


class NodeLifecycleController:
    """Marks silent nodes Unknown and taints them; ``await run()`` until cancelled."""

    def __init__(self, client: Client, clock: Clock, settings: NodeLifecycleSettings | None = None) -> None:
        self.client = client
        self.clock = clock
        self.settings = settings or NodeLifecycleSettings()
        self.events = EventRecorder(client, clock, COMPONENT)
        self.marker = NotReadyMarker(client, clock, self.events)
        self.nodes = Informer(client, "Node")
        self.nodes.add_handlers(self._on_node, lambda _old, new: self._on_node(new), self._on_node_delete)
        self.leases = Informer(client, "Lease", namespace=LEASE_NAMESPACE, standing_aware=True)
        # woken, not handed renewals in place: a renewal at a pass's own instant is the next
        # pass's whether it is written or held (``LeaseRenewals.mark``; module docstring)
        self.leases.deliver_in_place = False
        self.ready = asyncio.Event()
        self.probes = Probes()
        self.renewals = LeaseRenewals(client, clock, self.probes)
        self.leases.add_handlers(self.renewals.on_lease, self.renewals.on_lease_update)
        self._has_lease = self.renewals.has_lease
        self.zone_states: dict[str, str] = {}
        self._zones: dict[str, _Zone] = {}
        self._counted: dict[str, tuple[str, bool]] = {}
        self._beat_seen: dict[str, str | None] = {}
        self._overdue: dict[str, None] = {}
        self._candidates: dict[str, None] = {}
        self._no_schedule: OrderedDict[str, None] = OrderedDict()
        self._no_schedule_wake = asyncio.Event()
        self._taint_wake = asyncio.Event()
        self.counts = dict.fromkeys(("markedUnknown", "noExecuteTainted", "noExecuteRemoved", "noScheduleSwaps"), 0)

    def __repr__(self) -> str:
        return f"<NodeLifecycleController nodes={len(self.nodes.store)} probed={len(self.probes)} {self.counts}>"

    def statistics(self) -> dict[str, Any]:
        return {
            **self.counts,
            "podsMarkedNotReady": self.marker.marked,
            "overdue": len(self._overdue),
            "zones": len(self.zone_states),
        }

    # --- informer handlers --------------------------------------------------------------

    def _on_node(self, node: Node) -> None:
        name = node.metadata.name
        cond = node_condition(node, "Ready")
        beat = None if cond is None else cond.last_heartbeat_time
        if self._beat_seen.get(name, "") != beat:
            self._beat_seen[name] = beat
            if name in self._has_lease:
                self.probes.renewed(name)
        status = ready_status(node)
        self._count(node, status == "True")
        self.marker.node_ready(name, status)
        add, remove = no_schedule_diff(node)
        if add or remove:
            self._no_schedule[name] = None
            self._no_schedule_wake.set()
        zone = self._zones[zone_key(node)]
        controller_taint = _has(node, UNREACHABLE_NO_EXECUTE) or _has(node, NOT_READY_NO_EXECUTE)
        if name in self._has_lease and (status in ("False", "Unknown") or controller_taint or name in zone.tainter):
            self._candidates[name] = None
        else:
            self._candidates.pop(name, None)

    def _on_node_delete(self, node: Node) -> None:
        name = node.metadata.name
        self.probes.forget(name)
        self.marker.node_ready(name, "")
        for table in (self._overdue, self._candidates, self._no_schedule, self._beat_seen):
            table.pop(name, None)
        old = self._counted.pop(name, None)
        if old is not None:
            self._adjust(old, -1)
        for zone in self._zones.values():
            zone.tainter.remove(name)

    def _adjust(self, entry: tuple[str, bool], delta: int) -> None:
        zone = self._zones[entry[0]]
        if entry[1]:
            zone.ready += delta
        else:
            zone.not_ready += delta

    def _count(self, node: Node, ready: bool) -> None:
        """Keep the per-zone Ready / not-Ready counts (excluded nodes are not counted)."""
        name, key = node.metadata.name, zone_key(node)
        if key not in self._zones:
            self._zones[key] = _Zone(ZoneTainter(self.settings.node_eviction_rate, self.clock.now()))
        new = None if EXCLUDE_DISRUPTION in node.metadata.labels else (key, ready)
        old = self._counted.get(name)
        if old == new:
            return
        if old is not None:
            self._adjust(old, -1)
        if new is None:
            self._counted.pop(name, None)
        else:
            self._counted[name] = new
            self._adjust(new, +1)

    # --- running ------------------------------------------------------------------------

    async def run(self) -> None:
        prefix = self.client.name
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.nodes.run(), name=f"{prefix}:informer:nodes")
            tg.create_task(self.leases.run(), name=f"{prefix}:informer:leases")
            await self.nodes.synced.wait()
            await self.leases.synced.wait()
            self.marker.start(tg)
            tg.create_task(self._no_schedule_worker(), name=f"{prefix}:noschedule")
            tg.create_task(self._tainter(), name=f"{prefix}:tainter")
            self.ready.set()
            while True:
                await self.monitor()
                await self.clock.sleep(self.settings.node_monitor_period)

    async def monitor(self) -> None:
        """One ``monitorNodeHealth`` pass."""
        now = self.clock.now()
        self.renewals.mark(now)
        # taint-based eviction acts on the nodes as observed before this pass's own writes
        observed = [(name, self.nodes.get(name)) for name in self._candidates]
        renewed, expired = self.probes.tick(now, self.settings.node_monitor_grace_period)
        self.marker.retry()
        for name in renewed:
            self._overdue.pop(name, None)
        self._overdue.update(dict.fromkeys(expired))
        for name in list(self._overdue):
            node = self.nodes.get(name)
            if node is None or await self._mark_unknown(node):
                self._overdue.pop(name, None)
        for name, node in observed:
            if node is None:
                self._candidates.pop(name, None)
            else:
                await self._taint_based_eviction(node)
        await self._handle_disruption(now)
        self._taint_wake.set()

    async def _mark_unknown(self, node: Node) -> bool:
        """Post Ready=Unknown for an overdue node; False to retry at the next pass."""
        name = node.metadata.name

        async def attempt() -> bool:
            nonlocal node
            conditions = unknown_conditions(node, self.clock.timestamp())
            if conditions is None:
                return True
            try:
                await self.client.update_status(replace(node, status=replace(node.status, conditions=conditions)))
            except NotFound:
                return True
            except Conflict:
                try:
                    node = await self.client.get("Node", name)
                except ApiError:
                    return False
                cond = node_condition(node, "Ready")
                if (None if cond is None else cond.last_heartbeat_time) != self._beat_seen.get(name, ""):
                    self._beat_seen[name] = None if cond is None else cond.last_heartbeat_time
                    self.probes.renewed(name)  # it posted meanwhile: not overdue after all
                    return True
                raise
            except ApiError:
                return False
            self.counts["markedUnknown"] += 1
            self._count(node, False)
            if ready_status(node) == "True":
                self.marker.mark_node(name)
                ref = ObjectReference(api_version="v1", kind="Node", name=name, uid=node.metadata.uid)
                await self.events.event(ref, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady")
            return True

        try:
            return await retry_on_conflict(MARK_UNKNOWN_RETRY, attempt, clock=self.clock)
        except Conflict:
            return False

    async def _taint_based_eviction(self, node: Node) -> None:
        """Upstream ``processTaintBaseEviction`` on the node as observed."""
        name, status = node.metadata.name, ready_status(node)
        tainter = self._zones[zone_key(node)].tainter
        if status in ("False", "Unknown"):
            want, opposite = (
                (NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE)
                if status == "False"
                else (UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE)
            )
            if _has(node, opposite):
                await swap_node_taints(self.client, self.clock, node, name, [want], [opposite])
            else:
                if not _has(node, want):
                    tainter.remove(name)
                if tainter.add(name):
                    self._taint_wake.set()
        elif status == "True" and await self._mark_reachable(node):
            self._candidates.pop(name, None)

    async def _mark_reachable(self, node: Node) -> bool:
        name = node.metadata.name
        present = [t for t in (UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE) if _has(node, t)]
        if present:
            if not await swap_node_taints(self.client, self.clock, node, name, [], present):
                return False
            self.counts["noExecuteRemoved"] += 1
        self._zones[zone_key(node)].tainter.remove(name)
        return True

    async def _handle_disruption(self, now: float) -> None:
        s = self.settings
        new = {
            key: compute_zone_state(z.ready, z.not_ready, s.unhealthy_zone_threshold)
            for key, z in self._zones.items()
            if z.ready + z.not_ready > 0
        }
        for key in [k for k in self.zone_states if k not in new]:
            del self.zone_states[key]
        for key in new:
            self.zone_states.setdefault(key, INITIAL)
        all_are = all(v == FULL_DISRUPTION for v in new.values())
        all_were = all(v == FULL_DISRUPTION for v in self.zone_states.values())
        if all_are and all_were:
            return
        if all_are:  # every zone fully disrupted: stop tainting, lift the NoExecute taints
            for node in self.nodes.objects():
                await self._mark_reachable(node)
            for key in self.zone_states:
                self._zones[key].tainter.swap_limiter(0.0, now)
                self.zone_states[key] = FULL_DISRUPTION
            return
        if all_were:  # leaving full disruption: every node gets a fresh probe
            self.probes.reset([n for n in self._counted if n in self._has_lease], now)
            self._overdue.clear()
        for key, state in list(self.zone_states.items()):
            if state != new[key] or all_were:
                self._set_limiter(key, new[key], now)
                self.zone_states[key] = new[key]

    def _set_limiter(self, key: str, state: str, now: float) -> None:
        s, zone = self.settings, self._zones[key]
        qps = s.node_eviction_rate
        if state == PARTIAL_DISRUPTION:
            size = zone.ready + zone.not_ready
            qps = s.secondary_node_eviction_rate if size > s.large_cluster_size_threshold else 0.0
        assert state in (NORMAL, PARTIAL_DISRUPTION, FULL_DISRUPTION)
        zone.tainter.swap_limiter(qps, now)

    # --- workers ------------------------------------------------------------------------

    async def _no_schedule_worker(self) -> None:
        while True:
            await self._no_schedule_wake.wait()
            self._no_schedule_wake.clear()
            while self._no_schedule:
                name, _ = self._no_schedule.popitem(last=False)
                node = self.nodes.get(name)
                if node is None:
                    continue
                add, remove = no_schedule_diff(node)
                if (add or remove) and await swap_node_taints(self.client, self.clock, node, name, add, remove):
                    self.counts["noScheduleSwaps"] += 1

    async def _tainter(self) -> None:
        """``doNoExecuteTaintingPass`` whenever a zone queue may move."""
        while True:
            self._taint_wake.clear()
            next_at = await self._taint_pass()
            if next_at is None:
                await self._taint_wake.wait()
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, next_at - self.clock.now())):
                    await self._taint_wake.wait()

    async def _taint_pass(self) -> float | None:
        earliest: float | None = None
        for key in sorted(self._zones):
            tainter = self._zones[key].tainter
            retry = None
            while (name := tainter.take(self.clock.now())) is not None:
                if not await self._taint_no_execute(name):
                    retry = self.clock.now() + _RETRY_PERIOD
                    break
                tainter.done(name)
            nxt = tainter.next_time(self.clock.now())
            if nxt is not None and retry is not None:
                nxt = max(nxt, retry)
            if nxt is not None and (earliest is None or nxt < earliest):
                earliest = nxt
        return earliest

    async def _taint_no_execute(self, name: str) -> bool:
        node = self.nodes.get(name)
        if node is None:
            return True  # gone: nothing to taint
        status = ready_status(node)
        if status == "":
            return False
        if status == "True":
            return True  # Ready again meanwhile
        want, opposite = (
            (NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE)
            if status == "False"
            else (UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE)
        )
        ok = await swap_node_taints(self.client, self.clock, node, name, [want], [opposite])
        if ok:
            self.counts["noExecuteTainted"] += 1
        return ok
