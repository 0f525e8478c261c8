"""The API server's validation of the workload kinds (upstream ``pkg/apis/apps/validation``,
``batch/validation``, ``policy/validation``, and the Service's selector and ports).

What this module owns: ``workload_problems(obj, pod_problem)``, every problem of a
*defaulted* Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, Service or
PodDisruptionBudget, in upstream's order, each as ``(path, detail)`` with upstream's path
and wording. The pod template is validated as a pod by the caller's ``pod_problem``
(``validation``'s pod checks, passed in so that this module does not import the module that
dispatches to it) under ``spec.template.`` (``spec.jobTemplate.spec.template.`` for a CronJob).

=====================  =====================================================================
kind                   checks
=====================  =====================================================================
Deployment             replicas ≥ 0; selector required, valid, not empty; template labels
                       matched by the selector; the template as a pod, restartPolicy
                       Always, no activeDeadlineSeconds; strategy (Recreate without
                       rollingUpdate; maxUnavailable and maxSurge ints ≥ 0 or percents, not
                       both 0, maxUnavailable ≤ 100%); minReadySeconds,
                       revisionHistoryLimit, progressDeadlineSeconds ≥ 0, the last
                       greater than minReadySeconds
ReplicaSet             replicas, minReadySeconds ≥ 0; selector and template as Deployment
StatefulSet            podManagementPolicy; updateStrategy (partition ≥ 0, OnDelete without
                       rollingUpdate); replicas, minReadySeconds, ordinals.start ≥ 0;
                       selector and template; persistentVolumeClaimRetentionPolicy
                       (Retain or Delete each); each volumeClaimTemplate's spec as a
                       claim's (``volumevalidation.pvc_spec_problems``)
DaemonSet              selector and template; minReadySeconds ≥ 0; updateStrategy (exactly
                       one of maxUnavailable and maxSurge non-zero, each ≤ 100%)
Job                    the generated selector (when manualSelector is false); parallelism,
                       completions, activeDeadlineSeconds, backoffLimit,
                       ttlSecondsAfterFinished ≥ 0; completionMode (Indexed needs
                       completions); backoffLimitPerIndex, maxFailedIndexes,
                       podFailurePolicy actions, successPolicy (``jobvalidation``);
                       the template as a pod with restartPolicy OnFailure or Never;
                       selector required and matching the template's labels
CronJob                name ≤ 52 characters; schedule (``cron``; no ``TZ=``);
                       startingDeadlineSeconds ≥ 0; concurrencyPolicy; the job template's
                       spec as a Job's, without selector or manualSelector; history limits
                       ≥ 0
Service                type; ports (required unless headless or ExternalName, 1-65535,
                       protocol, names unique and required when several); selector labels
PodDisruptionBudget    not both minAvailable and maxUnavailable; each an int ≥ 0 or a
                       percent ≤ 100%; selector; unhealthyPodEvictionPolicy
=====================  =====================================================================

Upstream ``parallelism: 0`` is valid (a paused Job): only negative counts are refused.
``status_problems(obj)`` (``workloadstatusvalidation``'s, re-exported) checks the status
the controllers write (upstream ``Validate<Kind>Status``): every count ≥ 0, and a
Deployment's and ReplicaSet's ready, available, updated and fully labeled replicas not above
``status.replicas`` (available not above ready).

``workload_update_problems(old, new)`` adds upstream's update rules: the selector of every
workload kind is immutable; a Job's template and completions too; a StatefulSet may change
only replicas, ordinals, template, updateStrategy, persistentVolumeClaimRetentionPolicy and
minReadySeconds.

A value that upstream prints with Go's ``%#v`` is printed the same way for maps of strings
and IntOrStrings; structs (a selector, a strategy) are printed as JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

import msgspec

from emulator.base.api.apps import DaemonSet, Deployment, ReplicaSet, StatefulSet
from emulator.base.api.batch import CONTROLLER_UID_LABEL, JOB_NAME_LABEL, CronJob, Job, JobSpec
from emulator.base.api.core import LabelSelector
from emulator.base.api.cron import CronError, parse_schedule
from emulator.base.api.intstr import (
    IntOrString,
    go_repr,
    is_zero,
    not_more_than_100_percent_problems,
    positive_int_or_percent_problems,
)
from emulator.base.api.jobvalidation import index_count_problems, policy_problems
from emulator.base.api.labels import go_quote
from emulator.base.api.labelselector import compile_selector, label_problems, label_selector_problems
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.api.policy import PodDisruptionBudget
from emulator.base.api.services import Service
from emulator.base.api.volumevalidation import pvc_spec_problems, supported
from emulator.base.api.workloadstatusvalidation import status_problems

__all__ = ["PodProblem", "Problem", "status_problems", "workload_problems", "workload_update_problems"]

Problem = tuple[str, str]
PodProblem = Callable[[PodTemplateSpec], "Problem | None"]
"""The first problem of a template validated as a pod, its path relative to the template
(``spec.containers[0].image``), or None."""

_JSON: Final = msgspec.json.Encoder()
_NOT_MATCHING: Final = "`selector` does not match template `labels`"
_ALWAYS: Final = ("Always",)
_JOB_RESTART: Final = ("OnFailure", "Never")
_CRONJOB_NAME_MAX: Final = 52
_SERVICE_TYPES: Final = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")


def _json(value: Any) -> str:
    return _JSON.encode(value).decode()


def _go_map(labels: Mapping[str, str]) -> str:
    """Go's ``%#v`` of a ``map[string]string`` (keys sorted, as ``fmt`` prints maps)."""
    if not labels:
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(f"{go_quote(k)}:{go_quote(labels[k])}" for k in sorted(labels)) + "}"


