"""``NodeResourcesFit`` (upstream ``plugins/noderesources/{fit,resource_allocation,least_allocated,
most_allocated,requested_to_capacity_ratio}.go``): PreFilter, Filter, PreScore, Score.

What this module owns: whether a pod's requests fit a node (``fits``, also the kubelet-style
admission's and preemption's check), and the resource-allocation score with its three strategies.

Filter — every failure is collected, in this order (scalar resources by name, for determinism):

====  ==================================================  ==================================
step  check                                               reason
====  ==================================================  ==================================
1     pods on the node + 1 > allocatable ``pods``         "Too many pods"
2     the pod requests nothing at all                     (stop: fits)
3     cpu, memory, ephemeral-storage: request > 0 and     "Insufficient cpu" / "… memory" /
      request > allocatable − requested                   "… ephemeral-storage"
4     each scalar resource (extended, hugepages-*, …)     "Insufficient <name>"
      with request > 0, same comparison; extended ones
      in ``ignoredResources`` / ``ignoredResourceGroups``
      (the part before "/") are skipped
====  ==================================================  ==================================

The status is ``Unschedulable`` with all reasons, or ``UnschedulableAndUnresolvable`` (v1.34, PR
#131345) when a failing resource's request exceeds the node's allocatable outright (an empty node
would not fit it either, so preemption cannot help). Real requests are used.

Score — for each configured resource (default cpu and memory, weight 1): allocatable, and the
node's requested plus the pod's request, where cpu/memory use the *non-zero* requests (100m /
200Mi for a container that sets none); scalar resources the pod does not request, and resources
with allocatable 0, are left out. Strategies (``STRATEGIES``, weighted integer means):
``LeastAllocated`` ``(alloc − req)·100 // alloc`` (0 if over), ``MostAllocated`` ``min(req,
alloc)·100 // alloc``, ``RequestedToCapacityRatio`` a broken-linear function of ``req·100 // alloc``
over the configured shape (scores ×10), rounded mean of the resources scoring > 0.

Vectorised (``filter_all`` / ``score_all`` over a ``NodeTable``, the same results): Filter codes
are a bit set (too many pods, cpu, memory, ephemeral-storage, unresolvable) indexing 32
pre-built statuses; Score runs each strategy's integer formula on columns. Both decline (None:
per node) for a pod requesting scalar resources, or a table with amounts ≥ 2**50.

Events (v1.34: QueueingHints GA, in-place pod resize on): Pod Delete|UpdatePodScaleDown — Queue
when a pod with a node or a nominatedNodeName is deleted, or a pod scaled down one of the resources this pod requests
(or is this pod); Node Add|UpdateNodeAllocatable — Queue when the pod fits the empty node and,
for an update, the allocatable of a resource it requests (or of pods) grew.

Split as upstream splits ``plugins/noderesources`` (one package per plugin is the house rule:
plugins never import each other):

=======================  ====================================================================
module                   owns
=======================  ====================================================================
``fit``                  ``fits`` and the ``NodeResourcesFit`` plugin: PreFilter, Filter (per
                         node and over NodeTable rows), PreScore, Score, events and hints
                         (upstream ``fit.go``)
``resource_allocation``  the scoring strategies per node and over rows, and what a node
                         contributes to a score (upstream ``resource_allocation.go``,
                         ``least_allocated.go``, ``most_allocated.go``,
                         ``requested_to_capacity_ratio.go``)
=======================  ====================================================================
"""

from __future__ import annotations

from emulator.base.api.resources import is_extended_resource, is_scalar_resource

from .fit import (
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    InsufficientResource,
    NodeResourcesFit,
    fits,
    fits_request,
)
from .resource_allocation import STRATEGIES

__all__ = [
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "STRATEGIES",
    "InsufficientResource",
    "NodeResourcesFit",
    "fits",
    "fits_request",
    "is_extended_resource",
    "is_scalar_resource",
]
