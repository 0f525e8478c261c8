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

import asyncio
from typing import Any, Final

from agents.controllers.context import ControllerContext
from agents.controllers.workqueue import WorkQueue
from emulator.api.batch import Job
from emulator.api.errors import ApiError, Conflict, NotFound
from emulator.client.informer import Informer
from emulator.runtime.clock import parse_timestamp

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


class TTLAfterFinishedController:
    """Deletes finished Jobs once their TTL has passed (see the module docstring)."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client(NAME)
        self.clock = ctx.clock
        self.ready = asyncio.Event()
        self._informers = ctx.informers
        self.queue: WorkQueue[Key] = WorkQueue(ctx.clock, self.client.name)
        self._jobs: Informer | None = None
        self._stats = {"syncs": 0, "deleted": 0, "errors": 0}

    def __repr__(self) -> str:
        return f"<TTLAfterFinishedController {self.queue!r}>"

    def statistics(self) -> dict[str, Any]:
        return dict(self._stats)

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            self._jobs = self._informers.handlers("Job", self._seen, lambda _old, new: self._seen(new))
            self.queue.run_workers(tg, 1, self._sync_key)
            await self._jobs.synced.wait()
            self.ready.set()

    def _seen(self, job: Job) -> None:
        if time_left(job, self.clock.now()) is not None:
            self.queue.add((job.metadata.namespace, job.metadata.name))

    async def _sync_key(self, key: Key) -> None:
        self._stats["syncs"] += 1
        if not await self.queue.process(key, self._sync, (ApiError,)):
            self._stats["errors"] += 1

    async def _sync(self, key: Key) -> None:
        assert self._jobs is not None
        job: Job | None = self._jobs.get(key[1], key[0])
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
        self._stats["deleted"] += 1

    def _expired(self, key: Key, job: Job) -> bool:
        left = time_left(job, self.clock.now())
        if left is None:
            return False
        if left > 0:
            self.queue.add_after(key, left)
            return False
        return True
