"""The resource pools a node can use (upstream ``structured/internal/stable/pools_stable.go``,
v1.34): ``gather_pools`` and ``node_matches``.

A pool is (driver, pool name). Only the slices of its newest ``spec.pool.generation`` count
(older ones are silently ignored); a pool with fewer slices than ``resourceSliceCount`` is
*incomplete* (nothing is allocated from it, and a request for ``All`` devices fails), one
with a device name twice is *invalid*. A slice is offered to a node by ``nodeName``,
``allNodes`` or ``nodeSelector``; with ``perDeviceNodeSelection`` (DRAPartitionableDevices)
by any of its devices' own node fields. A slice naming none of these is some future
extension and is skipped.

``SliceIndex`` is this emulator's one speed-up over upstream's per-node scan of every
slice: the slices are grouped once (the scheduler's DraManager rebuilds the index only after
a slice changed) by ``spec.nodeName`` — the common case, one slice per node, whose pools are
then kept per node — and the rest are scanned per node; the pools found are the same.
Pools are returned sorted by (driver, pool) and a pool's slices by name (upstream's order
comes from Go maps and listers; sorting makes the choice of devices deterministic).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from emulator.base.api.nodeaffinity import node_selector_matches

__all__ = ["Pool", "SliceIndex", "gather_pools", "node_matches"]


def node_matches(node: Any, node_name: str | None, all_nodes: bool | None, node_selector: Any) -> bool:
    """Upstream ``nodeMatches``."""
    if node_name:
        return node is not None and node.metadata.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        return node is not None and node_selector_matches(node_selector, node)
    return False


@dataclass(slots=True)
class Pool:
    driver: str
    pool: str
    generation: int
    slices: list[Any] = field(default_factory=list)
    """The newest generation's slices offered to the node."""
    all_slices: list[Any] = field(default_factory=list)
    """Every slice of the newest generation (for shared counters)."""
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.pool}"


def _slice_offered(slc: Any, node: Any, partitionable: bool) -> bool:
    spec = slc.spec
    if spec.node_name or spec.all_nodes or spec.node_selector is not None:
        return node_matches(node, spec.node_name, spec.all_nodes, spec.node_selector)
    if spec.per_device_node_selection:
        if not partitionable:
            return False
        return any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in spec.devices)
    return False


def gather_pools(slices: Iterable[Any], node: Any, partitionable: bool = False) -> list[Pool]:
    """Upstream ``GatherPools`` over ``slices`` for ``node``."""
    return _pools(((s, _slice_offered(s, node, partitionable)) for s in slices), partitionable)


def _pools(candidates: Iterable[tuple[Any, bool]], partitionable: bool) -> list[Pool]:
    pools: dict[tuple[str, str], Pool] = {}
    for slc, offered in candidates:
        spec = slc.spec
        if not partitionable and spec.per_device_node_selection is not None:
            continue
        if not offered and not (partitionable and getattr(spec, "shared_counters", None)):
            continue
        key = (spec.driver, spec.pool.name)
        gen = spec.pool.generation
        pool = pools.get(key)
        if pool is None:
            pool = pools[key] = Pool(spec.driver, spec.pool.name, gen)
        elif gen < pool.generation:
            continue  # out-dated
        elif gen > pool.generation:
            pool.generation, pool.slices, pool.all_slices = gen, [], []
        pool.all_slices.append(slc)
        if offered:
            pool.slices.append(slc)
    result = []
    for key in sorted(pools):
        pool = pools[key]
        if not pool.slices:
            continue  # only counter slices reached this node
        pool.slices.sort(key=lambda s: s.metadata.name)
        pool.all_slices.sort(key=lambda s: s.metadata.name)
        pool.is_incomplete = len(pool.all_slices) != pool.all_slices[0].spec.pool.resource_slice_count
        seen: set[str] = set()
        for slc in pool.all_slices:
            for dev in slc.spec.devices:
                if dev.name in seen:
                    pool.is_invalid, pool.invalid_reason = True, f"duplicate device name {dev.name}"
                    break
                seen.add(dev.name)
            if pool.is_invalid:
                break
        result.append(pool)
    return result


class SliceIndex:
    """The slices of one cycle, grouped by ``spec.nodeName``; ``pools(node)`` equals
    ``gather_pools(slices, node)``."""

    __slots__ = ("_by_node", "_cache", "_others", "partitionable")

    def __init__(self, slices: Iterable[Any], partitionable: bool = False) -> None:
        self.partitionable = partitionable
        self._by_node: dict[str, list[Any]] = {}
        self._others: list[Any] = []
        self._cache: dict[str, list[Pool]] = {}
        """Pools per node name when every slice names its node (they depend on nothing else;
        the allocator never changes a Pool)."""
        for slc in slices:
            name = slc.spec.node_name
            if name:
                self._by_node.setdefault(name, []).append(slc)
            else:
                self._others.append(slc)

    def __repr__(self) -> str:
        return f"<SliceIndex nodes={len(self._by_node)} others={len(self._others)}>"

    def pools(self, node: Any) -> list[Pool]:
        name = node.metadata.name
        own = self._by_node.get(name, ())
        if not self._others:
            pools = self._cache.get(name)
            if pools is None:
                pools = self._cache[name] = _pools(((s, True) for s in own), self.partitionable)
            return pools
        others = ((s, _slice_offered(s, node, self.partitionable)) for s in self._others)
        return _pools([*((s, True) for s in own), *others], self.partitionable)

    def all_slices(self) -> list[Any]:
        return [s for slices in self._by_node.values() for s in slices] + self._others
