"""The workload kinds and their kin (upstream ``pkg/registry/{apps,batch,policy}/...`` and
``core/service``): defaulted on create and update (``emulator.base.api.workloaddefaults``), the
status theirs to write by the controllers (reset on create), upstream's update rules
(``validate_workload_update``: immutable selectors...). A Job's generated selector needs its
uid (``complete_create``); a Service gets its cluster IPs (``emulator.base.apiserver.serviceips``).
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from emulator.base.api.validation import validate_update, validate_workload_update
from emulator.base.api.workloaddefaults import default_object, stored_job
from emulator.base.apiserver import serviceips
from emulator.base.apiserver.registry.strategy import Strategy

__all__ = [
    "CronJobStrategy",
    "DaemonSetStrategy",
    "DeploymentStrategy",
    "JobStrategy",
    "PodDisruptionBudgetStrategy",
    "ReplicaSetStrategy",
    "ServiceStrategy",
    "StatefulSetStrategy",
    "WorkloadStrategy",
]


class WorkloadStrategy(Strategy):
    """The shared rules; a subclass names its kind."""

    generation_on_create = True

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        obj = default_object(obj)
        if not restore:  # upstream PrepareForCreate: the status is the controllers' to write
            obj = replace(obj, status=type(obj.status)())
        return obj

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        return default_object(candidate)

    def validate_update(self, current: Any, candidate: Any) -> None:
        validate_update(candidate)
        validate_workload_update(current, candidate)


class DeploymentStrategy(WorkloadStrategy):
    kind = "Deployment"


class ReplicaSetStrategy(WorkloadStrategy):
    kind = "ReplicaSet"


class StatefulSetStrategy(WorkloadStrategy):
    kind = "StatefulSet"


TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
"""Upstream ``appsv1.DeprecatedTemplateGeneration``: the v1 face of the internal
``spec.templateGeneration`` (``pkg/apis/apps/v1/conversion.go``)."""


def _template_generation(obj: Any) -> int:
    raw = obj.metadata.annotations.get(TEMPLATE_GENERATION_ANNOTATION, "")
    return int(raw) if raw.isdigit() else 0


def _with_template_generation(obj: Any, generation: int) -> Any:
    annotations = {**obj.metadata.annotations, TEMPLATE_GENERATION_ANNOTATION: str(generation)}
    return replace(obj, metadata=replace(obj.metadata, annotations=annotations))


class DaemonSetStrategy(WorkloadStrategy):
    """Upstream ``pkg/registry/apps/daemonset/strategy.go``: the template generation starts at
    1 (or the manifest's annotation) on create; an update cannot set it, and a template change
    adds one. The DaemonSet controller labels its pods ``pod-template-generation`` from it."""

    kind = "DaemonSet"

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        obj = super().prepare_for_create(obj, restore=restore)
        return _with_template_generation(obj, max(1, _template_generation(obj)))

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        candidate = super().prepare_for_update(current, candidate)
        generation = _template_generation(current)
        if candidate.spec.template != current.spec.template:
            generation += 1
        return _with_template_generation(candidate, max(1, generation))


class JobStrategy(WorkloadStrategy):
    kind = "Job"

    def complete_create(self, obj: Any) -> Any:
        return stored_job(obj)  # the generated selector needs the uid

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        return stored_job(default_object(candidate))


class CronJobStrategy(WorkloadStrategy):
    kind = "CronJob"


class PodDisruptionBudgetStrategy(WorkloadStrategy):
    kind = "PodDisruptionBudget"


class ServiceStrategy(WorkloadStrategy):
    kind = "Service"
    generation_on_create = False

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        obj = super().prepare_for_create(obj, restore=restore)
        return serviceips.allocate(obj, {svc.spec.cluster_ip for svc in self.store.table("Service").values()})

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        return serviceips.keep_allocated(current, default_object(candidate))
