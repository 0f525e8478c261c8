"""Upstream's ``computeReplicasForMetrics`` and its per-source helpers (``horizontal.go``,
v1.34), over the resource metrics API (``Client.pod_metrics``) and ``replica_calculator``.

Resource and ContainerResource metrics (Utilization, AverageValue) are acted on. The emulator
serves no custom or external metrics API, so a Pods, Object or External metric fails as it
fails on a cluster without an adapter: its Event (``FailedGetPodsMetric``...) and, when no
metric of the HPA could be computed, ``ScalingActive=False`` with that reason; the loader
warns about such a metric when the manifest is read (``emulator.base.api.codec``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from agents.controllers.podautoscaler.replica_calculator import PodMemo, PodMetric, ReplicaCalcError, ReplicaCalculator
from emulator.base.api.autoscaling import (
    ContainerResourceMetricStatus,
    HorizontalPodAutoscaler,
    MetricSpec,
    MetricStatus,
    MetricValueStatus,
    ResourceMetricStatus,
)
from emulator.base.api.core import Pod
from emulator.base.api.labelparse import format_label_selector
from emulator.base.api.labelselector import Selector
from emulator.base.api.meta import ObjectReference
from emulator.base.api.quantity import Quantity
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.runtime.clock import Clock, parse_timestamp

__all__ = ["MetricsComputer", "MetricsError", "Proposal"]

NO_CUSTOM: Final = (
    "unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
)
NO_EXTERNAL: Final = (
    "unable to fetch metrics from external metrics API: no external metrics API (external.metrics.k8s.io) registered"
)


class MetricsError(Exception):
    """No replica count: ``text`` is the error (the ``FailedComputeMetricsReplicas`` Event),
    ``reason``/``message`` the ``ScalingActive=False`` condition."""

    def __init__(self, text: str, reason: str, message: str, statuses: list[MetricStatus] | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.reason = reason
        self.message = message
        self.statuses = statuses or []


class _MetricFailure(Exception):
    def __init__(self, reason: str, inner: str, outer: str) -> None:
        super().__init__(outer)
        self.reason = reason
        self.inner = inner
        self.outer = outer


@dataclass(frozen=True, slots=True)
class Proposal:
    replicas: int
    metric: str
    statuses: list[MetricStatus]


class MetricsComputer:
    """One reconcile's metric proposals for one HPA."""

    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        clock: Clock,
        ref: ObjectReference,
        memo: PodMemo | None = None,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.clock = clock
        self.ref = ref
        self.calc = ReplicaCalculator(memo=memo)

    async def compute(
        self,
        hpa: HorizontalPodAutoscaler,
        spec_replicas: int,
        status_replicas: int,
        selector: Selector,
        pods: list[Pod],
    ) -> Proposal:
        specs = hpa.spec.metrics
        statuses = [MetricStatus() for _ in specs]
        replicas, metric = 0, ""
        invalid = 0
        first: _MetricFailure | None = None
        for i, spec in enumerate(specs):
            try:
                proposal, name, status = await self._one(hpa, spec, spec_replicas, selector, pods)
            except _MetricFailure as err:
                await self.recorder.event(self.ref, "Warning", err.reason, err.inner)
                if first is None:
                    first = err
                invalid += 1
                continue
            statuses[i] = status
            if replicas == 0 or proposal > replicas:
                replicas, metric = proposal, name
        if invalid >= len(specs) and first is not None:
            text = f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first.outer}"
            message = f"the HPA was unable to compute the replica count: {first.inner}"
            raise MetricsError(text, first.reason, message, statuses)
        return Proposal(replicas, metric, statuses)

    async def _pod_metrics(
        self, namespace: str, selector: Selector, resource: str, container: str
    ) -> dict[str, PodMetric]:
        """``getResourceMetric`` / ``getContainerMetrics``: each pod's usage, milli-units (a pod
        resource's: the same figures through ``pod_usage``, without the PodMetrics objects)."""
        if not container:
            stamp, usage = await self.client.pod_usage(namespace, selector, resource)
            if not usage:
                raise ReplicaCalcError("no metrics returned from resource metrics API")
            at = parse_timestamp(stamp)
            values = set(usage.values())  # most pods use the same: one (frozen) PodMetric per value
            made: dict[int | None, PodMetric] = {m: PodMetric(m, at, 15.0) for m in values if m is not None}
            if None in values:
                return {name: made[milli] for name, milli in usage.items() if milli is not None}
            return dict(zip(usage, map(made.__getitem__, usage.values()), strict=True))
        raw = await self.client.pod_metrics(namespace, selector)
        if not raw:
            raise ReplicaCalcError("no metrics returned from resource metrics API")
        out: dict[str, PodMetric] = {}
        for m in raw:
            total, missing = 0, not m.containers
            found = False
            for c in m.containers:
                if container and c.name != container:
                    continue
                found = True
                q = c.usage.get(resource)
                if q is None:
                    missing = True
                    break
                total += q.milli
            if container and not found:
                raise ReplicaCalcError(
                    f"failed to get container metrics: container {container} not present in metrics for pod "
                    f"{m.metadata.namespace}/{m.metadata.name}"
                )
            if not missing:
                out[m.metadata.name] = PodMetric(total, parse_timestamp(m.timestamp), 15.0)
        return out

    async def _resource(
        self, hpa: HorizontalPodAutoscaler, spec: MetricSpec, current: int, selector: Selector, pods: Sequence[Pod]
    ) -> tuple[int, str, MetricStatus]:
        """``computeStatusForResourceMetric`` (and its ContainerResource twin)."""
        if spec.container_resource is not None:
            name, target, container = (
                spec.container_resource.name,
                spec.container_resource.target,
                spec.container_resource.container,
            )
            reason, label = "FailedGetContainerResourceMetric", f"{name} container resource"
        else:
            assert spec.resource is not None
            name, target, container = spec.resource.name, spec.resource.target, ""
            reason, label = "FailedGetResourceMetric", f"{name} resource"
        ns = hpa.metadata.namespace
        now = self.clock.now()
        try:
            try:
                metrics = await self._pod_metrics(ns, selector, name, container)
            except ReplicaCalcError as err:
                raise ReplicaCalcError(f"unable to get metrics for resource {name}: {err}") from None
            if target.average_value is not None:
                replicas, raw = self.calc.plain_metric_replicas(
                    current, target.average_value.milli, name, pods, metrics, now
                )
                current_value = MetricValueStatus(average_value=Quantity.from_milli(raw))
                metric = label
            elif target.average_utilization is not None:
                replicas, pct, raw = self.calc.resource_replicas(
                    current, target.average_utilization, name, pods, metrics, now, container
                )
                current_value = MetricValueStatus(average_utilization=pct, average_value=Quantity.from_milli(raw))
                metric = f"{label} utilization (percentage of request)"
            else:
                raise ReplicaCalcError(
                    "invalid resource metric source: neither a utilization target nor a value target was set"
                )
        except ReplicaCalcError as err:
            outer = f"failed to get {name} utilization: {err}"
            if container:
                outer = f"failed to get {name} container metric value: {err}"
            raise _MetricFailure(reason, str(err), outer) from None
        if container:
            status = MetricStatus(
                type="ContainerResource",
                container_resource=ContainerResourceMetricStatus(name=name, current=current_value, container=container),
            )
        else:
            status = MetricStatus(type="Resource", resource=ResourceMetricStatus(name=name, current=current_value))
        return replicas, metric, status

    async def _one(
        self, hpa: HorizontalPodAutoscaler, spec: MetricSpec, current: int, selector: Selector, pods: Sequence[Pod]
    ) -> tuple[int, str, MetricStatus]:
        """``computeReplicasForMetric``."""
        ns = hpa.metadata.namespace
        if spec.type in ("Resource", "ContainerResource"):
            return await self._resource(hpa, spec, current, selector, pods)
        if spec.type == "Pods" and spec.pods is not None:
            inner = f"unable to get metric {spec.pods.metric.name}: {NO_CUSTOM}"
            raise _MetricFailure("FailedGetPodsMetric", inner, f"failed to get pods metric value: {inner}")
        if spec.type == "Object" and spec.object is not None:
            o, d = spec.object, spec.object.described_object
            inner = f"unable to get metric {o.metric.name}: {d.kind} on {ns} {d.name}/{NO_CUSTOM}"
            raise _MetricFailure("FailedGetObjectMetric", inner, f"failed to get object metric value: {inner}")
        if spec.type == "External" and spec.external is not None:
            e = spec.external
            sel = "nil" if e.metric.selector is None else format_label_selector(e.metric.selector)
            inner = f"unable to get external metric {ns}/{e.metric.name}/{sel}: {NO_EXTERNAL}"
            if e.target.average_value is not None:
                outer = f"failed to get {e.metric.name} external metric: {inner}"
            else:
                outer = f"failed to get external metric {e.metric.name}: {inner}"
            raise _MetricFailure("FailedGetExternalMetric", inner, outer)
        inner = f'unknown metric source type "{spec.type}"'
        raise _MetricFailure("InvalidMetricSourceType", inner, inner)
