"""``autoscaling/v2`` HorizontalPodAutoscaler, as upstream's ``k8s.io/api/autoscaling/v2``
types define it (v1.34), every field; and the ``metrics.k8s.io/v1beta1`` PodMetrics and
NodeMetrics that the resource metrics API serves (``k8s.io/metrics``; read-only, computed at
request time from the load model: ``emulator.base.apiserver.metrics``).

Owns the structs and the constants of their enumerations. Defaulting and validation are in
``autoscalingvalidation``; the controller is ``agents.controllers.podautoscaler``.
"""

from __future__ import annotations

from typing import Final

from emulator.base.api.meta import K8s, LabelSelector, ObjectMeta
from emulator.base.api.quantity import Quantity

__all__ = [
    "AUTOSCALING_KINDS",
    "METRIC_SOURCE_TYPES",
    "METRIC_TARGET_TYPES",
    "SCALING_POLICY_TYPES",
    "SELECT_POLICIES",
    "ContainerMetrics",
    "ContainerResourceMetricSource",
    "ContainerResourceMetricStatus",
    "CrossVersionObjectReference",
    "ExternalMetricSource",
    "ExternalMetricStatus",
    "HPAScalingPolicy",
    "HPAScalingRules",
    "HorizontalPodAutoscaler",
    "HorizontalPodAutoscalerBehavior",
    "HorizontalPodAutoscalerCondition",
    "HorizontalPodAutoscalerSpec",
    "HorizontalPodAutoscalerStatus",
    "MetricIdentifier",
    "MetricSpec",
    "MetricStatus",
    "MetricTarget",
    "MetricValueStatus",
    "NodeMetrics",
    "ObjectMetricSource",
    "ObjectMetricStatus",
    "PodMetrics",
    "PodsMetricSource",
    "PodsMetricStatus",
    "ResourceMetricSource",
    "ResourceMetricStatus",
]

METRIC_SOURCE_TYPES: Final = ("ContainerResource", "External", "Object", "Pods", "Resource")
"""``validMetricSourceTypesList`` (sorted, as upstream's ``sets.String.List``)."""
METRIC_TARGET_TYPES: Final = ("Utilization", "Value", "AverageValue")
SELECT_POLICIES: Final = ("Disabled", "Max", "Min")
SCALING_POLICY_TYPES: Final = ("Percent", "Pods")


class CrossVersionObjectReference(K8s, frozen=True):
    kind: str = ""
    name: str = ""
    api_version: str = ""


class MetricTarget(K8s, frozen=True):
    type: str = ""
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None


class MetricIdentifier(K8s, frozen=True):
    name: str = ""
    selector: LabelSelector | None = None


class ObjectMetricSource(K8s, frozen=True):
    described_object: CrossVersionObjectReference = CrossVersionObjectReference()
    target: MetricTarget = MetricTarget()
    metric: MetricIdentifier = MetricIdentifier()


class PodsMetricSource(K8s, frozen=True):
    metric: MetricIdentifier = MetricIdentifier()
    target: MetricTarget = MetricTarget()


class ResourceMetricSource(K8s, frozen=True):
    name: str = ""
    target: MetricTarget = MetricTarget()


class ContainerResourceMetricSource(K8s, frozen=True):
    name: str = ""
    target: MetricTarget = MetricTarget()
    container: str = ""


class ExternalMetricSource(K8s, frozen=True):
    metric: MetricIdentifier = MetricIdentifier()
    target: MetricTarget = MetricTarget()


class MetricSpec(K8s, frozen=True):
    type: str = ""
    object: ObjectMetricSource | None = None
    pods: PodsMetricSource | None = None
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = None
    external: ExternalMetricSource | None = None


class HPAScalingPolicy(K8s, frozen=True):
    type: str = ""
    value: int = 0
    period_seconds: int = 0


class HPAScalingRules(K8s, frozen=True):
    stabilization_window_seconds: int | None = None
    select_policy: str | None = None
    policies: list[HPAScalingPolicy] | None = None
    tolerance: Quantity | None = None
    """``HPAConfigurableTolerance`` (alpha in v1.34, off): dropped on create, reported."""


class HorizontalPodAutoscalerBehavior(K8s, frozen=True):
    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None


