"""Validation of API objects, as the apiserver does on create and update.

``validate(obj)`` raises ``Invalid`` naming the first bad field with its path
(``spec.containers[0].resources.requests.cpu``). It checks what the emulator relies on:
names, labels, annotations (keys, 256 KiB in all: ``metavalidation``), a Lease's spec, container names,
``schedulerName``, quantities (malformed, negative, request above limit), priorities,
taints, and every pod field the scheduler reads (``podvalidation``: node selector, affinity,
tolerations, spread constraints, ports, with upstream's paths and messages). Defaulting lives
in the apiserver.

``validate_status_update`` and ``validate_update`` are ``validate`` narrowed to what a status
write or an update can change (they live here because they depend on what ``validate`` reads:
a check added to ``validate`` must be weighed against them too).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from emulator.base.api.apps import DaemonSet, Deployment, ReplicaSet, StatefulSet
from emulator.base.api.autoscaling import HorizontalPodAutoscaler
from emulator.base.api.autoscalingvalidation import default_hpa, hpa_problems, hpa_status_problems
from emulator.base.api.batch import CronJob, Job
from emulator.base.api.config import ConfigMap, Secret, config_map_problems, merge_string_data, secret_problems
from emulator.base.api.core import Container, Event, Node, Pod
from emulator.base.api.errors import Invalid
from emulator.base.api.karpenter import KARPENTER_KINDS, default_karpenter
from emulator.base.api.karpentervalidation import karpenter_problems, karpenter_update_problems
from emulator.base.api.labels import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
)
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.metavalidation import (
    annotations_problem,
    check_meta,
    kubelet_annotations_problem,
    metadata_labels_problem,
)
from emulator.base.api.podclaimvalidation import pod_claim_name_problems, pod_claim_problems
from emulator.base.api.podresize import resize_policy_problems
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.api.podvalidation import scheduling_errors
from emulator.base.api.policy import PodDisruptionBudget
from emulator.base.api.probevalidation import probe_problems
from emulator.base.api.quantity import TOO_LARGE, Quantity, fits_int64_milli
from emulator.base.api.resource import RESOURCE_KINDS
from emulator.base.api.resourcedefaults import default_resource
from emulator.base.api.resourcevalidation import resource_problems, resource_update_problems
from emulator.base.api.scheduling import Lease, LeaseSpec, PriorityClass
from emulator.base.api.services import Service
from emulator.base.api.storage import STORAGE_KINDS
from emulator.base.api.storagedefaults import default_storage
from emulator.base.api.storagevalidation import storage_problems, storage_update_problems
from emulator.base.api.taints import TAINT_EFFECTS
from emulator.base.api.workloaddefaults import default_object, stored_job
from emulator.base.api.workloadvalidation import Problem, status_problems, workload_problems, workload_update_problems

__all__ = [
    "WORKLOAD_KINDS",
    "quantity_errors",
    "validate",
    "validate_event",
    "validate_karpenter_update",
    "validate_pod_metadata",
    "validate_resource_update",
    "validate_status_update",
    "validate_storage_update",
    "validate_update",
    "validate_workload_update",
]

WORKLOAD_KINDS = (DaemonSet, Deployment, ReplicaSet, StatefulSet, Job, CronJob, Service, PodDisruptionBudget)
"""The kinds ``workloadvalidation`` checks (defaulted first: see ``_workload``)."""
_NAMESPACED = frozenset(
    {
        "Pod",
        "Event",
        "Lease",
        "Binding",
        "ConfigMap",
        "Secret",
        "PersistentVolumeClaim",
        "CSIStorageCapacity",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "HorizontalPodAutoscaler",
        *(k.__name__ for k in WORKLOAD_KINDS),
    }
)

_PREEMPTION = (None, "Never", "PreemptLowerPriority")
_FULLY_VALIDATED_ON_UPDATE: tuple[type[Any], ...] = (
    Pod,
    Node,
    PriorityClass,
    ConfigMap,
    Secret,
    HorizontalPodAutoscaler,
    *STORAGE_KINDS,
    *WORKLOAD_KINDS,
    *KARPENTER_KINDS,
)


def _resource_lists(obj: object) -> Iterator[tuple[str, Mapping[str, Quantity]]]:
    if isinstance(obj, Pod):
        for group, containers in (
            ("initContainers", obj.spec.init_containers),
            ("containers", obj.spec.containers),
        ):
            for i, c in enumerate(containers):
                yield f"spec.{group}[{i}].resources.requests", c.resources.requests
                yield f"spec.{group}[{i}].resources.limits", c.resources.limits
        yield "spec.overhead", obj.spec.overhead
    elif isinstance(obj, Node):
        yield "status.capacity", obj.status.capacity
        yield "status.allocatable", obj.status.allocatable


def quantity_errors(obj: object) -> Iterator[tuple[str, Quantity]]:
    """Every malformed, negative or too large quantity of ``obj`` with its field path.

    Too large: a milli-value beyond an int64 (``quantity.fits_int64_milli``). Upstream's API
    server accepts such a quantity but its scheduler reads ``MilliValue()`` as an int64 that
    cannot hold it; we refuse it, naming ``resource.MaxMilliValue`` (``quantity.TOO_LARGE``)."""
    for path, rl in _resource_lists(obj):
        for name, q in rl.items():
            if q.error or q.milli < 0 or not fits_int64_milli(q):
                yield f"{path}.{name}", q


def _lease_problem(spec: LeaseSpec) -> tuple[str, str] | None:
    """``ValidateLeaseSpec``: a positive duration, no negative transition count."""
    if spec.lease_duration_seconds is not None and spec.lease_duration_seconds <= 0:
        return "spec.leaseDurationSeconds", f"Invalid value: {spec.lease_duration_seconds}: must be greater than 0"
    if spec.lease_transitions is not None and spec.lease_transitions < 0:
        detail = f"Invalid value: {spec.lease_transitions}: must be greater than or equal to 0"
        return "spec.leaseTransitions", detail
    return None


def _container(kind: str, name: str, path: str, c: Container) -> None:
    if not c.name:
        raise Invalid.at(kind, name, f"{path}.name", "Required value")
    if errors := dns1123_label_errors(c.name):
        raise Invalid.at(kind, name, f"{path}.name", f"Invalid value: {go_quote(c.name)}: {'; '.join(errors)}")
    if not c.image:
        raise Invalid.at(kind, name, f"{path}.image", "Required value")
    for res, req in c.resources.requests.items():
        lim = c.resources.limits.get(res)
        if lim is not None and req.milli > lim.milli:
            raise Invalid.at(
                kind,
                name,
                f"{path}.resources.requests",
                f'Invalid value: "{req.text}": must be less than or equal to {res} limit of {lim.text}',
            )


def _pod(pod: Pod) -> None:
    kind, name, spec = "Pod", pod.metadata.name, pod.spec
    if not spec.containers:
        raise Invalid.at(kind, name, "spec.containers", "Required value")
    seen: set[str] = set()
    for group, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, c in enumerate(containers):
            _container(kind, name, f"spec.{group}[{i}]", c)
            if c.name in seen:
                raise Invalid.at(kind, name, f"spec.{group}[{i}].name", f'Duplicate value: "{c.name}"')
            seen.add(c.name)
    if spec.scheduler_name and (errors := dns1123_subdomain_errors(spec.scheduler_name)):
        detail = f"Invalid value: {go_quote(spec.scheduler_name)}: {'; '.join(errors)}"
        raise Invalid.at(kind, name, "spec.schedulerName", detail)
    problem = (
        next(scheduling_errors(spec), None)
        or next(resize_policy_problems(spec), None)
        or next(probe_problems(spec), None)
    )
    uses_claims = spec.resource_claims or any(c.resources.claims for c in (*spec.containers, *spec.init_containers))
    if problem is None and uses_claims:
        problem = next(pod_claim_problems(name, spec), None)
    if problem is not None:
        raise Invalid.at(kind, name, *problem)
    notes = pod.metadata.annotations
    if notes and (problem := kubelet_annotations_problem(notes)):
        raise Invalid.at(kind, name, *problem)
    if spec.preemption_policy not in _PREEMPTION:
        raise Invalid.at(kind, name, "spec.preemptionPolicy", f'Unsupported value: "{spec.preemption_policy}"')
    if spec.termination_grace_period_seconds is not None and spec.termination_grace_period_seconds < 0:
        raise Invalid.at(kind, name, "spec.terminationGracePeriodSeconds", "Invalid value: must be >= 0")


def _node(node: Node) -> None:
    for i, t in enumerate(node.spec.taints):
        if t.effect not in TAINT_EFFECTS:
            raise Invalid.at("Node", node.metadata.name, f"spec.taints[{i}].effect", f'Unsupported value: "{t.effect}"')
        if not t.key:
            raise Invalid.at("Node", node.metadata.name, f"spec.taints[{i}].key", "Required value")


def _template_problem(template: PodTemplateSpec) -> Problem | None:
    """A pod template validated as a pod (``ValidatePodTemplateSpec``), path relative to it."""
    meta = ObjectMeta(name="template", labels=template.metadata.labels, annotations=template.metadata.annotations)
    pod = Pod(metadata=meta, spec=template.spec)
    try:
        validate(pod)
    except Invalid as err:
        return err.field, err.detail
    return None


def _qualified(obj: Any) -> str:
    """The kind as upstream names it in errors, with its group: ``Deployment.apps``,
    ``StorageClass.storage.k8s.io``."""
    group = obj.api_version.rpartition("/")[0]
    if group not in ("storage.k8s.io", "resource.k8s.io"):
        group = group.removesuffix(".k8s.io")
    return f"{obj.kind}.{group}" if group else str(obj.kind)


def _storage(obj: Any) -> None:
    """A storage kind's upstream validation, of the object as stored (defaulted)."""
    if problem := next(storage_problems(default_storage(obj)), None):
        raise Invalid.at(_qualified(obj), obj.metadata.name, *problem)


