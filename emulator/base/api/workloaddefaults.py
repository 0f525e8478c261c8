"""Defaulting of the workload kinds, as upstream's ``pkg/apis/apps/v1/defaults.go``,
``batch/v1/defaults.go`` and the Service's ``core/v1`` defaults, plus the Job strategy's
generated selector.

What this module owns: ``default_object(obj)`` (pure: the object as the API server stores
it, before metadata is stamped), ``generate_job_selector`` (the Job strategy's
``generateSelector``: it needs the uid, so the API server calls it after assigning one) and
``stored_job`` (both, then the defaults again, as upstream's storage round trip does).
Defaulting lives in the API layer, as upstream's does, so that validation (``validate``)
can check a manifest as the server will store it. It does not own the Pod's defaulting and
admission (``emulator.base.apiserver.defaults``: a pod template gets only ``SetDefaults_PodSpec``,
no admission), nor validation (``workloadvalidation``).

=========================  ==============================================================
kind                       defaults (a field is set only when unset)
=========================  ==============================================================
Deployment                 replicas 1; strategy RollingUpdate with maxUnavailable and
                           maxSurge 25%; revisionHistoryLimit 10; progressDeadlineSeconds
                           600
ReplicaSet                 replicas 1
StatefulSet                replicas 1; podManagementPolicy OrderedReady; updateStrategy
                           RollingUpdate with partition 0; revisionHistoryLimit 10;
                           persistentVolumeClaimRetentionPolicy Retain/Retain; each
                           volumeClaimTemplate as a PersistentVolumeClaim
DaemonSet                  updateStrategy RollingUpdate with maxUnavailable 1, maxSurge 0;
                           revisionHistoryLimit 10
Job                        parallelism and completions 1 when both unset, else
                           parallelism 1; backoffLimit 6 (2147483647 with
                           backoffLimitPerIndex); completionMode NonIndexed; suspend
                           false; manualSelector false; podReplacementPolicy
                           TerminatingOrFailed (Failed with a podFailurePolicy); the
                           Job's labels are its template's when it has none
CronJob                    concurrencyPolicy Allow; suspend false;
                           successfulJobsHistoryLimit 3; failedJobsHistoryLimit 1
Service                    type ClusterIP; sessionAffinity None; each port's protocol
                           TCP and targetPort its port
PodDisruptionBudget        none
pod templates              restartPolicy Always, terminationGracePeriodSeconds 30,
                           schedulerName default-scheduler (``SetDefaults_PodSpec``)
=========================  ==============================================================
"""

from __future__ import annotations

from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.apps import (
    DaemonSet,
    DaemonSetUpdateStrategy,
    Deployment,
    DeploymentStrategy,
    ReplicaSet,
    RollingUpdateDaemonSet,
    RollingUpdateDeployment,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetUpdateStrategy,
)
from emulator.base.api.batch import (
    CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
    CronJob,
    Job,
    JobSpec,
)
from emulator.base.api.core import LabelSelector, PodSpec
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.api.services import Service
from emulator.base.api.storagedefaults import default_storage

__all__ = ["DEFAULT_SCHEDULER", "default_object", "default_pod_spec", "generate_job_selector", "stored_job"]

DEFAULT_SCHEDULER: Final = "default-scheduler"
_MAX_INT32: Final = 2**31 - 1
_RETAIN: Final = "Retain"


def default_pod_spec(spec: PodSpec) -> PodSpec:
    """``SetDefaults_PodSpec`` for the fields the emulator models."""
    changes: dict[str, Any] = {}
    if not spec.restart_policy:
        changes["restart_policy"] = "Always"
    if spec.termination_grace_period_seconds is None:
        changes["termination_grace_period_seconds"] = 30
    if not spec.scheduler_name:
        changes["scheduler_name"] = DEFAULT_SCHEDULER
    return replace(spec, **changes) if changes else spec


def _template(template: PodTemplateSpec) -> PodTemplateSpec:
    spec = default_pod_spec(template.spec)
    return template if spec is template.spec else replace(template, spec=spec)


