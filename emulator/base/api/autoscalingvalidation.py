"""Upstream's defaulting and validation of ``autoscaling/v2`` HorizontalPodAutoscaler
(``pkg/apis/autoscaling/v2/defaults.go``, ``pkg/apis/autoscaling/validation/validation.go``,
v1.34), with upstream's paths and messages, each as ``(path, detail)``.

Defaulting (``default_hpa``, idempotent): ``minReplicas`` 1; no metrics: one Resource metric,
cpu at 80 % utilization (``DefaultCPUUtilization``); a ``behavior`` that is set has every
unset rule filled: scale-up stabilization 0 s, ``selectPolicy: Max``, policies 4 pods and
100 % per 15 s; scale-down ``selectPolicy: Max``, 100 % per 15 s and its stabilization window
left unset (the controller's ``--horizontal-pod-autoscaler-downscale-stabilization``, 5 min).
A behavior left unset stays unset, as upstream: the controller then uses its older rules.

``HPAScaleToZero`` is alpha and off in v1.34: ``minReplicas`` ≥ 1 unless the stored object
already had 0. ``HPAConfigurableTolerance`` is alpha and off: ``tolerance`` is dropped on
create (``dropped_tolerance`` names the fields, for a warning).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from msgspec.structs import replace

from emulator.base.api.autoscaling import (
    METRIC_SOURCE_TYPES,
    SELECT_POLICIES,
    CrossVersionObjectReference,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior,
    HPAScalingPolicy,
    HPAScalingRules,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    ResourceMetricSource,
)
from emulator.base.api.labels import dns1123_label_errors, go_quote

__all__ = [
    "DEFAULT_CPU_UTILIZATION",
    "MAX_PERIOD_SECONDS",
    "MAX_STABILIZATION_WINDOW_SECONDS",
    "SCALABLE_KINDS",
    "UNSERVED_METRIC",
    "default_hpa",
    "drop_tolerance",
    "dropped_tolerance",
    "hpa_problems",
    "hpa_status_problems",
    "unserved_metrics",
]

Problem = tuple[str, str]
DEFAULT_CPU_UTILIZATION: Final = 80
MAX_PERIOD_SECONDS: Final = 1800
MAX_STABILIZATION_WINDOW_SECONDS: Final = 3600

_SCALE_UP: Final = HPAScalingRules(
    stabilization_window_seconds=0,
    select_policy="Max",
    policies=[
        HPAScalingPolicy(type="Pods", value=4, period_seconds=15),
        HPAScalingPolicy(type="Percent", value=100, period_seconds=15),
    ],
)
_SCALE_DOWN: Final = HPAScalingRules(
    select_policy="Max", policies=[HPAScalingPolicy(type="Percent", value=100, period_seconds=15)]
)
_DEFAULT_METRICS: Final = [
    MetricSpec(
        type="Resource",
        resource=ResourceMetricSource(
            name="cpu", target=MetricTarget(type="Utilization", average_utilization=DEFAULT_CPU_UTILIZATION)
        ),
    )
]


def _rules(given: HPAScalingRules | None, default: HPAScalingRules) -> HPAScalingRules:
    """Upstream ``copyHPAScalingRules``: the given fields over the defaults."""
    if given is None:
        return default
    return replace(
        default,
        select_policy=given.select_policy if given.select_policy is not None else default.select_policy,
        stabilization_window_seconds=given.stabilization_window_seconds
        if given.stabilization_window_seconds is not None
        else default.stabilization_window_seconds,
        policies=given.policies if given.policies is not None else default.policies,
        tolerance=given.tolerance,
    )


def default_hpa(hpa: HorizontalPodAutoscaler) -> HorizontalPodAutoscaler:
    """``SetDefaults_HorizontalPodAutoscaler`` (idempotent)."""
    spec = hpa.spec
    behavior = spec.behavior
    if behavior is not None:
        behavior = HorizontalPodAutoscalerBehavior(
            scale_up=_rules(behavior.scale_up, _SCALE_UP), scale_down=_rules(behavior.scale_down, _SCALE_DOWN)
        )
    new = replace(
        spec,
        min_replicas=1 if spec.min_replicas is None else spec.min_replicas,
        metrics=spec.metrics or list(_DEFAULT_METRICS),
        behavior=behavior,
    )
    return hpa if new == spec else replace(hpa, spec=new)


def dropped_tolerance(hpa: HorizontalPodAutoscaler) -> list[str]:
    """The ``tolerance`` fields set (``HPAConfigurableTolerance``, alpha, off in v1.34)."""
    b = hpa.spec.behavior
    if b is None:
        return []
    out = []
    for name, rules in (("scaleUp", b.scale_up), ("scaleDown", b.scale_down)):
        if rules is not None and rules.tolerance is not None:
            out.append(f"spec.behavior.{name}.tolerance")
    return out


def drop_tolerance(hpa: HorizontalPodAutoscaler) -> HorizontalPodAutoscaler:
    """``dropDisabledFields``: the tolerances removed."""
    b = hpa.spec.behavior
    if not dropped_tolerance(hpa) or b is None:
        return hpa
    up = replace(b.scale_up, tolerance=None) if b.scale_up is not None else None
    down = replace(b.scale_down, tolerance=None) if b.scale_down is not None else None
    return replace(hpa, spec=replace(hpa.spec, behavior=HorizontalPodAutoscalerBehavior(scale_up=up, scale_down=down)))


UNSERVED_METRIC: Final = (
    "not acted on: the emulator serves no custom or external metrics API, so the HPA controller "
    "reports this metric as upstream's does without an adapter (a Warning Event, and ScalingActive=False "
    "when no metric of the HPA can be computed)"
)


def unserved_metrics(hpa: HorizontalPodAutoscaler) -> list[str]:
    """The paths of the metrics no metrics API of the emulator serves (Pods, Object, External)."""
    names = {"Pods": "pods", "Object": "object", "External": "external"}
    return [f"spec.metrics[{i}].{names[m.type]}" for i, m in enumerate(hpa.spec.metrics) if m.type in names]


# --- validation ---------------------------------------------------------------------------


def _segment_errors(value: str) -> list[str]:
    """``IsValidPathSegmentName``."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in value]


