"""The simulated cloud behind the Cluster Autoscaler, and the agent's start (``autoscaling``).

``SimulatedCloud`` implements ``agents.autoscaler.CloudProvider`` over the scenario's node
groups, as Cluster Autoscaler's kwok provider does over kwok: a group's nodes carry the label
``kwok-nodegroup: <group>``; its target size starts at ``minSize``, whose nodes exist from the
start (created with the ``nodes`` section's, before the first step). ``increase_size`` asks for
nodes: each is created after a ``provisionDelay`` drawn from the group's seeded stream
``cloudprovider/<group>`` (mean plus uniform jitter, never below 0), as its kubelet registers it
(``Cluster.create``: the Node, then its kubelet, whose first heartbeat makes it Ready), named
``<group>-<i>`` with ``i`` counting up per group. ``decrease_target_size`` gives up the
latest pending creations. ``delete_node`` stops the kubelet and deletes the Node (the cloud
controller's job upstream); PodGC removes what was left bound to it.

Without ``autoscaling.clusterAutoscaler`` nothing here runs and no stream is drawn.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from emulator.app.scenario.cost import NODE_GROUP_LABEL
from emulator.app.scenario.karpentercloud import node_pool_writes, prepare_kwok_cloud, start_karpenter
from emulator.app.scenario.schema import CANodeGroup, ClusterAutoscalerConfig, generated_name
from emulator.base.api.core import Node
from emulator.base.api.errors import ApiError, NotFound

if TYPE_CHECKING:
    from emulator.app.scenario.cluster import Cluster

__all__ = ["SimulatedCloud", "SimulatedNodeGroup", "start_autoscalers", "startup_writes"]


class SimulatedNodeGroup:
    def __init__(self, cloud: SimulatedCloud, spec: CANodeGroup) -> None:
        self.cloud = cloud
        self.spec = spec
        self.rng = cloud.cluster.seeds.stream(f"cloudprovider/{spec.name}")
        self.target = 0
        self.created = 0
        self.pending: list[asyncio.Task[None]] = []

    @property
    def id(self) -> str:
        return self.spec.name

    @property
    def min_size(self) -> int:
        return self.spec.min_size

    @property
    def max_size(self) -> int:
        return self.spec.max_size

    @property
    def price_per_hour(self) -> float:
        return self.spec.price_per_hour

    def target_size(self) -> int:
        return self.target

    def template_node(self) -> Node:
        t = self.spec.template
        labels = {**t.metadata.labels, NODE_GROUP_LABEL: self.id}
        return replace(t, metadata=replace(t.metadata, labels=labels))

    def _next(self) -> Node:
        node = self.template_node()
        name = generated_name(self.id, self.created)
        self.created += 1
        return replace(node, metadata=replace(node.metadata, name=name))

    async def create_now(self) -> None:
        self.target += 1
        await self.cloud.cluster.create(self._next())
        self.cloud.count("nodesCreated")

    def increase_size(self, delta: int) -> None:
        tg = self.cloud.cluster._tg
        assert tg is not None
        d = self.spec.provision_delay
        for _ in range(delta):
            self.target += 1
            node = self._next()
            delay = max(0.0, d.mean + (self.rng.uniform(-d.jitter, d.jitter) if d.jitter else 0.0))
            task = tg.create_task(self._provision(node, delay), name=f"cloud:{self.id}:create:{node.metadata.name}")
            self.pending.append(task)

    async def _provision(self, node: Node, delay: float) -> None:
        await self.cloud.cluster.clock.sleep(delay)
        task = asyncio.current_task()
        self.pending = [t for t in self.pending if t is not task]
        try:
            await self.cloud.cluster.create(node)
        except ApiError:  # the instance never registers: the autoscaler's provision timeout copes
            self.cloud.count("nodesFailed")
            return
        self.cloud.count("nodesCreated")

    def decrease_target_size(self, delta: int) -> None:
        for _ in range(min(delta, len(self.pending))):
            self.pending.pop().cancel()
            self.target -= 1

    async def delete_node(self, name: str) -> None:
        cluster = self.cloud.cluster
        cluster.stop_kubelet(name)
        with contextlib.suppress(NotFound):  # gone already: as good as deleted
            await cluster.retrying(lambda: cluster.client.delete("Node", name, ""))
        self.target -= 1
        self.cloud.count("nodesRemoved")


class SimulatedCloud:
    """``CloudProvider`` over the scenario's node groups (module docstring)."""

    def __init__(self, cluster: Cluster, config: ClusterAutoscalerConfig) -> None:
        self.cluster = cluster
        self.groups = [SimulatedNodeGroup(self, g) for g in config.node_groups]
        self._by_id = {g.id: g for g in self.groups}
        self.counters: dict[str, int] = {}

    def count(self, name: str) -> None:
        self.counters[name] = self.counters.get(name, 0) + 1

    def node_groups(self) -> list[Any]:
        return list(self.groups)

    def node_group_for_node(self, node: Node) -> Any:
        return self._by_id.get(node.metadata.labels.get(NODE_GROUP_LABEL, ""))


