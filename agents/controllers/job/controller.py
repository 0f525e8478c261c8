"""``JobController``: upstream's job controller (``pkg/controller/job``), one agent with the
client ``controller:job`` and Events as ``job-controller``.

A sync of one Job (``sync``), as upstream's ``syncJob``:

1. a finished Job (Complete or Failed), or one ``spec.managedBy`` another controller, is
   left alone;
2. count the pods that finished since the last sync: Succeeded pods as successes; Failed
   pods, and pods being deleted before they succeeded (unless ``podReplacementPolicy:
   Failed`` or a ``podFailurePolicy``), as failures (``podFailurePolicy`` Ignore does not
   count); Indexed Jobs count succeeded *indexes* (``completedIndexes``);
3. decide whether the Job is finishing: an interim ``FailureTarget`` already set, a FailJob
   rule, failures over ``backoffLimit`` (or, under ``restartPolicy: OnFailure``, container
   restarts reaching it), ``activeDeadlineSeconds`` passed (else a re-sync is queued for
   then), under ``backoffLimitPerIndex`` too many failed indexes (``perindex``), a
   ``successPolicy`` rule met (``successpolicy``); a finishing Job's active pods are deleted;
4. otherwise ``manage``: suspended → delete the active pods; too many → delete the extra
   (duplicate indexes first, then ``ActivePods`` order); too few → after the recreation
   backoff (``backoff``), create up to ``parallelism`` bounded by the remaining completions
   in slow-start batches (Indexed: the lowest indexes neither succeeded, failed nor running,
   after each one's own backoff under ``backoffLimitPerIndex``, ``index_template``);
   enough successes and no active pod → ``SuccessCriteriaMet``;
5. write the status (counts, completed/failedIndexes, startTime, the interim condition),
   then, once no pod is terminating, ``Complete`` (+ completionTime) or ``Failed`` and its Event.

Counting: upstream tracks finished pods with the ``batch.kubernetes.io/job-tracking``
finalizer and ``status.uncountedTerminatedPods``. Its removal is one more pod write per
finished pod (the Job churn bench's budget: about 12,000 in its first 5 minutes), so this
controller keeps the UIDs it has counted in memory
(``_counted``), pods that vanished before being counted (``_gone``) and, under
``backoffLimitPerIndex``, each index's last failed pod (``_last_failed``); the
status it writes carries an empty ``uncountedTerminatedPods`` as upstream's does between
syncs. The counts are the same as long as the controller is not restarted (it never is).
Measured (issue 23): the finalizer cost +8.4 % user CPU on the Job churn bench (median of 3
alternated ``--until 5m`` runs: 12.33 s against 11.37 s; 12,000 more pod writes), over the
5 % budget, so it is not modelled.

Pod events re-sync a Job after upstream's 1 s batch period; Job spec changes at once. A sync
reads its pods from the pod informer's controller-UID index (``BaseController.owned``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.base import BaseController
from agents.controllers.context import ControllerContext
from agents.controllers.controllerutils import (
    BatchError,
    Expectations,
    is_pod_active,
    is_pod_ready,
    pod_from_template,
    slow_start_batch,
)
from agents.controllers.job import backoff as bo
from agents.controllers.job.conditions import (
    BACKOFF_LIMIT_EXCEEDED,
    COMPLETIONS_REACHED,
    DEADLINE_EXCEEDED,
    POD_FAILURE_POLICY,
    ensure_condition,
    find_condition,
    is_finished,
    job_reference,
    new_condition,
)
from agents.controllers.job.failurepolicy import match
from agents.controllers.job.indexes import (
    completion_index,
    first_pending_indexes,
    format_intervals,
    index_template,
    parse_intervals,
)
from agents.controllers.job.perindex import (
    creatable_indexes,
    failure_count_annotations,
    failure_reason,
    replaced_pods,
    update_failed_indexes,
)
from agents.controllers.job.pods import (
    fail_job_message,
    is_terminating,
    new_finished,
    only_replace_failed,
    pods_for_removal,
    restarts_past_limit,
)
from agents.controllers.job.successpolicy import SUCCESS_POLICY, match_success_policy
from emulator.base.api.batch import Job, JobCondition, JobStatus, UncountedTerminatedPods
from emulator.base.api.core import Pod
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.runtime.clock import parse_timestamp

__all__ = ["BATCH_PERIOD", "MAX_POD_CREATE_DELETE_PER_SYNC", "NAME", "JobController"]

NAME: Final = "job"
COMPONENT: Final = "job-controller"
JOB_CONTROLLER: Final = "kubernetes.io/job-controller"
"""``spec.managedBy`` naming this controller (unset means the same)."""
BATCH_PERIOD: Final = 1.0
"""Upstream ``syncJobBatchPeriod``: pod events re-sync their Job this much later."""
MAX_POD_CREATE_DELETE_PER_SYNC: Final = 500

Key = tuple[str, str]


def _pod_key(pod: Pod) -> Key:
    return (pod.metadata.namespace, pod.metadata.name)


class JobController(BaseController):
    """Reconciles Jobs into pods (see the module docstring)."""

    NAME = NAME
    KIND = "Job"
    COUNTS = ("syncs", "created", "deleted", "completed", "failed", "errors")
    RETRY_ON = (ApiError, BatchError)
    WAIT_SYNCED = True

    def __init__(self, ctx: ControllerContext, *, workers: int = 1) -> None:
        super().__init__(ctx, workers=workers)
        self.expectations = Expectations(ctx.clock)
        self._counted: dict[str, set[str]] = {}
        self._gone: dict[str, dict[str, Pod]] = {}
        self._backoff: dict[Key, bo.BackoffRecord] = {}
        self._last_failed: dict[str, dict[int, Pod]] = {}
        """Per Job UID (``backoffLimitPerIndex``), per index: the failed pod its next pod
        replaces (``perindex``), in place of upstream's delayed finalizer removal."""

    def statistics(self) -> dict[str, Any]:
        return {**self.counts, "jobs": len(self.primary.store) if self.primary else 0}

    # --- informer handlers (synchronous) ------------------------------------------------------

    def on_update(self, old: Job, new: Job) -> None:
        key = (new.metadata.namespace, new.metadata.name)
        if new.metadata.generation == old.metadata.generation:
            self.queue.add_after(key, BATCH_PERIOD)
        else:
            self.queue.add(key)
        deadline = new.spec.active_deadline_seconds
        if new.status.start_time and deadline is not None and deadline != old.spec.active_deadline_seconds:
            passed = self.clock.now() - parse_timestamp(new.status.start_time)
            self.queue.add_after(key, deadline - passed)

    def on_delete(self, job: Job) -> None:
        self._counted.pop(job.metadata.uid, None)
        self._gone.pop(job.metadata.uid, None)
        self._last_failed.pop(job.metadata.uid, None)
        self.queue.add((job.metadata.namespace, job.metadata.name))

    def _owner(self, pod: Pod) -> tuple[Job, Key] | None:
        key = self.resolve(self.owner_ref(pod), pod.metadata.namespace)
        if key is None or self.primary is None:
            return None
        return self.primary.store[key], key

    def on_dependent_add(self, pod: Pod) -> None:
        owner = self._owner(pod)
        if owner is None:
            return
        _, key = owner
        if pod.metadata.deletion_timestamp is not None:
            self.expectations.deletion_observed(key, "/".join(_pod_key(pod)))
        else:
            self.expectations.creation_observed(key)
        self.queue.add_after(key, BATCH_PERIOD)

    def on_dependent_update(self, old: Pod, new: Pod) -> None:
        if old.metadata.resource_version == new.metadata.resource_version:
            return
        owner = self._owner(new)
        if owner is None:
            return
        _, key = owner
        if new.metadata.deletion_timestamp is not None:
            self.expectations.deletion_observed(key, "/".join(_pod_key(new)))
        self.queue.add_after(key, BATCH_PERIOD)

    def on_dependent_delete(self, pod: Pod) -> None:
        ref = self.owner_ref(pod)
        if ref is None:
            return
        owner = self._owner(pod)
        if owner is None or is_finished(owner[0]):
            return
        self.expectations.deletion_observed(owner[1], "/".join(_pod_key(pod)))
        counted = self._counted.get(ref.uid)
        if counted is not None and pod.metadata.uid in counted:
            counted.discard(pod.metadata.uid)
        else:
            self._gone.setdefault(ref.uid, {})[pod.metadata.uid] = pod
        self.queue.add_after(owner[1], BATCH_PERIOD)

    # --- sync -----------------------------------------------------------------------------------

    def _forget(self, key: Key, uid: str) -> None:
        self.expectations.delete(key)
        self._backoff.pop(key, None)
        self._counted.pop(uid, None)
        self._gone.pop(uid, None)
        self._last_failed.pop(uid, None)

    async def sync(self, key: Key) -> None:
        assert self.primary is not None
        job: Job | None = self.primary.get(key[1], key[0])
        if job is None:
            self.expectations.delete(key)
            self._backoff.pop(key, None)
            return
        uid = job.metadata.uid
        if job.spec.managed_by not in (None, JOB_CONTROLLER):
            return  # another controller's (upstream ``managedByExternalController``)
        if is_finished(job):
            self._forget(key, uid)
            return
        now = self.clock.now()
        stamp = self.clock.timestamp(now)
        satisfied = self.expectations.satisfied(key)
        pods: list[Pod] = self.owned(self.dependents, job) if self.dependents is not None else []
        active_pods = [p for p in pods if is_pod_active(p)]
        terminating = sum(1 for p in pods if is_terminating(p))
        ready = sum(1 for p in active_pods if is_pod_ready(p))
        counted = self._counted.setdefault(uid, set())
        gone = self._gone.get(uid, {})
        indexed = job.spec.completion_mode == "Indexed"
        completions = job.spec.completions

        # 2. what finished since the last sync
        fresh = new_finished(job, pods, [gone[u] for u in sorted(gone)], counted)
        new_succeeded, new_failed, seen = fresh.succeeded, fresh.failed, fresh.seen
        policy = job.spec.pod_failure_policy
        failed = job.status.failed + sum(1 for p in new_failed if match(policy, p).count_failed)
        if indexed:
            done = parse_intervals(job.status.completed_indexes, completions or 0)
            done.update(ix for p in new_succeeded if (ix := completion_index(p)) is not None)
            succeeded = len(done)
        else:
            done = set()
            succeeded = job.status.succeeded + len(new_succeeded)
        per_index = indexed and job.spec.backoff_limit_per_index is not None
        failed_ix: set[int] = set()
        if per_index:
            failed_ix = update_failed_indexes(job, new_failed, self._last_failed.setdefault(uid, {}))
        record = bo.next_record(self._backoff.get(key, bo.BackoffRecord()), new_succeeded, new_failed)

        status = job.status
        suspended = bool(job.spec.suspend)
        start_time = status.start_time
        if start_time is None and not suspended:
            start_time = stamp
        conditions = list(status.conditions)

        # 3. is it finishing?
        finishing: JobCondition | None = find_condition(conditions, "SuccessCriteriaMet")
        if finishing is not None and finishing.status != "True":
            finishing = None
        if finishing is None:
            target = find_condition(conditions, "FailureTarget")
            fail_message = fail_job_message(job, pods)
            if target is not None and target.status == "True":
                finishing = target
            elif fail_message is not None:
                finishing = new_condition("FailureTarget", POD_FAILURE_POLICY, fail_message, stamp)
            elif failed > (job.spec.backoff_limit or 0) or restarts_past_limit(job, pods):
                finishing = new_condition("FailureTarget", *BACKOFF_LIMIT_EXCEEDED, stamp)
            elif job.spec.active_deadline_seconds is not None and start_time is not None and not suspended:
                left = parse_timestamp(start_time) + job.spec.active_deadline_seconds - now
                if left <= 0:
                    finishing = new_condition("FailureTarget", *DEADLINE_EXCEEDED, stamp)
                else:
                    self.queue.add_after(key, left)
        if finishing is None and per_index and (why := failure_reason(job, failed_ix, done)) is not None:
            finishing = new_condition("FailureTarget", *why, stamp)
        if finishing is None and indexed:
            message = match_success_policy(job.spec.success_policy, completions or 0, done)
            if message is not None:
                finishing = new_condition("SuccessCriteriaMet", SUCCESS_POLICY, message, stamp)

        active = len(active_pods)
        events: list[tuple[str, str, str]] = []
        if finishing is not None:
            failing = finishing.type == "FailureTarget"
            deleted, deleted_ready = await self._delete_pods(job, active_pods, count=failing)
            if deleted != active or not satisfied:
                finishing = None  # pods not yet seen: decide again on the next sync
            active -= deleted
            terminating += deleted
            ready -= deleted_ready
        else:
            managed = False
            if satisfied and job.metadata.deletion_timestamp is None:
                active, terminating, ready = await self._manage(
                    job, key, active_pods, done | failed_ix, succeeded, record, terminating, ready, events
                )
                managed = True
            if completions is None:
                complete = succeeded > 0 and active == 0
            else:
                complete = succeeded >= completions and active == 0
            if complete:
                finishing = new_condition("SuccessCriteriaMet", *COMPLETIONS_REACHED, stamp)
            elif managed:
                if suspended:
                    conditions, changed = ensure_condition(
                        conditions, "Suspended", "True", "JobSuspended", "Job suspended", stamp
                    )
                    if changed:
                        events.append(("Normal", "Suspended", "Job suspended"))
                else:
                    conditions, changed = ensure_condition(
                        conditions, "Suspended", "False", "JobResumed", "Job resumed", stamp
                    )
                    if changed:
                        events.append(("Normal", "Resumed", "Job resumed"))
                        start_time = stamp

        # 5. the status: interim condition first, terminal once nothing is terminating
        if finishing is not None and find_condition(conditions, finishing.type) is None:
            conditions.append(finishing)
        new_status = replace(
            status,
            conditions=conditions,
            start_time=start_time,
            active=active,
            ready=ready,
            terminating=terminating,
            succeeded=succeeded,
            failed=failed,
            completed_indexes=format_intervals(done) if indexed else status.completed_indexes,
            failed_indexes=format_intervals(failed_ix) if per_index else status.failed_indexes,
            uncounted_terminated_pods=UncountedTerminatedPods(),
        )
        written = await self._write_status(job, new_status)
        counted.update(seen)
        for u in seen:
            gone.pop(u, None)
        self._backoff[key] = record
        for type_, reason, message in events:
            await self.recorder.event(job_reference(written), type_, reason, message)
        if finishing is not None and terminating == 0:
            await self._finish(written, finishing, stamp)

    async def _write_status(self, job: Job, status: JobStatus) -> Job:
        if status == job.status:
            return job
        written: Job = await self.client.update_status(replace(job, status=status))
        return written

    async def _finish(self, job: Job, interim: JobCondition, stamp: str) -> None:
        """Upstream ``enactJobFinished`` and ``recordJobFinished``."""
        terminal = "Complete" if interim.type == "SuccessCriteriaMet" else "Failed"
        conditions, _ = ensure_condition(
            list(job.status.conditions), terminal, "True", interim.reason, interim.message, stamp
        )
        status = replace(job.status, conditions=conditions)
        if terminal == "Complete":
            status = replace(status, completion_time=stamp)
        written = await self._write_status(job, status)
        ref = job_reference(written)
        if terminal == "Complete":
            self.counts["completed"] += 1
            completions = job.spec.completions
            if completions is not None and written.status.succeeded > completions:
                message = "Too many succeeded pods running after completion count reached"
                await self.recorder.event(ref, "Warning", "TooManySucceededPods", message)
            await self.recorder.event(ref, "Normal", "Completed", "Job completed")
        else:
            self.counts["failed"] += 1
            await self.recorder.event(ref, "Warning", interim.reason, interim.message)
        self._forget((job.metadata.namespace, job.metadata.name), job.metadata.uid)

    # --- manageJob ----------------------------------------------------------------------------

    async def _manage(
        self,
        job: Job,
        key: Key,
        active_pods: list[Pod],
        done: set[int],
        succeeded: int,
        record: bo.BackoffRecord,
        terminating: int,
        ready: int,
        events: list[tuple[str, str, str]],
    ) -> tuple[int, int, int]:
        """Upstream ``manageJob``: (active, terminating, ready) after it. ``done``: the
        succeeded indexes and the failed ones, neither re-created."""
        active = len(active_pods)
        parallelism = job.spec.parallelism or 0
        completions = job.spec.completions
        if job.spec.suspend:
            to_delete = pods_for_removal(job, active_pods, active, self.clock.now())
            self.expectations.expect_deletions(key, ["/".join(_pod_key(p)) for p in to_delete])
            removed, removed_ready = await self._delete_pods(job, to_delete, count=False)
            return active - removed, terminating + removed, ready - removed_ready
        if completions is None:
            want = active if succeeded > 0 else parallelism
        else:
            want = max(0, min(completions - succeeded, parallelism))
        to_delete = pods_for_removal(job, active_pods, max(0, active - want), self.clock.now())
        to_delete = to_delete[:MAX_POD_CREATE_DELETE_PER_SYNC]
        if to_delete:
            self.expectations.expect_deletions(key, ["/".join(_pod_key(p)) for p in to_delete])
            removed, removed_ready = await self._delete_pods(job, to_delete, count=False)
            return active - removed, terminating + removed, ready - removed_ready
        pending = terminating if only_replace_failed(job) else 0
        diff = want - pending - active
        if diff <= 0:
            return active, terminating, ready
        per_index = job.spec.completion_mode == "Indexed" and job.spec.backoff_limit_per_index is not None
        wait = 0.0 if per_index else bo.remaining(record, self.clock.now())
        if wait > 0:
            self.queue.add_after(key, wait)
            return 0, terminating, ready  # upstream reports active 0 while backing off
        diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC)
        indexes: list[int] = []
        replaced: dict[int, Pod] = {}
        if job.spec.completion_mode == "Indexed":
            running = {ix for p in active_pods if (ix := completion_index(p)) is not None}
            indexes = first_pending_indexes(done, running, diff, completions or 0)
            if per_index:
                replaced = replaced_pods(self._last_failed.get(job.metadata.uid, {}), done | running)
                indexes, wait = creatable_indexes(indexes, replaced, self.clock.now())
                if wait > 0:
                    self.queue.add_after(key, wait)
                    return 0, terminating, ready
            diff = len(indexes)
        if diff == 0:
            return active, terminating, ready
        self.expectations.expect_creations(key, diff)

        async def create(i: int) -> None:
            if not indexes:
                await self._create_pod(job, None)
            else:
                extra = failure_count_annotations(job, replaced.get(indexes[i])) if per_index else {}
                await self._create_pod(job, indexes[i], extra)

        try:
            made = await slow_start_batch(diff, create)
        except BatchError as err:
            self.expectations.lower_creations(key, diff - err.succeeded)
            self.counts["created"] += err.succeeded
            raise
        self.counts["created"] += made
        return active + made, terminating, ready

    async def _create_pod(self, job: Job, index: int | None, annotations: dict[str, str] | None = None) -> None:
        template, generate_name = job.spec.template, f"{job.metadata.name}-"
        if index is not None:
            template, generate_name = index_template(template, job.metadata.name, index, annotations or {})
        pod = pod_from_template(template, job, job.metadata.namespace, generate_name=generate_name)
        ref = job_reference(job)
        try:
            created: Pod = await self.client.create(pod)
        except ApiError as err:
            await self.recorder.event(ref, "Warning", "FailedCreate", f"Error creating: {err}")
            raise
        await self.recorder.event(ref, "Normal", "SuccessfulCreate", f"Created pod: {created.metadata.name}")

    async def _delete_pods(self, job: Job, pods: Sequence[Pod], *, count: bool) -> tuple[int, int]:
        """Delete ``pods`` (upstream ``deleteJobPods``/``deleteActivePods``): (deleted,
        deleted ready). Unless ``count``, a deleted pod is never counted as a failure."""
        deleted = deleted_ready = 0
        ref = job_reference(job)
        counted = self._counted.setdefault(job.metadata.uid, set())
        error: ApiError | None = None
        for pod in pods:
            try:
                await self.client.delete("Pod", pod.metadata.name, pod.metadata.namespace, uid=pod.metadata.uid)
            except NotFound:
                pass
            except ApiError as err:
                await self.recorder.event(ref, "Warning", "FailedDelete", f"Error deleting: {err}")
                error = err
                continue
            else:
                await self.recorder.event(ref, "Normal", "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")
            if not count:
                counted.add(pod.metadata.uid)
            deleted += 1
            deleted_ready += is_pod_ready(pod)
            self.counts["deleted"] += 1
        if error is not None:
            raise error
        return deleted, deleted_ready