def _deployment(d: Deployment) -> Deployment:
    spec = d.spec
    strategy = spec.strategy
    if not strategy.type:
        strategy = DeploymentStrategy(type="RollingUpdate", rolling_update=strategy.rolling_update)
    if strategy.type == "RollingUpdate":
        ru = strategy.rolling_update or RollingUpdateDeployment()
        ru = RollingUpdateDeployment(
            max_unavailable="25%" if ru.max_unavailable is None else ru.max_unavailable,
            max_surge="25%" if ru.max_surge is None else ru.max_surge,
        )
        strategy = replace(strategy, rolling_update=ru)
    spec = replace(
        spec,
        replicas=1 if spec.replicas is None else spec.replicas,
        strategy=strategy,
        revision_history_limit=10 if spec.revision_history_limit is None else spec.revision_history_limit,
        progress_deadline_seconds=600 if spec.progress_deadline_seconds is None else spec.progress_deadline_seconds,
        template=_template(spec.template),
    )
    return replace(d, spec=spec)


def _replicaset(rs: ReplicaSet) -> ReplicaSet:
    spec = rs.spec
    return replace(
        rs,
        spec=replace(spec, replicas=1 if spec.replicas is None else spec.replicas, template=_template(spec.template)),
    )


def _statefulset(sts: StatefulSet) -> StatefulSet:
    spec = sts.spec
    strategy = spec.update_strategy
    if not strategy.type:
        strategy = StatefulSetUpdateStrategy(
            type="RollingUpdate", rolling_update=strategy.rolling_update or RollingUpdateStatefulSetStrategy()
        )
    if strategy.type == "RollingUpdate" and strategy.rolling_update is not None:
        ru = strategy.rolling_update
        if ru.partition is None:
            strategy = replace(strategy, rolling_update=replace(ru, partition=0))
    retention = spec.persistent_volume_claim_retention_policy or StatefulSetPersistentVolumeClaimRetentionPolicy()
    retention = StatefulSetPersistentVolumeClaimRetentionPolicy(
        when_deleted=retention.when_deleted or _RETAIN, when_scaled=retention.when_scaled or _RETAIN
    )
    spec = replace(
        spec,
        replicas=1 if spec.replicas is None else spec.replicas,
        pod_management_policy=spec.pod_management_policy or "OrderedReady",
        update_strategy=strategy,
        revision_history_limit=10 if spec.revision_history_limit is None else spec.revision_history_limit,
        persistent_volume_claim_retention_policy=retention,
        template=_template(spec.template),
        # each claim template defaulted as a claim (upstream's generated defaulter:
        # volumeMode Filesystem, status.phase Pending)
        volume_claim_templates=[default_storage(t) for t in spec.volume_claim_templates],
    )
    return replace(sts, spec=spec)


def _daemonset(ds: DaemonSet) -> DaemonSet:
    spec = ds.spec
    strategy = spec.update_strategy
    if not strategy.type:
        strategy = DaemonSetUpdateStrategy(type="RollingUpdate", rolling_update=strategy.rolling_update)
    if strategy.type == "RollingUpdate":
        ru = strategy.rolling_update or RollingUpdateDaemonSet()
        ru = RollingUpdateDaemonSet(
            max_unavailable=1 if ru.max_unavailable is None else ru.max_unavailable,
            max_surge=0 if ru.max_surge is None else ru.max_surge,
        )
        strategy = replace(strategy, rolling_update=ru)
    spec = replace(
        spec,
        update_strategy=strategy,
        revision_history_limit=10 if spec.revision_history_limit is None else spec.revision_history_limit,
        template=_template(spec.template),
    )
    return replace(ds, spec=spec)


