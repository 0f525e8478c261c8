"""The autoscaler agents: their public surface.

The application layer imports these names from ``agents.autoscaler`` and nothing deeper (an
import-linter contract in ``pyproject.toml`` says so). The agents here may read the scheduler's
framework through ``agents.scheduler``'s surface only (``SchedulingSimulator``), as upstream's
autoscalers import kube-scheduler's framework; they talk to everything else through the API
server, and to the (simulated) cloud through the ``CloudProvider`` protocol the caller implements.

- Cluster Autoscaler (``clusterautoscaler``): ``ClusterAutoscaler`` (agent
  ``controller:cluster-autoscaler``), ``AutoscalingOptions`` (upstream's flags and defaults),
  ``CloudProvider`` and ``NodeGroup`` (what the agent needs of a cloud), ``NODE_GROUP_LABEL``,
  ``TO_BE_DELETED_TAINT``, ``COUNTERS``.
- Karpenter (``karpenter``): ``Karpenter`` (agent ``controller:karpenter``), ``KarpenterCloud``
  (what it needs of the simulated kwok cloud), ``PRICE_LABEL``, ``BATCH_IDLE``, ``BATCH_MAX``.
"""

from __future__ import annotations

from agents.autoscaler.clusterautoscaler import (
    COUNTERS,
    NODE_GROUP_LABEL,
    TO_BE_DELETED_TAINT,
    AutoscalingOptions,
    CloudProvider,
    ClusterAutoscaler,
    NodeGroup,
)
from agents.autoscaler.karpenter import BATCH_IDLE, BATCH_MAX, PRICE_LABEL, Karpenter, KarpenterCloud

__all__ = [
    "BATCH_IDLE",
    "BATCH_MAX",
    "COUNTERS",
    "NODE_GROUP_LABEL",
    "PRICE_LABEL",
    "TO_BE_DELETED_TAINT",
    "AutoscalingOptions",
    "CloudProvider",
    "ClusterAutoscaler",
    "Karpenter",
    "KarpenterCloud",
    "NodeGroup",
]