def _supported(value: str, allowed: Sequence[str]) -> str:
    """``field.NotSupported``'s detail."""
    return f"Unsupported value: {go_quote(value)}: supported values: " + ", ".join(go_quote(v) for v in allowed)


def _nonnegative(value: int | None, path: str) -> Iterator[Problem]:
    """``ValidateNonnegativeField`` (an unset pointer is not checked)."""
    if value is not None and value < 0:
        yield path, f"Invalid value: {value}: must be greater than or equal to 0"


# --- selector and template -----------------------------------------------------------------------


def _selector(selector: LabelSelector | None, kind: str, path: str) -> Iterator[Problem]:
    """Required, valid (``ValidateLabelSelector``) and not empty."""
    if selector is None:
        yield f"{path}.selector", "Required value"
        return
    yield from label_selector_problems(selector, f"{path}.selector")
    if not selector.match_labels and not selector.match_expressions:
        yield f"{path}.selector", f"Invalid value: {_json(selector)}: empty selector is invalid for {kind}"


def _matches_template(selector: LabelSelector | None, template: PodTemplateSpec, path: str) -> Iterator[Problem]:
    """The selector (``LabelSelectorAsSelector``; nil selects nothing) matches the labels."""
    try:
        compiled = compile_selector(selector)
    except ValueError:
        return  # already reported by label_selector_problems
    labels = template.metadata.labels
    if not compiled.empty() and not compiled.matches(labels):
        yield f"{path}.metadata.labels", f"Invalid value: {_go_map(labels)}: {_NOT_MATCHING}"


def _template(
    template: PodTemplateSpec, path: str, pod_problem: PodProblem, restart: Sequence[str]
) -> Iterator[Problem]:
    """``ValidatePodTemplateSpec`` (labels, the pod) and the kind's restartPolicy rule."""
    yield from label_problems(template.metadata.labels, f"{path}.metadata.labels")
    problem = pod_problem(template)
    if problem is not None:
        yield f"{path}.{problem[0]}", problem[1]
    policy = template.spec.restart_policy
    if policy not in restart:
        yield f"{path}.spec.restartPolicy", _supported(policy, restart)


def _replicated(
    replicas: int | None,
    selector: LabelSelector | None,
    template: PodTemplateSpec,
    empty_name: str,
    pod_problem: PodProblem,
) -> Iterator[Problem]:
    yield from _nonnegative(replicas, "spec.replicas")
    yield from _selector(selector, empty_name, "spec")
    yield from _matches_template(selector, template, "spec.template")
    yield from _template(template, "spec.template", pod_problem, _ALWAYS)


# --- apps ------------------------------------------------------------------------------------------


def _rolling_both(unavailable: IntOrString, surge: IntOrString, path: str) -> Iterator[Problem]:
    yield from positive_int_or_percent_problems(unavailable, f"{path}.maxUnavailable")
    yield from positive_int_or_percent_problems(surge, f"{path}.maxSurge")