def validate_workload_update(current: Any, candidate: Any) -> None:
    """Upstream's update rules of a workload kind (immutable selectors...): ``Invalid``."""
    problem = next(workload_update_problems(current, candidate), None)
    if problem is not None:
        raise Invalid.at(_qualified(candidate), candidate.metadata.name, *problem)


def validate_storage_update(current: Any, candidate: Any) -> None:
    """A storage kind's update rules (immutable fields...): ``Invalid``."""
    if problem := next(storage_update_problems(current, candidate), None):
        raise Invalid.at(_qualified(candidate), candidate.metadata.name, *problem)


def _resource(obj: Any) -> None:
    """A ``resource.k8s.io`` kind's upstream validation, of the object as stored (defaulted)."""
    if problem := next(resource_problems(default_resource(obj)), None):
        raise Invalid.at(_qualified(obj), obj.metadata.name, *problem)


def validate_resource_update(current: Any, candidate: Any) -> None:
    """A ``resource.k8s.io`` kind's update rules (a claim's immutable spec...): ``Invalid``."""
    if problem := next(resource_update_problems(current, default_resource(candidate)), None):
        raise Invalid.at(_qualified(candidate), candidate.metadata.name, *problem)


def validate_karpenter_update(current: Any, candidate: Any) -> None:
    """A ``karpenter.sh`` kind's transition rules (the CRDs' ``oldSelf`` CEL rules): ``Invalid``."""
    if problem := next(karpenter_update_problems(current, default_karpenter(candidate)), None):
        raise Invalid.at(f"{candidate.kind}.karpenter.sh", candidate.metadata.name, *problem)