def _reference(ref: CrossVersionObjectReference, path: str) -> Iterator[Problem]:
    """``ValidateCrossVersionObjectReference``."""
    for field, value in (("kind", ref.kind), ("name", ref.name)):
        if not value:
            yield f"{path}.{field}", "Required value"
        for msg in _segment_errors(value):
            yield f"{path}.{field}", f"Invalid value: {go_quote(value)}: {msg}"


def _target(t: MetricTarget, path: str) -> Iterator[Problem]:
    """``validateMetricTarget``."""
    if not t.type:
        yield f"{path}.type", "Required value: must specify a metric target type"
    if t.type not in ("Utilization", "Value", "AverageValue"):
        yield f"{path}.type", f"Invalid value: {go_quote(t.type)}: must be either Utilization, Value, or AverageValue"
    if t.value is not None and t.value.milli <= 0:
        yield f"{path}.value", f"Invalid value: {go_quote(t.value.text)}: must be positive"
    if t.average_value is not None and t.average_value.milli <= 0:
        yield f"{path}.averageValue", f"Invalid value: {go_quote(t.average_value.text)}: must be positive"
    if t.average_utilization is not None and t.average_utilization < 1:
        yield f"{path}.averageUtilization", f"Invalid value: {t.average_utilization}: must be greater than 0"


def _identifier(m: MetricIdentifier, path: str) -> Iterator[Problem]:
    if not m.name:
        yield f"{path}.name", "Required value: must specify a metric name"
    for msg in _segment_errors(m.name):
        yield f"{path}.name", f"Invalid value: {go_quote(m.name)}: {msg}"


def _utilization_or_value(t: MetricTarget, path: str) -> Iterator[Problem]:
    if t.average_utilization is None and t.average_value is None:
        yield f"{path}.averageUtilization", "Required value: must set either a target raw value or a target utilization"
    if t.average_utilization is not None and t.average_value is not None:
        yield f"{path}.averageValue", "Forbidden: may not set both a target raw value and a target utilization"