def _deployment(d: Deployment, pod_problem: PodProblem) -> Iterator[Problem]:
    spec = d.spec
    yield from _replicated(spec.replicas, spec.selector, spec.template, "deployment", pod_problem)
    strategy, path = spec.strategy, "spec.strategy"
    ru = strategy.rolling_update
    if strategy.type == "Recreate":
        if ru is not None:
            yield f"{path}.rollingUpdate", "Forbidden: may not be specified when strategy `type` is 'Recreate'"
    elif strategy.type == "RollingUpdate":
        if ru is None or ru.max_unavailable is None or ru.max_surge is None:
            yield f"{path}.rollingUpdate", "Required value: this should be defaulted and never be nil"
        else:
            yield from _rolling_both(ru.max_unavailable, ru.max_surge, f"{path}.rollingUpdate")
            if is_zero(ru.max_unavailable) and is_zero(ru.max_surge):
                yield (
                    f"{path}.rollingUpdate.maxUnavailable",
                    f"Invalid value: {go_repr(ru.max_unavailable)}: may not be 0 when `maxSurge` is 0",
                )
            yield from not_more_than_100_percent_problems(ru.max_unavailable, f"{path}.rollingUpdate.maxUnavailable")
    else:
        yield path, _supported(strategy.type, ("Recreate", "RollingUpdate"))
    yield from _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    yield from _nonnegative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    deadline = spec.progress_deadline_seconds
    if deadline is not None:
        yield from _nonnegative(deadline, "spec.progressDeadlineSeconds")
        if deadline <= spec.min_ready_seconds:
            yield "spec.progressDeadlineSeconds", f"Invalid value: {deadline}: must be greater than minReadySeconds"


def _replicaset(rs: ReplicaSet, pod_problem: PodProblem) -> Iterator[Problem]:
    spec = rs.spec
    yield from _nonnegative(spec.replicas, "spec.replicas")
    yield from _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    yield from _replicated(None, spec.selector, spec.template, "deployment", pod_problem)  # sic


_RETENTION: Final = ("Retain", "Delete")


def _statefulset(sts: StatefulSet, pod_problem: PodProblem) -> Iterator[Problem]:
    spec = sts.spec
    policy = spec.pod_management_policy
    if policy not in ("OrderedReady", "Parallel"):
        yield "spec.podManagementPolicy", f"Invalid value: {go_quote(policy)}: must be 'OrderedReady' or 'Parallel'"
    strategy, path = spec.update_strategy, "spec.updateStrategy"
    if strategy.type == "OnDelete":
        if strategy.rolling_update is not None:
            yield (
                f"{path}.rollingUpdate",
                f"Invalid value: {_json(strategy.rolling_update)}: only allowed for updateStrategy 'RollingUpdate'",
            )
    elif strategy.type == "RollingUpdate":
        ru = strategy.rolling_update
        if ru is not None:
            yield from _nonnegative(ru.partition, f"{path}.rollingUpdate.partition")
            if ru.max_unavailable is not None:
                yield from positive_int_or_percent_problems(ru.max_unavailable, f"{path}.rollingUpdate.maxUnavailable")
    else:
        yield path, f"Invalid value: {_json(strategy)}: must be 'RollingUpdate' or 'OnDelete'"
    yield from _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    if spec.ordinals is not None:
        yield from _nonnegative(spec.ordinals.start, "spec.ordinals.start")
    yield from _replicated(spec.replicas, spec.selector, spec.template, "statefulset", pod_problem)
    retention, path = spec.persistent_volume_claim_retention_policy, "spec.persistentVolumeClaimRetentionPolicy"
    if retention is not None:
        # upstream ValidatePersistentVolumeClaimRetentionPolicyType
        if retention.when_deleted not in _RETENTION:
            yield f"{path}.whenDeleted", supported(retention.when_deleted, _RETENTION)
        if retention.when_scaled not in _RETENTION:
            yield f"{path}.whenScaled", supported(retention.when_scaled, _RETENTION)
    for i, claim in enumerate(spec.volume_claim_templates):
        yield from pvc_spec_problems(claim.spec, f"spec.volumeClaimTemplates[{i}].spec")


def _daemonset(ds: DaemonSet, pod_problem: PodProblem) -> Iterator[Problem]:
    spec = ds.spec
    yield from _replicated(None, spec.selector, spec.template, "daemonset", pod_problem)
    yield from _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    strategy, path = spec.update_strategy, "spec.updateStrategy"
    if strategy.type == "RollingUpdate":
        ru = strategy.rolling_update
        if ru is None or ru.max_unavailable is None or ru.max_surge is None:
            yield f"{path}.rollingUpdate", "Required value"
        else:
            at = f"{path}.rollingUpdate"
            yield from _rolling_both(ru.max_unavailable, ru.max_surge, at)
            yield from not_more_than_100_percent_problems(ru.max_unavailable, f"{at}.maxUnavailable")
            yield from not_more_than_100_percent_problems(ru.max_surge, f"{at}.maxSurge")
            unavailable, surge = not is_zero(ru.max_unavailable), not is_zero(ru.max_surge)
            if unavailable and surge:
                yield (
                    f"{at}.maxSurge",
                    f"Invalid value: {go_repr(ru.max_surge)}: may not be set when maxUnavailable is non-zero",
                )
            elif not unavailable and not surge:
                yield f"{at}.maxUnavailable", "Required value: cannot be 0 when maxSurge is 0"
    elif strategy.type != "OnDelete":
        yield path, _supported(strategy.type, ("RollingUpdate", "OnDelete"))
    yield from _nonnegative(spec.revision_history_limit, "spec.revisionHistoryLimit")


