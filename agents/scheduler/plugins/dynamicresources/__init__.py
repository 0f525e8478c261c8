"""``DynamicResources`` (upstream ``pkg/scheduler/framework/plugins/dynamicresources``) and the
structured-parameters allocator it calls (upstream ``dynamic-resource-allocation/structured``),
split as upstream splits them:

=====================  =====================================================================
module                 owns
=====================  =====================================================================
``allocator_types``    Features (DRA gates), DeviceID, errors, request accessor, results
``allocator_pools``    pools offered to a node (generations, incomplete, invalid), SliceIndex
``constraints``        ``matchAttribute`` constraints, attribute lookup
``counters``           shared counters of partitionable devices
``allocator``          ``Allocator``: upstream's backtracking search, one node at a time
``allocator_result``   results: devices, configs, the claim's node selector
``plugin``             the ``DynamicResources`` plugin
=====================  =====================================================================

The allocator is pure code over the ``resource.k8s.io/v1`` objects it is given (claims, a
node, slices, classes, the devices in use): the scheduler calls it from Filter, and anything
else that simulates a node (an autoscaler) can call it the same way.
"""

from __future__ import annotations

from .allocator import Allocator
from .allocator_pools import Pool, SliceIndex, gather_pools, node_matches
from .allocator_types import (
    AllocationError,
    ClaimAllocation,
    ConfigResult,
    DeviceID,
    DeviceResult,
    Features,
    NodeAllocationError,
)
from .plugin import NAME, NO_CLAIMS_TO_DEALLOCATE, STATE_KEY, DynamicResources

__all__ = [
    "NAME",
    "NO_CLAIMS_TO_DEALLOCATE",
    "STATE_KEY",
    "AllocationError",
    "Allocator",
    "ClaimAllocation",
    "ConfigResult",
    "DeviceID",
    "DeviceResult",
    "DynamicResources",
    "Features",
    "NodeAllocationError",
    "Pool",
    "SliceIndex",
    "gather_pools",
    "node_matches",
]
