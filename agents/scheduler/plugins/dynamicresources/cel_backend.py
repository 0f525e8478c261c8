"""The allocator's CEL backend over ``emulator.base.api.dracel`` (upstream's ``cel.Cache`` and
``cel.Device``): ``compile`` is dracel's cached ``compile_selector`` (with the
DRAConsumableCapacity gate, which declares ``device.allowMultipleAllocations``); ``view``
builds a device's ``DeviceView`` from a ResourceSlice device, its attributes handed over as
``{type: value}`` mappings (upstream's DeviceAttribute JSON) and its capacities as they are.
"""

from __future__ import annotations

from typing import Any

from emulator.base.api.dracel import CompiledSelector, DeviceView, compile_selector, device_view

from .constraints import attribute_value

__all__ = ["DraCel"]


class DraCel:
    __slots__ = ("consumable_capacity",)

    def __init__(self, consumable_capacity: bool = False) -> None:
        self.consumable_capacity = consumable_capacity

    def __repr__(self) -> str:
        return f"<DraCel consumableCapacity={self.consumable_capacity}>"

    def compile(self, expression: str) -> CompiledSelector:
        return compile_selector(expression, self.consumable_capacity)

    def view(self, driver: str, device: Any) -> DeviceView:
        attrs: dict[str, Any] = {}
        for name, attr in (device.attributes or {}).items():
            kv = attribute_value(attr)
            attrs[name] = {kv[0]: kv[1]} if kv is not None else {}
        return device_view(
            driver, attrs, device.capacity or {}, bool(getattr(device, "allow_multiple_allocations", None))
        )
