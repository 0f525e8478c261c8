"""Normalisation of the desired replica count, table-driven after upstream's
``horizontal_test.go`` (v1.34: ``TestConvertDesiredReplicasWithRules``, ``TestScalingWithRules``,
``TestNormalizeDesiredReplicasWithBehavior``, ``TestStoreScaleEvents``): the older rules of an
HPA without ``behavior``, the policies and ``selectPolicy``, the stabilization windows."""

from __future__ import annotations

import pytest

from agents.controllers.podautoscaler.behavior import (
    ScalingState,
    _Recommendation,
    _ScaleEvent,
    normalize,
    store_scale_event,
)
from emulator.base.api.autoscaling import (
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerSpec,
    HPAScalingPolicy,
    HPAScalingRules,
)
from emulator.base.api.autoscalingvalidation import default_hpa

NOW = 10_000.0


def _behavior(
    up: HPAScalingRules | None = None, down: HPAScalingRules | None = None
) -> HorizontalPodAutoscalerBehavior:
    """A behavior defaulted as the API server stores it."""
    hpa = HorizontalPodAutoscaler(
        spec=HorizontalPodAutoscalerSpec(
            max_replicas=1, behavior=HorizontalPodAutoscalerBehavior(scale_up=up, scale_down=down)
        )
    )
    behavior = default_hpa(hpa).spec.behavior
    assert behavior is not None
    return behavior


def _rules(*policies: tuple[str, int, int], select: str | None = None, window: int | None = None) -> HPAScalingRules:
    return HPAScalingRules(
        select_policy=select,
        stabilization_window_seconds=window,
        policies=[HPAScalingPolicy(type=t, value=v, period_seconds=p) for t, v, p in policies],
    )


@pytest.mark.parametrize(
    ("current", "desired", "low", "high", "expected", "reason"),
    [
        pytest.param(5, 7, 3, 8, 7, "DesiredWithinRange", id="within-range"),
        pytest.param(3, 1, 2, 8, 2, "TooFewReplicas", id="too-few"),
        pytest.param(1, 10, 1, 20, 4, "ScaleUpLimit", id="scale-up-limit-minimum-4"),
        pytest.param(10, 30, 1, 25, 20, "ScaleUpLimit", id="scale-up-limit-twice-current"),
        pytest.param(10, 30, 1, 15, 15, "TooManyReplicas", id="too-many"),
    ],
)
def test_without_behavior(current: int, desired: int, low: int, high: int, expected: int, reason: str) -> None:
    """``convertDesiredReplicasWithRules`` (no stabilization history beyond this one)."""
    n = normalize(ScalingState(), None, current, desired, low, high, NOW)
    assert (n.replicas, n.limited_reason) == (expected, reason)
    assert n.limited is (expected != desired)


