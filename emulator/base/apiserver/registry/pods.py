"""Pods: admission on create, the spec rules of an update, graceful deletion, and binding.

Upstream ``pkg/registry/core/pod/strategy.go`` (the strategy) and ``storage/storage.go``
(``BindingREST``). Defaulting and validation on create go through ``PodAdmission``
(``emulator.base.apiserver.defaults``), memoised per spec and emptied when a PriorityClass is
written (``invalidated_by``). What an update may change of the spec is pod validation's rule
(``emulator.base.api.podvalidation.pod_update_problem``). The ``pods/resize`` subresource's
rules (upstream ``podResizeStrategy``): ``prepare_for_resize`` and ``validate_resize``, over
``emulator.base.api.podresize``.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.core import Binding, Pod, PodCondition
from emulator.base.api.errors import Conflict, Invalid
from emulator.base.api.podresize import Problem, resize_candidate, resize_problems
from emulator.base.api.podvalidation import pod_update_problem
from emulator.base.api.scheduling import PriorityClass
from emulator.base.api.validation import validate_update
from emulator.base.apiserver.defaults import PodAdmission, default_pod_update, qos_class
from emulator.base.apiserver.registry.strategy import FieldGetter, StoreView, Strategy, field_text

__all__ = ["PodStrategy", "bind_pod", "invalid_all"]

_FIELDS: Final[Mapping[str, FieldGetter]] = {
    # string fields read as they are: ``attrgetter`` (no Python frame: the watch hub reads
    # ``status.phase`` of every pod write for the pod GC's pinned watchers)
    "spec.nodeName": attrgetter("spec.node_name"),
    "spec.restartPolicy": attrgetter("spec.restart_policy"),
    "spec.schedulerName": attrgetter("spec.scheduler_name"),
    "spec.serviceAccountName": lambda pod: field_text(getattr(pod.spec, "service_account_name", "")),
    "spec.hostNetwork": lambda pod: field_text(pod.spec.host_network),
    "status.phase": attrgetter("status.phase"),
    "status.podIP": attrgetter("status.pod_ip"),
    "status.nominatedNodeName": attrgetter("status.nominated_node_name"),
}


class PodStrategy(Strategy):
    kind = "Pod"
    generation_on_create = True
    fields = _FIELDS
    invalidated_by = ("PriorityClass",)  # pod defaulting reads the classes

    def __init__(self, store: StoreView) -> None:
        super().__init__(store)
        self.admission = PodAdmission()

    def invalidate(self) -> None:
        self.admission.clear()

    def _priority_classes(self) -> Mapping[str, PriorityClass]:
        return {k[1]: v for k, v in self.store.table("PriorityClass").items()}

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        given_status = obj.status
        # defaulting and validation (memoised per spec: ``defaults.PodAdmission``)
        pod = self.admission.admit(obj, classes=self._priority_classes, name_suffix=self.store.name_suffix)
        if restore:
            pod = replace(pod, status=replace(given_status, qos_class=given_status.qos_class or pod.status.qos_class))
        return pod

    def validate(self, obj: Any) -> None:
        """Validated by ``prepare_for_create`` (``PodAdmission``, memoised with the defaults)."""

    def validate_update(self, current: Any, candidate: Any) -> None:
        problem = pod_update_problem(current.spec, candidate.spec)
        if problem is not None:
            raise Invalid.at("Pod", candidate.metadata.name, *problem)
        validate_update(candidate)

    def prepare_for_resize(self, current: Pod, written: Pod) -> Pod:
        """The stored pod with only its containers' resources and resize policies from
        ``written`` (defaulted as a decoded body is: requests from limits)."""
        return resize_candidate(current, default_pod_update(written, current))

    def validate_resize(self, current: Pod, candidate: Pod) -> None:
        problems = resize_problems(
            current, candidate, old_qos=current.status.qos_class or qos_class(current), new_qos=qos_class(candidate)
        )
        if problems:
            raise invalid_all("Pod", candidate.metadata.name, problems)
        validate_update(candidate)

    def graceful_delete(self, current: Any, grace_period_seconds: int | None) -> int:
        """A bound pod that has not finished stays until its kubelet confirms (grace 0)."""
        grace = current.spec.termination_grace_period_seconds if grace_period_seconds is None else grace_period_seconds
        grace = grace or 0
        if grace < 0:
            grace = 1  # upstream: a negative grace period means 1 second
        unbound = not current.spec.node_name
        terminal = current.status.phase in ("Succeeded", "Failed")
        return grace if grace > 0 and not unbound and not terminal else 0


def invalid_all(kind: str, name: str, problems: list[Problem]) -> Invalid:
    """One ``Invalid`` for every problem, as upstream's aggregated field errors read."""
    if len(problems) == 1:
        return Invalid.at(kind, name, *problems[0])
    listed = ", ".join(f"{path}: {detail}" for path, detail in problems)
    path, detail = problems[0]
    return Invalid(f'{kind} "{name}" is invalid: [{listed}]', field=path, kind=kind, name=name, detail=detail)


def bind_pod(pod: Pod, binding: Binding, now: str, resource_version: str | None = None) -> Pod:
    """``pod`` assigned to ``binding.target.name`` with PodScheduled=True at ``now``, or the
    typed error of upstream's ``BindingREST`` (Conflict, Invalid). ``resource_version``: the
    revision the commit will give it, set in the same copy of the metadata (None: kept)."""
    meta = binding.metadata
    if meta.uid and meta.uid != pod.metadata.uid:
        raise Conflict.uid_precondition(meta.uid, pod.metadata.uid)
    if not binding.target.name:
        raise Invalid.at("Binding", meta.name, "target.name", "Required value")
    if binding.target.kind not in ("", "Node"):
        raise Invalid.at(
            "Binding",
            meta.name,
            "target.kind",
            f'Unsupported value: "{binding.target.kind}": supported values: "Node"',
        )
    if pod.metadata.deletion_timestamp is not None:
        raise Conflict(
            f'Operation cannot be fulfilled on pods/binding "{meta.name}": pod {meta.name} is being deleted, '
            "cannot be assigned to a host"
        )
    if pod.spec.node_name:
        raise Conflict(
            f'Operation cannot be fulfilled on pods/binding "{meta.name}": pod {meta.name} is already '
            f'assigned to node "{pod.spec.node_name}"'
        )
    if pod.spec.scheduling_gates:
        raise Conflict(
            f'Operation cannot be fulfilled on pods/binding "{meta.name}": pod {meta.name} has non-empty '
            ".spec.schedulingGates"
        )
    conditions = [c for c in pod.status.conditions if c.type != "PodScheduled"]
    conditions.append(PodCondition(type="PodScheduled", status="True", last_transition_time=now))
    annotations = {**pod.metadata.annotations, **meta.annotations} if meta.annotations else pod.metadata.annotations
    rv = pod.metadata.resource_version if resource_version is None else resource_version
    return replace(
        pod,
        metadata=replace(pod.metadata, annotations=annotations, resource_version=rv),
        spec=replace(pod.spec, node_name=binding.target.name),
        status=replace(pod.status, conditions=conditions),
    )


class BindingStrategy(Strategy):
    """pods/binding: never created as an object of its own (``ApiServer.bind``)."""

    kind = "Binding"
    create_refusal = "Invalid value: use bind() for bindings"
