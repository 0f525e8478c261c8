"""Upstream's ``setConditionInList`` (``horizontal.go``): set one HPA condition in a list, its
``lastTransitionTime`` moved only when its status changes; a new condition goes last."""

from __future__ import annotations

from msgspec.structs import replace

from emulator.base.api.autoscaling import HorizontalPodAutoscalerCondition

__all__ = ["set_condition"]


def set_condition(
    conditions: list[HorizontalPodAutoscalerCondition], type_: str, status: str, reason: str, message: str, now: str
) -> list[HorizontalPodAutoscalerCondition]:
    out = list(conditions)
    for i, c in enumerate(out):
        if c.type == type_:
            moved = now if c.status != status else c.last_transition_time
            out[i] = replace(c, status=status, reason=reason, message=message, last_transition_time=moved)
            return out
    out.append(
        HorizontalPodAutoscalerCondition(
            type=type_, status=status, last_transition_time=now, reason=reason, message=message
        )
    )
    return out