@pytest.mark.parametrize(
    ("behavior", "current", "desired", "low", "high", "up_events", "down_events", "expected", "reason"),
    [
        pytest.param(_behavior(), 5, 20, 1, 100, [], [], 10, "ScaleUpLimit", id="default-up-percent-wins"),
        pytest.param(_behavior(), 3, 100, 1, 100, [], [], 7, "ScaleUpLimit", id="default-up-pods-wins"),
        pytest.param(_behavior(), 3, 5, 1, 100, [], [], 5, "DesiredWithinRange", id="default-up-within"),
        pytest.param(_behavior(), 5, 20, 1, 8, [], [], 8, "TooManyReplicas", id="default-up-max"),
        pytest.param(
            _behavior(up=_rules(("Pods", 4, 15), ("Percent", 100, 15), select="Min")),
            3, 100, 1, 100, [], [], 6, "ScaleUpLimit", id="up-select-min",
        ),
        pytest.param(
            _behavior(up=_rules(("Pods", 4, 15), select="Disabled")),
            3, 100, 1, 100, [], [], 3, "ScaleUpLimit", id="up-disabled",
        ),
        pytest.param(
            _behavior(up=_rules(("Pods", 4, 60))),
            10, 100, 1, 100, [(4, NOW - 30)], [], 10, "ScaleUpLimit", id="up-period-used-by-an-event",
        ),
        pytest.param(
            _behavior(up=_rules(("Pods", 4, 60))),
            10, 100, 1, 100, [(4, NOW - 61)], [], 14, "ScaleUpLimit", id="up-event-out-of-period",
        ),
        pytest.param(_behavior(down=_rules(("Percent", 100, 15), window=0)), 10, 2, 1, 100, [], [], 2,
                     "DesiredWithinRange", id="default-down-percent-100"),
        pytest.param(
            _behavior(down=_rules(("Pods", 2, 60), window=0)),
            10, 2, 1, 100, [], [(2, NOW - 30)], 10, "ScaleDownLimit", id="down-period-used-by-an-event",
        ),
        pytest.param(
            _behavior(down=_rules(("Pods", 2, 60), window=0)),
            10, 2, 1, 100, [], [], 8, "ScaleDownLimit", id="down-pods-policy",
        ),
        pytest.param(
            _behavior(down=_rules(("Pods", 2, 60), ("Percent", 50, 60), select="Min", window=0)),
            10, 2, 1, 100, [], [], 8, "ScaleDownLimit", id="down-select-min",
        ),
        pytest.param(
            _behavior(down=_rules(("Pods", 2, 60), ("Percent", 50, 60), window=0)),
            10, 2, 1, 100, [], [], 5, "ScaleDownLimit", id="down-select-max",
        ),
        pytest.param(
            _behavior(down=_rules(("Percent", 100, 15), window=0)),
            10, 2, 4, 100, [], [], 4, "TooFewReplicas", id="down-min",
        ),
    ],
)  # fmt: skip
def test_with_behavior(
    behavior: HorizontalPodAutoscalerBehavior,
    current: int,
    desired: int,
    low: int,
    high: int,
    up_events: list[tuple[int, float]],
    down_events: list[tuple[int, float]],
    expected: int,
    reason: str,
) -> None:
    """``convertDesiredReplicasWithBehaviorRate`` (``TestScalingWithRules``)."""
    state = ScalingState(
        scale_up_events=[_ScaleEvent(c, t) for c, t in up_events],
        scale_down_events=[_ScaleEvent(c, t) for c, t in down_events],
    )
    n = normalize(state, behavior, current, desired, low, high, NOW)
    assert (n.replicas, n.limited_reason) == (expected, reason)


@pytest.mark.parametrize(
    ("behavior", "recommendations", "current", "desired", "expected", "able"),
    [
        pytest.param(
            _behavior(), [(10, NOW - 100), (8, NOW - 400)], 10, 5, 10, "ScaleDownStabilized",
            id="down-window-default-300s-keeps-the-highest",
        ),
        pytest.param(
            _behavior(), [(7, NOW - 301)], 10, 5, 5, "ReadyForNewScale",
            id="down-window-default-300s-old-recommendation-ignored",
        ),
        pytest.param(
            _behavior(down=_rules(("Percent", 100, 15), window=60)), [(9, NOW - 30)], 10, 5, 9, "ScaleDownStabilized",
            id="down-window-60s",
        ),
        pytest.param(
            _behavior(up=_rules(("Pods", 100, 15), window=60)), [(6, NOW - 30)], 5, 10, 6, "ScaleUpStabilized",
            id="up-window-60s-keeps-the-lowest",
        ),
        pytest.param(None, [(10, NOW - 100)], 10, 5, 10, "ScaleDownStabilized", id="no-behavior-300s"),
        pytest.param(None, [(10, NOW - 301)], 10, 5, 5, "ReadyForNewScale", id="no-behavior-window-passed"),
    ],
)  # fmt: skip
def test_stabilization(
    behavior: HorizontalPodAutoscalerBehavior | None,
    recommendations: list[tuple[int, float]],
    current: int,
    desired: int,
    expected: int,
    able: str,
) -> None:
    """``stabilizeRecommendation`` / ``stabilizeRecommendationWithBehaviors``."""
    state = ScalingState(recommendations=[_Recommendation(r, t) for r, t in recommendations])
    n = normalize(state, behavior, current, desired, 1, 100, NOW)
    assert (n.replicas, n.able_reason) == (expected, able)
    assert len(state.recommendations) == len(recommendations) + (
        0 if any(t < NOW - 300 for _, t in recommendations) else 1
    )


def test_store_scale_events_reuses_an_outdated_slot() -> None:
    """``TestStoreScaleEvents``: an event older than the longest policy period is replaced."""
    behavior = _behavior(up=_rules(("Pods", 4, 60)))
    state = ScalingState(scale_up_events=[_ScaleEvent(1, NOW - 100), _ScaleEvent(2, NOW - 10)])
    store_scale_event(state, behavior, 3, 8, NOW)
    assert [(e.change, e.timestamp) for e in state.scale_up_events] == [(5, NOW), (2, NOW - 10)]
    store_scale_event(state, None, 8, 3, NOW)
    assert state.scale_down_events == []