def _source_problems(spec: MetricSpec, present: str, path: str) -> Iterator[Problem]:
    """The one present source's own rules (upstream validates only the first present)."""
    at = f"{path}.{present}"
    if present == "object" and spec.object is not None:
        yield from _reference(spec.object.described_object, f"{at}.describedObject")
        yield from _identifier(spec.object.metric, f"{at}.metric")
        yield from _target(spec.object.target, f"{at}.target")
        if spec.object.target.value is None and spec.object.target.average_value is None:
            yield f"{at}.target.averageValue", "Required value: must set either a target value or averageValue"
    elif present == "external" and spec.external is not None:
        t = spec.external.target
        yield from _identifier(spec.external.metric, f"{at}.metric")
        yield from _target(t, f"{at}.target")
        if t.value is None and t.average_value is None:
            yield (
                f"{at}.target.averageValue",
                "Required value: must set either a target value for metric or a per-pod target",
            )
        if t.value is not None and t.average_value is not None:
            yield f"{at}.target.value", "Forbidden: may not set both a target value for metric and a per-pod target"
    elif present == "pods" and spec.pods is not None:
        yield from _identifier(spec.pods.metric, f"{at}.metric")
        yield from _target(spec.pods.target, f"{at}.target")
        if spec.pods.target.average_value is None:
            yield f"{at}.target.averageValue", "Required value: must specify a positive target averageValue"
    elif present == "resource" and spec.resource is not None:
        if not spec.resource.name:
            yield f"{at}.name", "Required value: must specify a resource name"
        yield from _target(spec.resource.target, f"{at}.target")
        yield from _utilization_or_value(spec.resource.target, f"{at}.target")
    elif present == "containerResource" and spec.container_resource is not None:
        src = spec.container_resource
        if not src.name:
            yield f"{at}.name", "Required value: must specify a resource name"
        if not src.container:
            yield f"{at}.container", "Required value: must specify a container"
        elif errors := dns1123_label_errors(src.container):
            yield f"{at}.container", f"Invalid value: {go_quote(src.container)}: {'; '.join(errors)}"
        yield from _target(src.target, f"{at}.target")
        yield from _utilization_or_value(src.target, f"{at}.target")


_EXPECTED: Final = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "External": "external",
    "ContainerResource": "containerResource",
}


def _metric(spec: MetricSpec, path: str) -> Iterator[Problem]:
    """``validateMetricSpec``."""
    supported = ", ".join(go_quote(t) for t in METRIC_SOURCE_TYPES)
    if not spec.type:
        yield f"{path}.type", "Required value: must specify a metric source type"
    if spec.type not in METRIC_SOURCE_TYPES:
        yield f"{path}.type", f"Unsupported value: {go_quote(spec.type)}: supported values: {supported}"
    present = [
        name
        for name, value in (
            ("object", spec.object),
            ("external", spec.external),
            ("pods", spec.pods),
            ("resource", spec.resource),
            ("containerResource", spec.container_resource),
        )
        if value is not None
    ]
    if present:
        yield from _source_problems(spec, present[0], path)
    expected = _EXPECTED.get(spec.type)
    if expected is None:
        yield f"{path}.type", f"Unsupported value: {go_quote(spec.type)}: supported values: {supported}"
    elif expected not in present:
        yield f"{path}.{expected}", "Required value: must populate information for the given metric source"
    if len(present) != 1:
        for name in sorted(present):
            if name != expected:
                yield f"{path}.{name}", "Forbidden: must populate the given metric source only"


