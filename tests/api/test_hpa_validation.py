# ruff: noqa: E501
"""HorizontalPodAutoscaler defaulting and validation, table-driven after upstream's
``pkg/apis/autoscaling/validation/validation_test.go`` and ``pkg/apis/autoscaling/v2/defaults_test.go``
(v1.34): each bad manifest's first problem, path and message as upstream's; the emulator's own rule
(a target it can scale) is marked."""

from __future__ import annotations

import pytest

from emulator.base.api.autoscaling import HPAScalingPolicy
from emulator.base.api.codec import ManifestError, load_manifests

HEAD = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
"""


def _load(spec: str) -> object:
    (obj,) = load_manifests(HEAD + spec, source="hpa.yaml")
    return obj


BAD = {
    "min-zero": ("  minReplicas: 0\n  maxReplicas: 5\n", "spec.minReplicas", "Invalid value: 0: must be greater than or equal to 1"),
    "max-zero": ("  maxReplicas: 0\n", "spec.maxReplicas", "Invalid value: 0: must be greater than 0"),
    "max-below-min": (
        "  minReplicas: 5\n  maxReplicas: 2\n", "spec.maxReplicas",
        "Invalid value: 2: must be greater than or equal to `minReplicas`",
    ),
    "metric-type-missing": (
        "  maxReplicas: 5\n  metrics: [{resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n",
        "spec.metrics[0].type", "Required value: must specify a metric source type",
    ),
    "metric-type-unknown": (
        "  maxReplicas: 5\n  metrics: [{type: Fancy}]\n", "spec.metrics[0].type",
        'Unsupported value: "Fancy": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
    ),
    "resource-missing": (
        "  maxReplicas: 5\n  metrics: [{type: Resource}]\n", "spec.metrics[0].resource",
        "Required value: must populate information for the given metric source",
    ),
    "two-sources": (
        "  maxReplicas: 5\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 5}}\n"
        "    pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: '1'}}\n",
        "spec.metrics[0].pods", "Forbidden: must populate the given metric source only",
    ),
    "utilization-and-value": (
        "  maxReplicas: 5\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 5, averageValue: 100m}}\n",
        "spec.metrics[0].resource.target.averageValue",
        "Forbidden: may not set both a target raw value and a target utilization",
    ),
    "utilization-zero": (
        "  maxReplicas: 5\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 0}}\n",
        "spec.metrics[0].resource.target.averageUtilization", "Invalid value: 0: must be greater than 0",
    ),
    "target-type-bad": (
        "  maxReplicas: 5\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Percent, averageUtilization: 5}}\n",
        "spec.metrics[0].resource.target.type",
        'Invalid value: "Percent": must be either Utilization, Value, or AverageValue',
    ),
    "pods-no-average": (
        "  maxReplicas: 5\n  metrics:\n  - type: Pods\n    pods: {metric: {name: qps}, target: {type: Value, value: '1'}}\n",
        "spec.metrics[0].pods.target.averageValue", "Required value: must specify a positive target averageValue",
    ),
    "stabilization-negative": (
        "  maxReplicas: 5\n  behavior: {scaleDown: {stabilizationWindowSeconds: -1}}\n",
        "spec.behavior.scaleDown.stabilizationWindowSeconds", "Invalid value: -1: must be greater than or equal to zero",
    ),
    "stabilization-too-long": (
        "  maxReplicas: 5\n  behavior: {scaleUp: {stabilizationWindowSeconds: 3601}}\n",
        "spec.behavior.scaleUp.stabilizationWindowSeconds", "Invalid value: 3601: must be less than or equal to 3600",
    ),
    "select-policy-bad": (
        "  maxReplicas: 5\n  behavior: {scaleUp: {selectPolicy: Average}}\n", "spec.behavior.scaleUp.selectPolicy",
        'Unsupported value: "Average": supported values: "Disabled", "Max", "Min"',
    ),
    "policies-empty": (
        "  maxReplicas: 5\n  behavior: {scaleUp: {policies: []}}\n", "spec.behavior.scaleUp.policies",
        "Required value: must specify at least one Policy",
    ),
    "policy-period-too-long": (
        "  maxReplicas: 5\n  behavior: {scaleDown: {policies: [{type: Pods, value: 1, periodSeconds: 1801}]}}\n",
        "spec.behavior.scaleDown.policies[0].periodSeconds", "Invalid value: 1801: must be less than or equal to 1800",
    ),
    "policy-value-zero": (
        "  maxReplicas: 5\n  behavior: {scaleDown: {policies: [{type: Percent, value: 0, periodSeconds: 15}]}}\n",
        "spec.behavior.scaleDown.policies[0].value", "Invalid value: 0: must be greater than zero",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("spec", "path", "detail"), BAD.values(), ids=BAD.keys())
def test_bad_hpa(spec: str, path: str, detail: str) -> None:
    with pytest.raises(ManifestError) as info:
        _load(spec)
    assert (info.value.path, info.value.detail) == (path, detail)


@pytest.mark.parametrize(
    ("ref", "path", "detail"),
    [
        pytest.param(
            "{apiVersion: apps/v1, kind: Deploymnet, name: web}", "spec.scaleTargetRef.kind",
            'Unsupported value: "Deploymnet": supported values: "Deployment", "ReplicaSet", "StatefulSet"',
            id="missing-kind",
        ),
        pytest.param(
            "{apiVersion: v1, kind: Deployment, name: web}", "spec.scaleTargetRef.apiVersion",
            'Unsupported value: "v1": supported values: "apps/v1"', id="wrong-group",
        ),
        pytest.param("{apiVersion: apps/v1, kind: Deployment}", "spec.scaleTargetRef.name", "Required value", id="no-name"),
    ],
)  # fmt: skip
def test_target_the_emulator_cannot_scale(ref: str, path: str, detail: str) -> None:
    """The emulator's own rule (upstream accepts any kind, its controller says FailedGetScale)."""
    text = HEAD.replace("{apiVersion: apps/v1, kind: Deployment, name: web}", ref) + "  maxReplicas: 5\n"
    with pytest.raises(ManifestError) as info:
        load_manifests(text, source="hpa.yaml")
    assert (info.value.path, info.value.detail) == (path, detail)


