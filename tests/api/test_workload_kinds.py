"""The workload kinds on the wire: decode → encode round trips with upstream's field names,
and upstream's defaulting per kind (``workloaddefaults``)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import yaml

from emulator.base.api.codec import load_manifests, to_builtins
from emulator.base.api.workloaddefaults import default_object, generate_job_selector

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
JOB_TEMPLATE = {
    "metadata": {"labels": {"app": "batch"}},
    "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"},
}
SELECTOR = {"matchLabels": {"app": "web"}}

MANIFESTS: dict[str, dict[str, Any]] = {
    "Deployment": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u"}]},
        "spec": {
            "replicas": 3,
            "selector": SELECTOR,
            "template": TEMPLATE,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "10%"}},
            "minReadySeconds": 5,
        },
        "status": {
            "observedGeneration": 2,
            "replicas": 3,
            "updatedReplicas": 3,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "unavailableReplicas": 1,
            "collisionCount": 1,
            "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}],
        },
    },
    "ReplicaSet": {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-5d4f", "finalizers": ["foregroundDeletion"]},
        "spec": {"replicas": 2, "selector": SELECTOR, "template": TEMPLATE},
        "status": {
            "replicas": 2,
            "fullyLabeledReplicas": 2,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "observedGeneration": 1,
        },
    },
    "StatefulSet": {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "replicas": 3,
            "selector": SELECTOR,
            "template": TEMPLATE,
            "podManagementPolicy": "Parallel",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
        },
        "status": {
            "replicas": 3,
            "readyReplicas": 3,
            "currentReplicas": 2,
            "updatedReplicas": 1,
            "currentRevision": "db-1",
            "updateRevision": "db-2",
            "availableReplicas": 3,
        },
    },
    "DaemonSet": {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {"selector": SELECTOR, "template": TEMPLATE, "updateStrategy": {"type": "OnDelete"}},
        "status": {
            "currentNumberScheduled": 3,
            "numberMisscheduled": 1,
            "desiredNumberScheduled": 3,
            "numberReady": 2,
            "updatedNumberScheduled": 3,
            "numberAvailable": 2,
            "numberUnavailable": 1,
        },
    },
    "Job": {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi"},
        "spec": {"completions": 4, "parallelism": 2, "completionMode": "Indexed", "template": JOB_TEMPLATE},
        "status": {
            "active": 2,
            "succeeded": 1,
            "failed": 1,
            "ready": 2,
            "startTime": "2026-01-01T00:00:00Z",
            "completedIndexes": "0",
            "uncountedTerminatedPods": {"succeeded": ["u1"], "failed": ["u2"]},
            "conditions": [{"type": "Complete", "status": "False"}],
        },
    },
    "CronJob": {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "tick"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}},
        "status": {
            "active": [{"kind": "Job", "name": "tick-1", "namespace": "default"}],
            "lastScheduleTime": "2026-01-01T00:05:00Z",
            "lastSuccessfulTime": "2026-01-01T00:00:30Z",
        },
    },
    "Service": {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
            "clusterIP": "None",
        },
    },
    "PodDisruptionBudget": {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": "50%", "selector": SELECTOR},
        "status": {
            "observedGeneration": 1,
            "disruptionsAllowed": 1,
            "currentHealthy": 3,
            "desiredHealthy": 2,
            "expectedPods": 3,
            "disruptedPods": {"web-1": "2026-01-01T00:00:00Z"},
        },
    },
}


@pytest.mark.parametrize("kind", [pytest.param(k, id=k) for k in MANIFESTS])
def test_round_trip_keeps_upstream_field_names(kind: str) -> None:
    doc = MANIFESTS[kind]
    (obj,) = load_manifests(msgspec.json.encode(doc).decode(), source="m.json")
    assert obj.kind == kind
    assert to_builtins(obj) == doc


KUBECTL_CREATE_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  creationTimestamp: null
  labels:
    app: web
  name: web
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  strategy: {}
  template:
    metadata:
      creationTimestamp: null
      labels:
        app: web
    spec:
      containers:
      - image: nginx
        name: nginx
        resources: {}
status: {}
"""


def test_kubectl_create_deployment_output_is_accepted_and_defaulted_as_upstream() -> None:
    (d,) = load_manifests(KUBECTL_CREATE_DEPLOYMENT, source="k.yaml")
    spec = to_builtins(default_object(d))["spec"]
    assert spec["replicas"] == 3
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert spec["template"]["spec"]["terminationGracePeriodSeconds"] == 30
    assert spec["template"]["spec"]["schedulerName"] == "default-scheduler"


def _defaulted(kind: str, patch: dict[str, Any] | None = None) -> dict[str, Any]:
    doc = yaml.safe_load(msgspec.json.encode(MANIFESTS[kind]))
    doc.pop("status", None)
    doc["spec"] = {**doc["spec"], **(patch or {})}
    doc["spec"] = {k: v for k, v in doc["spec"].items() if v is not None}
    (obj,) = load_manifests(msgspec.json.encode(doc).decode(), source="m.json")
    out: dict[str, Any] = to_builtins(default_object(obj))
    return out


