"""Shared counters of partitionable devices (DRAPartitionableDevices, alpha in v1.34; upstream
``checkAvailableCounters`` / ``deallocateCountersForDevice`` in ``allocator_stable.go``).

A pool's slices declare ``sharedCounters`` (counter sets of named quantities); a device
``consumesCounters`` from them. What is available in a pool is its counters minus what the
already allocated devices consume (computed once per pool and allocator run); a device may be
picked while the consumption of the devices being allocated, itself included, stays within it.
Quantities are compared as milli-values.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

__all__ = ["CounterTracker"]


def _milli(counter: Any) -> int:
    value = counter.value
    return int(value.milli) if hasattr(value, "milli") else int(value) * 1000


class CounterTracker:
    __slots__ = ("_allocated", "_available", "_consumed")

    def __init__(self, allocated: Collection[Any]) -> None:
        self._allocated = allocated
        self._available: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
        self._consumed: dict[tuple[str, str], dict[str, dict[str, int]]] = {}

    def _pool_available(self, pool: Any) -> dict[str, dict[str, int]]:
        key = (pool.driver, pool.pool)
        avail = self._available.get(key)
        if avail is not None:
            return avail
        avail = {}
        for slc in pool.all_slices:
            for cs in getattr(slc.spec, "shared_counters", None) or ():
                avail[cs.name] = {n: _milli(c) for n, c in (cs.counters or {}).items()}
        for slc in pool.all_slices:
            for dev in slc.spec.devices:
                if (slc.spec.driver, slc.spec.pool.name, dev.name) not in self._allocated:
                    continue
                for use in dev.consumes_counters or ():
                    got = avail.get(use.counter_set)
                    if got is None:
                        continue
                    for n, c in (use.counters or {}).items():
                        if n in got:
                            got[n] -= _milli(c)
        self._available[key] = avail
        return avail

    def take(self, pool: Any, device: Any) -> bool:
        """Count the device's consumption; False (nothing counted) when a counter runs out."""
        avail = self._pool_available(pool)
        consumed = self._consumed.setdefault((pool.driver, pool.pool), {})
        for use in device.consumes_counters:
            sets = consumed.setdefault(use.counter_set, {})
            for n, c in (use.counters or {}).items():
                sets[n] = sets.get(n, 0) + _milli(c)
        for set_name, counters in avail.items():
            used = consumed.get(set_name, {})
            for n, have in counters.items():
                if have < used.get(n, 0):
                    self.give_back(pool, device)
                    return False
        return True

    def give_back(self, pool: Any, device: Any) -> None:
        consumed = self._consumed[(pool.driver, pool.pool)]
        for use in device.consumes_counters:
            sets = consumed[use.counter_set]
            for n, c in (use.counters or {}).items():
                sets[n] -= _milli(c)