def _scaling_rules(rules: HPAScalingRules | None, path: str) -> Iterator[Problem]:
    """``validateScalingRules``."""
    if rules is None:
        return
    window = rules.stabilization_window_seconds
    if window is not None and window < 0:
        yield f"{path}.stabilizationWindowSeconds", f"Invalid value: {window}: must be greater than or equal to zero"
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        detail = f"Invalid value: {window}: must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"
        yield f"{path}.stabilizationWindowSeconds", detail
    if rules.select_policy is not None and rules.select_policy not in SELECT_POLICIES:
        supported = ", ".join(go_quote(p) for p in SELECT_POLICIES)
        yield (
            f"{path}.selectPolicy",
            f"Unsupported value: {go_quote(rules.select_policy)}: supported values: {supported}",
        )
    if not rules.policies:
        yield f"{path}.policies", "Required value: must specify at least one Policy"
    for i, p in enumerate(rules.policies or ()):
        at = f"{path}.policies[{i}]"
        if p.type not in ("Pods", "Percent"):
            yield f"{at}.type", f'Unsupported value: {go_quote(p.type)}: supported values: "Percent", "Pods"'
        if p.value <= 0:
            yield f"{at}.value", f"Invalid value: {p.value}: must be greater than zero"
        if p.period_seconds <= 0:
            yield f"{at}.periodSeconds", f"Invalid value: {p.period_seconds}: must be greater than zero"
        if p.period_seconds > MAX_PERIOD_SECONDS:
            detail = f"Invalid value: {p.period_seconds}: must be less than or equal to {MAX_PERIOD_SECONDS}"
            yield f"{at}.periodSeconds", detail


SCALABLE_KINDS: Final = ("Deployment", "ReplicaSet", "StatefulSet")
"""The kinds with a ``scale`` subresource the emulator serves (all in group ``apps``)."""


def _scalable(ref: CrossVersionObjectReference, path: str) -> Iterator[Problem]:
    """The emulator's own rule (upstream accepts any kind and its controller reports
    ``FailedGetScale``): the target must be a kind the emulator can scale, so that a typo is
    an error when the manifest is read rather than a condition found later."""
    if ref.kind and ref.kind not in SCALABLE_KINDS:
        supported = ", ".join(go_quote(k) for k in SCALABLE_KINDS)
        yield f"{path}.kind", f"Unsupported value: {go_quote(ref.kind)}: supported values: {supported}"
    elif ref.kind and ref.api_version.rpartition("/")[0] != "apps":
        yield f"{path}.apiVersion", f'Unsupported value: {go_quote(ref.api_version)}: supported values: "apps/v1"'


def hpa_problems(hpa: HorizontalPodAutoscaler, *, min_replicas_lower_bound: int = 1) -> Iterator[Problem]:
    """``validateHorizontalPodAutoscalerSpec`` of a defaulted object."""
    spec, path = hpa.spec, "spec"
    low = min_replicas_lower_bound
    if spec.min_replicas is not None and spec.min_replicas < low:
        yield f"{path}.minReplicas", f"Invalid value: {spec.min_replicas}: must be greater than or equal to {low}"
    if spec.max_replicas < 1:
        yield f"{path}.maxReplicas", f"Invalid value: {spec.max_replicas}: must be greater than 0"
    if spec.min_replicas is not None and spec.max_replicas < spec.min_replicas:
        yield (
            f"{path}.maxReplicas",
            f"Invalid value: {spec.max_replicas}: must be greater than or equal to `minReplicas`",
        )
    yield from _reference(spec.scale_target_ref, f"{path}.scaleTargetRef")
    yield from _scalable(spec.scale_target_ref, f"{path}.scaleTargetRef")
    for i, m in enumerate(spec.metrics):
        yield from _metric(m, f"{path}.metrics[{i}]")
    if spec.min_replicas == 0 and not any(m.type in ("Object", "External") for m in spec.metrics):
        detail = "Forbidden: must specify at least one Object or External metric to support scaling to zero replicas"
        yield f"{path}.metrics", detail
    if spec.behavior is not None:
        yield from _scaling_rules(spec.behavior.scale_up, f"{path}.behavior.scaleUp")
        yield from _scaling_rules(spec.behavior.scale_down, f"{path}.behavior.scaleDown")


def hpa_status_problems(hpa: HorizontalPodAutoscaler) -> Iterator[Problem]:
    """``ValidateHorizontalPodAutoscalerStatusUpdate``."""
    for field, value in (
        ("currentReplicas", hpa.status.current_replicas),
        ("desiredReplicas", hpa.status.desired_replicas),
    ):
        if value < 0:
            yield f"status.{field}", f"Invalid value: {value}: must be greater than or equal to 0"
