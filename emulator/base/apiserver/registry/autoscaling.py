"""``autoscaling/v2`` HorizontalPodAutoscaler (upstream
``pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go``, v1.34): namespaced, defaulted
on create and update (``autoscalingvalidation.default_hpa``), the alpha ``tolerance`` fields
dropped on create (``HPAConfigurableTolerance`` off) and on update unless the stored object
had them; the status reset on create and written through the status subresource only. Its
generation starts at 1 and moves with the spec, as upstream's.
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from emulator.base.api.autoscaling import HorizontalPodAutoscalerStatus
from emulator.base.api.autoscalingvalidation import default_hpa, drop_tolerance, dropped_tolerance
from emulator.base.apiserver.registry.strategy import Strategy

__all__ = ["HorizontalPodAutoscalerStrategy"]


class HorizontalPodAutoscalerStrategy(Strategy):
    kind = "HorizontalPodAutoscaler"
    generation_on_create = True

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        obj = default_hpa(drop_tolerance(obj))
        if not restore:
            obj = replace(obj, status=HorizontalPodAutoscalerStatus())
        return obj

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        if not dropped_tolerance(current):
            candidate = drop_tolerance(candidate)
        return default_hpa(candidate)
