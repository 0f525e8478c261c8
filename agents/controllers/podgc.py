"""``PodGCController``: upstream's pod garbage collector (``pkg/controller/podgc``) as an
agent, client ``controller:podgc``.

Every ``gcCheckPeriod`` (20 s) it runs, as upstream's ``gc``:

- ``gcTerminated`` (when ``terminatedPodGCThreshold`` > 0, default 12,500 as upstream's
  ``--terminated-pod-gc-threshold``): when more pods than that are terminated (phase
  Succeeded or Failed), the excess is deleted, evicted ones first, then the oldest by
  creation timestamp (then name, namespace);
- ``gcTerminating``: terminating pods on nodes that are not Ready *and* carry the
  ``node.kubernetes.io/out-of-service`` taint are force-deleted (oldest first);
- ``gcOrphaned``: pods bound to a node that no longer exists. At every pass, each missing
  node with pods on it is quarantined for ``quarantineTime`` (40 s) unless a quarantine of
  it is still running (upstream's ``nodeQueue.AddAfter``: the earlier end is kept). At the
  first pass after a quarantine ends, if a ``get`` still says NotFound, the node's pods get
  phase Failed and the ``DisruptionTarget`` condition (``DeletionByPodGC``, "PodGC: node no
  longer exists") and are deleted with grace 0. That pass has already quarantined the node
  again (its pods were there as it started), so a failed mark or ``get`` is retried 40 s
  later, and pods bound there since are collected then.

Force deletion (``markFailedAndDeletePod``): a pod not yet Succeeded or Failed is first
marked Failed by a status PATCH (upstream ``PatchPodStatus``: the UID as precondition, no
resourceVersion, so it never conflicts with another writer; ``status.observedGeneration``
and the condition's are the pod's generation), then deleted with grace period 0. A failed
PATCH (the name now holds another pod, an API error) leaves the pod undeleted until a later
pass, as upstream's ``gc`` does: the next one for ``gcTerminating`` and ``gcTerminated``,
the node's next check (40 s) for ``gcOrphaned``.

``counts`` (``statistics()``) counts pods collected, per reason, and errors: a pod found gone
(NotFound on the PATCH or the delete) counts as collected, not as an error, since what
``gc`` wanted is done. These are not upstream's metrics (``DeletingPodsTotal`` counts every
attempt, ``DeletingPodsErrorTotal`` every error, NotFound included).

It watches Nodes, plus the pods of the nodes that matter only (deleted ones, and
out-of-service ones), through ``NodePodWatches``: a full pod watch would cost as much
as the scheduler's own in a large run. So it knows of orphans on nodes it saw deleted,
and, from one list of every pod at start, on nodes missing then; a pod later bound to a
node name that never existed is not collected. Terminated pods are known from two pod
watches filtered on ``status.phase`` (Succeeded, Failed): a terminal phase is final, so only
terminated pods ever reach them. Left out: ``gcUnscheduledTerminating`` (the emulated API
server removes an unbound pod at once).

The deletion order (``TerminatedOrder``) is kept as the terminated pods arrive, in a heap
the informers' handlers feed, rather than sorted at every pass as upstream does: the same
pods are deleted in the same order, and a pass costs what it deletes, not a sort of 12,500
pods every 20 s.

Memory: the terminated-pod informers hold at most the threshold plus one ``gcCheckPeriod`` of
newly terminated pods (every pass deletes the excess); the order's heap at most twice as many
entries as they hold; the node maps hold nodes.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.common import TAINT_NODE_OUT_OF_SERVICE, NodePodWatches, node_condition
from emulator.base.api.core import Node, Pod, PodCondition
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from emulator.base.runtime.clock import Clock

__all__ = ["DEFAULT_TERMINATED_POD_GC_THRESHOLD", "ORPHAN_CONDITION", "PodGCController", "PodGCSettings"]

DEFAULT_TERMINATED_POD_GC_THRESHOLD: Final = 12_500
"""kube-controller-manager's ``--terminated-pod-gc-threshold`` default."""

