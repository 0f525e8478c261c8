"""``scenario.patch`` (an object through an RFC 7386 merge patch), ``scenario.workloads`` (readiness rules, the
report's ``workloads`` entries) and the ``workloadsReady``/``jobsComplete`` expectations, on
objects whose status is written by hand."""

from __future__ import annotations

import io
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace
from rich.console import Console

from emulator.app.scenario.expectations import check
from emulator.app.scenario.patch import patched
from emulator.app.scenario.runner import RunResult
from emulator.app.scenario.schema import JobsComplete, WorkloadsReady
from emulator.app.scenario.summary import print_summary, to_json
from emulator.app.scenario.workload_status import job_complete, report, workload_ready
from emulator.base.api.batch import JobCondition
from emulator.base.api.codec import load_manifests
from emulator.base.api.core import ContainerStatus, LabelSelector, Pod
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import OwnerReference
from tests import builders
from tests.api.test_workload_kinds import MANIFESTS


def _obj(kind: str, uid: str = "", generation: int = 1, **status: Any) -> Any:
    """The kind's test manifest (``spec.replicas: 3`` where it has replicas), with ``status``."""
    (obj,) = load_manifests(msgspec.json.encode(MANIFESTS[kind]).decode(), source="m.json")
    meta = replace(obj.metadata, namespace="default", uid=uid or f"u-{kind}", generation=generation)
    if hasattr(obj.spec, "replicas"):
        obj = replace(obj, spec=replace(obj.spec, replicas=3))
    return replace(obj, metadata=meta, status=replace(type(obj.status)(), **status))


def _ref(owner: Any) -> OwnerReference:
    meta = owner.metadata
    return OwnerReference(api_version="apps/v1", kind=owner.kind, name=meta.name, uid=meta.uid, controller=True)


# --- patched (the merge itself: tests/api/test_mergepatch.py) ------------------------------


def test_patched_object_keeps_its_kind_and_refuses_a_wrong_type() -> None:
    web = _obj("Deployment")
    assert patched(web, {"spec": {"replicas": 9}}).spec.replicas == 9
    with pytest.raises(Invalid, match=r"spec\.replicas: Expected `int \| null`, got `str`"):
        patched(web, {"spec": {"replicas": "x"}})


# --- readiness --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "generation", "status", "ready"),
    [
        pytest.param("Deployment", 1, {"ready_replicas": 3, "updated_replicas": 3}, True, id="deployment-ready"),
        pytest.param("Deployment", 1, {"ready_replicas": 3, "updated_replicas": 2}, False, id="deployment-rolling"),
        pytest.param("Deployment", 2, {"ready_replicas": 3, "updated_replicas": 3}, False, id="deployment-unobserved"),
        pytest.param("ReplicaSet", 1, {"ready_replicas": 3}, True, id="replicaset-ready"),
        pytest.param("ReplicaSet", 1, {"ready_replicas": 2}, False, id="replicaset-short"),
        pytest.param("StatefulSet", 1, {"ready_replicas": 3}, True, id="statefulset-ready"),
        pytest.param("DaemonSet", 1, {"number_ready": 4, "desired_number_scheduled": 4}, True, id="daemonset-ready"),
        pytest.param("DaemonSet", 1, {"number_ready": 3, "desired_number_scheduled": 4}, False, id="daemonset-short"),
    ],
)
def test_workload_ready(kind: str, generation: int, status: dict[str, Any], ready: bool) -> None:
    obj = _obj(kind, generation=generation, observed_generation=1, **status)
    assert workload_ready(obj) is ready


def test_job_complete() -> None:
    assert not job_complete(_obj("Job"))
    assert job_complete(_obj("Job", conditions=[JobCondition(type="Complete", status="True")]))
    assert not job_complete(_obj("Job", conditions=[JobCondition(type="Failed", status="True")]))


# --- expectations -----------------------------------------------------------------------------


