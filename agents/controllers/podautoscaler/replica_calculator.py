"""Upstream's ``pkg/controller/podautoscaler/replica_calculator.go`` and
``metrics/utilization.go`` (v1.34): the replica count a metric asks for, as pure functions of
the pods, their metrics and the time.

``PodMetric`` is one pod's value (milli-units) with its sample's timestamp and window;
``group_pods`` sorts the selector's pods into ready, unready (Pending; for cpu, not Ready or
still initialising), missing (no metric) and ignored (deleted, Failed); the two calculations
treat missing pods as using 100 % of their request on a scale-down and 0 % on a scale-up,
unready pods as 0 % on a scale-up, and keep the current count inside the tolerance or when the rebalanced ratio turns
the direction round. Errors are ``ReplicaCalcError`` with upstream's messages.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, is_
from typing import Any, Final

from emulator.base.api.core import Pod
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "CPU_INITIALIZATION_PERIOD",
    "DELAY_OF_INITIAL_READINESS_STATUS",
    "TOLERANCE",
    "PodMemo",
    "PodMetric",
    "ReplicaCalcError",
    "ReplicaCalculator",
    "calculate_requests",
    "group_pods",
]

TOLERANCE: Final = 0.1
"""``--horizontal-pod-autoscaler-tolerance``."""
CPU_INITIALIZATION_PERIOD: Final = 300.0
"""``--horizontal-pod-autoscaler-cpu-initialization-period``: 5 min."""
DELAY_OF_INITIAL_READINESS_STATUS: Final = 30.0
"""``--horizontal-pod-autoscaler-initial-readiness-delay``: 30 s."""


Grouping = tuple[int, list[str], list[str], list[str]]
"""``group_pods``'s answer: (ready pod count, unready, missing, ignored pod names)."""


class ReplicaCalcError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class PodMetric:
    value: int
    timestamp: float = 0.0
    window: float = 15.0


_value = attrgetter("value")


def _ready_condition(pod: Pod) -> tuple[str, float] | None:
    for c in pod.status.conditions:
        if c.type == "Ready":
            return c.status, parse_timestamp(c.last_transition_time) if c.last_transition_time else 0.0
    return None


def _times(pod: Pod) -> tuple[tuple[str, float] | None, float | None]:
    """(its Ready condition's status and transition time, its start time)."""
    return _ready_condition(pod), parse_timestamp(pod.status.start_time) if pod.status.start_time else None


def _request(pod: Pod, container: str, resource: str) -> int:
    """One pod's request of ``resource`` for ``calculate_requests`` (raising as it does)."""
    total = 0
    sidecars = [c for c in pod.spec.init_containers if c.restart_policy == "Always"]
    for c in (*pod.spec.containers, *sidecars):
        if container and c.name != container:
            continue
        q = c.resources.requests.get(resource)
        if q is None or q.milli == 0:
            raise ReplicaCalcError(f"missing request for {resource} in container {c.name} of Pod {pod.metadata.name}")
        total += q.milli
    return total


class PodMemo:
    """What ``group_pods`` and ``calculate_requests`` read of a pod, kept per pod object (objects
    are replaced, never changed in place) for the objects seen in this sync or the previous one:
    an HPA reads the same hundreds of mostly unchanged pods every 15 s. ``next_sync()`` between
    syncs. The figures are those of the plain functions, pod for pod.

    Whole answers too: a sync given the same pod objects in the same order as the last one gets
    the last requests again, and the last grouping when the pods with metrics are the same ones
    and no pod was still in its cpu initialization period (the grouping then reads no time and
    no metric value: ``group_pods``'s ``volatile``)."""

    __slots__ = ("_grouped", "_last", "_now", "_requests")

    def __init__(self) -> None:
        self._last: dict[str, list[Any]] = {}
        self._now: dict[str, list[Any]] = {}
        self._grouped: dict[tuple[str, float, float], tuple[list[Pod], set[str], Grouping]] = {}
        """(resource, the two periods) -> (the pods, the names with metrics, their grouping)."""
        self._requests: dict[tuple[str, str], tuple[list[Pod], dict[str, int]]] = {}
        """(container, resource) -> (the pods, their requests): read, never changed."""

    def next_sync(self) -> None:
        if self._now:  # a sync answered whole read no pod: the last one's entries still stand
            self._last, self._now = self._now, {}

    def _entry(self, pod: Pod) -> list[Any]:
        """[the pod, its ``_times`` (None until asked), its requests by (container, resource)]."""
        name = pod.metadata.name
        entry = self._now.get(name)
        if entry is None or entry[0] is not pod:
            entry = self._last.get(name)
            if entry is None or entry[0] is not pod:
                entry = [pod, None, {}]
            self._now[name] = entry
        return entry

    def times(self, pod: Pod) -> tuple[tuple[str, float] | None, float | None]:
        entry = self._entry(pod)
        if entry[1] is None:
            entry[1] = _times(pod)
        times: tuple[tuple[str, float] | None, float | None] = entry[1]
        return times

    def request(self, pod: Pod, container: str, resource: str) -> int:
        known: dict[tuple[str, str], int] = self._entry(pod)[2]
        value = known.get((container, resource))
        if value is None:
            value = known[(container, resource)] = _request(pod, container, resource)
        return value

    def group(
        self,
        pods: Sequence[Pod],
        metrics: Mapping[str, PodMetric],
        resource: str,
        now: float,
        cpu_initialization_period: float,
        delay_of_initial_readiness_status: float,
    ) -> Grouping:
        """``group_pods`` with this memo."""
        how = (resource, cpu_initialization_period, delay_of_initial_readiness_status)
        last = self._grouped.get(how)
        if last is not None and _same(pods, last[0]) and metrics.keys() == last[1]:
            ready, unready, missing, ignored = last[2]
            return ready, list(unready), list(missing), list(ignored)
        grouping, volatile = _group(
            pods, metrics, resource, now, cpu_initialization_period, delay_of_initial_readiness_status, self
        )
        if volatile:
            self._grouped.pop(how, None)
        else:
            self._grouped[how] = (list(pods), set(metrics), grouping)
        ready, unready, missing, ignored = grouping
        return ready, list(unready), list(missing), list(ignored)

    def requests(self, pods: Sequence[Pod], container: str, resource: str) -> dict[str, int]:
        """``calculate_requests`` with this memo; the answer is shared: read it, never change it."""
        last = self._requests.get((container, resource))
        if last is not None and _same(pods, last[0]):
            return last[1]
        out = {pod.metadata.name: self.request(pod, container, resource) for pod in pods}
        self._requests[(container, resource)] = (list(pods), out)
        return out


