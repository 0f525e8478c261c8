"""The workload kinds' validation: each rule with upstream's field path and message, as
``validate``/``run`` report it for a manifest (``workloadvalidation``)."""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest

from emulator.base.api.codec import ManifestError, load_manifests

CONTAINERS = [{"name": "c", "image": "nginx"}]
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": CONTAINERS}}
JOB_TEMPLATE = {"metadata": {"labels": {"app": "b"}}, "spec": {"containers": CONTAINERS, "restartPolicy": "Never"}}
SELECTOR = {"matchLabels": {"app": "web"}}
BASE: dict[str, dict[str, Any]] = {
    "Deployment": {"apiVersion": "apps/v1", "spec": {"selector": SELECTOR, "template": TEMPLATE}},
    "ReplicaSet": {"apiVersion": "apps/v1", "spec": {"selector": SELECTOR, "template": TEMPLATE}},
    "StatefulSet": {"apiVersion": "apps/v1", "spec": {"selector": SELECTOR, "template": TEMPLATE}},
    "DaemonSet": {"apiVersion": "apps/v1", "spec": {"selector": SELECTOR, "template": TEMPLATE}},
    "Job": {"apiVersion": "batch/v1", "spec": {"template": JOB_TEMPLATE}},
    "CronJob": {
        "apiVersion": "batch/v1",
        "spec": {"schedule": "@hourly", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}},
    },
    "Service": {"apiVersion": "v1", "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
    "PodDisruptionBudget": {"apiVersion": "policy/v1", "spec": {"selector": SELECTOR, "minAvailable": 1}},
}


def _doc(kind: str, spec: dict[str, Any], name: str = "x") -> str:
    base = copy.deepcopy(BASE[kind])
    merged = {**base["spec"], **spec}
    doc = {
        "apiVersion": base["apiVersion"],
        "kind": kind,
        "metadata": {"name": name},
        "spec": {k: v for k, v in merged.items() if v is not None},
    }
    return msgspec.json.encode(doc).decode()


@pytest.mark.parametrize("kind", [pytest.param(k, id=k) for k in BASE])
def test_the_base_manifests_are_valid(kind: str) -> None:
    (obj,) = load_manifests(_doc(kind, {}), source="m")
    assert obj.kind == kind


WITH_REPLICAS = ("Deployment", "ReplicaSet", "StatefulSet")
APPS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
EMPTY_NAME = {
    "Deployment": "deployment",
    "ReplicaSet": "deployment",
    "StatefulSet": "statefulset",
    "DaemonSet": "daemonset",
}