def test_workloads_ready_and_jobs_complete_expectations() -> None:
    ready = _obj("Deployment", observed_generation=1, ready_replicas=3, updated_replicas=3)
    short = replace(
        _obj("StatefulSet", observed_generation=1, ready_replicas=1), metadata=replace(ready.metadata, name="db")
    )
    done = _obj("Job", conditions=[JobCondition(type="Complete", status="True")])
    objects = {"Deployment": [ready], "StatefulSet": [short], "Job": [done]}
    results = check(
        [
            WorkloadsReady(),
            WorkloadsReady(kind="Deployment"),
            WorkloadsReady(selector=LabelSelector(match_labels={"app": "nothing"})),
            JobsComplete(),
            JobsComplete(count=2),
        ],
        [],
        [],
        [],
        objects,
    )
    assert [(r.name, r.passed, r.detail) for r in results] == [
        ("workloadsReady: workloads", False, "1 of 2 ready; not ready: StatefulSet default/db"),
        ("workloadsReady: Deployment", True, "1 of 1 ready"),
        ("workloadsReady: workloads matching 'app=nothing'", False, "0 of 0 ready"),
        ("jobsComplete: all", True, "1 of 1 Jobs complete"),
        ("jobsComplete: 2", False, "1 of 1 Jobs complete"),
    ]


# --- the report -------------------------------------------------------------------------------


def _pod_of(owner: Any, name: str, restarts: int) -> Pod:
    pod = builders.pod(name)
    ref = OwnerReference(
        api_version="apps/v1", kind=owner.kind, name=owner.metadata.name, uid=owner.metadata.uid, controller=True
    )
    status = replace(pod.status, container_statuses=[ContainerStatus(name="c", restart_count=restarts)])
    return replace(pod, metadata=replace(pod.metadata, owner_references=[ref]), status=status)


def test_report_counts_restarts_through_replicasets() -> None:
    deployment = _obj("Deployment", observed_generation=1, ready_replicas=3, available_replicas=3, updated_replicas=3)
    rs = _obj("ReplicaSet", uid="u-rs", ready_replicas=3, available_replicas=2)
    ref = OwnerReference(
        api_version="apps/v1", kind="Deployment", name="web", uid=deployment.metadata.uid, controller=True
    )
    rs = replace(rs, metadata=replace(rs.metadata, owner_references=[ref]))
    job = _obj("Job", succeeded=2, failed=1, start_time="2026-01-01T00:00:00Z", completion_time="2026-01-01T00:01:30Z")
    pods = [_pod_of(rs, "a", 2), _pod_of(rs, "b", 1), _pod_of(job, "j", 4)]
    entries = report({"Deployment": [deployment], "ReplicaSet": [rs], "Job": [job]}, pods)
    assert entries == [
        {"kind": "Deployment", "namespace": "default", "name": deployment.metadata.name, "desired": 3, "ready": 3,
         "available": 3, "updated": 3, "restarts": 3},
        {"kind": "ReplicaSet", "namespace": "default", "name": rs.metadata.name, "desired": 3, "ready": 3,
         "available": 2, "updated": None, "restarts": 3},
        {"kind": "Job", "namespace": "default", "name": job.metadata.name, "status": "Running", "reason": "",
         "succeeded": 2, "failed": 1,
         "completionTime": "2026-01-01T00:01:30Z", "durationSeconds": 90.0, "restarts": 4},
    ]  # fmt: skip
    assert report({}, pods) == []


def _result(extra: dict[str, Any]) -> RunResult:
    pods = {"total": 0, "pending": 0, "running": 0, "succeeded": 0, "failed": 0}
    return RunResult("x", 0, "virtual", 1.0, 1.0, pods, [], 0, "0" * 64, extra=extra)


def test_the_report_has_workloads_only_when_there_are_some() -> None:
    entry = {"kind": "Job", "namespace": "default", "name": "batch", "succeeded": 1, "failed": 0,
             "completionTime": None, "durationSeconds": None, "restarts": 0}  # fmt: skip
    assert "workloads" not in to_json(_result({}))
    assert to_json(_result({"workloads": [entry]}))["workloads"] == [entry]
    out = io.StringIO()
    print_summary(_result({"workloads": [entry]}), Console(file=out, width=150))
    assert "batch" in out.getvalue().split("jobs", 1)[1]
