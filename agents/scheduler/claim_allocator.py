"""Allocating claims without a pod (upstream scheduler_perf's ``allocResourceClaimsOp``, which
calls the structured allocator directly): ``ClaimAllocator`` holds the DRA objects of a
cluster (slices, classes, claims) as the scheduler's ``DraManager`` would, and allocates one
claim at a time on the first of the given nodes where it fits; each allocation it returns is
counted as in use for the next one once the caller hands back the written claim (``written``),
as upstream assumes the claim after its status update.

It is the scheduler's allocator and CEL backend, fed the same objects; writing the claim's
status is the caller's (a benchmark driver, not an agent).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agents.scheduler.dra_manager import static_dra_manager
from agents.scheduler.plugins.dynamicresources import Allocator, Features
from agents.scheduler.plugins.dynamicresources.podclaims import to_allocation_result
from emulator.base.api.resource import AllocationResult

__all__ = ["ClaimAllocator"]


class ClaimAllocator:
    """The structured allocator over fixed slices and classes, claims counted as allocated."""

    def __init__(self, objects: Iterable[Any], features: Features | None = None) -> None:
        """``objects``: the cluster's ResourceSlices, DeviceClasses and ResourceClaims (other
        kinds are ignored)."""
        self.manager = static_dra_manager(objects, features=features)
        self.features = self.manager.features

    def allocate(self, claim: Any, nodes: Sequence[Any]) -> AllocationResult | None:
        """The allocation of ``claim`` on the first of ``nodes`` where it fits (None: none).
        Raises the allocator's ``AllocationError`` for bad input, as upstream's op fails."""
        m = self.manager
        index = m.slice_index(self.features.partitionable_devices)
        allocator = Allocator(self.features, m.allocated, m.device_class, index, m.cel, m.views, m.consumed)
        for node in nodes:
            got = allocator.allocate(node, [claim])
            if got:
                return to_allocation_result(got[0])
        return None

    def written(self, claim: Any) -> None:
        """The claim as written with its allocation: its devices are in use from now on."""
        self.manager.assume_after_api_call(claim)
