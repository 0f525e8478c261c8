"""``NotReadyMarker``: the node lifecycle controller's ``MarkPodsNotReady``
(upstream ``pkg/controller/util/node/controller_utils.go``, called from
``pkg/controller/nodelifecycle/node_lifecycle_controller.go``).

Upstream marks the pods of a node not Ready on two occasions, and so does this:

==================================================  =======================================
occasion                                            pods marked
==================================================  =======================================
``monitorNodeHealth`` turns a node's Ready from     every pod bound to the node (a failed
True to Unknown (the ``NodeNotReady`` Event)        write is retried at the next pass:
                                                    upstream's ``nodesToRetry``)
``processPod``: a pod is bound to a node whose      that pod
Ready is not True
==================================================  =======================================

Marking a pod sets the status of its ``Ready`` condition to False (its reason and message
kept, ``lastTransitionTime`` now: ``UpdatePodCondition``), one ``updateStatus``, then a
``Warning`` Event ``NodeNotReady`` "Node is not ready" on the pod. A pod without a Ready
condition, or already not Ready, is left alone. ``ContainersReady`` and the container
statuses are not touched (upstream neither). The kubelet, once it reaches the API server
again, writes its own Ready back (``agents/kubelet``: its status manager's reconcile).

The pods are seen through ``NodePodWatches`` opened for the nodes whose Ready is not True
only (closed once Ready again), so healthy nodes cost nothing. A pod that the first list
of such a watch finds was bound before the node went not Ready: only the transition marks
it, as upstream, where ``processPod`` runs on a change of ``spec.nodeName`` only.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Final

from msgspec.structs import replace

from agents.controllers.common import NodePodWatches, update_pod_condition
from emulator.base.api.core import Pod
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.api.meta import ObjectReference
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.client.retry import Backoff, retry_on_conflict
from emulator.base.runtime.clock import Clock

__all__ = ["MARK_RETRY", "NotReadyMarker", "mark_not_ready"]

MARK_RETRY: Final = Backoff(steps=5)
"""A Conflict re-reads the pod and tries again, five tries back to back."""

Key = tuple[str, str]


def mark_not_ready(pod: Pod, now: str) -> Pod | None:
    """``pod`` with its Ready condition False, or None when there is nothing to change."""
    ready = next((c for c in pod.status.conditions if c.type == "Ready"), None)
    if ready is None:
        return None
    status = update_pod_condition(pod.status, replace(ready, status="False"), now)
    return None if status is None else replace(pod, status=status)


class NotReadyMarker:
    """Marks the pods of not-Ready nodes not Ready; ``start`` it in the owner's task group."""

    def __init__(self, client: Client, clock: Clock, events: EventRecorder) -> None:
        self.client = client
        self.clock = clock
        self.events = events
        self.pods = NodePodWatches(client, f"{client.name}:notready", on_add=self._on_pod_add)
        self._unready: dict[str, None] = {}
        self._nodes: OrderedDict[str, None] = OrderedDict()
        self._queued: OrderedDict[Key, Pod] = OrderedDict()
        self._retry: dict[str, None] = {}
        self._wake = asyncio.Event()
        self.marked = 0

    def __repr__(self) -> str:
        return f"<NotReadyMarker watched={len(self._unready)} marked={self.marked}>"

    def start(self, tg: asyncio.TaskGroup) -> None:
        self.pods.start(tg)
        tg.create_task(self._worker(), name=f"{self.client.name}:markpods")

    # --- what the controller tells it ----------------------------------------------------

    def node_ready(self, name: str, status: str) -> None:
        """The node's Ready status as last observed ("" when it has none, "" for a deletion)."""
        if status in ("False", "Unknown"):
            if name not in self._unready:
                self._unready[name] = None
                self.pods.open(name)
        elif name in self._unready:
            del self._unready[name]
            self.pods.close(name)
            self._nodes.pop(name, None)
            self._retry.pop(name, None)

    def mark_node(self, name: str) -> None:
        """The controller turned the node's Ready from True: mark every pod on it."""
        self.node_ready(name, "Unknown")
        self._nodes[name] = None
        self._wake.set()

    def retry(self) -> None:
        """A ``monitorNodeHealth`` pass: nodes whose marking failed are marked again."""
        for name in self._retry:
            if name in self._unready:
                self._nodes[name] = None
                self._wake.set()
        self._retry.clear()

    def _on_pod_add(self, pod: Pod) -> None:
        node = pod.spec.node_name
        if node in self._unready and self.pods.listed(node):
            self._queued[(pod.metadata.namespace, pod.metadata.name)] = pod
            self._wake.set()

    # --- the worker ----------------------------------------------------------------------

    async def _worker(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._nodes or self._queued:
                if self._nodes:
                    name, _ = self._nodes.popitem(last=False)
                    await self.pods.synced(name)
                    if name not in self._unready:
                        continue
                    results = [await self._mark(pod) for pod in self.pods.pods(name)]
                    if not all(results):
                        self._retry[name] = None
                else:
                    _, pod = self._queued.popitem(last=False)
                    if pod.spec.node_name in self._unready:
                        await self._mark(pod)

    async def _mark(self, pod: Pod) -> bool:
        """Mark one pod; False when a write failed (the node is tried again later)."""
        ns, name, uid = pod.metadata.namespace, pod.metadata.name, pod.metadata.uid
        current: Pod | None = pod

        async def attempt() -> Pod | None:
            nonlocal current
            if current is None:
                current = await self.client.get("Pod", name, ns)
            assert current is not None
            if current.metadata.uid != uid:
                return None
            marked = mark_not_ready(current, self.clock.timestamp())
            if marked is None:
                return None
            try:
                written: Pod = await self.client.update_status(marked)
            except Conflict:
                current = None
                raise
            return written

        try:
            written = await retry_on_conflict(MARK_RETRY, attempt, clock=self.clock)
        except NotFound:
            return True
        except ApiError:
            return False
        if written is None:
            return True
        self.marked += 1
        ref = ObjectReference(api_version="v1", kind="Pod", namespace=ns, name=name, uid=uid)
        await self.events.event(ref, "Warning", "NodeNotReady", "Node is not ready")
        return True