def _workload(obj: Any) -> None:
    """The kind's upstream validation, of the object as the API server stores it: defaulted
    (a manifest is checked as it will be stored) and, for a Job, with its generated selector
    (idempotent: a stored object is unchanged by both)."""
    stored = default_object(obj)
    if isinstance(stored, Job):
        stored = stored_job(stored)
    problem = next(workload_problems(stored, _template_problem), None)
    if problem is not None:
        raise Invalid.at(_qualified(obj), obj.metadata.name, *problem)


def validate(obj: object) -> None:
    """Raise ``Invalid`` for the first problem found in ``obj``; return None if it is valid."""
    kind = str(getattr(obj, "kind", type(obj).__name__))
    meta: ObjectMeta | None = getattr(obj, "metadata", None)
    if meta is not None:
        check_meta(kind, meta, namespaced=kind in _NAMESPACED)
    for path, q in quantity_errors(obj):
        name = meta.name if meta else ""
        if q.error:
            raise Invalid.at(kind, name, path, f'Invalid value: "{q.text}": {q.error}')
        if q.milli > 0:
            raise Invalid.at(kind, name, path, f'Invalid value: "{q.text}": {TOO_LARGE}')
        raise Invalid.at(kind, name, path, f'Invalid value: "{q.text}": must be greater than or equal to 0')
    if isinstance(obj, Pod):
        _pod(obj)
    elif isinstance(obj, WORKLOAD_KINDS):
        _workload(obj)
    elif isinstance(obj, Node):
        _node(obj)
    elif isinstance(obj, STORAGE_KINDS):
        _storage(obj)
    elif isinstance(obj, RESOURCE_KINDS):
        _resource(obj)
    elif isinstance(obj, HorizontalPodAutoscaler):
        if problem := next(hpa_problems(default_hpa(obj)), None):
            raise Invalid.at(_qualified(obj), obj.metadata.name, *problem)
    elif isinstance(obj, KARPENTER_KINDS):
        if problem := next(karpenter_problems(default_karpenter(obj)), None):
            raise Invalid.at(f"{kind}.karpenter.sh", obj.metadata.name, *problem)
    elif isinstance(obj, ConfigMap):
        if problem := next(config_map_problems(obj), None):
            raise Invalid.at(kind, obj.metadata.name, *problem)
    elif isinstance(obj, Secret):
        if problem := next(secret_problems(merge_string_data(obj)), None):
            raise Invalid.at(kind, obj.metadata.name, *problem)
    elif isinstance(obj, Lease):
        if problem := _lease_problem(obj.spec):
            raise Invalid.at("Lease.coordination.k8s.io", obj.metadata.name, *problem)
    elif isinstance(obj, PriorityClass) and obj.value > 1_000_000_000 and not obj.metadata.name.startswith("system-"):
        raise Invalid.at(
            kind,
            obj.metadata.name,
            "value",
            "Invalid value: must be no greater than 1000000000 for user priority classes",
        )