# --- batch -----------------------------------------------------------------------------------------


def _job_spec(spec: JobSpec, path: str, pod_problem: PodProblem) -> Iterator[Problem]:
    """``validateJobSpec``: counts, completion mode, the template."""
    yield from _nonnegative(spec.parallelism, f"{path}.parallelism")
    yield from _nonnegative(spec.completions, f"{path}.completions")
    yield from _nonnegative(spec.active_deadline_seconds, f"{path}.activeDeadlineSeconds")
    yield from _nonnegative(spec.backoff_limit, f"{path}.backoffLimit")
    yield from _nonnegative(spec.ttl_seconds_after_finished, f"{path}.ttlSecondsAfterFinished")
    yield from index_count_problems(spec, path)
    mode = spec.completion_mode
    if mode not in (None, "NonIndexed", "Indexed"):
        yield f"{path}.completionMode", _supported(mode, ("NonIndexed", "Indexed"))
    if mode == "Indexed" and spec.completions is None:
        yield f"{path}.completions", "Required value: when completion mode is Indexed"
    yield from policy_problems(spec, path)  # backoffLimitPerIndex, podFailurePolicy, successPolicy
    yield from _template(spec.template, f"{path}.template", pod_problem, _JOB_RESTART)


def _job(job: Job, pod_problem: PodProblem) -> Iterator[Problem]:
    spec, meta = job.spec, job.metadata
    if not spec.manual_selector and spec.selector is not None:
        tmpl_labels = spec.template.metadata.labels
        for key, want in ((CONTROLLER_UID_LABEL, meta.uid), (JOB_NAME_LABEL, meta.name)):
            at = f"spec.template.metadata.labels[{key}]"
            if key not in tmpl_labels:
                yield at, f"Required value: must be '{want}'"
            elif tmpl_labels[key] != want:
                yield at, f"Invalid value: {_go_map(tmpl_labels)}: must be '{want}'"
        expected = {CONTROLLER_UID_LABEL: meta.uid, JOB_NAME_LABEL: meta.name}
        try:
            generated = compile_selector(spec.selector).matches(expected)
        except ValueError:
            generated = True  # reported below by label_selector_problems
        if not generated:
            yield "spec.selector", f"Invalid value: {_json(spec.selector)}: `selector` not auto-generated"
    yield from _job_spec(spec, "spec", pod_problem)
    if spec.selector is None:
        yield "spec.selector", "Required value"
    else:
        yield from label_selector_problems(spec.selector, "spec.selector")
    yield from _matches_template(spec.selector, spec.template, "spec.template")


def _cronjob(cj: CronJob, pod_problem: PodProblem) -> Iterator[Problem]:
    spec, name = cj.spec, cj.metadata.name
    if len(name) > _CRONJOB_NAME_MAX:
        yield "metadata.name", f"Invalid value: {go_quote(name)}: must be no more than {_CRONJOB_NAME_MAX} characters"
    if not spec.schedule:
        yield "spec.schedule", "Required value"
    elif "TZ" in spec.schedule:
        yield (
            "spec.schedule",
            f"Invalid value: {go_quote(spec.schedule)}: "
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        )
    else:
        try:
            parse_schedule(spec.schedule)
        except CronError as err:
            yield "spec.schedule", f"Invalid value: {go_quote(spec.schedule)}: {err}"
    yield from _nonnegative(spec.starting_deadline_seconds, "spec.startingDeadlineSeconds")
    policy = spec.concurrency_policy
    if not policy:
        yield "spec.concurrencyPolicy", "Required value"
    elif policy not in ("Allow", "Forbid", "Replace"):
        yield "spec.concurrencyPolicy", _supported(policy, ("Allow", "Forbid", "Replace"))
    job_spec, at = spec.job_template.spec, "spec.jobTemplate.spec"
    yield from _job_spec(job_spec, at, pod_problem)
    if job_spec.selector is not None:
        yield f"{at}.selector", f"Invalid value: {_json(job_spec.selector)}: `selector` will be auto-generated"
    if job_spec.manual_selector:
        yield f"{at}.manualSelector", 'Unsupported value: true: supported values: "nil", "false"'
    yield from _nonnegative(spec.successful_jobs_history_limit, "spec.successfulJobsHistoryLimit")
    yield from _nonnegative(spec.failed_jobs_history_limit, "spec.failedJobsHistoryLimit")