ORPHAN_CONDITION: Final = PodCondition(
    type="DisruptionTarget", status="True", reason="DeletionByPodGC", message="PodGC: node no longer exists"
)
_TERMINAL: Final = ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True, kw_only=True)
class PodGCSettings:
    gc_check_period: float = 20.0
    quarantine_time: float = 40.0
    terminated_pod_gc_threshold: int = DEFAULT_TERMINATED_POD_GC_THRESHOLD
    """Upstream ``--terminated-pod-gc-threshold``; 0 turns ``gcTerminated`` off."""


def _out_of_service(node: Node) -> bool:
    """Upstream: not Ready and tainted ``node.kubernetes.io/out-of-service``."""
    ready = node_condition(node, "Ready")
    return (ready is None or ready.status != "True") and any(
        t.key == TAINT_NODE_OUT_OF_SERVICE for t in node.spec.taints
    )


def _evicted_then_oldest(pod: Pod) -> tuple[bool, str, str]:
    """Upstream ``byEvictionAndCreationTimestamp``: evicted first, then oldest, then name."""
    return (pod.status.reason != "Evicted", pod.metadata.creation_timestamp or "", pod.metadata.name)


GCKey = tuple[bool, str, str, str]


def _gc_key(pod: Pod) -> GCKey:
    """``_evicted_then_oldest`` then the namespace: one pod's place in the deletion order."""
    meta = pod.metadata
    return (pod.status.reason != "Evicted", meta.creation_timestamp or "", meta.name, meta.namespace)


class TerminatedOrder:
    """The terminated pods in ``gcTerminated``'s deletion order, kept as they arrive.

    Upstream sorts every terminated pod at each pass (12,500 of them at the default threshold,
    every 20 s); here the terminated informers' handlers push each pod's ``_gc_key`` onto a
    heap, and a pass pops only what it deletes. Entries are checked when popped (a pod deleted,
    replaced or re-keyed since leaves a stale entry, skipped then), and the heap is rebuilt from
    the stores when stale entries outnumber the pods (a run below the threshold never pops).
    ``first(n)`` is the first ``n`` pods of the sorted stores, as the full sort would give.
    """

    __slots__ = ("_heap", "_stores")

    def __init__(self, stores: Sequence[Mapping[tuple[str, str], Pod]]) -> None:
        self._stores = stores
        self._heap: list[GCKey] = [_gc_key(p) for store in stores for p in store.values()]
        heapq.heapify(self._heap)

    def __len__(self) -> int:
        return sum(map(len, self._stores))  # (at every push: no generator's frames)

    def add(self, pod: Pod) -> None:
        heap = self._heap
        heapq.heappush(heap, _gc_key(pod))
        if len(heap) > 64 and len(heap) > 2 * len(self):
            self._heap = [_gc_key(p) for store in self._stores for p in store.values()]
            heapq.heapify(self._heap)

    def update(self, old: Pod, new: Pod) -> None:
        if _gc_key(new) != _gc_key(old):
            self.add(new)

    def _current(self, key: GCKey) -> Pod | None:
        name_key = (key[3], key[2])
        for store in self._stores:
            pod = store.get(name_key)
            if pod is not None and _gc_key(pod) == key:
                return pod
        return None

    def first(self, n: int) -> list[Pod]:
        """The first ``n`` pods in deletion order (fewer if there are fewer); they stay."""
        heap = self._heap
        taken: list[Pod] = []
        keys: list[GCKey] = []
        while heap and len(taken) < n:
            key = heapq.heappop(heap)
            if keys and keys[-1] == key:
                continue  # the same pod pushed twice (re-keyed back, or re-added)
            pod = self._current(key)
            if pod is not None:
                taken.append(pod)
                keys.append(key)
        for key in keys:
            heapq.heappush(heap, key)
        return taken


