"""The scheduling failure handler (upstream ``handleSchedulingFailure`` in ``schedule_one.go``,
v1.34) and what the scheduler's Events about a pod point at.

What this module owns: ``FailureHandler``, the base of the ``Scheduler`` agent's cycles that
requeues a pod whose attempt failed and reports it, and the helpers both cycles share with it
(``_spawn`` for the report tasks, ``settle`` for a rate-limited client's PATCH, ``pod_reference``).

Failure handling (``handle_failure``): rejected pods remember their rejecting plugins (they
drive queueing hints); the pod gets ``PodScheduled=False`` with reason ``Unschedulable`` (or
``SchedulerError``) and upstream's ``0/N nodes are available: ...`` message, plus a
``FailedScheduling`` Event (aggregated: a repeat bumps the count); success gives a
``Scheduled`` Event. Those API writes run as tasks: the cycle itself does not wait on them. With a rate-limited client
the status PATCH is awaited by the failing cycle instead (``status_patches.py``, as v1.34 does).

What it does not own: deciding that an attempt failed or why (``schedule_one.py``,
``binding_cycle.py``), where the requeued pod goes (the queue's
``add_unschedulable_if_not_present``), nor the PATCH itself (``status_patches.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from agents.scheduler.framework.diagnosis import FitError
from agents.scheduler.framework.types import PodInfo, Status
from agents.scheduler.queue import QueuedPodInfo
from agents.scheduler.status_patches import failure_patch, with_condition
from emulator.base.api.core import Pod
from emulator.base.api.meta import ObjectReference

if TYPE_CHECKING:
    from agents.scheduler.queue import SchedulingQueue
    from emulator.base.client.client import Client
    from emulator.base.client.events import EventRecorder
    from emulator.base.client.informer import Informer
    from emulator.base.runtime.clock import Clock

__all__ = ["FailureHandler", "pod_reference", "settle"]


def pod_reference(pod: Pod) -> ObjectReference:
    """The ``regarding`` object of the scheduler's Events about ``pod``: upstream's
    ``reference.GetReference``, resourceVersion included (so it is part of the series key)."""
    meta = pod.metadata
    return ObjectReference(
        api_version="v1",
        kind="Pod",
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resource_version,
    )


async def settle(patch: Coroutine[Any, Any, None] | None) -> None:
    """Await the failure PATCH a rate-limited scheduler makes in the failing task (if any)."""
    if patch is not None:
        await patch


class FailureHandler:
    """Requeue and report a failed attempt (a base of the ``Scheduler`` agent's cycles: the
    agent builds the state declared here)."""

    name: str
    client: Client
    clock: Clock
    events: EventRecorder
    queue: SchedulingQueue
    pods: Informer
    _tg: asyncio.TaskGroup | None

    def _spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        assert self._tg is not None, "the scheduler is not running"
        self._tg.create_task(coro, name=f"{self.name}:{name}")

    def handle_failure(
        self,
        qpi: QueuedPodInfo,
        status: Status,
        fit: FitError | None,
        nominated: str | None = None,
    ) -> Coroutine[Any, Any, None] | None:
        """Upstream ``handleSchedulingFailure``: requeue, then report on the pod (in a task); with
        a rate-limited client, the status PATCH the caller must await (None otherwise).

        ``nominated``: the node to nominate, "" to clear the nomination, None to keep it."""
        pod = qpi.pod
        reason = "Unschedulable" if status.is_rejected() else "SchedulerError"
        if fit is not None:
            qpi.unschedulable_plugins = set(fit.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit.diagnosis.pending_plugins)
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        current: Pod | None = self.pods.get(pod.metadata.name, pod.metadata.namespace)
        if current is not None and current.metadata.uid == pod.metadata.uid and not current.spec.node_name:
            qpi.pod_info = PodInfo(current)
            self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)
        self.queue.done(pod.metadata.uid)
        if nominated:
            self.queue.add_nominated_pod(qpi.pod_info, nominated)
        elif nominated == "":
            self.queue.delete_nominated_pod_if_exists(pod)
        message = status.message()  # a rejection's status carries ``str(fit)`` (every caller)
        where = f"{pod.metadata.namespace}/{pod.metadata.name}"
        # Upstream ``updatePod``: no request at all when the pod as popped already carries this
        # condition and nomination (``UpdatePodCondition`` and the nominatedNodeName check).
        changed = with_condition(pod, reason, message, nominated, "") is not None
        if self.client.rate_limiter is None:
            self._spawn(self._report_failure(pod, reason, message, nominated, changed), f"status:{where}")
            return None
        # A rate-limited client: the caller awaits one PATCH, as v1.34 does (status_patches.py).
        event = self.events.event(pod_reference(pod), "Warning", "FailedScheduling", message, action="Scheduling")
        self._spawn(event, f"event:{where}")
        return failure_patch(self.client, self.clock, pod, reason, message, nominated) if changed else None

    async def _report_failure(self, pod: Pod, reason: str, message: str, nominated: str | None, changed: bool) -> None:
        """The FailedScheduling Event, then (``changed``) the pod's PodScheduled=False condition
        and nomination as one status PATCH (upstream ``util.PatchPodStatus``: computed against
        the object as the server holds it, never a Conflict; API errors end it, the next attempt
        reports again)."""
        await self.events.event(pod_reference(pod), "Warning", "FailedScheduling", message, action="Scheduling")
        if changed:
            await failure_patch(self.client, self.clock, pod, reason, message, nominated)
