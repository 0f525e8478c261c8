"""The scheduler framework's shared vocabulary: one import for the names every plugin, the
cache, the queue and the runtime share (upstream's ``framework/types.go``,
``framework/interface.go``, ``framework/events.go``, ``framework/cycle_state.go``).

This module defines nothing; it re-exports, from the modules that own them:

=========================  ===================================================================
module                     names
=========================  ===================================================================
``status.py``              ``Code``, ``Status``, ``SUCCESS``, ``SKIP``, ``as_status``,
                           ``NodeScore``, ``MAX_NODE_SCORE``, ``MIN_NODE_SCORE``
``resource.py``            ``Resource``
``pod_info.py``            ``PodInfo``, ``reuse_pod_info``, ``pod_info_alike``, ``pod_info_of``,
                           ``DEFAULT_MILLI_CPU_REQUEST``, ``DEFAULT_MEMORY_REQUEST``
``node_info.py``           ``NodeInfo``, ``HostPortInfo``, ``ImageStateSummary``,
                           ``next_generation``
``cycle_state.py``         ``CycleState``, ``PodsToActivate``, ``PODS_TO_ACTIVATE_KEY``
``events.py``              ``ActionType``, ``EventResource``, ``ClusterEvent``,
                           ``ClusterEventWithHint``, ``QueueingHint``, ``QueueingHintFn``
=========================  ===================================================================

Units: CPU in millicores, everything else in base units (ints, never floats).

A name imported from here is bound once, at import: no cost per call. Modules of the framework
itself import from the owning module. What it does not own: the plugin interfaces and the
Handle (``interface.py``), the runners (``runtime.py``).
"""

from __future__ import annotations

from .cycle_state import PODS_TO_ACTIVATE_KEY, CycleState, PodsToActivate
from .events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint, QueueingHintFn
from .node_info import HostPortInfo, ImageStateSummary, NodeInfo, next_generation
from .pod_info import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    PodInfo,
    pod_info_alike,
    pod_info_of,
    reuse_pod_info,
)
from .resource import Resource
from .status import MAX_NODE_SCORE, MIN_NODE_SCORE, SKIP, SUCCESS, Code, NodeScore, Status, as_status

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "PODS_TO_ACTIVATE_KEY",
    "SKIP",
    "SUCCESS",
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "EventResource",
    "HostPortInfo",
    "ImageStateSummary",
    "NodeInfo",
    "NodeScore",
    "PodInfo",
    "PodsToActivate",
    "QueueingHint",
    "QueueingHintFn",
    "Resource",
    "Status",
    "as_status",
    "next_generation",
    "pod_info_alike",
    "pod_info_of",
    "reuse_pod_info",
]