class PodGCController:
    """Deletes orphaned and out-of-service terminating pods; ``await run()`` until cancelled."""

    def __init__(self, client: Client, clock: Clock, settings: PodGCSettings | None = None) -> None:
        self.client = client
        self.clock = clock
        self.settings = settings or PodGCSettings()
        self.nodes = Informer(client, "Node")
        self.nodes.add_handlers(self._on_node, lambda _old, new: self._on_node(new), self._on_node_delete)
        self.pods = NodePodWatches(client, client.name)
        self.ready = asyncio.Event()
        self.missing: dict[str, None] = {}
        """Nodes seen deleted (or absent at start) whose pods are watched."""
        self.quarantine: dict[str, float] = {}
        """Missing node -> when its quarantine ends."""
        self._out_of_service: dict[str, None] = {}
        self.terminated: list[Informer] = []
        """The Succeeded and the Failed pods (none when ``gcTerminated`` is off)."""
        if self.settings.terminated_pod_gc_threshold > 0:
            self.terminated = [Informer(client, "Pod", fields={"status.phase": phase}) for phase in _TERMINAL]
        self.order = TerminatedOrder([informer.store for informer in self.terminated])
        for informer in self.terminated:
            informer.add_handlers(self.order.add, self.order.update)
        self.counts = dict.fromkeys(("terminated", "orphaned", "terminating", "errors"), 0)

    def __repr__(self) -> str:
        return f"<PodGCController missing={len(self.missing)} quarantined={len(self.quarantine)} {self.counts}>"

    def statistics(self) -> dict[str, Any]:
        return {**self.counts, "missingNodes": len(self.missing)}

    # --- nodes --------------------------------------------------------------------------

    def _on_node(self, node: Node) -> None:
        name = node.metadata.name
        if name in self.missing:
            del self.missing[name]
            self.quarantine.pop(name, None)
            self.pods.close(name)
        if _out_of_service(node):
            self._out_of_service[name] = None
            self.pods.open(name)
        elif name in self._out_of_service:
            del self._out_of_service[name]
            self.pods.close(name)

    def _on_node_delete(self, node: Node) -> None:
        name = node.metadata.name
        self._out_of_service.pop(name, None)
        self.missing[name] = None
        self.pods.open(name)

    # --- running ------------------------------------------------------------------------

    async def run(self) -> None:
        prefix = self.client.name
        async with asyncio.TaskGroup() as tg:
            self.pods.start(tg)
            tg.create_task(self.nodes.run(), name=f"{prefix}:informer:nodes")
            for informer in self.terminated:
                phase = informer.fields["status.phase"].lower()
                tg.create_task(informer.run(), name=f"{prefix}:informer:pods-{phase}")
            await self.nodes.synced.wait()
            for informer in self.terminated:
                await informer.synced.wait()
            await self._find_missing_nodes()
            self.ready.set()
            while True:
                await self.gc()
                await self.clock.sleep(self.settings.gc_check_period)

    async def _find_missing_nodes(self) -> None:
        """One list of every pod at start: nodes that pods name but that do not exist."""
        try:
            pods, _ = await self.client.list("Pod")
        except ApiError:
            return
        for pod in pods:
            node = pod.spec.node_name
            if node and self.nodes.get(node) is None and node not in self.missing:
                self.missing[node] = None
                self.pods.open(node)
        for node in self.missing:
            await self.pods.synced(node)

    async def gc(self) -> None:
        """One pass: ``gcTerminated``, ``gcTerminating`` then ``gcOrphaned``, on the missing
        nodes that have pods as the pass starts (upstream's one pod listing)."""
        listed = [name for name in self.missing if self.pods.pods(name)]
        await self._gc_terminated()
        now = self.clock.now()
        terminating = [p for n in self._out_of_service for p in self.pods.pods(n) if p.metadata.deletion_timestamp]
        for pod in sorted(terminating, key=_evicted_then_oldest):
            await self._mark_failed_and_delete(pod, None, "terminating")
        await self._gc_orphaned(listed, now)

    async def _gc_orphaned(self, listed: list[str], now: float) -> None:
        """Upstream ``gcOrphaned``, in its order. The quarantines that have ended left the
        delaying queue's wait before this pass (``until <= now``); then every missing node of
        ``listed`` is quarantined (``AddAfter``: a quarantine still running keeps its earlier
        end), the ended ones included, so a node whose check or marks fail below is checked
        again ``quarantine_time`` later; then each ended node is checked by a ``get`` and the
        pods of those NotFound are marked Failed and deleted."""
        ended = [name for name, until in self.quarantine.items() if until <= now]
        for name in ended:
            del self.quarantine[name]
        until = now + self.settings.quarantine_time
        for name in listed:
            if name in self.missing:  # (not back during the pass's awaits)
                self.quarantine.setdefault(name, until)
        deleted: list[str] = []
        for name in ended:
            try:
                await self.client.get("Node", name)
            except NotFound:
                deleted.append(name)
            except ApiError:
                self.counts["errors"] += 1
        for name in deleted:
            for pod in self.pods.pods(name):
                await self._mark_failed_and_delete(pod, ORPHAN_CONDITION, "orphaned")

    async def _gc_terminated(self) -> None:
        """Upstream ``gcTerminated``: delete the terminated pods past the threshold."""
        if not self.terminated:
            return
        excess = len(self.order) - self.settings.terminated_pod_gc_threshold
        if excess <= 0:
            return
        for pod in self.order.first(excess):
            await self._mark_failed_and_delete(pod, None, "terminated")

    async def _mark_failed_and_delete(self, pod: Pod, condition: PodCondition | None, why: str) -> None:
        """Upstream ``markFailedAndDeletePodWithCondition``: a pod not yet terminal is first
        marked Failed (with ``condition``) by one status PATCH (``failed_patch``); if that
        fails, the pod is left as it is (counted in ``errors``) and tried again at a later
        pass, as upstream returns the error before its delete. Then a delete with grace 0."""
        ns, name = pod.metadata.namespace, pod.metadata.name
        try:
            if pod.status.phase not in _TERMINAL:
                mark = failed_patch(pod, condition, self.clock.timestamp())
                if await self.client.patch_status("Pod", name, ns, mark) is None:
                    raise NotFound(f'pods "{name}" not found')  # gone meanwhile: as the delete's
            await self.client.delete("Pod", name, ns, grace_period_seconds=0)
        except NotFound:
            pass
        except ApiError:
            self.counts["errors"] += 1
            return
        self.counts[why] += 1


