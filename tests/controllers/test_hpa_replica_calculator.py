"""The replica calculator, table-driven after upstream's ``replica_calculator_test.go`` (v1.34:
``TestReplicaCalcScaleUp``, ``...ScaleUpUnreadyLessScale``, ``...ScaleUpUnreadyNoScale``,
``...ScaleUpIgnoresFailedPods``, ``...ScaleDown``, ``...ScaleDownExcludeUnreadyPods``,
``...Tolerance``, ``...SuperfluousMetrics``, ``...MissingMetrics*``, ``...ScaleUpCM``, ``TestGroupPods``).
Upstream's pods have two containers, each with the listed request and level; here a pod has one
container with twice each (the same sums). The missing-metrics cases' inputs are ours (the
expected values worked out by upstream's rules), the others' are upstream's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agents.controllers.podautoscaler.replica_calculator import (
    PodMetric,
    ReplicaCalcError,
    ReplicaCalculator,
    calculate_requests,
    group_pods,
)
from emulator.base.api.core import Container, Pod, PodCondition, PodSpec, PodStatus, ResourceRequirements
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import Quantity
from emulator.base.runtime.clock import EPOCH, format_timestamp

NOW = 3600.0


def _ts(t: float) -> str:
    return format_timestamp(t)


def _pod(i: int, request_milli: int, *, ready: str = "True", phase: str = "Running", started: float = NOW - 600,
         transition: float = NOW - 590) -> Pod:  # fmt: skip
    res = ResourceRequirements(requests={"cpu": Quantity.from_milli(request_milli)})
    return Pod(
        metadata=ObjectMeta(name=f"test-pod-{i}", namespace="default"),
        spec=PodSpec(containers=[Container(name="c", image="i", resources=res)]),
        status=PodStatus(
            phase=phase,
            start_time=_ts(started),
            conditions=[PodCondition(type="Ready", status=ready, last_transition_time=_ts(transition))],
        ),
    )


@dataclass
class Case:
    current: int
    expected: int
    requests: list[float]
    levels: list[int]
    target: int
    utilization: int | None = None
    raw: int | None = None
    ready: list[str] | None = None
    phases: list[str] | None = None
    metric_for: list[bool] | None = None


CASES = {
    "scale-up": Case(3, 5, [1.0, 1.0, 1.0], [300, 500, 700], 30, utilization=50, raw=1000),
    "scale-up-unready-less-scale": Case(
        3, 4, [1.0, 1.0, 1.0], [300, 500, 700], 30, utilization=60, raw=1200, ready=["False", "True", "True"]
    ),
    "scale-up-unready-no-scale": Case(
        3, 3, [1.0, 1.0, 1.0], [400, 500, 700], 30, utilization=40, raw=800, ready=["True", "False", "False"]
    ),
    "scale-up-ignores-failed": Case(
        2,
        4,
        [1.0, 1.0, 1.0, 1.0],
        [500, 700, 300, 500],
        30,
        utilization=60,
        raw=1200,
        phases=["Running", "Running", "Failed", "Failed"],
    ),
    "scale-up-pending-less-scale": Case(
        3, 4, [1.0, 1.0, 1.0], [300, 500, 700], 30, utilization=60, raw=1200, phases=["Pending", "Running", "Running"]
    ),
    "scale-down": Case(5, 3, [1.0] * 5, [100, 300, 500, 250, 250], 50, utilization=28, raw=560),
    "scale-down-exclude-unready": Case(
        5,
        2,
        [1.0] * 5,
        [100, 300, 500, 250, 250],
        50,
        utilization=30,
        raw=600,
        ready=["True", "True", "True", "False", "False"],
    ),
    "tolerance": Case(3, 3, [0.9, 1.0, 1.1], [1010, 1030, 1020], 100, utilization=102, raw=2040),
    "superfluous-metrics": Case(4, 24, [1.0] * 4, [4000, 9500, 3000, 7000, 3200, 2000], 100, utilization=587),
    "missing-metrics-no-change-eq": Case(
        2, 2, [1.0, 1.0], [1000], 100, utilization=100, raw=2000, metric_for=[True, False]
    ),
    "missing-metrics-scale-up": Case(
        3, 4, [1.0] * 3, [1900, 1900], 100, utilization=190, raw=3800, metric_for=[True, True, False]
    ),
    "missing-metrics-scale-up-turns-round": Case(
        2, 2, [1.0, 1.0], [1900], 100, utilization=190, raw=3800, metric_for=[True, False]
    ),
    "missing-metrics-scale-down": Case(
        4, 3, [1.0] * 4, [400, 95], 100, utilization=24, raw=495, metric_for=[True, True, False, False]
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_resource_replicas(case: Case) -> None:
    n = len(case.requests)
    pods = [
        _pod(
            i,
            int(case.requests[i] * 2000),
            ready=(case.ready or ["True"] * n)[i],
            phase=(case.phases or ["Running"] * n)[i],
            started=NOW - 60 if (case.ready or ["True"] * n)[i] == "False" else NOW - 600,
        )
        for i in range(n)
    ]
    with_metric = case.metric_for or [True] * max(n, len(case.levels))
    names = [f"test-pod-{i}" for i, has in enumerate(with_metric) if has]
    metrics = {name: PodMetric(2 * level, NOW, 15.0) for name, level in zip(names, case.levels, strict=False)}
    replicas, utilization, raw = ReplicaCalculator().resource_replicas(
        case.current, case.target, "cpu", pods, metrics, NOW
    )
    assert replicas == case.expected
    if case.utilization is not None:
        assert utilization == case.utilization
    if case.raw is not None:
        assert raw == case.raw


def test_no_pods_is_an_error() -> None:
    with pytest.raises(ReplicaCalcError, match="no pods returned by selector while calculating replica count"):
        ReplicaCalculator().resource_replicas(1, 50, "cpu", [], {}, NOW)


def test_missing_request_is_an_error() -> None:
    """``TestReplicaCalcMissingRequest`` / ``calculateRequests``."""
    pod = _pod(0, 0)
    with pytest.raises(ReplicaCalcError, match="missing request for cpu in container c of Pod test-pod-0"):
        calculate_requests([pod], "", "cpu")


def test_plain_metric_scale_up() -> None:
    """``TestReplicaCalcScaleUpCM``: a Pods metric, levels 20000, 10000, 30000 milli, target 15000 → 4."""
    pods = [_pod(i, 1000) for i in range(3)]
    metrics = {f"test-pod-{i}": PodMetric(v, NOW) for i, v in enumerate([20000, 10000, 30000])}
    replicas, usage = ReplicaCalculator().plain_metric_replicas(3, 15000, "", pods, metrics, NOW)
    assert (replicas, usage) == (4, 20000)


@pytest.mark.parametrize(
    ("started", "transition", "ready", "metric_at", "ignored"),
    [
        pytest.param(NOW - 60, NOW - 50, "True", NOW, False, id="initialising-ready-a-window-ago"),
        pytest.param(NOW - 60, NOW - 5, "True", NOW, True, id="initialising-ready-within-the-window"),
        pytest.param(NOW - 60, NOW - 50, "False", NOW, True, id="initialising-unready"),
        pytest.param(NOW - 600, NOW - 590, "False", NOW, True, id="never-ready-after-the-delay"),
        pytest.param(NOW - 600, NOW - 100, "False", NOW, False, id="unready-later-counts"),
    ],
)
def test_group_pods_cpu_readiness(
    started: float, transition: float, ready: str, metric_at: float, ignored: bool
) -> None:
    """``TestGroupPods``: cpu initialization period 5 min, initial readiness delay 30 s."""
    pod = _pod(0, 1000, ready=ready, started=started, transition=transition)
    count, unready, missing, ign = group_pods([pod], {"test-pod-0": PodMetric(100, metric_at, 15.0)}, "cpu", NOW)
    assert (unready == ["test-pod-0"]) is ignored
    assert ign == []
    assert count == (0 if ignored else 1)
    assert missing == []


def test_epoch_is_the_clock_origin() -> None:
    assert format_timestamp(0).startswith(str(EPOCH.year))
