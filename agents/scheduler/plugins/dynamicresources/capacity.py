"""Consumable capacity (DRAConsumableCapacity, alpha in v1.34; upstream
``structured/internal/experimental/consumable_capacity.go``): a device with
``allowMultipleAllocations`` is shared by several allocations, each consuming part of its
capacities.

=====================  =====================================================================
rule                   what
=====================  =====================================================================
names                  a request's capacity name matches the device's key as written, or
                       with / without the driver's own domain (``memory`` = ``drv/memory``)
consumed per capacity  the request's value rounded up by the device's ``requestPolicy``
                       (``validRange``: up to ``min``, then to ``min + k*step``; ``validValues``:
                       the first listed value at or above it); no value requested → the
                       policy's ``default``, else the whole capacity
policy                 a value beyond ``validRange.max``, or not among ``validValues``, does not
                       fit (the device is skipped)
fits                   per capacity: consumed before this run + being allocated in this run +
                       this request ≤ the capacity's value
exclusive device       (no ``allowMultipleAllocations``) a capacity request only selects it
                       when every requested capacity exists and is at most the device's value
=====================  =====================================================================

Quantities are compared as milli-values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CapacityTracker", "exclusive_fits", "resolve_name"]


def _milli(q: Any) -> int:
    return int(q.milli)


def resolve_name(name: str, driver: str, capacity: Mapping[str, Any]) -> str | None:
    """The device's key for a requested capacity name, or None."""
    if name in capacity:
        return name
    domain, sep, ident = name.partition("/")
    if sep:
        return ident if domain == driver and ident in capacity else None
    qualified = f"{driver}/{name}"
    return qualified if qualified in capacity else None


def _requested(request_capacity: Any, driver: str, capacity: Mapping[str, Any]) -> dict[str, int] | None:
    out: dict[str, int] = {}
    if request_capacity is None:
        return out
    for name, q in (request_capacity.requests or {}).items():
        key = resolve_name(name, driver, capacity)
        if key is None:
            return None
        out[key] = _milli(q)
    return out


def _consumed(requested: int | None, cap: Any) -> tuple[int, bool]:
    """(consumed milli, violates the policy)."""
    policy = cap.request_policy
    total = _milli(cap.value)
    if requested is None:
        if policy is not None and policy.default is not None:
            return _milli(policy.default), False
        return total, False
    if policy is None:
        return requested, False
    rng = policy.valid_range
    if rng is not None and rng.min is not None:
        lo = _milli(rng.min)
        value = max(requested, lo)
        if rng.step is not None and _milli(rng.step) > 0:
            step = _milli(rng.step)
            value = lo + -(-(value - lo) // step) * step
        return value, rng.max is not None and value > _milli(rng.max)
    if policy.valid_values:
        values = sorted(_milli(v) for v in policy.valid_values)
        for v in values:
            if v >= requested:
                return v, False
        return requested, True
    return requested, False


def exclusive_fits(device: Any, driver: str, request_capacity: Any) -> bool:
    capacity = device.capacity or {}
    requested = _requested(request_capacity, driver, capacity)
    if requested is None:
        return False
    return all(v <= _milli(capacity[k].value) for k, v in requested.items())


class CapacityTracker:
    """What shared devices have given away: before this run (``before``) and in it."""

    __slots__ = ("_allocating", "_before")

    def __init__(self, before: Mapping[Any, Mapping[str, int]]) -> None:
        self._before = before
        self._allocating: dict[Any, dict[str, int]] = {}

    def take(self, did: Any, device: Any, request_capacity: Any) -> dict[str, int] | None:
        """The request's consumption of the shared device, counted; None when it does not fit."""
        capacity = device.capacity or {}
        requested = _requested(request_capacity, did.driver, capacity)
        if requested is None:
            return None
        before = self._before.get(did, {})
        allocating = self._allocating.get(did, {})
        consumed: dict[str, int] = {}
        for key in sorted(capacity):
            cap = capacity[key]
            value, violates = _consumed(requested.get(key), cap)
            if violates:
                return None
            if before.get(key, 0) + allocating.get(key, 0) + value > _milli(cap.value):
                return None
            consumed[key] = value
        mine = self._allocating.setdefault(did, {})
        for key, value in consumed.items():
            mine[key] = mine.get(key, 0) + value
        return consumed

    def give_back(self, did: Any, consumed: Mapping[str, int]) -> None:
        mine = self._allocating[did]
        for key, value in consumed.items():
            mine[key] -= value