class HorizontalPodAutoscalerSpec(K8s, frozen=True):
    scale_target_ref: CrossVersionObjectReference = CrossVersionObjectReference()
    min_replicas: int | None = None
    max_replicas: int = 0
    metrics: list[MetricSpec] = []
    behavior: HorizontalPodAutoscalerBehavior | None = None


class MetricValueStatus(K8s, frozen=True):
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None


class ObjectMetricStatus(K8s, frozen=True):
    metric: MetricIdentifier = MetricIdentifier()
    current: MetricValueStatus = MetricValueStatus()
    described_object: CrossVersionObjectReference = CrossVersionObjectReference()


class PodsMetricStatus(K8s, frozen=True):
    metric: MetricIdentifier = MetricIdentifier()
    current: MetricValueStatus = MetricValueStatus()


class ResourceMetricStatus(K8s, frozen=True):
    name: str = ""
    current: MetricValueStatus = MetricValueStatus()


class ContainerResourceMetricStatus(K8s, frozen=True):
    name: str = ""
    current: MetricValueStatus = MetricValueStatus()
    container: str = ""


class ExternalMetricStatus(K8s, frozen=True):
    metric: MetricIdentifier = MetricIdentifier()
    current: MetricValueStatus = MetricValueStatus()


class MetricStatus(K8s, frozen=True):
    type: str = ""
    object: ObjectMetricStatus | None = None
    pods: PodsMetricStatus | None = None
    resource: ResourceMetricStatus | None = None
    container_resource: ContainerResourceMetricStatus | None = None
    external: ExternalMetricStatus | None = None


class HorizontalPodAutoscalerCondition(K8s, frozen=True, omit_defaults=False):
    type: str
    status: str
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class HorizontalPodAutoscalerStatus(K8s, frozen=True):
    observed_generation: int | None = None
    last_scale_time: str | None = None
    current_replicas: int = 0
    desired_replicas: int = 0
    current_metrics: list[MetricStatus] = []
    conditions: list[HorizontalPodAutoscalerCondition] = []


class HorizontalPodAutoscaler(K8s, frozen=True):
    api_version: str = "autoscaling/v2"
    kind: str = "HorizontalPodAutoscaler"
    metadata: ObjectMeta = ObjectMeta()
    spec: HorizontalPodAutoscalerSpec = HorizontalPodAutoscalerSpec()
    status: HorizontalPodAutoscalerStatus = HorizontalPodAutoscalerStatus()


AUTOSCALING_KINDS: Final = (HorizontalPodAutoscaler,)


# --- metrics.k8s.io/v1beta1 (served, never stored) -----------------------------------------


class ContainerMetrics(K8s, frozen=True):
    name: str = ""
    usage: dict[str, Quantity] = {}


class PodMetrics(K8s, frozen=True, omit_defaults=False):
    api_version: str = "metrics.k8s.io/v1beta1"
    kind: str = "PodMetrics"
    metadata: ObjectMeta = ObjectMeta()
    timestamp: str = ""
    window: str = ""
    containers: list[ContainerMetrics] = []


class NodeMetrics(K8s, frozen=True, omit_defaults=False):
    api_version: str = "metrics.k8s.io/v1beta1"
    kind: str = "NodeMetrics"
    metadata: ObjectMeta = ObjectMeta()
    timestamp: str = ""
    window: str = ""
    usage: dict[str, Quantity] = {}


def hpa_v1_to_v2(doc: dict[str, object]) -> dict[str, object]:
    """An ``autoscaling/v1`` HorizontalPodAutoscaler manifest as ``autoscaling/v2`` (upstream's
    conversion, ``pkg/apis/autoscaling/v1/conversion.go``): ``targetCPUUtilizationPercentage``
    becomes a cpu Utilization Resource metric (none: the v2 default, 80 %); the status's
    ``currentCPUUtilizationPercentage`` a cpu Resource metric status."""
    out = {**doc, "apiVersion": "autoscaling/v2"}
    spec = doc.get("spec")
    if isinstance(spec, dict):
        spec = dict(spec)
        target = spec.pop("targetCPUUtilizationPercentage", None)
        if target is not None:
            spec["metrics"] = [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}},
                }
            ]
        out["spec"] = spec
    status = doc.get("status")
    if isinstance(status, dict):
        status = dict(status)
        current = status.pop("currentCPUUtilizationPercentage", None)
        if current is not None:
            status["currentMetrics"] = [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": current}}}
            ]
        out["status"] = status
    return out
