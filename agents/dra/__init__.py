"""The simulated DRA drivers: one ``DRADriverAgent`` per driver named in the scenario's node
groups' ``devices`` sections, each publishing one ResourceSlice per node it serves through the
API server and registering its kubelet plugin on each of those nodes in ``KubeletPlugins``
(the node-local seam the kubelet calls ``NodePrepareResources`` through).
``start_dra_drivers`` starts them as the runner does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from agents.dra.driver import RETRY_AFTER, DRADriverAgent, slice_for
from agents.dra.plugin import NodePlugin
from agents.dra.settings import DEFAULT_DEVICE_PREFIX, MAX_DEVICES_PER_SLICE, DRADriverSettings, NodeDevices
from emulator.base.client.client import Client
from emulator.base.client.kubeletplugins import KubeletPlugins
from emulator.base.runtime.clock import Clock
from emulator.base.runtime.rng import Seeds

__all__ = [
    "DEFAULT_DEVICE_PREFIX",
    "MAX_DEVICES_PER_SLICE",
    "RETRY_AFTER",
    "DRADriverAgent",
    "DRADriverSettings",
    "NodeDevices",
    "NodePlugin",
    "slice_for",
    "start_dra_drivers",
]


def start_dra_drivers(
    tg: asyncio.TaskGroup,
    clock: Clock,
    new_client: Callable[[str], Client],
    seeds: Seeds,
    drivers: Sequence[DRADriverSettings],
    plugins: KubeletPlugins,
) -> list[DRADriverAgent]:
    """One agent per driver, task ``dra:<name>`` of ``tg``, drawing from stream ``dra/<name>``."""
    agents = []
    for settings in drivers:
        agent = DRADriverAgent(
            new_client(f"dra:{settings.name}"), clock, seeds.stream(f"dra/{settings.name}"), settings, plugins
        )
        tg.create_task(agent.run(), name=f"dra:{settings.name}")
        agents.append(agent)
    return agents
