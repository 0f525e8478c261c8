"""The scenario's view of workloads: the ``workloadsReady`` and ``jobsComplete`` conditions
(for ``waitFor`` and ``expect``) and the report's ``workloads`` section.

What this module owns: pure functions over stored objects. It does not watch (``monitor``
holds the ``WorkloadCounter`` fed each write of a kind it counts) nor run controllers.

=================  ==================================================================
condition          an object counts as met when
=================  ==================================================================
workloadsReady     Deployment, ReplicaSet, StatefulSet: ``status.observedGeneration
                   == metadata.generation`` and ``status.readyReplicas ==
                   spec.replicas``; a Deployment also needs ``updatedReplicas ==
                   spec.replicas`` (its rollout finished). DaemonSet:
                   ``observedGeneration == generation`` and ``numberReady ==
                   desiredNumberScheduled``
jobsComplete       the Job has the condition ``Complete=True``
=================  ==================================================================

``workloadsReady`` selects by ``kind``, ``name``, ``namespace`` (each optional: empty means
any) and ``selector`` (on the object's labels); it is met when at least one object is
selected and every selected one is ready. ``jobsComplete`` selects Jobs by ``selector`` and
counts like the pod conditions (``count: all``: every selected Job, at least one).

Report (``report``): one entry per Deployment, ReplicaSet, StatefulSet and DaemonSet
(``desired``, ``ready``, ``available``, ``updated``, ``restarts``) and per Job
(``status`` as kubectl's STATUS column and its condition's ``reason``, ``succeeded``, ``failed``,
``completionTime``, ``durationSeconds``, ``restarts``), sorted by
kind, namespace and name. ``restarts`` sums the ``restartCount`` of the containers of the
pods the object controls (a Deployment's: through its ReplicaSets).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from emulator.base.api.core import LabelSelector, Pod
from emulator.base.api.labelparse import format_label_selector
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "READY_KINDS",
    "REPORT_KINDS",
    "WorkloadFilter",
    "job_complete",
    "report",
    "workload_ready",
]

READY_KINDS: Final = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
"""The kinds ``workloadsReady`` looks at."""
REPORT_KINDS: Final = (*READY_KINDS, "Job")


def workload_ready(obj: Any) -> bool:
    """Is this Deployment, ReplicaSet, StatefulSet or DaemonSet ready (see the table)?"""
    status = obj.status
    if status.observed_generation != obj.metadata.generation:
        return False
    if obj.kind == "DaemonSet":
        return bool(status.number_ready == status.desired_number_scheduled)
    desired = obj.spec.replicas if obj.spec.replicas is not None else 1
    if status.ready_replicas != desired:
        return False
    return bool(obj.kind != "Deployment" or status.updated_replicas == desired)


def job_complete(job: Any) -> bool:
    return any(c.type == "Complete" and c.status == "True" for c in job.status.conditions)


class WorkloadFilter:
    """Which objects a condition selects: kinds, name, namespace, label selector."""

    def __init__(
        self, kinds: Sequence[str], *, name: str = "", namespace: str = "", selector: LabelSelector | None = None
    ) -> None:
        self.kinds = tuple(kinds)
        self.name = name
        self.namespace = namespace
        self.selector = selector or LabelSelector()

    def selects(self, obj: Any) -> bool:
        meta = obj.metadata
        return (
            obj.kind in self.kinds
            and (not self.name or meta.name == self.name)
            and (not self.namespace or meta.namespace == self.namespace)
            and label_selector_matches(self.selector, meta.labels)
        )

    def describe(self) -> str:
        """``Deployment default/web matching 'app=web'``-like words (empty parts left out)."""
        words = ["/".join(self.kinds) if len(self.kinds) == 1 else "workloads"]
        if self.name or self.namespace:
            words.append(f"{self.namespace or '*'}/{self.name or '*'}")
        text = format_label_selector(self.selector)
        if text:
            words.append(f"matching {text!r}")
        return " ".join(words)


def _restarts(pod: Pod) -> int:
    return sum(c.restart_count for c in (*pod.status.container_statuses, *pod.status.init_container_statuses))


def _controller_uid(obj: Any) -> str:
    return next((r.uid for r in obj.metadata.owner_references if r.controller), "")


_JOB_STATES: Final = ("Complete", "Failed", "SuccessCriteriaMet", "FailureTarget", "Suspended")


def _job_status(job: Any) -> tuple[str, str]:
    """kubectl 1.32's Job STATUS column (the first of Complete, Failed, SuccessCriteriaMet,
    FailureTarget, Suspended that holds, else Running; Terminating while being deleted) and
    the reason of that condition (``BackoffLimitExceeded``, ``DeadlineExceeded``, ...)."""
    if job.metadata.deletion_timestamp:
        return "Terminating", ""
    true = {c.type: c.reason for c in job.status.conditions if c.status == "True"}
    for state in _JOB_STATES:
        if state in true:
            return state, true[state] or ""
    return "Running", ""


def _entry(obj: Any, restarts: int) -> dict[str, Any]:
    meta, status = obj.metadata, obj.status
    out: dict[str, Any] = {"kind": obj.kind, "namespace": meta.namespace, "name": meta.name}
    if obj.kind == "Job":
        out["status"], out["reason"] = _job_status(obj)
        out["succeeded"], out["failed"] = status.succeeded, status.failed
        out["completionTime"] = status.completion_time
        out["durationSeconds"] = (
            round(parse_timestamp(status.completion_time) - parse_timestamp(status.start_time), 6)
            if status.completion_time and status.start_time
            else None
        )
    elif obj.kind == "DaemonSet":
        out["desired"], out["ready"] = status.desired_number_scheduled, status.number_ready
        out["available"], out["updated"] = status.number_available, status.updated_number_scheduled
    else:
        out["desired"] = obj.spec.replicas if obj.spec.replicas is not None else 1
        out["ready"], out["available"] = status.ready_replicas, status.available_replicas
        out["updated"] = status.updated_replicas if obj.kind != "ReplicaSet" else None
    out["restarts"] = restarts
    return out


def report(objects: Mapping[str, Sequence[Any]], pods: Iterable[Pod]) -> list[dict[str, Any]]:
    """The report's ``workloads`` entries (empty when the run has no workload object)."""
    owned = [o for kind in REPORT_KINDS for o in objects.get(kind, ())]
    if not owned:
        return []
    restarts: dict[str, int] = {}
    for pod in pods:
        uid = _controller_uid(pod)
        if uid:
            restarts[uid] = restarts.get(uid, 0) + _restarts(pod)
    for rs in objects.get("ReplicaSet", ()):  # a Deployment's pods are its ReplicaSets'
        parent = _controller_uid(rs)
        if parent:
            restarts[parent] = restarts.get(parent, 0) + restarts.get(rs.metadata.uid, 0)
    entries = [_entry(o, restarts.get(o.metadata.uid, 0)) for o in owned]
    return sorted(entries, key=lambda e: (REPORT_KINDS.index(e["kind"]), e["namespace"], e["name"]))
