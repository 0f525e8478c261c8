"""Upstream's Table columns and row of ``autoscaling/v2`` HorizontalPodAutoscaler
(``pkg/printers/internalversion/printers.go``: ``printHorizontalPodAutoscaler`` and
``formatHPAMetrics``): NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE.

TARGETS lists each metric as ``current/target`` (``<unknown>`` before the controller wrote a
current value; a Resource or ContainerResource metric prefixed with its resource name, a
utilization in percent, an average value of an Object or External metric marked ``(avg)``), at
most two, then ``+ N more...``. Kept apart from ``printers``/``tables`` only for size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from emulator.base.api.autoscaling import HorizontalPodAutoscaler, MetricSpec, MetricStatus, MetricValueStatus
from emulator.base.http.cells import AGE_COLUMN as _AGE
from emulator.base.http.cells import NAME_COLUMN as _NAME
from emulator.base.http.cells import Since
from emulator.base.http.cells import column as _col

__all__ = ["AUTOSCALING_COLUMNS", "AUTOSCALING_ROWS", "format_hpa_metrics"]

AUTOSCALING_COLUMNS: Final[dict[str, tuple[dict[str, Any], ...]]] = {
    "HorizontalPodAutoscaler": (
        _NAME,
        _col(
            "Reference",
            "string",
            "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics "
            "should be collected, as well as to actually change the replica count.",
        ),
        _col(
            "Targets",
            "string",
            "metrics contains the specifications for which to use to calculate the desired replica count (the "
            "maximum replica count across all metrics will be used).",
        ),
        _col(
            "MinPods",
            "string",
            "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.",
        ),
        _col(
            "MaxPods",
            "integer",
            "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.",
        ),
        _col(
            "Replicas", "integer", "currentReplicas is current number of replicas of pods managed by this autoscaler."
        ),
        _AGE,
    )
}
_UNKNOWN: Final = "<unknown>"
_MAX_SHOWN: Final = 2


def _q(value: Any) -> str:
    return _UNKNOWN if value is None else str(value)


def _current(statuses: list[MetricStatus], i: int, source: str) -> MetricValueStatus | None:
    if i >= len(statuses):
        return None
    status = getattr(statuses[i], source)
    return None if status is None else status.current


def _one(spec: MetricSpec, statuses: list[MetricStatus], i: int) -> str:
    if spec.type == "External" and spec.external is not None:
        cur = _current(statuses, i, "external")
        t = spec.external.target
        if t.average_value is not None:
            return f"{_q(cur.average_value if cur else None)}/{t.average_value} (avg)"
        return f"{_q(cur.value if cur else None)}/{_q(t.value)}"
    if spec.type == "Pods" and spec.pods is not None:
        cur = _current(statuses, i, "pods")
        return f"{_q(cur.average_value if cur else None)}/{_q(spec.pods.target.average_value)}"
    if spec.type == "Object" and spec.object is not None:
        cur = _current(statuses, i, "object")
        t = spec.object.target
        if t.average_value is not None:
            return f"{_q(cur.average_value if cur else None)}/{t.average_value} (avg)"
        return f"{_q(cur.value if cur else None)}/{_q(t.value)}"
    source = (
        spec.resource
        if spec.type == "Resource"
        else spec.container_resource
        if spec.type == "ContainerResource"
        else None
    )
    if source is not None:
        cur = _current(statuses, i, "resource" if spec.type == "Resource" else "container_resource")
        t = source.target
        if t.average_value is not None:
            return f"{source.name}: {_q(cur.average_value if cur else None)}/{t.average_value}"
        current = _UNKNOWN if cur is None or cur.average_utilization is None else f"{cur.average_utilization}%"
        target = "<auto>" if t.average_utilization is None else f"{t.average_utilization}%"
        return f"{source.name}: {current}/{target}"
    return "<unknown type>"


def format_hpa_metrics(specs: list[MetricSpec], statuses: list[MetricStatus]) -> str:
    """``formatHPAMetrics``."""
    if not specs:
        return "<none>"
    shown = [_one(spec, statuses, i) for i, spec in enumerate(specs)]
    text = ", ".join(shown[:_MAX_SHOWN])
    if len(shown) > _MAX_SHOWN:
        return f"{text} + {len(shown) - _MAX_SHOWN} more..."
    return text


def _hpa_cells(hpa: HorizontalPodAutoscaler, since: Since) -> list[Any]:
    spec = hpa.spec
    ref = f"{spec.scale_target_ref.kind}/{spec.scale_target_ref.name}"
    low = "<unset>" if spec.min_replicas is None else str(spec.min_replicas)
    return [
        hpa.metadata.name,
        ref,
        format_hpa_metrics(spec.metrics, hpa.status.current_metrics),
        low,
        spec.max_replicas,
        hpa.status.current_replicas,
        since(hpa.metadata.creation_timestamp),
    ]


AUTOSCALING_ROWS: Final[dict[str, Callable[[Any, Since], list[Any]]]] = {"HorizontalPodAutoscaler": _hpa_cells}
