"""``TTLAfterFinishedController``: upstream's ``pkg/controller/ttlafterfinished``, one agent
with the client ``controller:ttlafterfinished``.

A finished Job (a ``Complete`` or ``Failed`` condition that is True) with
``spec.ttlSecondsAfterFinished`` is deleted that many seconds after it finished (the
condition's ``lastTransitionTime``):

==================================  =============================================
sync of a Job                       action
==================================  =============================================
gone, being deleted, not finished,  nothing
or no TTL
TTL not yet expired                 re-queue at expiry (``WorkQueue.add_after``)
expired (cache)                     GET it fresh; still expired → delete with the
                                    UID precondition; changed meanwhile → the
                                    fresh copy decides
==================================  =============================================

It deletes with ``propagationPolicy: Foreground``, as upstream: the Job stays, marked,
until the garbage collector has removed its pods. No Events, as upstream. It starts no pod watch at all.
"""

from __future__ import annotations

from typing import Any, Final

from agents.controllers.base import BaseController
from emulator.base.api.batch import Job
from emulator.base.api.errors import Conflict, NotFound
from emulator.base.runtime.clock import parse_timestamp

__all__ = ["NAME", "TTLAfterFinishedController", "time_left"]

NAME: Final = "ttlafterfinished"

Key = tuple[str, str]


def _finished_at(job: Job) -> float | None:
    for c in job.status.conditions:
        if c.type in ("Complete", "Failed") and c.status == "True" and c.last_transition_time:
            return parse_timestamp(c.last_transition_time)
    return None


def time_left(job: Job, now: float) -> float | None:
    """Upstream ``processTTL``'s question: seconds until ``job`` may be deleted (≤ 0: now),
    or None when it is not a candidate (no TTL, not finished, being deleted)."""
    ttl = job.spec.ttl_seconds_after_finished
    if ttl is None or job.metadata.deletion_timestamp is not None:
        return None
    finished = _finished_at(job)
    if finished is None:
        return None
    return finished + ttl - now


class TTLAfterFinishedController(BaseController):
    """Deletes finished Jobs once their TTL has passed (see the module docstring)."""

    NAME = NAME
    KIND = "Job"
    COUNTS = ("syncs", "deleted", "errors")
    WAIT_SYNCED = True

    def statistics(self) -> dict[str, Any]:
        return dict(self.counts)

    def on_add(self, job: Job) -> None:
        if time_left(job, self.clock.now()) is not None:
            self.queue.add((job.metadata.namespace, job.metadata.name))

    def on_delete(self, job: Job) -> None:
        pass  # its queued key, if any, finds no Job

    async def sync(self, key: Key) -> None:
        assert self.primary is not None
        job: Job | None = self.primary.get(key[1], key[0])
        if job is None or not self._expired(key, job):
            return
        try:
            fresh: Job = await self.client.get("Job", key[1], key[0])
        except NotFound:
            return
        if not self._expired(key, fresh):
            return
        try:
            # Upstream deletes with Foreground propagation: the Job stays (with the
            # foregroundDeletion finalizer) until the garbage collector has removed its pods.
            await self.client.delete("Job", key[1], key[0], uid=fresh.metadata.uid, propagation_policy="Foreground")
        except (NotFound, Conflict):
            return  # gone, or replaced by a new Job of the same name
        self.counts["deleted"] += 1

    def _expired(self, key: Key, job: Job) -> bool:
        left = time_left(job, self.clock.now())
        if left is None:
            return False
        if left > 0:
            self.queue.add_after(key, left)
            return False
        return True
