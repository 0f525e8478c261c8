"""Cluster Autoscaler (kubernetes/autoscaler ``cluster-autoscaler`` 1.34) as an agent.

=================  ==========================================================================
module             owns (upstream source)
=================  ==========================================================================
``options``        ``AutoscalingOptions`` (flags, defaults), the ``CloudProvider`` protocol
``autoscaler``     the core loop (``core/static_autoscaler.go``), cluster state, status writes
``scaleup``        pods to help, equivalence groups, the orchestrator (``core/scaleup``)
``estimator``      the binpacking estimator (``estimator/``)
``expander``       random, most-pods, least-waste, price, priority (``expander/``)
``nodegroupset``   similar node groups, the balanced scale-up (``processors/nodegroupset``)
``scaledown``      eligibility, utilization, removal simulation, unneeded (``core/scaledown``)
``drain``          the drainability rules (``simulator/drainability/rules``)
``actuation``      taint, drain, delete (``core/scaledown/actuation``)
``status``         the status ConfigMap (``clusterstate/utils/status.go``)
=================  ==========================================================================
"""

from __future__ import annotations

from agents.autoscaler.clusterautoscaler.actuation import TO_BE_DELETED_TAINT
from agents.autoscaler.clusterautoscaler.autoscaler import ClusterAutoscaler
from agents.autoscaler.clusterautoscaler.options import (
    COUNTERS,
    NODE_GROUP_LABEL,
    AutoscalingOptions,
    CloudProvider,
    NodeGroup,
)

__all__ = [
    "COUNTERS",
    "NODE_GROUP_LABEL",
    "TO_BE_DELETED_TAINT",
    "AutoscalingOptions",
    "CloudProvider",
    "ClusterAutoscaler",
    "NodeGroup",
]
