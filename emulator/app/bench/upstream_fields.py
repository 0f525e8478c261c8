"""The fields and opcodes of upstream scheduler_perf's config format
(``test/integration/scheduler_perf``: ``testCase``, ``workload`` and every op struct) and what
the emulator does with each: played, honoured, or a reason the workload cannot run.

A file is never refused for a field or an opcode upstream's format defines. A field this
module does not list is still refused (upstream decodes its files strictly, so it is a typo);
an opcode upstream defines that the emulator cannot play (``LACKING``), or a field it cannot
honour (``unplayable``), makes the workload ``skipped`` with the reason.

Owns: ``PLAYED``, ``LACKING``, the per-opcode field tables, ``unplayable`` (an op's skip
reason from its fields), ``metrics_config`` (upstream's ``metricsCollectorConfig`` checked and
reduced to the metric names it collects). Translation itself is ``upstream.py``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "CASE_FIELDS",
    "KINDS_LACKING",
    "LACKING",
    "OP_FIELDS",
    "PLAYED",
    "TEMPLATE_KINDS",
    "WORKLOAD_FIELDS",
    "FieldError",
    "check_selector",
    "client_limits",
    "metrics_config",
    "threshold",
    "unplayable",
]

PLAYED: Final = frozenset(
    {
        "createNodes",
        "createNamespaces",
        "createPods",
        "churn",
        "barrier",
        "sleep",
        "createPodSets",
        "deletePods",
        "createAny",
        "updateAny",
        "startCollectingMetrics",
        "stopCollectingMetrics",
        "createResourceDriver",
        "createResourceClaims",
        "allocResourceClaims",
    }
)
"""Opcodes the harness plays."""

LACKING: Final[Mapping[str, str]] = {
    "createPodsWithPVs": "PersistentVolumes and PersistentVolumeClaims",
    "updateDeviceConditions": "devices' binding conditions (DRADeviceBindingConditions)",
    "createPodGroups": "PodGroups (the scheduling.k8s.io workload API)",
    "waitForPodGroups": "PodGroups (the scheduling.k8s.io workload API)",
    "startCollectingProfile": "Go runtime profiles",
    "stopCollectingProfile": "Go runtime profiles",
}
"""Opcodes upstream defines that need what the emulator lacks → what that is."""

CASE_FIELDS: Final = frozenset(
    {
        "name",
        "featureGates",
        "metricsCollectorConfig",
        "workloadTemplate",
        "workloads",
        "schedulerConfigPath",
        "defaultPodTemplatePath",
        "labels",
        "defaultThresholdMetricSelector",
        "schedulerApiClientQPS",
        "schedulerApiClientBurst",
    }
)
"""Upstream's ``testCase``."""

WORKLOAD_FIELDS: Final = frozenset({"name", "params", "labels", "threshold", "thresholdMetricSelector", "featureGates"})
"""Upstream's ``workload``."""

_COUNTED: Final = frozenset({"opcode", "count", "countParam"})
OP_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "createNodes": _COUNTED
    | {
        "nodeTemplatePath",
        "nodeAllocatableStrategy",
        "labelNodePrepareStrategy",
        "uniqueNodeLabelStrategy",
        "templateParams",
    },
    "createNamespaces": _COUNTED | {"prefix", "namespaceTemplatePath"},
    "createPods": _COUNTED
    | {
        "countMultiplierParam",
        "steadyState",
        "steadyStateParam",
        "duration",
        "durationParam",
        "collectMetrics",
        "namespace",
        "podTemplatePath",
        "skipWaitToCompletion",
        "persistentVolumeTemplatePath",
        "persistentVolumeClaimTemplatePath",
        "templateParams",
        "signatureBatchSize",
        "signatureBatchSizeParam",
        "nominatedNodeName",
    },
    "createPodSets": _COUNTED | {"namespacePrefix", "createPodsOp"},
    "deletePods": frozenset({"opcode", "namespace", "labelSelector", "skipWaitToCompletion", "deletePodsPerSecond"}),
    "churn": frozenset({"opcode", "mode", "number", "intervalMilliseconds", "namespace", "templatePaths"}),
    "barrier": frozenset({"opcode", "namespaces", "labelSelector", "stageRequirement"}),
    "sleep": frozenset({"opcode", "duration", "durationParam"}),
    "createAny": _COUNTED | {"namespace", "templatePath", "templateParams"},
    "updateAny": _COUNTED | {"namespace", "templatePath", "updatePerSecond", "subresources"},
    "createResourceDriver": frozenset({"opcode", "driverName", "maxClaimsPerNode", "maxClaimsPerNodeParam", "nodes"}),
    "createResourceClaims": _COUNTED | {"namespace", "templatePath"},
    "allocResourceClaims": frozenset({"opcode", "namespace"}),
    "startCollectingMetrics": frozenset({"opcode", "name", "namespaces", "labelSelector"}),
    "stopCollectingMetrics": frozenset({"opcode"}),
}
"""Played opcode → the fields of upstream's op struct (``operations.go``, ``update.go``, ``dra.go``)."""