def test_defaults_as_upstream() -> None:
    """``SetDefaults_HorizontalPodAutoscaler``: minReplicas 1, cpu at 80 %, a set behavior filled."""
    from emulator.base.api.autoscalingvalidation import default_hpa

    hpa = default_hpa(_load("  maxReplicas: 5\n  behavior: {scaleDown: {selectPolicy: Min}}\n"))  # type: ignore[arg-type]
    spec = hpa.spec
    assert spec.min_replicas == 1
    assert spec.metrics[0].resource is not None
    assert (spec.metrics[0].resource.name, spec.metrics[0].resource.target.average_utilization) == ("cpu", 80)
    assert spec.behavior is not None
    assert spec.behavior.scale_up is not None
    assert spec.behavior.scale_down is not None
    assert spec.behavior.scale_up.stabilization_window_seconds == 0
    assert spec.behavior.scale_up.select_policy == "Max"
    assert spec.behavior.scale_up.policies == [
        HPAScalingPolicy(type="Pods", value=4, period_seconds=15),
        HPAScalingPolicy(type="Percent", value=100, period_seconds=15),
    ]
    assert spec.behavior.scale_down.stabilization_window_seconds is None
    assert spec.behavior.scale_down.select_policy == "Min"
    assert spec.behavior.scale_down.policies == [HPAScalingPolicy(type="Percent", value=100, period_seconds=15)]
    assert default_hpa(_load("  maxReplicas: 5\n")).spec.behavior is None  # type: ignore[arg-type]


def test_v1_manifest_is_converted() -> None:
    hpa = _load_v1()
    assert hpa.api_version == "autoscaling/v2"
    assert hpa.spec.metrics[0].resource.target.average_utilization == 50


def _load_v1():  # type: ignore[no-untyped-def]
    text = HEAD.replace("autoscaling/v2", "autoscaling/v1") + "  maxReplicas: 5\n  targetCPUUtilizationPercentage: 50\n"
    (obj,) = load_manifests(text, source="hpa.yaml")
    return obj


def test_tolerance_is_dropped_with_a_warning() -> None:
    warnings: list[str] = []
    from emulator.base.api.codec import object_from_dict, yaml_documents

    (doc,) = yaml_documents(HEAD + "  maxReplicas: 5\n  behavior: {scaleUp: {tolerance: '0.05'}}\n", source="h")
    object_from_dict(doc, source="h", warn=warnings.append)
    assert warnings == [
        "h: spec.behavior.scaleUp.tolerance: dropped: the feature gate HPAConfigurableTolerance is off in v1.34 (alpha)"
    ]