def validate_event(event: Event) -> None:
    """``validate(event)`` for an Event, without the walk over every other kind's rules: of
    them an Event meets only the metadata's (no quantities, no rule of its kind); one a pod
    (the scheduler's ``Scheduled``). ``tests/api/test_validation.py`` checks it against
    ``validate``."""
    check_meta("Event", event.metadata, namespaced=True)


def validate_pod_metadata(pod: Pod) -> None:
    """``validate(pod)`` for a pod whose spec passed ``validate`` before (in another pod with
    an equal spec): what pod validation reads outside the spec, in ``validate``'s order, is the
    metadata (name, namespace, labels) and then the kubelet's lifecycle annotations; every
    check in between reads only the spec, so it cannot fail. The API server's pod creation
    memo (``emulator.base.apiserver.defaults.PodAdmission``) relies on this;
    ``tests/apiserver/test_pod_admission.py`` checks it against ``validate``."""
    meta = pod.metadata
    check_meta(str(pod.kind), meta, namespaced=pod.kind in _NAMESPACED)
    if pod.spec.resource_claims and (problem := next(pod_claim_name_problems(meta.name, pod.spec), None)):
        raise Invalid.at("Pod", meta.name, *problem)  # the claim names a template makes read the pod's name
    notes = meta.annotations
    if notes and (problem := kubelet_annotations_problem(notes)):
        raise Invalid.at("Pod", meta.name, *problem)


def validate_status_update(candidate: Any) -> None:
    """``validate(candidate)`` for a status write: ``candidate`` is a stored object (valid:
    every write that stores one validates it, and ``bind``/graceful ``delete`` only touch
    fields validation does not read) with another status. Pod validation reads no status
    field, so for a Pod it could only re-check the unchanged metadata and spec: skipped (the
    most frequent write of a run: three per pod). A workload kind's stored metadata and spec
    are valid, so only its status is checked (upstream's ``Validate<Kind>StatusUpdate``
    reads nothing else either): the workload controllers write a status per sync, and the
    spec's pod template is the costly part. Every other kind is validated in full.
    ``tests/apiserver/test_status_validation.py`` checks this against ``validate``."""
    if isinstance(candidate, Pod):
        return
    if isinstance(candidate, WORKLOAD_KINDS):
        problem = next(status_problems(candidate), None)
        if problem is not None:
            raise Invalid.at(_qualified(candidate), candidate.metadata.name, *problem)
        return
    if isinstance(candidate, HorizontalPodAutoscaler):
        if problem := next(hpa_status_problems(candidate), None):
            raise Invalid.at(_qualified(candidate), candidate.metadata.name, *problem)
        return
    validate(candidate)


def validate_update(candidate: Any) -> None:
    """``validate(candidate)`` for ``update``: ``candidate``'s metadata is the stored one with
    the client's labels, annotations, owner references and finalizers (validation reads the
    name, ``generateName`` and namespace, the stored, valid ones, the labels and a Pod's
    lifecycle annotations) and its
    status is the stored one. Validation reads nothing else of any kind but Pod, Node,
    PriorityClass, ConfigMap, Secret, the storage kinds (``STORAGE_KINDS``) and the workload
    kinds (``WORKLOAD_KINDS``: their spec), so the others
    (Leases: a renewal every 10 s per node) only have their labels, annotations and (Leases)
    spec checked.
    ``tests/apiserver/test_status_validation.py`` checks this against ``validate``."""
    if isinstance(candidate, _FULLY_VALIDATED_ON_UPDATE):
        validate(candidate)
        return
    meta: ObjectMeta | None = getattr(candidate, "metadata", None)
    if meta is not None and meta.labels and (problem := metadata_labels_problem(tuple(meta.labels.items()))):
        raise Invalid.at(str(getattr(candidate, "kind", "")), meta.name, *problem)
    if meta is not None and meta.annotations and (problem := annotations_problem(meta.annotations)):
        raise Invalid.at(str(getattr(candidate, "kind", "")), meta.name, *problem)
    if isinstance(candidate, Lease) and (problem := _lease_problem(candidate.spec)):
        raise Invalid.at("Lease.coordination.k8s.io", candidate.metadata.name, *problem)