# --- Service, PodDisruptionBudget ------------------------------------------------------------------


def _service(svc: Service) -> Iterator[Problem]:
    spec = svc.spec
    if spec.type not in _SERVICE_TYPES:
        yield "spec.type", _supported(spec.type, _SERVICE_TYPES)
    headless = spec.cluster_ip == "None"
    if not spec.ports and spec.type != "ExternalName" and not headless:
        yield "spec.ports", "Required value"
    names: set[str] = set()
    for i, port in enumerate(spec.ports):
        p = f"spec.ports[{i}]"
        if len(spec.ports) > 1 and not port.name:
            yield f"{p}.name", "Required value"
        elif port.name in names:
            yield f"{p}.name", f"Duplicate value: {go_quote(port.name)}"
        names.add(port.name)
        if not 0 < port.port < 65536:
            yield f"{p}.port", f"Invalid value: {port.port}: must be between 1 and 65535, inclusive"
        if port.protocol not in _PROTOCOLS:
            yield f"{p}.protocol", _supported(port.protocol, _PROTOCOLS)
        target = port.target_port
        if isinstance(target, int) and not 0 < target < 65536:
            yield f"{p}.targetPort", f"Invalid value: {target}: must be between 1 and 65535, inclusive"
    yield from label_problems(spec.selector, "spec.selector")


def _pdb(pdb: PodDisruptionBudget) -> Iterator[Problem]:
    spec = pdb.spec
    if spec.min_available is not None and spec.max_unavailable is not None:
        yield "spec", f"Invalid value: {_json(spec)}: minAvailable and maxUnavailable cannot be both set"
    for child, value in (("minAvailable", spec.min_available), ("maxUnavailable", spec.max_unavailable)):
        if value is not None:
            yield from positive_int_or_percent_problems(value, f"spec.{child}")
            yield from not_more_than_100_percent_problems(value, f"spec.{child}")
    yield from label_selector_problems(spec.selector, "spec.selector")
    policy = spec.unhealthy_pod_eviction_policy
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        yield "spec.unhealthyPodEvictionPolicy", _supported(policy, ("AlwaysAllow", "IfHealthyBudget"))


def workload_problems(obj: Any, pod_problem: PodProblem) -> Iterator[Problem]:
    """Every problem of a defaulted workload object, in upstream's order (none for other kinds),
    its status's last."""
    yield from _spec_problems(obj, pod_problem)
    yield from status_problems(obj)


def _spec_problems(obj: Any, pod_problem: PodProblem) -> Iterator[Problem]:
    match obj:
        case Deployment():
            yield from _deployment(obj, pod_problem)
        case ReplicaSet():
            yield from _replicaset(obj, pod_problem)
        case StatefulSet():
            yield from _statefulset(obj, pod_problem)
        case DaemonSet():
            yield from _daemonset(obj, pod_problem)
        case Job():
            yield from _job(obj, pod_problem)
        case CronJob():
            yield from _cronjob(obj, pod_problem)
        case Service():
            yield from _service(obj)
        case PodDisruptionBudget():
            yield from _pdb(obj)


_IMMUTABLE: Final = "field is immutable"
_STS_MUTABLE: Final = frozenset(
    {
        "replicas",
        "ordinals",
        "template",
        "update_strategy",
        "persistent_volume_claim_retention_policy",
        "min_ready_seconds",
    }
)


def workload_update_problems(old: Any, new: Any) -> Iterator[Problem]:
    """Upstream's ``Validate<Kind>Update`` beyond ``workload_problems`` (both defaulted)."""
    if isinstance(new, Deployment | ReplicaSet | DaemonSet | Job | StatefulSet):
        if isinstance(new, StatefulSet):
            changed = [f for f in new.spec.__struct_fields__ if getattr(new.spec, f) != getattr(old.spec, f)]
            if any(f not in _STS_MUTABLE for f in changed):
                yield (
                    "spec",
                    "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                    "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
                    "are forbidden",
                )
                return
        if new.spec.selector != old.spec.selector:
            yield "spec.selector", f"Invalid value: {_json(new.spec.selector)}: {_IMMUTABLE}"
    if isinstance(new, Job):
        if new.spec.completions != old.spec.completions:
            yield "spec.completions", f"Invalid value: {new.spec.completions}: {_IMMUTABLE}"
        if new.spec.template != old.spec.template:
            yield "spec.template", f"Invalid value: {_json(new.spec.template)}: {_IMMUTABLE}"