def _job_spec(spec: JobSpec) -> JobSpec:
    """``SetDefaults_Job``'s spec part."""
    completions, parallelism = spec.completions, spec.parallelism
    if completions is None and parallelism is None:
        completions = parallelism = 1
    if parallelism is None:
        parallelism = 1
    backoff = spec.backoff_limit
    if backoff is None:
        backoff = _MAX_INT32 if spec.backoff_limit_per_index is not None else 6
    replacement = spec.pod_replacement_policy
    if replacement is None:
        replacement = "Failed" if spec.pod_failure_policy is not None else "TerminatingOrFailed"
    policy = spec.pod_failure_policy
    if policy is not None and any(c.status == "" for r in policy.rules for c in r.on_pod_conditions):
        rules = [
            replace(r, on_pod_conditions=[c if c.status else replace(c, status="True") for c in r.on_pod_conditions])
            for r in policy.rules
        ]
        policy = replace(policy, rules=rules)
    return replace(
        spec,
        completions=completions,
        parallelism=parallelism,
        backoff_limit=backoff,
        completion_mode=spec.completion_mode or "NonIndexed",
        suspend=False if spec.suspend is None else spec.suspend,
        manual_selector=False if spec.manual_selector is None else spec.manual_selector,
        pod_replacement_policy=replacement,
        pod_failure_policy=policy,
        template=_template(spec.template),
    )


def _job(job: Job) -> Job:
    meta = job.metadata
    template_labels = job.spec.template.metadata.labels
    if template_labels and not meta.labels:
        meta = replace(meta, labels=dict(template_labels))
    return replace(job, metadata=meta, spec=_job_spec(job.spec))


def _cronjob(cj: CronJob) -> CronJob:
    spec = cj.spec
    jt = spec.job_template
    spec = replace(
        spec,
        concurrency_policy=spec.concurrency_policy or "Allow",
        suspend=False if spec.suspend is None else spec.suspend,
        successful_jobs_history_limit=3
        if spec.successful_jobs_history_limit is None
        else spec.successful_jobs_history_limit,
        failed_jobs_history_limit=1 if spec.failed_jobs_history_limit is None else spec.failed_jobs_history_limit,
        job_template=replace(jt, spec=replace(jt.spec, template=_template(jt.spec.template))),
    )
    return replace(cj, spec=spec)


def _service(svc: Service) -> Service:
    spec = svc.spec
    ports = [
        replace(
            p,
            protocol=p.protocol or "TCP",
            target_port=p.port if p.target_port in (None, 0, "") else p.target_port,
        )
        for p in spec.ports
    ]
    spec = replace(spec, type=spec.type or "ClusterIP", session_affinity=spec.session_affinity or "None", ports=ports)
    return replace(svc, spec=spec)


_DEFAULTERS: Final[dict[type[Any], Any]] = {
    Deployment: _deployment,
    ReplicaSet: _replicaset,
    StatefulSet: _statefulset,
    DaemonSet: _daemonset,
    Job: _job,
    CronJob: _cronjob,
    Service: _service,
}


def default_object(obj: Any) -> Any:
    """``obj`` with upstream's defaults for its kind; other kinds are returned unchanged."""
    fn = _DEFAULTERS.get(type(obj))
    return obj if fn is None else fn(obj)


def generate_job_selector(job: Job) -> Job:
    """The Job strategy's ``generateSelector`` when ``manualSelector`` is not true: the
    template gets the labels ``batch.kubernetes.io/job-name`` and ``job-name`` (the Job's
    name) and ``batch.kubernetes.io/controller-uid`` and ``controller-uid`` (its uid) unless
    the user set them, and the selector's ``matchLabels`` gets the controller-uid label
    (a user's labels and selector are kept: validation refuses those that conflict)."""
    if job.spec.manual_selector:
        return job
    meta = job.metadata
    labels = dict(job.spec.template.metadata.labels)
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, meta.name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, meta.uid)
    selector = job.spec.selector or LabelSelector()
    match_labels = dict(selector.match_labels)
    match_labels.setdefault(CONTROLLER_UID_LABEL, meta.uid)
    template = job.spec.template
    spec = replace(
        job.spec,
        selector=replace(selector, match_labels=match_labels),
        template=replace(template, metadata=replace(template.metadata, labels=labels)),
    )
    return replace(job, spec=spec)


def stored_job(job: Job) -> Job:
    """A defaulted Job as the API server stores and serves it: its generated selector, then
    defaulted again, as upstream decodes what it reads back from storage: a Job created
    without labels gets its template's, the generated ones included (``kubectl describe job``
    shows ``controller-uid`` among the Job's labels). A fixed point of itself."""
    return _job(generate_job_selector(job))
