"""Cluster Autoscaler's options (``config/autoscaling_options.go`` and the flags of ``main.go``,
1.34): the ones this model honours, with upstream's names and defaults, and the cloud provider
protocol the agent drives (upstream ``cloudprovider.CloudProvider`` / ``NodeGroup``, reduced to
what the core loop calls).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

from emulator.base.api.core import Node

__all__ = [
    "CONFIG_NAMESPACE",
    "COUNTERS",
    "NODE_GROUP_LABEL",
    "REMOVAL_SIMULATIONS",
    "STATUS_CONFIG_MAP_NAME",
    "TO_BE_DELETED_TAINT",
    "AutoscalingOptions",
    "CloudProvider",
    "NodeGroup",
]

NODE_GROUP_LABEL: Final = "kwok-nodegroup"
"""The label naming a node's group, as Cluster Autoscaler's kwok cloud provider reads it
(``nodegroups.fromNodeLabelKey``)."""
TO_BE_DELETED_TAINT: Final = "ToBeDeletedByClusterAutoscaler"
"""``taints.ToBeDeletedTaint``: the NoSchedule taint on a node being scaled down."""
REMOVAL_SIMULATIONS: Final = ("taintedGhostNode", "removeNode", "keepNode")
"""How the scale-down simulation treats the node it removes (``RemovalSimulator.findPlaceFor``),
release by release: ``taintedGhostNode`` 1.34.4 on (kubernetes/autoscaler#9288, #9559),
``removeNode`` 1.32.3 to 1.34.3 (#8164), ``keepNode`` before (1.32.2). Not an upstream flag."""
STATUS_CONFIG_MAP_NAME: Final = "cluster-autoscaler-status"
CONFIG_NAMESPACE: Final = "kube-system"
COUNTERS: Final = ("scaleUps", "scaleDowns", "nodesCreated", "nodesRemoved", "podsDisrupted")
"""The run report's ``metrics.autoscaler`` counters."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AutoscalingOptions:
    scan_interval: float = 10.0
    expander: str = "random"
    """A name or a comma-separated chain (upstream ``--expander``)."""
    priorities: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    """The priority expander's table (upstream reads it from the ConfigMap
    ``cluster-autoscaler-priority-expander``): priority -> regexes of node group names."""
    scale_down_enabled: bool = True
    scale_down_utilization_threshold: float = 0.5
    scale_down_unneeded_time: float = 600.0
    scale_down_unready_time: float = 1200.0
    scale_down_delay_after_add: float = 600.0
    scale_down_delay_after_delete: float = 0.0
    """0: the scan interval (upstream's default)."""
    scale_down_delay_after_failure: float = 180.0
    max_node_provision_time: float = 900.0
    max_graceful_termination_sec: int = 600
    max_pod_eviction_time: float = 120.0
    new_pod_scale_up_delay: float = 0.0
    max_nodes_total: int = 0
    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    max_empty_bulk_delete: int = 10
    max_scale_down_parallelism: int = 10
    max_drain_parallelism: int = 1
    unremovable_node_recheck_timeout: float = 300.0
    node_delete_delay_after_taint: float = 5.0
    expendable_pods_priority_cutoff: int = -10
    initial_node_group_backoff: float = 300.0
    max_node_group_backoff: float = 1800.0
    removal_simulation: str = "taintedGhostNode"
    """One of ``REMOVAL_SIMULATIONS``: which releases' scale-down simulation to emulate."""
    balance_similar_node_groups: bool = False
    """Split a scale-up between the chosen group and the ones similar to it (``nodegroupset``)."""
    balancing_ignore_labels: tuple[str, ...] = ()
    """``--balancing-ignore-label``: labels left out of the comparison, besides the basic ones."""
    balancing_labels: tuple[str, ...] = ()
    """``--balancing-label``: when set, groups are similar when these labels are equal (only)."""
    memory_difference_ratio: float = 0.015
    max_allocatable_difference_ratio: float = 0.05
    max_free_difference_ratio: float = 0.05
    status_config_map_name: str = STATUS_CONFIG_MAP_NAME
    config_namespace: str = CONFIG_NAMESPACE


class NodeGroup(Protocol):
    """One node group of the cloud (upstream ``cloudprovider.NodeGroup``)."""

    @property
    def id(self) -> str: ...
    @property
    def min_size(self) -> int: ...
    @property
    def max_size(self) -> int: ...
    @property
    def price_per_hour(self) -> float: ...
    def target_size(self) -> int: ...
    def increase_size(self, delta: int) -> None:
        """Ask the cloud for ``delta`` more nodes (they register later)."""

    def decrease_target_size(self, delta: int) -> None:
        """Give up ``delta`` requested nodes that have not registered."""

    async def delete_node(self, name: str) -> None:
        """Delete the instance (its Node object goes with it)."""

    def template_node(self) -> Node:
        """``TemplateNodeInfo``: what a new node of the group looks like."""


class CloudProvider(Protocol):
    def node_groups(self) -> list[NodeGroup]: ...
    def node_group_for_node(self, node: Node) -> NodeGroup | None: ...
