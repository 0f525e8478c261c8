"""``CronJobController``: upstream's CronJob controller v2 (``pkg/controller/cronjob``), one
agent with the client ``controller:cronjob`` and Events as ``cronjob-controller``.

A sync of one CronJob (``sync``), as upstream's ``sync``:

1. history: finished Jobs beyond ``successfulJobsHistoryLimit`` (Complete) and
   ``failedJobsHistoryLimit`` (Failed) are deleted, oldest ``startTime`` first;
2. ``status.active``: a finished Job leaves it (``SawCompletedJob``), a Job gone from the
   API server too (``MissingJob``); ``lastSuccessfulTime`` follows the newest completion;
3. unless suspended or its ``timeZone`` unknown (``UnknownTimeZone``): the most recent
   schedule time not yet run (``cronschedule``); too late for ``startingDeadlineSeconds``
   → ``MissSchedule``; already run → nothing; ``Forbid`` with an active Job →
   ``JobAlreadyActive``; ``Replace`` → the active Jobs are deleted first; then the Job
   ``<cronjob>-<Unix minutes>`` is created from ``jobTemplate`` with the annotation
   ``batch.kubernetes.io/cronjob-scheduled-timestamp`` (``SuccessfulCreate``), added to
   ``status.active``, and ``lastScheduleTime`` set;
4. the status is written if it changed, and the CronJob re-queued for its next schedule
   time (``WorkQueue.add_after``) — the controller never polls.

A sync reads its Jobs from the Job informer's controller-UID index (``BaseController``). Deleting a
Job asks for ``propagationPolicy: Background`` as upstream's job control does (a Job's own
default is Orphan); collecting its pods is the garbage collector's.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.base import BaseController
from agents.controllers.context import ControllerContext
from agents.controllers.controllerutils import controller_ref, owner_ref
from agents.controllers.cronschedule import (
    Missed,
    UnknownZone,
    Zone,
    job_name,
    load_zone,
    most_recent_schedule_time,
    next_schedule_delay,
)
from emulator.base.api.batch import CronJob, CronJobStatus, Job
from emulator.base.api.cron import CronError, Schedule, parse_schedule
from emulator.base.api.errors import AlreadyExists, ApiError, NotFound
from emulator.base.api.meta import ObjectMeta, reference_to
from emulator.base.runtime.clock import EPOCH, format_timestamp, parse_timestamp

__all__ = ["NAME", "SCHEDULED_TIMESTAMP", "CronJobController"]

NAME: Final = "cronjob"
COMPONENT: Final = "cronjob-controller"
SCHEDULED_TIMESTAMP: Final = "batch.kubernetes.io/cronjob-scheduled-timestamp"

Key = tuple[str, str]


def _finished(job: Job) -> str | None:
    """``Complete`` or ``Failed`` when the Job finished (upstream ``getFinishedStatus``)."""
    for c in job.status.conditions:
        if c.type in ("Complete", "Failed") and c.status == "True":
            return c.type
    return None


def _start_key(job: Job) -> tuple[int, float, str]:
    """Upstream ``byJobStartTime``: by startTime (none last), then name."""
    start = job.status.start_time
    return (1, 0.0, job.metadata.name) if start is None else (0, parse_timestamp(start), job.metadata.name)


class CronJobController(BaseController):
    """Creates Jobs on a CronJob's schedule (see the module docstring)."""

    NAME = NAME
    KIND = "CronJob"
    OWNS = "Job"
    COUNTS = ("syncs", "created", "deleted", "missed", "errors")
    WAIT_SYNCED = True

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)

    def statistics(self) -> dict[str, Any]:
        return {**self.counts, "cronjobs": len(self.primary.store) if self.primary else 0}

    # --- informer handlers --------------------------------------------------------------------

    def on_dependent_add(self, job: Job) -> None:
        if (key := self.owner_key(job)) is not None:
            self.queue.add(key)

    def on_dependent_update(self, old: Job, new: Job) -> None:
        key = self.owner_key(new)
        if key is not None and _finished(old) != _finished(new):
            self.queue.add(key)

    def on_dependent_delete(self, job: Job) -> None:
        self.on_dependent_add(job)

    # --- sync -----------------------------------------------------------------------------------

    async def _event(self, cj: CronJob, type_: str, reason: str, message: str) -> None:
        await self.recorder.event(reference_to(cj), type_, reason, message)

    async def sync(self, key: Key) -> None:
        assert self.primary is not None
        cj: CronJob | None = self.primary.get(key[1], key[0])
        if cj is None:
            return
        jobs: list[Job] = self.owned(self.dependents, cj) if self.dependents is not None else []
        status = cj.status
        status, cleaned = await self._cleanup(cj, status, jobs)
        status, delay = await self._reconcile(cj, status, jobs)
        if cleaned or status != cj.status:
            await self.client.update_status(replace(cj, status=status))
        if delay is not None:
            self.queue.add_after(key, delay)

    async def _cleanup(self, cj: CronJob, status: CronJobStatus, jobs: list[Job]) -> tuple[CronJobStatus, bool]:
        """Upstream ``cleanupFinishedJobs``."""
        changed = False
        for kind, limit in (
            ("Complete", cj.spec.successful_jobs_history_limit),
            ("Failed", cj.spec.failed_jobs_history_limit),
        ):
            if limit is None:
                continue
            finished = sorted((j for j in jobs if _finished(j) == kind), key=_start_key)
            for job in finished[: max(0, len(finished) - limit)]:
                ok, status = await self._delete_job(cj, status, job)
                changed = changed or ok
        return status, changed

    async def _delete_job(self, cj: CronJob, status: CronJobStatus, job: Job) -> tuple[bool, CronJobStatus]:
        """Upstream ``deleteJob``: delete (propagation Background, as upstream's job control
        asks: a Job's own default is Orphan), drop from ``active``, ``SuccessfulDelete``."""
        try:
            await self.client.delete("Job", job.metadata.name, job.metadata.namespace, propagation_policy="Background")
        except NotFound:
            pass
        except ApiError as err:
            await self._event(cj, "Warning", "FailedDelete", f"Deleted job: {err}")
            return False, status
        self.counts["deleted"] += 1
        status = replace(status, active=[a for a in status.active if a.uid != job.metadata.uid])
        await self._event(cj, "Normal", "SuccessfulDelete", f"Deleted job {job.metadata.name}")
        return True, status

    async def _reconcile(
        self, cj: CronJob, status: CronJobStatus, jobs: list[Job]
    ) -> tuple[CronJobStatus, float | None]:
        """Upstream ``syncCronJob``: the new status and when to sync again."""
        uids = {j.metadata.uid for j in jobs}
        for job in jobs:
            active = any(a.uid == job.metadata.uid for a in status.active)
            finished = _finished(job)
            if not active and finished is None:
                fresh: CronJob = await self.client.get("CronJob", cj.metadata.name, cj.metadata.namespace)
                if any(a.uid == job.metadata.uid for a in fresh.status.active):
                    known = [a for a in fresh.status.active if a.uid == job.metadata.uid]
                    status = replace(status, active=[*status.active, *known])
                    continue
                message = f"Saw a job that the controller did not create or forgot: {job.metadata.name}"
                await self._event(cj, "Warning", "UnexpectedJob", message)
            elif active and finished is not None:
                status = replace(status, active=[a for a in status.active if a.uid != job.metadata.uid])
                await self._event(
                    cj, "Normal", "SawCompletedJob", f"Saw completed job: {job.metadata.name}, condition: {finished}"
                )
            if finished == "Complete" and job.status.completion_time is not None:
                last = status.last_successful_time
                if last is None or parse_timestamp(job.status.completion_time) > parse_timestamp(last):
                    status = replace(status, last_successful_time=job.status.completion_time)
        for a in list(status.active):
            if a.uid in uids:
                continue
            try:
                await self.client.get("Job", a.name, a.namespace)
            except NotFound:
                await self._event(cj, "Normal", "MissingJob", f"Active job went missing: {a.name}")
                status = replace(status, active=[x for x in status.active if x.uid != a.uid])

        if cj.metadata.deletion_timestamp is not None:
            return status, None
        try:
            zone = load_zone(cj.spec.time_zone)
        except UnknownZone as err:
            await self._event(cj, "Warning", "UnknownTimeZone", f'invalid timeZone: "{cj.spec.time_zone}": {err}')
            return status, None
        if cj.spec.suspend:
            return status, None
        try:
            schedule = parse_schedule(cj.spec.schedule)
        except CronError as err:
            message = f'unparseable schedule: "{cj.spec.schedule}" : {err}'
            await self._event(cj, "Warning", "UnparseableSchedule", message)
            return status, None
        return await self._schedule(cj, status, schedule, zone)

    async def _schedule(
        self, cj: CronJob, status: CronJobStatus, schedule: Schedule, zone: Zone
    ) -> tuple[CronJobStatus, float | None]:
        now = self.clock.now()
        created = parse_timestamp(cj.metadata.creation_timestamp) if cj.metadata.creation_timestamp else 0.0
        earliest = parse_timestamp(status.last_schedule_time) if status.last_schedule_time else created

        def delay() -> float | None:
            return next_schedule_delay(schedule, zone, now, earliest)

        try:
            _, scheduled, missed = most_recent_schedule_time(
                schedule, zone, now, earliest, cj.spec.starting_deadline_seconds
            )
        except ValueError as err:
            await self._event(cj, "Warning", "InvalidSchedule", f"invalid schedule: {cj.spec.schedule} : {err}")
            return status, None
        if scheduled is None:
            return status, delay()
        if missed is Missed.MANY:
            await self._event(
                cj,
                "Warning",
                "TooManyMissedTimes",
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
            )
        deadline = cj.spec.starting_deadline_seconds
        if deadline is not None and scheduled + deadline < now:
            self.counts["missed"] += 1
            message = f"Missed scheduled time to start a job: {_rfc1123z(scheduled)}"
            await self._event(cj, "Warning", "MissSchedule", message)
            return status, delay()
        name = job_name(cj.metadata.name, scheduled)
        stamp = format_timestamp(scheduled)
        if any(a.name == name for a in status.active) or status.last_schedule_time == stamp:
            return status, delay()
        if cj.spec.concurrency_policy == "Forbid" and status.active:
            await self._event(
                cj,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
            return status, delay()
        if cj.spec.concurrency_policy == "Replace":
            for a in list(status.active):
                try:
                    job: Job = await self.client.get("Job", a.name, a.namespace)
                except ApiError as err:
                    await self._event(cj, "Warning", "FailedGet", f"Get job: {err}")
                    raise
                ok, status = await self._delete_job(cj, status, job)
                if not ok:
                    return status, None
        template = cj.spec.job_template
        job = Job(
            metadata=ObjectMeta(
                name=name,
                namespace=cj.metadata.namespace,
                labels=dict(template.metadata.labels),
                annotations={**template.metadata.annotations, SCHEDULED_TIMESTAMP: zone.format(scheduled)},
                owner_references=[owner_ref(cj)],
            ),
            spec=template.spec,
        )
        try:
            created_job: Job = await self.client.create(job)
        except AlreadyExists:
            existing: Job = await self.client.get("Job", name, cj.metadata.namespace)
            ref = controller_ref(existing)
            if ref is None or ref.uid != cj.metadata.uid or any(a.uid == existing.metadata.uid for a in status.active):
                return status, None
            created_job = existing
        except ApiError as err:
            await self._event(cj, "Warning", "FailedCreate", f"Error creating job: {err}")
            raise
        else:
            self.counts["created"] += 1
            await self._event(cj, "Normal", "SuccessfulCreate", f"Created job {name}")
        status = replace(status, active=[*status.active, reference_to(created_job)], last_schedule_time=stamp)
        earliest = scheduled
        return status, delay()


def _rfc1123z(t: float) -> str:
    """Go's ``time.RFC1123Z`` of clock time ``t`` in UTC: ``Mon, 02 Jan 2006 15:04:05 -0700``."""
    return (EPOCH + dt.timedelta(seconds=int(t))).strftime("%a, %d %b %Y %H:%M:%S +0000")
