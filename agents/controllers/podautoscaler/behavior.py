"""Upstream's normalisation of a desired replica count (``horizontal.go``, v1.34): the
stabilization windows, the scaling policies and ``selectPolicy``, and the older rules of an
HPA without ``behavior``; pure functions of one HPA's ``ScalingState`` and the time.

Without ``behavior``: the highest recommendation of the downscale stabilization window
(``--horizontal-pod-autoscaler-downscale-stabilization``, 5 min), then at most
max(2 × current, 4) and within [min, max]. With it: the lowest recent recommendation of the
scale-up window or the highest of the scale-down window, then the policies' rate over their
periods (``selectPolicy`` Max: the largest change, Min: the smallest, Disabled: none), then
[min, max]. Each returns the count and the two conditions it sets (``AbleToScale`` reason and
message; ``ScalingLimited`` status, reason and message), as upstream's ``setCondition`` calls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from msgspec.structs import replace

from emulator.base.api.autoscaling import HorizontalPodAutoscalerBehavior, HPAScalingRules

__all__ = [
    "DOWNSCALE_STABILIZATION_WINDOW",
    "Normalized",
    "ScalingState",
    "normalize",
    "record_initial_recommendation",
    "store_scale_event",
]

DOWNSCALE_STABILIZATION_WINDOW: Final = 300.0
SCALE_UP_LIMIT_FACTOR: Final = 2.0
SCALE_UP_LIMIT_MINIMUM: Final = 4.0
_INT32_MAX: Final = 2**31 - 1
_INT32_MIN: Final = -(2**31)


@dataclass(slots=True)
class _Recommendation:
    replicas: int
    timestamp: float


@dataclass(slots=True)
class _ScaleEvent:
    change: int
    timestamp: float
    outdated: bool = False


@dataclass(slots=True)
class ScalingState:
    """What the controller remembers of one HPA (upstream's maps keyed by the HPA's key)."""

    recommendations: list[_Recommendation] = field(default_factory=list)
    scale_up_events: list[_ScaleEvent] = field(default_factory=list)
    scale_down_events: list[_ScaleEvent] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Normalized:
    replicas: int
    able_reason: str
    able_message: str
    limited: bool
    limited_reason: str
    limited_message: str


def record_initial_recommendation(state: ScalingState, current: int, now: float) -> None:
    if not state.recommendations:
        state.recommendations.append(_Recommendation(current, now))


def _stabilize_default(state: ScalingState, desired: int, now: float, window: float) -> int:
    """``stabilizeRecommendation``."""
    best = desired
    old = -1
    cutoff = now - window
    for i, rec in enumerate(state.recommendations):
        if rec.timestamp < cutoff:
            old = i
        elif rec.replicas > best:
            best = rec.replicas
    if old >= 0:
        state.recommendations[old] = _Recommendation(desired, now)
    else:
        state.recommendations.append(_Recommendation(desired, now))
    return best


def _convert_with_rules(current: int, desired: int, low: int, high: int) -> tuple[int, str, str]:
    """``convertDesiredReplicasWithRules``."""
    scale_up_limit = int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))
    if high > scale_up_limit:
        maximum, reason = scale_up_limit, "ScaleUpLimit"
        message = "the desired replica count is increasing faster than the maximum scale rate"
    else:
        maximum, reason = high, "TooManyReplicas"
        message = "the desired replica count is more than the maximum replica count"
    if desired < low:
        return low, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
    if desired > maximum:
        return maximum, reason, message
    return desired, "DesiredWithinRange", "the desired count is within the acceptable range"


def _stabilize_with_behaviors(
    state: ScalingState, up: HPAScalingRules, down: HPAScalingRules, current: int, desired: int, now: float
) -> tuple[int, str, str]:
    """``stabilizeRecommendationWithBehaviors``."""
    up_window = up.stabilization_window_seconds or 0
    down_window = down.stabilization_window_seconds or 0
    if desired >= current:
        delay, better = up_window, min
        reason = "ScaleUpStabilized"
        message = "recent recommendations were lower than current one, applying the lowest recent recommendation"
    else:
        delay, better = down_window, max
        reason = "ScaleDownStabilized"
        message = "recent recommendations were higher than current one, applying the highest recent recommendation"
    obsolete_cutoff = now - max(up_window, down_window)
    cutoff = now - delay
    recommendation = desired
    old = -1
    for i, rec in enumerate(state.recommendations):
        if rec.timestamp > cutoff:
            recommendation = better(rec.replicas, recommendation)
        if rec.timestamp < obsolete_cutoff:
            old = i
    if old >= 0:
        state.recommendations[old] = _Recommendation(desired, now)
    else:
        state.recommendations.append(_Recommendation(desired, now))
    return recommendation, reason, message


def _change_in_period(period: int, events: list[_ScaleEvent], now: float) -> int:
    cutoff = now - period
    return sum(e.change for e in events if e.timestamp > cutoff)


def _scale_up_limit(current: int, events: list[_ScaleEvent], rules: HPAScalingRules, now: float) -> int:
    """``calculateScaleUpLimitWithScalingRules``."""
    if rules.select_policy == "Disabled":
        return current
    pick, result = (min, _INT32_MAX) if rules.select_policy == "Min" else (max, _INT32_MIN)
    for p in rules.policies or ():
        start = current - _change_in_period(p.period_seconds, events, now)
        if p.type == "Pods":
            proposed = start + p.value
        else:  # rounded up, or a small count would never grow
            proposed = math.ceil(start * (1 + p.value / 100))
        result = pick(result, proposed)
    return result


def _scale_down_limit(current: int, events: list[_ScaleEvent], rules: HPAScalingRules, now: float) -> int:
    """``calculateScaleDownLimitWithBehaviors``."""
    if rules.select_policy == "Disabled":
        return current
    pick, result = (max, _INT32_MIN) if rules.select_policy == "Min" else (min, _INT32_MAX)
    for p in rules.policies or ():
        start = current + _change_in_period(p.period_seconds, events, now)
        if p.type == "Pods":
            proposed = start - p.value
        else:
            proposed = int(start * (1 - p.value / 100))
        result = pick(result, proposed)
    return result


def _convert_with_behavior_rate(
    state: ScalingState,
    behavior: HorizontalPodAutoscalerBehavior,
    current: int,
    desired: int,
    low: int,
    high: int,
    now: float,
) -> tuple[int, str, str]:
    """``convertDesiredReplicasWithBehaviorRate``."""
    assert behavior.scale_up is not None
    assert behavior.scale_down is not None
    if desired > current:
        limit = max(_scale_up_limit(current, state.scale_up_events, behavior.scale_up, now), current)
        if high > limit:
            maximum, reason = limit, "ScaleUpLimit"
            message = "the desired replica count is increasing faster than the maximum scale rate"
        else:
            maximum, reason = high, "TooManyReplicas"
            message = "the desired replica count is more than the maximum replica count"
        if desired > maximum:
            return maximum, reason, message
    elif desired < current:
        limit = min(_scale_down_limit(current, state.scale_down_events, behavior.scale_down, now), current)
        if low < limit:
            minimum, reason = limit, "ScaleDownLimit"
            message = "the desired replica count is decreasing faster than the maximum scale rate"
        else:
            minimum, reason = low, "TooFewReplicas"
            message = "the desired replica count is less than the minimum replica count"
        if desired < minimum:
            return minimum, reason, message
    return desired, "DesiredWithinRange", "the desired count is within the acceptable range"


def _with_down_window(behavior: HorizontalPodAutoscalerBehavior, window: float) -> HorizontalPodAutoscalerBehavior:
    """``maybeInitScaleDownStabilizationWindow``."""
    down = behavior.scale_down
    if down is not None and down.stabilization_window_seconds is None:
        return replace(behavior, scale_down=replace(down, stabilization_window_seconds=int(window)))
    return behavior


def normalize(
    state: ScalingState,
    behavior: HorizontalPodAutoscalerBehavior | None,
    current: int,
    desired: int,
    low: int,
    high: int,
    now: float,
    downscale_window: float = DOWNSCALE_STABILIZATION_WINDOW,
) -> Normalized:
    """``normalizeDesiredReplicas`` / ``normalizeDesiredReplicasWithBehaviors``."""
    if behavior is None:
        stabilized = _stabilize_default(state, desired, now, downscale_window)
        if stabilized != desired:
            able = (
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, applying the highest recent recommendation",
            )
        else:
            able = ("ReadyForNewScale", "recommended size matches current size")
        replicas, reason, message = _convert_with_rules(current, stabilized, low, high)
    else:
        behavior = _with_down_window(behavior, downscale_window)
        assert behavior.scale_up is not None
        assert behavior.scale_down is not None
        stabilized, s_reason, s_message = _stabilize_with_behaviors(
            state, behavior.scale_up, behavior.scale_down, current, desired, now
        )
        if stabilized != desired:
            able = (s_reason, s_message)
        else:
            able = ("ReadyForNewScale", "recommended size matches current size")
        replicas, reason, message = _convert_with_behavior_rate(state, behavior, current, stabilized, low, high, now)
    return Normalized(replicas, able[0], able[1], replicas != stabilized, reason, message)


def _longest_period(rules: HPAScalingRules | None) -> int:
    return max((p.period_seconds for p in rules.policies or ()), default=0) if rules is not None else 0


def store_scale_event(
    state: ScalingState, behavior: HorizontalPodAutoscalerBehavior | None, previous: int, new: int, now: float
) -> None:
    """``storeScaleEvent``: remember a rescale for the policies' periods (reusing an outdated slot)."""
    if behavior is None:
        return
    if new > previous:
        events, period, change = state.scale_up_events, _longest_period(behavior.scale_up), new - previous
    else:
        events, period, change = state.scale_down_events, _longest_period(behavior.scale_down), previous - new
    cutoff = now - period
    for e in events:
        if e.timestamp < cutoff:
            e.outdated = True
    old = -1
    for i, e in enumerate(events):
        if e.outdated:
            old = i
    if old >= 0:
        events[old] = _ScaleEvent(change, now)
    else:
        events.append(_ScaleEvent(change, now))