@pytest.mark.parametrize(
    ("kind", "patch", "expected"),
    [
        pytest.param(
            "Deployment",
            {"replicas": None, "strategy": None, "minReadySeconds": None},
            {
                "replicas": 1,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
            },
            id="deployment",
        ),
        pytest.param(
            "Deployment",
            {"strategy": {"type": "Recreate"}},
            {"strategy": {"type": "Recreate"}},
            id="deployment-recreate-gets-no-rolling-update",
        ),
        pytest.param(
            "Deployment",
            {"strategy": {"rollingUpdate": {"maxSurge": 0}}},
            {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 0}}},
            id="deployment-partial-rolling-update",
        ),
        pytest.param("ReplicaSet", {"replicas": None}, {"replicas": 1}, id="replicaset"),
        pytest.param(
            "StatefulSet",
            {"replicas": None, "podManagementPolicy": None, "updateStrategy": None},
            {
                "replicas": 1,
                "podManagementPolicy": "OrderedReady",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "revisionHistoryLimit": 10,
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            },
            id="statefulset",
        ),
        pytest.param(
            "DaemonSet",
            {"updateStrategy": None},
            {
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                "revisionHistoryLimit": 10,
            },
            id="daemonset",
        ),
        pytest.param(
            "Job",
            {"completions": None, "parallelism": None, "completionMode": None},
            {
                "completions": 1,
                "parallelism": 1,
                "backoffLimit": 6,
                "completionMode": "NonIndexed",
                "suspend": False,
                "manualSelector": False,
                "podReplacementPolicy": "TerminatingOrFailed",
            },
            id="job-neither-count",
        ),
        pytest.param(
            "Job",
            {"completions": 5, "parallelism": None},
            {"completions": 5, "parallelism": 1},
            id="job-completions-only",
        ),
        pytest.param(
            "Job",
            {"completions": None, "parallelism": 3, "completionMode": None},
            {"parallelism": 3},
            id="job-parallelism-only-leaves-completions-unset",
        ),
        pytest.param(
            "Job",
            {"backoffLimitPerIndex": 1},
            {"backoffLimit": 2147483647},
            id="job-backoff-limit-per-index",
        ),
        pytest.param(
            "CronJob",
            {},
            {
                "concurrencyPolicy": "Allow",
                "suspend": False,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
            },
            id="cronjob",
        ),
        pytest.param(
            "Service",
            {"ports": [{"port": 80}], "clusterIP": None},
            {
                "type": "ClusterIP",
                "sessionAffinity": "None",
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            },
            id="service",
        ),
    ],
)
def test_defaulting(kind: str, patch: dict[str, Any], expected: dict[str, Any]) -> None:
    spec = _defaulted(kind, patch)["spec"]
    for key, value in expected.items():
        assert spec.get(key) == value, key
    if kind == "Job" and patch.get("completions") is None and patch.get("parallelism") == 3:
        assert "completions" not in spec


def test_job_labels_default_to_its_templates() -> None:
    assert _defaulted("Job")["metadata"]["labels"] == {"app": "batch"}


def test_cronjob_job_template_is_not_defaulted_as_a_job() -> None:
    job_spec = _defaulted("CronJob")["spec"]["jobTemplate"]["spec"]
    assert "backoffLimit" not in job_spec
    assert job_spec["template"]["spec"]["restartPolicy"] == "Never"


def test_pod_templates_get_no_admission_defaults() -> None:
    """Priority and default tolerations are admission, applied to the pods, not the template."""
    template = _defaulted("Deployment")["spec"]["template"]["spec"]
    assert "tolerations" not in template
    assert "priority" not in template


def test_generated_job_selector() -> None:
    (job,) = load_manifests(msgspec.json.encode(MANIFESTS["Job"]).decode(), source="m.json")
    job = default_object(job)
    job = generate_job_selector(msgspec.structs.replace(job, metadata=msgspec.structs.replace(job.metadata, uid="u1")))
    assert job.spec.selector is not None
    assert job.spec.selector.match_labels == {"batch.kubernetes.io/controller-uid": "u1"}
    assert job.spec.template.metadata.labels == {
        "app": "batch",
        "batch.kubernetes.io/controller-uid": "u1",
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "u1",
        "job-name": "pi",
    }
    assert generate_job_selector(job) == job


def test_a_manual_selector_is_not_generated() -> None:
    doc = {
        **MANIFESTS["Job"],
        "spec": {**MANIFESTS["Job"]["spec"], "manualSelector": True, "selector": {"matchLabels": {"app": "batch"}}},
    }
    (job,) = [default_object(o) for o in load_manifests(msgspec.json.encode(doc).decode(), source="m.json")]
    assert generate_job_selector(job) is job
