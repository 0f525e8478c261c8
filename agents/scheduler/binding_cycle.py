"""The binding cycle (upstream ``bindingCycle`` and ``handleBindingCycleError`` in
``schedule_one.go``, v1.34).

What this module owns: ``BindingCycle``, the base of ``SchedulingCycle`` that takes an assumed,
reserved and permitted pod to a bound one, and the steps the scheduling cycle shares with it
(``_forget`` an assumed pod, ``_activate`` the ``PodsToActivate``, ``_one_node_fit_error``).

Binding cycle (concurrent): WaitOnPermit → ``queue.done`` → PreBind → Bind (through the
client: with latency, and it may fail) → ``cache.finish_binding`` → PostBind → activate.
On failure: Unreserve, forget (a forgotten pod is an ``AssignedPodDelete`` for the others;
for a rejection deferred and excluding the pod itself), requeue, clear the nomination.
Success records the pod as ``scheduled`` (``schedule_attempts_total``) with its e2e latency and
sends the ``Scheduled`` Event. The loop starts it where its task's first step would have run
(``Scheduler.bind_next``); a Permit wait or a bind with latency continues as a task.

What it does not own: choosing the node, assume, Reserve and Permit (``schedule_one.py``), the
requeue and report of a failure (``failure_handler.py``), nor the bind request (the DefaultBinder
plugin, through the client).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Final

from agents.scheduler.failure_handler import FailureHandler, pod_reference, settle
from agents.scheduler.framework.diagnosis import Diagnosis, FitError
from agents.scheduler.framework.interface import NodeToStatus
from agents.scheduler.framework.types import (
    PODS_TO_ACTIVATE_KEY,
    SUCCESS,
    Code,
    CycleState,
    PodsToActivate,
    Status,
)
from agents.scheduler.queue import EventAssignedPodDelete, QueuedPodInfo
from emulator.base.api.core import Pod

if TYPE_CHECKING:
    from agents.scheduler.cache import Cache
    from agents.scheduler.framework.runtime import Framework
    from agents.scheduler.metrics import SchedulingMetrics
    from agents.scheduler.options import SchedulerOptions

__all__ = ["BindingCycle"]

_OK: Final = Code.Success
"""``status.code is _OK``: ``Status.is_success`` without the method call (every pod's cycle)."""


class BindingCycle(FailureHandler):
    """The binding cycle of the ``Scheduler`` agent (a base of ``SchedulingCycle``: the agent
    builds the state declared here)."""

    options: SchedulerOptions
    cache: Cache
    metrics: SchedulingMetrics
    _first_seen: dict[str, float]

    def _activate(self, to_activate: PodsToActivate) -> None:
        if to_activate.map:
            pods = list(to_activate.map.values())
            to_activate.map.clear()
            self.queue.activate(pods)

    @staticmethod
    def _one_node_fit_error(pod: Pod, host: str, status: Status) -> FitError:
        """Reserve/Permit rejections are reported as a FitError over the one chosen node."""
        diagnosis = Diagnosis(node_to_status=NodeToStatus({host: status}))
        diagnosis.add_plugin_status(status)
        return FitError(pod, 1, diagnosis)

    def _forget(self, assumed: Pod) -> bool:
        """Forget an assumed pod; whether there was one to forget."""
        if self.options.assume_cache and self.cache.is_assumed_pod(assumed):
            self.cache.forget_pod(assumed)
            return True
        return False

    async def binding_cycle(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, host: str
    ) -> None:
        uid = assumed.metadata.uid
        # read before the bind: its event may reach the pod handler before ``bind`` returns
        # (in place), which forgets an unassumed pod's first sight (``assumeCache: false``)
        first_seen = self._first_seen.get(uid)
        status = await fwk.wait_on_permit(assumed)
        if status.code is not _OK:
            fit = self._one_node_fit_error(assumed, host, status) if status.is_rejected() else None
            failed = Status(status.code, str(fit)) if fit else status
            await settle(self._binding_failure(fwk, state, qpi, assumed, host, failed, fit))
            return
        self.queue.done(uid)
        # PreBindPreFlight first: Skip means no PreBind plugin has work for this pod (the
        # common case: no claims to bind), and PreBind is not entered at all. An Error here is
        # not the pod's failure (upstream acts on it only behind an off-by-default gate): PreBind
        # then runs in full, as it would without the pre-flight.
        status = fwk.run_pre_bind_pre_flights(state, assumed, host)
        if status.code is not Code.Skip:
            if status.code is Code.Error:
                state.skip_pre_bind_plugins = frozenset()
            status = await fwk.run_pre_bind_plugins(state, assumed, host)
        else:
            status = SUCCESS
        if status.code is _OK:
            status = await fwk.run_bind_plugins(state, assumed, host)
        if self.options.assume_cache and self.cache.is_assumed_pod(assumed):
            self.cache.finish_binding(assumed)
        if status.code is not _OK:
            # PreBind/Bind failures carry no rejecting plugins: the pod backs off as on an error.
            await settle(self._binding_failure(fwk, state, qpi, assumed, host, status, None))
            return
        now = self.clock.now()
        self.metrics.scheduled += 1
        self._first_seen.pop(uid, None)
        self.metrics.bound(now, now - (now if first_seen is None else first_seen))
        fwk.run_post_bind_plugins(state, assumed, host)
        try:
            to_activate = state.read(PODS_TO_ACTIVATE_KEY)
        except KeyError:
            pass
        else:
            if to_activate.map:  # (``_activate``'s own test, without the call)
                self._activate(to_activate)
        pod = assumed
        await self.events.event(
            pod_reference(pod),
            "Normal",
            "Scheduled",
            f"Successfully assigned {pod.metadata.namespace}/{pod.metadata.name} to {host}",
            action="Binding",
        )

    def _binding_failure(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: Pod,
        host: str,
        status: Status,
        fit: FitError | None,
    ) -> Coroutine[Any, Any, None] | None:
        """Upstream ``handleBindingCycleError`` (returns ``handle_failure``'s PATCH to await)."""
        if status.is_rejected():
            self.metrics.unschedulable += 1
        else:
            self.metrics.errors += 1
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        forgotten = self._forget(assumed)
        if forgotten and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff(EventAssignedPodDelete, assumed, None)
        patch = self.handle_failure(qpi, status, fit, "")
        if forgotten and status.is_rejected():
            # Deferred and without the pod itself: as an in-flight event it would requeue it.
            uid = assumed.metadata.uid
            self.queue.move_all_to_active_or_backoff(
                EventAssignedPodDelete, assumed, None, lambda p: p.metadata.uid != uid
            )
        return patch