CASES = [
    *(
        pytest.param(
            kind,
            {"replicas": -1},
            "spec.replicas",
            "Invalid value: -1: must be greater than or equal to 0",
            id=f"{kind}-negative-replicas",
        )
        for kind in WITH_REPLICAS
    ),
    *(
        pytest.param(
            kind,
            {"selector": {"matchLabels": {"app": "other"}}},
            "spec.template.metadata.labels",
            'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
            id=f"{kind}-selector-not-matching-template",
        )
        for kind in APPS
    ),
    *(
        pytest.param(kind, {"selector": None}, "spec.selector", "Required value", id=f"{kind}-no-selector")
        for kind in APPS
    ),
    *(
        pytest.param(
            kind,
            {"selector": {}},
            "spec.selector",
            f"Invalid value: {{}}: empty selector is invalid for {EMPTY_NAME[kind]}",
            id=f"{kind}-empty-selector",
        )
        for kind in APPS
    ),
    *(
        pytest.param(
            kind,
            {"template": {**TEMPLATE, "spec": {"containers": CONTAINERS, "restartPolicy": "Never"}}},
            "spec.template.spec.restartPolicy",
            'Unsupported value: "Never": supported values: "Always"',
            id=f"{kind}-restart-policy",
        )
        for kind in APPS
    ),
    *(
        pytest.param(
            kind,
            {"template": {**TEMPLATE, "spec": {"containers": [{"name": "c"}]}}},
            "spec.template.spec.containers[0].image",
            "Required value",
            id=f"{kind}-template-validated-as-a-pod",
        )
        for kind in APPS
    ),
    pytest.param(
        "Deployment",
        {"selector": {"matchLabels": {"bad key": "x"}}},
        "spec.selector.matchLabels",
        "Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        id="deployment-invalid-selector",
    ),
    pytest.param(
        "Deployment",
        {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}},
        "spec.strategy.rollingUpdate",
        "Forbidden: may not be specified when strategy `type` is 'Recreate'",
        id="deployment-recreate-with-rolling-update",
    ),
    pytest.param(
        "Deployment",
        {"strategy": {"type": "Sideways"}},
        "spec.strategy",
        'Unsupported value: "Sideways": supported values: "Recreate", "RollingUpdate"',
        id="deployment-strategy-type",
    ),
    pytest.param(
        "Deployment",
        {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}}},
        "spec.strategy.rollingUpdate.maxUnavailable",
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: may not be 0 when `maxSurge` is 0',
        id="deployment-surge-and-unavailable-zero",
    ),
    pytest.param(
        "Deployment",
        {"strategy": {"rollingUpdate": {"maxUnavailable": "120%"}}},
        "spec.strategy.rollingUpdate.maxUnavailable",
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%',
        id="deployment-unavailable-over-100-percent",
    ),
    pytest.param(
        "Deployment",
        {"strategy": {"rollingUpdate": {"maxSurge": "half"}}},
        "spec.strategy.rollingUpdate.maxSurge",
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: a valid percent string must be a '
        "numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        id="deployment-surge-not-a-percent",
    ),
    pytest.param(
        "Deployment",
        {"strategy": {"rollingUpdate": {"maxSurge": -1}}},
        "spec.strategy.rollingUpdate.maxSurge",
        "Invalid value: -1: must be greater than or equal to 0",
        id="deployment-negative-surge",
    ),
    pytest.param(
        "Deployment",
        {"minReadySeconds": 600},
        "spec.progressDeadlineSeconds",
        "Invalid value: 600: must be greater than minReadySeconds",
        id="deployment-deadline-not-above-min-ready",
    ),
    pytest.param(
        "Deployment",
        {"revisionHistoryLimit": -1},
        "spec.revisionHistoryLimit",
        "Invalid value: -1: must be greater than or equal to 0",
        id="deployment-revision-history",
    ),
    pytest.param(
        "StatefulSet",
        {"podManagementPolicy": "Random"},
        "spec.podManagementPolicy",
        "Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
        id="statefulset-pod-management-policy",
    ),
    pytest.param(
        "StatefulSet",
        {"updateStrategy": {"rollingUpdate": {"partition": -1}}},
        "spec.updateStrategy.rollingUpdate.partition",
        "Invalid value: -1: must be greater than or equal to 0",
        id="statefulset-negative-partition",
    ),
    pytest.param(
        "StatefulSet",
        {"ordinals": {"start": -1}},
        "spec.ordinals.start",
        "Invalid value: -1: must be greater than or equal to 0",
        id="statefulset-negative-ordinals-start",  # upstream ValidateStatefulSetSpec (GA 1.31)
    ),
    pytest.param(
        "StatefulSet",
        {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
        "spec.updateStrategy.rollingUpdate",
        "Invalid value: {\"partition\":1}: only allowed for updateStrategy 'RollingUpdate'",
        id="statefulset-on-delete-with-rolling-update",
    ),
    pytest.param(
        "DaemonSet",
        {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}},
        "spec.updateStrategy.rollingUpdate.maxUnavailable",
        "Required value: cannot be 0 when maxSurge is 0",
        id="daemonset-both-zero",
    ),
    pytest.param(
        "DaemonSet",
        {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}}},
        "spec.updateStrategy.rollingUpdate.maxSurge",
        'Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: '
        "may not be set when maxUnavailable is non-zero",
        id="daemonset-both-non-zero",
    ),
    pytest.param(
        "DaemonSet",
        {"updateStrategy": {"type": "Whenever"}},
        "spec.updateStrategy",
        'Unsupported value: "Whenever": supported values: "RollingUpdate", "OnDelete"',
        id="daemonset-strategy-type",
    ),
    pytest.param(
        "Job",
        {"parallelism": -1},
        "spec.parallelism",
        "Invalid value: -1: must be greater than or equal to 0",
        id="job-negative-parallelism",
    ),
    pytest.param(
        "Job",
        {"completions": -2},
        "spec.completions",
        "Invalid value: -2: must be greater than or equal to 0",
        id="job-negative-completions",
    ),
    pytest.param(
        "Job",
        {"backoffLimit": -1},
        "spec.backoffLimit",
        "Invalid value: -1: must be greater than or equal to 0",
        id="job-negative-backoff-limit",
    ),
    pytest.param(
        "Job",
        {"completionMode": "Indexed", "parallelism": 2},
        "spec.completions",
        "Required value: when completion mode is Indexed",
        id="job-indexed-without-completions",
    ),
    pytest.param(
        "Job",
        {"completionMode": "Sometimes"},
        "spec.completionMode",
        'Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"',
        id="job-completion-mode",
    ),
    pytest.param(
        "Job",
        {"template": {**JOB_TEMPLATE, "spec": {"containers": CONTAINERS}}},
        "spec.template.spec.restartPolicy",
        'Unsupported value: "Always": supported values: "OnFailure", "Never"',
        id="job-restart-policy-defaults-to-always",
    ),
    pytest.param(
        "Job",
        {"selector": {"matchLabels": {"app": "b"}}},
        "spec.selector",
        'Invalid value: {"matchLabels":{"app":"b","batch.kubernetes.io/controller-uid":""}}: '
        "`selector` not auto-generated",
        id="job-selector-without-manual-selector",
    ),
    pytest.param(
        "Job",
        {"manualSelector": True},
        "spec.selector",
        "Required value",
        id="job-manual-selector-without-selector",
    ),
    pytest.param(
        "Job",
        {"manualSelector": True, "selector": {"matchLabels": {"app": "other"}}},
        "spec.template.metadata.labels",
        'Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`',
        id="job-manual-selector-not-matching",
    ),
    pytest.param(
        "CronJob",
        {"schedule": "61 * * * *"},
        "spec.schedule",
        'Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
        id="cronjob-malformed-schedule",
    ),
    pytest.param(
        "CronJob",
        {"schedule": "* * * *"},
        "spec.schedule",
        'Invalid value: "* * * *": expected exactly 5 fields, found 4: [* * * *]',
        id="cronjob-four-fields",
    ),
    pytest.param("CronJob", {"schedule": None}, "spec.schedule", "Required value", id="cronjob-no-schedule"),
    pytest.param(
        "CronJob",
        {"schedule": "TZ=UTC * * * * *"},
        "spec.schedule",
        'Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
        id="cronjob-tz-in-schedule",
    ),
    pytest.param(
        "CronJob",
        {"concurrencyPolicy": "Sometimes"},
        "spec.concurrencyPolicy",
        'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
        id="cronjob-concurrency-policy",
    ),
    pytest.param(
        "CronJob",
        {"jobTemplate": {"spec": {"template": JOB_TEMPLATE, "selector": {"matchLabels": {"app": "b"}}}}},
        "spec.jobTemplate.spec.selector",
        'Invalid value: {"matchLabels":{"app":"b"}}: `selector` will be auto-generated',
        id="cronjob-job-template-selector",
    ),
    pytest.param(
        "CronJob",
        {"jobTemplate": {"spec": {"template": {**JOB_TEMPLATE, "spec": {"containers": CONTAINERS}}}}},
        "spec.jobTemplate.spec.template.spec.restartPolicy",
        'Unsupported value: "Always": supported values: "OnFailure", "Never"',
        id="cronjob-job-template-restart-policy",
    ),
    pytest.param(
        "CronJob",
        {"successfulJobsHistoryLimit": -1},
        "spec.successfulJobsHistoryLimit",
        "Invalid value: -1: must be greater than or equal to 0",
        id="cronjob-history-limit",
    ),
    pytest.param(
        "PodDisruptionBudget",
        {"maxUnavailable": 1},
        "spec",
        'Invalid value: {"minAvailable":1,"selector":{"matchLabels":{"app":"web"}},"maxUnavailable":1}: '
        "minAvailable and maxUnavailable cannot be both set",
        id="pdb-both-set",
    ),
    pytest.param(
        "PodDisruptionBudget",
        {"minAvailable": "150%"},
        "spec.minAvailable",
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
        id="pdb-over-100-percent",
    ),
    pytest.param(
        "PodDisruptionBudget",
        {"minAvailable": None, "maxUnavailable": -1},
        "spec.maxUnavailable",
        "Invalid value: -1: must be greater than or equal to 0",
        id="pdb-negative",
    ),
    pytest.param(
        "PodDisruptionBudget",
        {"unhealthyPodEvictionPolicy": "Never"},
        "spec.unhealthyPodEvictionPolicy",
        'Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
        id="pdb-unhealthy-pod-eviction-policy",
    ),
    pytest.param("Service", {"ports": None}, "spec.ports", "Required value", id="service-no-ports"),
    pytest.param(
        "Service",
        {"ports": [{"port": 70000}]},
        "spec.ports[0].port",
        "Invalid value: 70000: must be between 1 and 65535, inclusive",
        id="service-port-range",
    ),
    pytest.param(
        "Service",
        {"ports": [{"port": 80, "name": "a"}, {"port": 81}]},
        "spec.ports[1].name",
        "Required value",
        id="service-unnamed-port-among-several",
    ),
    pytest.param(
        "Service",
        {"ports": [{"port": 80, "protocol": "HTTP"}]},
        "spec.ports[0].protocol",
        'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        id="service-protocol",
    ),
    pytest.param(
        "Service",
        {"type": "Magic"},
        "spec.type",
        'Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
        id="service-type",
    ),
]