def _options(config: ClusterAutoscalerConfig) -> Any:
    from agents.autoscaler import AutoscalingOptions

    return AutoscalingOptions(
        scan_interval=config.scan_interval,
        expander=config.expander,
        priorities={int(k): tuple(v) for k, v in config.priorities.items()},
        scale_down_enabled=config.scale_down_enabled,
        scale_down_utilization_threshold=config.scale_down_utilization_threshold,
        scale_down_unneeded_time=config.scale_down_unneeded_time,
        scale_down_delay_after_add=config.scale_down_delay_after_add,
        scale_down_delay_after_delete=config.scale_down_delay_after_delete,
        scale_down_delay_after_failure=config.scale_down_delay_after_failure,
        max_node_provision_time=config.max_node_provision_time,
        max_graceful_termination_sec=config.max_graceful_termination_sec,
        new_pod_scale_up_delay=config.new_pod_scale_up_delay,
        max_nodes_total=config.max_nodes_total,
        skip_nodes_with_system_pods=config.skip_nodes_with_system_pods,
        skip_nodes_with_local_storage=config.skip_nodes_with_local_storage,
        removal_simulation=config.removal_simulation,
        balance_similar_node_groups=config.balance_similar_node_groups,
        balancing_ignore_labels=tuple(config.balancing_ignore_labels),
        balancing_labels=tuple(config.balancing_labels),
        memory_difference_ratio=config.memory_difference_ratio,
        max_allocatable_difference_ratio=config.max_allocatable_difference_ratio,
        max_free_difference_ratio=config.max_free_difference_ratio,
    )


def startup_writes(cluster: Cluster) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
    """The autoscalers' writes before the first step, in order, each with the scenario path a
    refused write is reported at (``StepError``): Karpenter's NodePools
    (``autoscaling.karpenter.nodePools[i]``), then each node group's ``minSize`` nodes
    (``autoscaling.clusterAutoscaler.nodeGroups[i]``)."""
    writes = node_pool_writes(cluster)
    cloud = cluster.autoscaler_cloud
    if isinstance(cloud, SimulatedCloud):
        for i, g in enumerate(cloud.groups):
            writes += [(f"autoscaling.clusterAutoscaler.nodeGroups[{i}]", g.create_now) for _ in range(g.min_size)]
    return writes


def prepare_cloud(cluster: Cluster) -> None:
    """The simulated cloud of the scenario's autoscaler (Cluster Autoscaler's groups or Karpenter's kwok)."""
    config = cluster.scenario.autoscaling.cluster_autoscaler
    if config is not None:
        cluster.autoscaler_cloud = SimulatedCloud(cluster, config)
    prepare_kwok_cloud(cluster)


def start_autoscalers(cluster: Cluster) -> None:
    """Start ``controller:karpenter`` and ``controller:cluster-autoscaler``, each when the scenario
    has it and the agents exist."""
    start_karpenter(cluster)
    config = cluster.scenario.autoscaling.cluster_autoscaler
    cloud = cluster.autoscaler_cloud
    if config is None or cloud is None or importlib.util.find_spec("agents.autoscaler") is None:
        return
    from agents.autoscaler import ClusterAutoscaler
    from agents.scheduler import SchedulingSimulator

    tg = cluster._tg
    assert tg is not None
    ca = ClusterAutoscaler(
        cluster.new_client("controller:cluster-autoscaler"),
        cluster.clock,
        cluster.seeds.stream("controller/cluster-autoscaler"),
        cloud,
        _options(config),
        SchedulingSimulator,
        counters=cloud.counters,
    )
    cluster.agents.append(ca)
    tg.create_task(ca.run(), name="controller:cluster-autoscaler")