TEMPLATE_KINDS: Final = frozenset({"Node", "Pod"})
KINDS_LACKING: Final[Mapping[str, str]] = {
    "createPodsWithPVs": "PersistentVolumes and PersistentVolumeClaims",
    "PersistentVolume": "PersistentVolumes",
    "PersistentVolumeClaim": "PersistentVolumeClaims",
    "StorageClass": "StorageClasses",
    "CSINode": "CSI drivers",
}

SUBRESOURCES: Final[Mapping[str, str]] = {}
"""An ``updateAny`` subresource the emulator lacks → what that is (``status`` and ``resize``,
in-place pod resize, are played)."""


def unplayable(code: str, op: Mapping[str, Any]) -> str:
    """Why a played opcode with these fields cannot run as upstream runs it ("" when it can)."""
    lacking = ""
    if code == "createPods" and op.get("nominatedNodeName"):
        lacking = (
            "createPods nominatedNodeName needs pods created nominated to a node (NominatedNodeNameForExpectation)"
        )
    elif code == "updateAny":
        for sub in op.get("subresources") or ():
            if sub in SUBRESOURCES:
                lacking = f"updateAny of subresource {sub} needs {SUBRESOURCES[sub]}"
            elif sub not in ("status", "resize"):
                lacking = f"updateAny of subresource {sub} needs that subresource"
    return f"{lacking}, which the emulator does not have" if lacking else ""


class FieldError(ValueError):
    """``(path suffix, detail)`` of a malformed field."""

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(detail)
        self.path, self.detail = path, detail


def client_limits(case: Mapping[str, Any]) -> tuple[float, int] | None:
    """A test case's ``schedulerApiClientQPS``/``Burst`` as (qps, burst), None without a qps
    (``FieldError`` if malformed)."""
    for key in ("schedulerApiClientQPS", "schedulerApiClientBurst"):
        value = case.get(key, 0)
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise FieldError(f".{key}", "expected a non-negative number")
    if not isinstance(case.get("schedulerApiClientBurst", 0), int):
        raise FieldError(".schedulerApiClientBurst", "expected a whole number")
    qps = case.get("schedulerApiClientQPS", 0)
    return (float(qps), int(case.get("schedulerApiClientBurst", 0))) if qps else None


def check_selector(value: Any) -> None:
    """Upstream's ``thresholdMetricSelector`` (the metric a threshold is compared with):
    checked, then not used (the threshold is reported for reference, never compared)."""
    if value is None:
        return
    known = {"name", "labels", "dataBucket", "expectLower"}
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or set(value) - known:
        raise FieldError("", f"expected a mapping with name and optionally {', '.join(sorted(known - {'name'}))}")


def threshold(value: Any) -> Any:
    """Upstream's ``threshold``: a number (``spec.py`` checks it), or topic → number; then the
    value upstream uses without a topic: none."""
    if isinstance(value, dict):
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()):
            raise FieldError("", "expected a number or a mapping of topic names to numbers")
        return None
    return value


METRICS_REPORTED: Final[Mapping[str, tuple[str, ...]]] = {
    "scheduler_scheduling_attempt_duration_seconds": ("attemptMs",),
    "scheduler_pod_scheduling_sli_duration_seconds": ("e2eMs",),
    "scheduler_pod_scheduling_duration_seconds": ("e2eMs",),
    "scheduler_framework_extension_point_duration_seconds": ("filterMs", "scoreMs"),
}
"""Upstream's metric → the result fields that report it (``metrics.py``); the
extension-point one only for its ``Filter`` and ``Score`` values."""


def metrics_config(value: Any) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Upstream's ``metricsCollectorConfig`` (``{metrics: {name: [{label, values}] | null}}``)
    checked and honoured as far as the emulator's metrics go: the result fields to report, the
    metrics reported, and those the emulator does not collect (each sorted). ``FieldError``
    when malformed."""
    if not isinstance(value, dict) or set(value) - {"metrics"}:
        raise FieldError("", "expected a mapping with one field, metrics")
    metrics = value.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise FieldError(".metrics", "expected a mapping of metric names to label values")
    fields: set[str] = set()
    collected, missing = [], []
    for name, labels in sorted(metrics.items()):
        if labels is not None and not isinstance(labels, list):
            raise FieldError(f".metrics.{name}", "expected a list of {label, values}")
        points: set[str] = set()
        for k, lv in enumerate(labels or ()):
            ok = isinstance(lv, dict) and set(lv) <= {"label", "values"} and isinstance(lv.get("label"), str)
            values = lv.get("values") if isinstance(lv, dict) else None
            if not ok or not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise FieldError(f".metrics.{name}[{k}]", "expected {label: name, values: [strings]}")
            if lv["label"] == "extension_point":
                points |= set(values)
        got = METRICS_REPORTED.get(name, ())
        if name == "scheduler_framework_extension_point_duration_seconds" and points:
            got = tuple(f for f, p in (("filterMs", "Filter"), ("scoreMs", "Score")) if p in points)
        if got:
            fields |= set(got)
            collected.append(name)
        else:
            missing.append(name)
    return tuple(sorted(fields)), tuple(collected), tuple(missing)
