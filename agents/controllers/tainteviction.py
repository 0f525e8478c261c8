"""``TaintEvictionController``: upstream's NoExecute taint manager
(``pkg/controller/tainteviction``) as an agent, client ``controller:tainteviction``,
Events from ``taint-eviction-controller``.

It watches Nodes; for a node with NoExecute taints it watches that node's pods
(``NodePodWatches``) and, for each pod (``processPodOnNode``):

=================================================  ======================================
pod's tolerations                                  eviction
=================================================  ======================================
some NoExecute taint not tolerated                 now
all tolerated, one without ``tolerationSeconds``   never (a scheduled one is cancelled)
tolerated for at most ``s`` seconds               ``s`` after the controller first saw it
                                                   tainted (an earlier schedule is kept)
=================================================  ======================================

(``tolerationSeconds <= 0`` counts as 0; the apiserver's ``DefaultTolerationSeconds``
gives every pod 300 s for ``not-ready`` and ``unreachable``.) The evictions wait in one
heap of deadlines, not one timer per pod; taints removed, a pod deleted or its
tolerations changed cancel or reschedule them. An eviction records a
``TaintManagerEviction`` Event ("Marking for deletion Pod ns/name"), adds the
``DisruptionTarget`` condition (``DeletionByTaintManager``) and deletes the pod with its
own grace period (up to 5 tries), as upstream does. When a node is deleted its taints are
forgotten but evictions already scheduled still fire, as upstream.

It costs nothing while no node has a NoExecute taint: the pods of untainted nodes are
never watched.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.common import NodePodWatches, update_pod_condition
from emulator.base.api.core import Node, Pod, PodCondition, Taint, Toleration
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.meta import ObjectReference
from emulator.base.api.taints import toleration_tolerates_taint
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.client.informer import Informer
from emulator.base.client.retry import Backoff, on_error
from emulator.base.runtime.clock import Clock

__all__ = ["COMPONENT", "TaintEvictionController", "matching_tolerations", "min_toleration_seconds"]

COMPONENT: Final = "taint-eviction-controller"
EVICTION_RETRY: Final = Backoff(steps=5, duration=0.01)
"""Upstream ``deletePodHandler``: five tries 10 ms apart (its loop also waits after the
last failure; ``_evict`` keeps that wait)."""
Key = tuple[str, str]


def matching_tolerations(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> tuple[bool, list[Toleration]]:
    """Upstream ``GetMatchingTolerations``: (all tolerated?, the first toleration of each)."""
    used: list[Toleration] = []
    for taint in taints:
        tol = next((t for t in tolerations if toleration_tolerates_taint(t, taint)), None)
        if tol is None:
            return False, []
        used.append(tol)
    return True, used


def min_toleration_seconds(tolerations: Sequence[Toleration]) -> float:
    """Upstream ``getMinTolerationTime``: 0 with none, -1 (forever) when none has seconds."""
    if not tolerations:
        return 0.0
    best: int | None = None
    for tol in tolerations:
        s = tol.toleration_seconds
        if s is not None:
            if s <= 0:
                return 0.0
            best = s if best is None else min(best, s)
    return -1.0 if best is None else float(best)


def _no_execute(node: Node | None) -> list[Taint]:
    return [] if node is None else [t for t in node.spec.taints if t.effect == "NoExecute"]


@dataclass(slots=True)
class _Work:
    created: float
    fire_at: float
    seq: int


class TaintEvictionController:
    """Evicts pods from NoExecute-tainted nodes; ``await run()`` until cancelled."""

    def __init__(self, client: Client, clock: Clock) -> None:
        self.client = client
        self.clock = clock
        self.events = EventRecorder(client, clock, COMPONENT)
        self.nodes = Informer(client, "Node")
        self.nodes.add_handlers(self._on_node_add, self._on_node_update, self._on_node_delete)
        self.pods = NodePodWatches(client, client.name, self._on_pod, self._on_pod_update, self._on_pod_delete)
        self.ready = asyncio.Event()
        self._tainted: dict[str, list[Taint]] = {}
        self._work: dict[Key, _Work] = {}
        self._heap: list[tuple[float, int, Key]] = []
        self._seq = itertools.count()
        self._wake = asyncio.Event()
        self._tg: asyncio.TaskGroup | None = None
        self.counts = dict.fromkeys(("scheduled", "cancelled", "evicted", "failed"), 0)

    def __repr__(self) -> str:
        return f"<TaintEvictionController tainted={len(self._tainted)} scheduled={len(self._work)} {self.counts}>"

    def statistics(self) -> dict[str, Any]:
        return {**self.counts, "taintedNodes": len(self._tainted), "pending": len(self._work)}

    def scheduled(self) -> dict[Key, float]:
        """Pending evictions: pod key -> when."""
        return {k: w.fire_at for k, w in sorted(self._work.items())}

    # --- nodes --------------------------------------------------------------------------

    def _on_node_add(self, node: Node) -> None:
        self._node_changed(node.metadata.name, node)

    def _on_node_update(self, old: Node, new: Node) -> None:
        if _no_execute(old) != _no_execute(new):
            self._node_changed(new.metadata.name, new)

    def _on_node_delete(self, node: Node) -> None:
        name = node.metadata.name
        self._tainted.pop(name, None)
        self.pods.close(name)

    def _node_changed(self, name: str, node: Node) -> None:
        """Upstream ``handleNodeUpdate``."""
        taints = _no_execute(node)
        now = self.clock.now()
        if not taints:
            self._tainted.pop(name, None)
            for pod in self.pods.pods(name):
                self._cancel(pod)
            self.pods.close(name)
            return
        self._tainted[name] = taints
        if name in self.pods:
            for pod in self.pods.pods(name):
                self._process(pod, taints, now)
        elif self._tg is not None:
            self.pods.open(name)  # its pods arrive through _on_pod

    # --- pods ---------------------------------------------------------------------------

    def _on_pod(self, pod: Pod) -> None:
        taints = self._tainted.get(pod.spec.node_name)
        if taints is not None:
            self._process(pod, taints, self.clock.now())

    def _on_pod_update(self, old: Pod, new: Pod) -> None:
        if old.spec.tolerations != new.spec.tolerations:
            self._on_pod(new)

    def _on_pod_delete(self, pod: Pod) -> None:
        self._cancel(pod)

    def _process(self, pod: Pod, taints: list[Taint], now: float) -> None:
        """Upstream ``processPodOnNode``."""
        key = (pod.metadata.namespace, pod.metadata.name)
        tolerated, used = matching_tolerations(taints, pod.spec.tolerations)
        if not tolerated:
            self._cancel(pod)
            self._add(key, now, now)
            return
        wait = min_toleration_seconds(used)
        if wait < 0:
            self._cancel(pod)
            return
        start, trigger = now, now + wait
        existing = self._work.get(key)
        if existing is not None:
            start = existing.created
            if start + wait < trigger:
                return
            self._cancel(pod)
        self._add(key, start, trigger)

    def _add(self, key: Key, created: float, fire_at: float) -> None:
        seq = next(self._seq)
        self._work[key] = _Work(created, fire_at, seq)
        heapq.heappush(self._heap, (fire_at, seq, key))
        self.counts["scheduled"] += 1
        self._wake.set()

    def _cancel(self, pod: Pod) -> None:
        key = (pod.metadata.namespace, pod.metadata.name)
        if self._work.pop(key, None) is not None:
            self.counts["cancelled"] += 1
            self._event(key, f"Cancelling deletion of Pod {key[0]}/{key[1]}")

    def _event(self, key: Key, message: str) -> None:
        if self._tg is None:
            return
        ref = ObjectReference(api_version="v1", kind="Pod", namespace=key[0], name=key[1])
        coro = self.events.event(ref, "Normal", "TaintManagerEviction", message)
        self._tg.create_task(coro, name=f"{self.client.name}:event:{key[0]}/{key[1]}")

    # --- running ------------------------------------------------------------------------

    async def run(self) -> None:
        prefix = self.client.name
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            self.pods.start(tg)
            tg.create_task(self.nodes.run(), name=f"{prefix}:informer:nodes")
            await self.nodes.synced.wait()
            for name in sorted(self._tainted):
                self.pods.open(name)
            self.ready.set()
            await self._fire_loop()

    async def _fire_loop(self) -> None:
        heap = self._heap
        while True:
            self._wake.clear()
            now = self.clock.now()
            while heap and heap[0][0] <= now:
                _, seq, key = heapq.heappop(heap)
                work = self._work.get(key)
                if work is None or work.seq != seq:
                    continue  # cancelled or rescheduled
                del self._work[key]
                assert self._tg is not None
                self._tg.create_task(self._evict(key), name=f"{self.client.name}:evict:{key[0]}/{key[1]}")
            if not heap:
                await self._wake.wait()
                continue
            try:
                async with asyncio.timeout(heap[0][0] - now):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def _evict(self, key: Key) -> None:
        """Upstream ``deletePodHandler``: the Event, then condition + delete, 5 tries."""
        ns, name = key
        await self.events.event(
            ObjectReference(api_version="v1", kind="Pod", namespace=ns, name=name),
            "Normal",
            "TaintManagerEviction",
            f"Marking for deletion Pod {ns}/{name}",
        )

        async def attempt() -> None:
            pod: Pod = await self.client.get("Pod", name, ns)
            cond = PodCondition(
                type="DisruptionTarget",
                status="True",
                reason="DeletionByTaintManager",
                message="Taint manager: deleting due to NoExecute taint",
                observed_generation=pod.metadata.generation,
            )
            status = update_pod_condition(pod.status, cond, self.clock.timestamp())
            if status is not None:
                await self.client.update_status(replace(pod, status=status))
            await self.client.delete("Pod", name, ns)

        try:
            await on_error(EVICTION_RETRY, _retriable, attempt, clock=self.clock)
        except NotFound:
            return
        except ApiError:
            await self.clock.sleep(EVICTION_RETRY.duration)  # upstream sleeps after the last try too
            self.counts["failed"] += 1
            return
        self.counts["evicted"] += 1


def _retriable(err: Exception) -> bool:
    return isinstance(err, ApiError) and not isinstance(err, NotFound)