@pytest.mark.parametrize(("kind", "spec", "path", "detail"), CASES)
def test_refused_with_upstreams_path_and_message(kind: str, spec: dict[str, Any], path: str, detail: str) -> None:
    with pytest.raises(ManifestError) as err:
        load_manifests(_doc(kind, spec), source="m.yaml")
    assert (err.value.path, err.value.detail) == (path, detail)


@pytest.mark.parametrize(
    ("kind", "spec"),
    [
        pytest.param("Job", {"parallelism": 0, "completions": 3}, id="job-parallelism-zero-is-a-paused-job"),
        pytest.param("Job", {"completionMode": "Indexed", "completions": 3}, id="job-indexed"),
        pytest.param(
            "Job",
            {"template": {**JOB_TEMPLATE, "spec": {**JOB_TEMPLATE["spec"], "restartPolicy": "OnFailure"}}},
            id="job-on-failure",
        ),
        pytest.param("Deployment", {"strategy": {"type": "Recreate"}}, id="deployment-recreate"),
        pytest.param("Deployment", {"replicas": 0}, id="deployment-zero-replicas"),
        pytest.param(
            "DaemonSet",
            {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"}}},
            id="daemonset-surge",
        ),
        pytest.param("PodDisruptionBudget", {"minAvailable": None, "maxUnavailable": "100%"}, id="pdb-100-percent"),
        pytest.param("PodDisruptionBudget", {"selector": {}}, id="pdb-empty-selector"),
        pytest.param("Service", {"ports": None, "clusterIP": "None"}, id="service-headless-without-ports"),
        pytest.param("CronJob", {"schedule": "0 9 * * mon-fri"}, id="cronjob-names"),
    ],
)
def test_accepted(kind: str, spec: dict[str, Any]) -> None:
    (obj,) = load_manifests(_doc(kind, spec), source="m.yaml")
    assert obj.kind == kind


def test_a_cronjob_name_is_at_most_52_characters() -> None:
    with pytest.raises(ManifestError) as err:
        load_manifests(_doc("CronJob", {}, name="c" * 53), source="m.yaml")
    assert (err.value.path, err.value.detail) == (
        "metadata.name",
        f'Invalid value: "{"c" * 53}": must be no more than 52 characters',
    )