def _same(pods: Sequence[Pod], last: list[Pod]) -> bool:
    """The same pod objects in the same order."""
    return len(pods) == len(last) and all(map(is_, pods, last))


def group_pods(
    pods: Sequence[Pod],
    metrics: Mapping[str, PodMetric],
    resource: str,
    now: float,
    cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
    delay_of_initial_readiness_status: float = DELAY_OF_INITIAL_READINESS_STATUS,
    memo: PodMemo | None = None,
) -> Grouping:
    """``groupPods``: (ready pod count, unready, missing, ignored pod names). Ignored: being
    deleted or Failed (their metrics dropped); unready: Pending, or for cpu not Ready or still
    initialising (dropped, counted as 0 % on a scale-up); missing: no metric."""
    if memo is not None:
        return memo.group(pods, metrics, resource, now, cpu_initialization_period, delay_of_initial_readiness_status)
    grouping, _ = _group(pods, metrics, resource, now, cpu_initialization_period, delay_of_initial_readiness_status)
    return grouping


def _group(
    pods: Sequence[Pod],
    metrics: Mapping[str, PodMetric],
    resource: str,
    now: float,
    cpu_initialization_period: float,
    delay_of_initial_readiness_status: float,
    memo: PodMemo | None = None,
) -> tuple[Grouping, bool]:
    """``group_pods`` and whether it is ``volatile``: a pod with a metric read the time (still in
    its cpu initialization period, where its metric's timestamp counts too). Otherwise the same
    pods, with metrics for the same ones, group the same at any later time."""
    ready = 0
    unready: list[str] = []
    missing: list[str] = []
    ignored: list[str] = []
    volatile = False
    for pod in pods:
        name = pod.metadata.name
        if pod.metadata.deletion_timestamp is not None or pod.status.phase == "Failed":
            ignored.append(name)
            continue
        if pod.status.phase == "Pending":
            unready.append(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            missing.append(name)
            continue
        if resource == "cpu":
            cond, start = _times(pod) if memo is None else memo.times(pod)
            if cond is None or start is None:
                skip = True
            else:
                status, transition = cond
                if start + cpu_initialization_period > now:
                    volatile = True
                    skip = status == "False" or metric.timestamp < transition + metric.window
                else:
                    skip = status == "False" and start + delay_of_initial_readiness_status > transition
            if skip:
                unready.append(name)
                continue
        ready += 1
    return (ready, unready, missing, ignored), volatile


def calculate_requests(
    pods: Sequence[Pod], container: str, resource: str, memo: PodMemo | None = None
) -> dict[str, int]:
    """``calculateRequests``: each pod's request of ``resource`` (its containers and restartable
    init containers, or only ``container``), milli-units; a zero request is an error. With
    ``memo`` the answer may be shared with the last sync's: read it, never change it."""
    if memo is None:
        return {pod.metadata.name: _request(pod, container, resource) for pod in pods}
    return memo.requests(pods, container, resource)


def resource_utilization_ratio(
    metrics: Mapping[str, PodMetric], requests: Mapping[str, int], target_utilization: int
) -> tuple[float, int, int]:
    """``GetResourceUtilizationRatio``: (ratio, utilization %, average raw value)."""
    if metrics.keys() <= requests.keys():  # every pod with a metric has a request: sums in C
        metrics_total = sum(map(_value, metrics.values()))
        requests_total = sum(map(requests.__getitem__, metrics))
        entries = len(metrics)
        if requests_total == 0:
            raise ReplicaCalcError("no metrics returned matched known pods")
        utilization = (metrics_total * 100) // requests_total
        return utilization / target_utilization, utilization, metrics_total // entries
    metrics_total = requests_total = entries = 0
    for name, metric in metrics.items():
        request = requests.get(name)
        if request is None:
            continue
        metrics_total += metric.value
        requests_total += request
        entries += 1
    if requests_total == 0:
        raise ReplicaCalcError("no metrics returned matched known pods")
    utilization = (metrics_total * 100) // requests_total
    return utilization / target_utilization, utilization, metrics_total // entries


def metric_usage_ratio(metrics: Mapping[str, PodMetric], target_usage: int) -> tuple[float, int]:
    """``GetMetricUsageRatio``: (ratio, average value)."""
    total = sum(m.value for m in metrics.values())
    current = total // len(metrics)
    return current / target_usage, current


@dataclass(frozen=True, slots=True)
class ReplicaCalculator:
    tolerance: float = TOLERANCE
    cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD
    delay_of_initial_readiness_status: float = DELAY_OF_INITIAL_READINESS_STATUS
    memo: PodMemo | None = field(default=None, compare=False)

    def _usable(
        self, pods: Sequence[Pod], metrics: Mapping[str, PodMetric], resource: str, now: float
    ) -> tuple[dict[str, PodMetric], int, list[str], list[str]]:
        """Upstream's ``groupPods`` and ``removeMetricsForPods``: (the metrics of the pods that
        count, the ready pods, the unready ones, those without metrics)."""
        if not pods:
            raise ReplicaCalcError("no pods returned by selector while calculating replica count")
        metrics = dict(metrics)
        ready, unready, missing, ignored = group_pods(
            pods,
            metrics,
            resource,
            now,
            self.cpu_initialization_period,
            self.delay_of_initial_readiness_status,
            self.memo,
        )
        for name in (*ignored, *unready):
            metrics.pop(name, None)
        return metrics, ready, unready, missing

    def _rebalanced(self, current_replicas: int, ratio: float, new_ratio: float, count: int) -> int:
        """The second pass, once missing and unready pods are counted in: no change inside the
        tolerance or when the direction flips, else ``ceil(new_ratio * count)``."""
        if self._within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
            return current_replicas
        new_replicas = math.ceil(new_ratio * count)
        if (new_ratio < 1.0 and new_replicas > current_replicas) or (
            new_ratio > 1.0 and new_replicas < current_replicas
        ):
            return current_replicas
        return new_replicas

    def _within(self, ratio: float) -> bool:
        return (1.0 - self.tolerance) <= ratio <= (1.0 + self.tolerance)

    def resource_replicas(
        self,
        current_replicas: int,
        target_utilization: int,
        resource: str,
        pods: Sequence[Pod],
        metrics: Mapping[str, PodMetric],
        now: float,
        container: str = "",
    ) -> tuple[int, int, int]:
        """``GetResourceReplicas``: (replicas, utilization %, average raw value)."""
        metrics, ready, unready, missing = self._usable(pods, metrics, resource, now)
        requests = calculate_requests(pods, container, resource, self.memo)
        if not metrics:
            raise ReplicaCalcError("did not receive metrics for targeted pods (pods might be unready)")
        ratio, utilization, raw = resource_utilization_ratio(metrics, requests, target_utilization)
        scale_up_with_unready = bool(unready) and ratio > 1.0
        if not scale_up_with_unready and not missing:
            if self._within(ratio):
                return current_replicas, utilization, raw
            return math.ceil(ratio * ready), utilization, raw
        if missing:
            if ratio < 1.0:
                fallback = max(100, target_utilization)  # all of the request, or the target above 100 %
                for name in missing:
                    metrics[name] = PodMetric(requests[name] * fallback // 100)
            elif ratio > 1.0:
                for name in missing:
                    metrics[name] = PodMetric(0)
        if scale_up_with_unready:
            for name in unready:
                metrics[name] = PodMetric(0)
        new_ratio, _, _ = resource_utilization_ratio(metrics, requests, target_utilization)
        return self._rebalanced(current_replicas, ratio, new_ratio, len(metrics)), utilization, raw

    def plain_metric_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        resource: str,
        pods: Sequence[Pod],
        metrics: Mapping[str, PodMetric],
        now: float,
    ) -> tuple[int, int]:
        """``calcPlainMetricReplicas`` (AverageValue of a resource, Pods metrics): (replicas,
        average value)."""
        metrics, ready, unready, missing = self._usable(pods, metrics, resource, now)
        if not metrics:
            raise ReplicaCalcError("did not receive metrics for targeted pods (pods might be unready)")
        ratio, usage = metric_usage_ratio(metrics, target_usage)
        scale_up_with_unready = bool(unready) and ratio > 1.0
        if not scale_up_with_unready and not missing:
            if self._within(ratio):
                return current_replicas, usage
            return math.ceil(ratio * ready), usage
        for name in missing:
            metrics[name] = PodMetric(target_usage if ratio < 1.0 else 0)
        if scale_up_with_unready:
            for name in unready:
                metrics[name] = PodMetric(0)
        new_ratio, _ = metric_usage_ratio(metrics, target_usage)
        return self._rebalanced(current_replicas, ratio, new_ratio, len(metrics)), usage
