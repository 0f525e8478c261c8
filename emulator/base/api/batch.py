"""batch/v1 objects: Job and CronJob.

Upstream's field names for the spec and for the status fields the job and cronjob
controllers write. Pointer fields upstream are ``X | None = None`` so that defaulting
(``workloaddefaults``) can tell unset from zero. The controllers are not here.
"""

from __future__ import annotations

from emulator.base.api.core import LabelSelector
from emulator.base.api.meta import K8s, ObjectMeta, ObjectReference
from emulator.base.api.podtemplate import PodTemplateSpec

__all__ = [
    "CONTROLLER_UID_LABEL",
    "JOB_NAME_LABEL",
    "LEGACY_CONTROLLER_UID_LABEL",
    "LEGACY_JOB_NAME_LABEL",
    "CronJob",
    "CronJobSpec",
    "CronJobStatus",
    "Job",
    "JobCondition",
    "JobSpec",
    "JobStatus",
    "JobTemplateSpec",
    "PodFailurePolicy",
    "PodFailurePolicyOnExitCodesRequirement",
    "PodFailurePolicyOnPodConditionsPattern",
    "PodFailurePolicyRule",
    "SuccessPolicy",
    "SuccessPolicyRule",
    "UncountedTerminatedPods",
]

BATCH_V1 = "batch/v1"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"


# --- Job ----------------------------------------------------------------------------------


class PodFailurePolicyOnExitCodesRequirement(K8s, frozen=True):
    operator: str
    values: list[int] = []
    container_name: str | None = None


class PodFailurePolicyOnPodConditionsPattern(K8s, frozen=True):
    type: str
    status: str = ""


class PodFailurePolicyRule(K8s, frozen=True):
    action: str
    on_exit_codes: PodFailurePolicyOnExitCodesRequirement | None = None
    on_pod_conditions: list[PodFailurePolicyOnPodConditionsPattern] = []


class PodFailurePolicy(K8s, frozen=True):
    rules: list[PodFailurePolicyRule] = []


class SuccessPolicyRule(K8s, frozen=True):
    """One rule of ``spec.successPolicy`` (an Indexed Job's): the indexes that must succeed
    (``"0,2-4"``), or how many, or how many of those."""

    succeeded_indexes: str | None = None
    succeeded_count: int | None = None


class SuccessPolicy(K8s, frozen=True):
    rules: list[SuccessPolicyRule] = []


class JobSpec(K8s, frozen=True):
    parallelism: int | None = None
    completions: int | None = None
    active_deadline_seconds: int | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    backoff_limit: int | None = None
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    success_policy: SuccessPolicy | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec = PodTemplateSpec()
    ttl_seconds_after_finished: int | None = None
    completion_mode: str | None = None
    """``NonIndexed`` (the default) or ``Indexed``."""
    suspend: bool | None = None
    pod_replacement_policy: str | None = None
    managed_by: str | None = None


class JobCondition(K8s, frozen=True):
    type: str
    status: str
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class UncountedTerminatedPods(K8s, frozen=True):
    succeeded: list[str] = []
    failed: list[str] = []


class JobStatus(K8s, frozen=True):
    conditions: list[JobCondition] = []
    start_time: str | None = None
    completion_time: str | None = None
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int | None = None
    completed_indexes: str = ""
    failed_indexes: str | None = None
    uncounted_terminated_pods: UncountedTerminatedPods | None = None
    ready: int | None = None


class Job(K8s, frozen=True):
    api_version: str = BATCH_V1
    kind: str = "Job"
    metadata: ObjectMeta = ObjectMeta()
    spec: JobSpec = JobSpec()
    status: JobStatus = JobStatus()


# --- CronJob ------------------------------------------------------------------------------


class JobTemplateSpec(K8s, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    spec: JobSpec = JobSpec()


class CronJobSpec(K8s, frozen=True):
    schedule: str = ""
    time_zone: str | None = None
    starting_deadline_seconds: int | None = None
    concurrency_policy: str = ""
    """``Allow`` (the default), ``Forbid`` or ``Replace``."""
    suspend: bool | None = None
    job_template: JobTemplateSpec = JobTemplateSpec()
    successful_jobs_history_limit: int | None = None
    failed_jobs_history_limit: int | None = None


class CronJobStatus(K8s, frozen=True):
    active: list[ObjectReference] = []
    last_schedule_time: str | None = None
    last_successful_time: str | None = None


class CronJob(K8s, frozen=True):
    api_version: str = BATCH_V1
    kind: str = "CronJob"
    metadata: ObjectMeta = ObjectMeta()
    spec: CronJobSpec = CronJobSpec()
    status: CronJobStatus = CronJobStatus()
