"""``PodKiller``: a pod's graceful deletion on its node, from ``deletionTimestamp`` to the
final delete.

This module owns the ``terminating`` row of the kubelet's table (``kubelet.py``): when a pod
is seen with a ``deletionTimestamp`` it stops what the pod was doing, waits the seeded
``termination`` delay capped by the grace period (a second delete with a shorter grace
shortens the wait, as upstream's), announces ``Killing`` per running container
(``KubeletSettings.container_events``), releases the pod's room on the node, writes its
terminal status (``deletedstatus.py``: the terminal phase first, as upstream's kubelet since
1.27; Failed with ``ContainerStatusUnknown`` if it never started, as ``TerminatePod``), and
confirms the deletion (grace 0 and the UID, ``PodWriter.confirm_deletion``).

It does not own when a pod counts as deleted (the kubelet's pod handler calls ``terminate``
and ``shorten_grace``), what a status says (``deletedstatus.py``, ``podstatus.py``), nor the
write's retries (``podworker.py``, ``podapi.py``)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Coroutine
from typing import Any

from agents.kubelet.deletedstatus import deleted_status, unstarted_deleted_status
from agents.kubelet.podapi import PodWriter
from agents.kubelet.podrecord import PodRecord, PodState
from agents.kubelet.podstatus import pending_status
from agents.kubelet.podworker import PodWorker
from agents.kubelet.settings import KubeletSettings
from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock

__all__ = ["PodKiller", "grace_period"]

_NOT_STARTED = ("Succeeded", "Failed", "Running")

Spawn = Callable[[Coroutine[Any, Any, None], str], asyncio.Task[None]]


def grace_period(pod: Pod) -> float:
    """The grace period the pod's deletion gives it, in seconds (its spec's, or 30 s)."""
    grace = pod.metadata.deletion_grace_period_seconds
    if grace is None:
        grace = pod.spec.termination_grace_period_seconds
    return float(30 if grace is None else max(grace, 0))


class PodKiller:
    """The graceful deletions of one kubelet's pods."""

    def __init__(
        self,
        clock: Clock,
        rng: random.Random,
        settings: KubeletSettings,
        worker: PodWorker,
        writer: PodWriter,
        counts: dict[str, int],
        release: Callable[[PodRecord], None],
        host_ip: Callable[[], str],
        spawn: Spawn,
        prefix: str,
    ) -> None:
        self._clock = clock
        self._rng = rng
        self._settings = settings
        self._worker = worker
        self._writer = writer
        self._counts = counts
        self._release = release
        self._host_ip = host_ip
        self._spawn = spawn
        self._prefix = prefix

    def __repr__(self) -> str:
        return f"<PodKiller {self._prefix} terminated={self._counts['terminated']}>"

    def terminate(self, rec: PodRecord) -> None:
        """The pod was seen with a ``deletionTimestamp``: stop it and kill it after its delay."""
        was_running = rec.state is PodState.RUNNING
        # queued or starting (a restarted kubelet's Running pod excepted: it was adopted as is)
        rec.kill_unstarted = (
            rec.state in (PodState.QUEUED, PodState.STARTING) and rec.pod.status.phase not in _NOT_STARTED
        )
        if rec.task is not None:
            rec.task.cancel()
        rec.state = PodState.TERMINATING
        rec.kill_started = self._clock.now()
        rec.kill_delay = self._settings.termination.sample(self._rng) if was_running else 0.0
        rec.kill_running = was_running
        self._schedule_kill(rec)

    def _kill_deadline(self, rec: PodRecord) -> float:
        return rec.kill_started + min(rec.kill_delay, grace_period(rec.pod))

    def _schedule_kill(self, rec: PodRecord) -> None:
        rec.kill_deadline = deadline = self._kill_deadline(rec)
        rec.task = self._spawn(self.kill(rec, deadline), f"{self._prefix}:kill:{rec.label}")

    def shorten_grace(self, rec: PodRecord) -> None:
        """A second delete with a shorter grace period: stop sooner, as upstream does."""
        task = rec.task
        if task is None or task.done() or rec.kill_deadline <= self._clock.now():
            return  # already past the wait: the delete is on its way
        if self._kill_deadline(rec) < rec.kill_deadline:
            task.cancel()
            self._schedule_kill(rec)

    async def kill(self, rec: PodRecord, deadline: float) -> None:
        """The pod's task while terminating: ``Killing`` Events, the wait until ``deadline``,
        the release, the terminal status and the final delete."""
        if rec.kill_running and not rec.kill_announced and self._settings.container_events:
            rec.kill_announced = True  # kuberuntime killContainer: one Killing per running container
            status = rec.pod.status
            for cs in (*status.container_statuses, *status.init_container_statuses):
                if cs.state.running is not None:
                    await self._worker.event(rec.pod, "Normal", "Killing", f"Stopping container {cs.name}", cs.name)
        await self._clock.sleep_until(deadline)
        pod_ip = rec.pod_ip
        self._release(rec)
        if rec.kill_unstarted:  # status_manager.go TerminatePod: Failed, ContainerStatusUnknown
            now = self._clock.timestamp()
            host, start = self._host_ip(), rec.start_time or now
            await self._worker.write_status(
                rec,
                lambda p: unstarted_deleted_status(
                    p, pending_status(p, now=now, host_ip=host, pod_ip=pod_ip, start_time=start)
                ),
                deleting=True,
            )
        elif rec.kill_running:  # the terminal phase first, as upstream's kubelet since 1.27
            killed = rec.kill_delay > grace_period(rec.pod)
            now = self._clock.timestamp()
            await self._worker.write_status(rec, lambda p: deleted_status(p, killed=killed, now=now), deleting=True)
        await self._writer.confirm_deletion(rec.key[0], rec.key[1], rec.uid)
        self._counts["terminated"] += 1
