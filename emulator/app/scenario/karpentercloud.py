"""The simulated kwok cloud behind Karpenter, and the agent's start (``autoscaling.karpenter``).

``KwokCloud`` implements ``agents.autoscaler.KarpenterCloud`` as Karpenter's kwok provider
(kubernetes-sigs/karpenter v1.9.1 ``kwok/cloudprovider``) does over kwok: its instance types are
the scenario's ``instanceTypes`` file; ``create`` registers the node the agent launched after a
``provisionDelay`` drawn from the seeded stream ``cloudprovider/karpenter`` (mean plus uniform
jitter, never below 0), as its kubelet registers it (``Cluster.create``). The node carries the
kwok provider's price label, which ``CostMeter`` reads. The scenario's NodePools are created
before the first step. Without ``autoscaling.karpenter`` nothing here runs and no stream is drawn.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from emulator.app.scenario.instancetypes import InstanceType, allocatable
from emulator.app.scenario.schema import KarpenterConfig
from emulator.base.api.core import Node
from emulator.base.api.errors import ApiError, NotFound

if TYPE_CHECKING:
    from emulator.app.scenario.cluster import Cluster

__all__ = ["KwokCloud", "node_pool_writes", "start_karpenter"]


class _Type:
    """An instance type as the agent reads it (``allocatable``: capacity minus the overhead)."""

    def __init__(self, it: InstanceType) -> None:
        self.name = it.name
        self.offerings = it.offerings
        self.operating_systems = it.operating_systems
        self._it = it
        self._labels = it.labels()
        self._capacity = it.capacity()
        self._allocatable = allocatable(it)

    def labels(self) -> dict[str, str]:
        return dict(self._labels)

    def capacity(self) -> dict[str, Any]:
        return dict(self._capacity)

    def allocatable(self) -> dict[str, Any]:
        return dict(self._allocatable)


class KwokCloud:
    """``KarpenterCloud`` over the scenario's instance types (module docstring)."""

    groups: Sequence[Any] = ()
    """No Cluster Autoscaler node groups (``startup_writes`` finds none)."""

    def __init__(self, cluster: Cluster, config: KarpenterConfig) -> None:
        self.cluster = cluster
        self.config = config
        self.rng = cluster.seeds.stream("cloudprovider/karpenter")
        self.types = [_Type(it) for it in config.instance_types.items]
        self.counters: dict[str, int] = {}
        self.disrupted: dict[str, int] = {}
        """NodeClaims disrupted by reason (the agent's ``NodeClaimsDisruptedTotal``)."""
        self.pending: list[asyncio.Task[None]] = []

    def count(self, name: str) -> None:
        self.counters[name] = self.counters.get(name, 0) + 1

    def instance_types(self) -> Sequence[Any]:
        return self.types

    def create(self, node: Node) -> None:
        tg = self.cluster._tg
        assert tg is not None
        d = self.config.provision_delay
        delay = max(0.0, d.mean + (self.rng.uniform(-d.jitter, d.jitter) if d.jitter else 0.0))
        name = node.metadata.name
        self.pending.append(tg.create_task(self._provision(node, delay), name=f"cloud:karpenter:create:{name}"))

    async def delete(self, name: str) -> None:
        """The instance goes: its kubelet stops and the Node is deleted (the cloud controller's job)."""
        cluster = self.cluster
        cluster.stop_kubelet(name)
        with contextlib.suppress(NotFound):
            await cluster.retrying(lambda: cluster.client.delete("Node", name, ""))
        self.count("nodesRemoved")

    async def _provision(self, node: Node, delay: float) -> None:
        await self.cluster.clock.sleep(delay)
        task = asyncio.current_task()
        self.pending = [t for t in self.pending if t is not task]
        try:
            await self.cluster.create(node)
        except ApiError:  # never registers
            self.count("nodesFailed")
            return
        self.count("nodesCreated")


def prepare_kwok_cloud(cluster: Cluster) -> None:
    config = cluster.scenario.autoscaling.karpenter
    if config is not None:
        cluster.autoscaler_cloud = KwokCloud(cluster, config)


def node_pool_writes(cluster: Cluster) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
    """The scenario's NodePools, created before the first step: each with its path
    (``autoscaling.karpenter.nodePools[i]``) for the ``StepError`` of a refused create."""
    config = cluster.scenario.autoscaling.karpenter
    if config is None:
        return []
    return [
        (f"autoscaling.karpenter.nodePools[{i}]", partial(cluster.create_manifest, pool))
        for i, pool in enumerate(config.node_pools)
    ]


def start_karpenter(cluster: Cluster) -> None:
    """Start ``controller:karpenter`` when the scenario has it and the agents exist."""
    cloud = cluster.autoscaler_cloud
    if not isinstance(cloud, KwokCloud) or importlib.util.find_spec("agents.autoscaler") is None:
        return
    from agents.autoscaler import Karpenter
    from agents.scheduler import SchedulingSimulator

    tg = cluster._tg
    assert tg is not None
    agent = Karpenter(
        cluster.new_client("controller:karpenter"),
        cluster.clock,
        cluster.seeds.stream("controller/karpenter"),
        cloud,
        SchedulingSimulator,
        spot_to_spot=cloud.config.feature_gates.spot_to_spot_consolidation,
    )
    cluster.agents.append(agent)
    tg.create_task(agent.run(), name="controller:karpenter")
