"""Scale-down actuation: taint, drain, delete (``core/scaledown/actuation/actuator.go``,
``drain.go``, ``delete_in_batch.go``, ``utils/taints/taints.go``, 1.34).

One task per node (``Actuator.start``):

1. taint ``ToBeDeletedByClusterAutoscaler=<unix seconds>:NoSchedule`` (a read-modify-write,
   again on Conflict); Event ``ScaleDown`` "marked the node as toBeDeleted/unschedulable" on the
   node, and on the status ConfigMap ``ScaleDownEmpty`` "Scale-down: removing empty node
   \"<n>\"" or ``ScaleDown`` "Scale-down: removing node <n>, utilization: <u>, pods to
   reschedule: <ns/name,...>" (``<u>`` the ``utilization.Info`` as Go's ``%v`` prints it:
   ``{0.45 0.125 0 0 cpu 0.45}``);
2. empty node: wait ``nodeDeleteDelayAfterTaint`` (5 s). Node to drain: each pod to move gets
   Event ``ScaleDown`` "deleting pod for node scale down" and is evicted through the API
   (grace: its own, capped at ``maxGracefulTerminationSec``); a 429 (a PDB refuses) is
   retried every ``EVICTION_RETRY`` until ``maxPodEvictionTime`` (2 min) passed, then the
   deletion fails; then the pods must be gone within their grace plus
   ``PodEvictionHeadroom`` (30 s), polled every 5 s;
3. ``NodeGroup.delete_node``; Event ``ScaleDown`` "nodes removed by cluster autoscaler" on the
   node, and "Scale-down: node <n> removed with drain" (``ScaleDown``) or "Scale-down: empty
   node <n> removed" (``ScaleDownEmpty``) on the ConfigMap.

A failure removes the taint, records ``ScaleDownFailed`` on the node and calls ``on_failure``
(the loop's ``lastScaleDownFailTime``: ``scaleDownDelayAfterFailure``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

from msgspec.structs import replace

from agents.autoscaler.clusterautoscaler.options import TO_BE_DELETED_TAINT, AutoscalingOptions, NodeGroup
from agents.autoscaler.clusterautoscaler.scaledown import Removal
from emulator.base.api.core import Node, Pod, Taint
from emulator.base.api.errors import ApiError, Conflict, NotFound, TooManyRequests
from emulator.base.api.meta import reference_to
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.runtime.clock import Clock, calendar_epoch

__all__ = ["EVICTION_RETRY", "POD_EVICTION_HEADROOM", "TO_BE_DELETED_TAINT", "Actuator"]

EVICTION_RETRY: Final = 10.0
POD_EVICTION_HEADROOM: Final = 30.0
POLL: Final = 5.0


class DeletionFailed(Exception):
    pass


class Actuator:
    def __init__(
        self,
        client: Client,
        clock: Clock,
        options: AutoscalingOptions,
        events: EventRecorder,
        log_event: Callable[[str, str, str], Awaitable[None]],
        pod_present: Callable[[Pod], bool],
        counters: dict[str, int],
    ) -> None:
        self.client = client
        self.clock = clock
        self.options = options
        self.events = events
        self.log_event = log_event
        self.pod_present = pod_present
        self.counters = counters
        self.deleting: dict[str, bool] = {}
        """Node -> drained, for the deletions in progress."""
        self.tasks: set[asyncio.Task[None]] = set()

    def start(
        self, tg: asyncio.TaskGroup, removal: Removal, group: NodeGroup, drain: bool, on_failure: Callable[[], None]
    ) -> None:
        self.deleting[removal.name] = drain
        task = tg.create_task(
            self._delete(removal, group, drain, on_failure), name=f"{self.client.name}:delete:{removal.name}"
        )
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _taint(self, name: str, add: bool) -> Node | None:
        for _ in range(10):
            try:
                node: Node = await self.client.get("Node", name)
            except NotFound:
                return None
            taints = [t for t in node.spec.taints if t.key != TO_BE_DELETED_TAINT]
            if add:
                stamp = str(int(calendar_epoch().timestamp() + self.clock.now()))
                taints.append(Taint(key=TO_BE_DELETED_TAINT, value=stamp, effect="NoSchedule"))
            try:
                return await self.client.update(replace(node, spec=replace(node.spec, taints=taints)))
            except Conflict:
                continue
        raise DeletionFailed("failed to mark the node as toBeDeleted/unschedulable: too many conflicts")

    async def _delete(self, r: Removal, group: NodeGroup, drain: bool, on_failure: Callable[[], None]) -> None:
        name = r.name
        try:
            node = await self._taint(name, True)
            if node is None:
                return
            ref = reference_to(node)
            await self.events.event(ref, "Normal", "ScaleDown", "marked the node as toBeDeleted/unschedulable")
            self.counters["scaleDowns"] += 1
            if drain:
                pods = ",".join(f"{p.metadata.namespace}/{p.metadata.name}" for p in r.pods)
                await self.log_event(
                    "ScaleDown",
                    f"Scale-down: removing node {name}, utilization: {r.util_info()}, pods to reschedule: {pods}",
                    "Normal",
                )
                await self._drain(r)
            else:
                await self.log_event("ScaleDownEmpty", f'Scale-down: removing empty node "{name}"', "Normal")
                await self.clock.sleep(self.options.node_delete_delay_after_taint)
            await self.events.event(ref, "Normal", "ScaleDown", "nodes removed by cluster autoscaler")
            await group.delete_node(name)
            if drain:
                await self.log_event("ScaleDown", f"Scale-down: node {name} removed with drain", "Normal")
            else:
                await self.log_event("ScaleDownEmpty", f"Scale-down: empty node {name} removed", "Normal")
        except (DeletionFailed, ApiError) as err:
            on_failure()
            try:
                node = await self._taint(name, False)
                if node is not None:
                    await self.events.event(reference_to(node), "Warning", "ScaleDownFailed", str(err))
            except (DeletionFailed, ApiError):
                pass
        finally:
            self.deleting.pop(name, None)

    async def _evict(self, pod: Pod) -> None:
        grace = pod.spec.termination_grace_period_seconds
        grace = min(30 if grace is None else grace, self.options.max_graceful_termination_sec)
        deadline = self.clock.now() + self.options.max_pod_eviction_time
        ref = reference_to(pod)
        await self.events.event(ref, "Normal", "ScaleDown", "deleting pod for node scale down")
        while True:
            try:
                await self.client.evict(
                    pod.metadata.namespace, pod.metadata.name, grace_period_seconds=grace, uid=pod.metadata.uid
                )
                self.counters["podsDisrupted"] += 1
                return
            except NotFound:
                return
            except TooManyRequests as err:
                if self.clock.now() + EVICTION_RETRY > deadline:
                    await self.events.event(ref, "Warning", "ScaleDownFailed", "failed to delete pod for ScaleDown")
                    raise DeletionFailed(f"failed to drain the node, aborting ScaleDown: {err.message}") from None
                await self.clock.sleep(EVICTION_RETRY)

    async def _drain(self, r: Removal) -> None:
        for pod in r.pods:
            await self._evict(pod)
        longest = max((p.spec.termination_grace_period_seconds or 30 for p in r.pods), default=0)
        deadline = self.clock.now() + min(longest, self.options.max_graceful_termination_sec) + POD_EVICTION_HEADROOM
        while any(self.pod_present(p) for p in r.pods):
            if self.clock.now() >= deadline:
                raise DeletionFailed("failed to drain the node, aborting ScaleDown: pods remaining after timeout")
            await self.clock.sleep(POLL)