def failed_patch(pod: Pod, condition: PodCondition | None, now: str) -> Callable[[Pod], Pod]:
    """Upstream ``PatchPodStatus`` of ``pod`` (as listed) marked Failed: a strategic-merge patch
    of the difference (``phase: Failed``, ``observedGeneration`` and ``condition``, merged by
    type, its transition time computed against the listed status at ``now`` as
    ``UpdatePodCondition`` does), with the pod's UID as its precondition (a Conflict if the
    name now holds another pod) and no resourceVersion: it applies to the pod as the server
    holds it and never meets a stale copy.

    ``observedGeneration``, of the status and of the condition, is the listed pod's
    ``metadata.generation`` (1.34's PodObservedGenerationTracking, beta and on:
    ``GetPodObservedGenerationIfEnabled`` and ``GetPodObservedGenerationIfEnabledOnCondition``);
    the status's is in the patch only when the listed status has another."""
    uid = pod.metadata.uid
    generation = pod.metadata.generation
    observed = generation if pod.status.observed_generation != generation else None
    entry: PodCondition | None = None
    if condition is not None:
        # ``UpdatePodCondition`` puts the condition in the new status whether or not it counts
        # as a change (its answer, which leaves ``observedGeneration`` out, is ignored here):
        # the patch carries it when it differs from the listed one in any field
        listed = next((c for c in pod.status.conditions if c.type == condition.type), None)
        since = listed.last_transition_time if listed is not None and listed.status == condition.status else now
        marked = replace(condition, observed_generation=generation, last_transition_time=since)
        if marked != listed:
            entry = marked

    def apply(current: Pod) -> Pod:
        held = current.metadata.uid
        if held != uid:
            raise Conflict.uid_precondition(uid, held)
        status = replace(current.status, phase="Failed")
        if observed is not None:
            status = replace(status, observed_generation=observed)
        if entry is not None:  # merged by type: replaced in place, else appended
            conditions = status.conditions
            if any(c.type == entry.type for c in conditions):
                conditions = [entry if c.type == entry.type else c for c in conditions]
            else:
                conditions = [*conditions, entry]
            status = replace(status, conditions=conditions)
        return replace(current, status=status)

    return apply
