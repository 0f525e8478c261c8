"""The simulated CSI drivers: one ``CSIDriverAgent`` per ``storage.drivers`` entry of a
scenario, each writing through the API server only (its CSIDriver, the nodes' CSINode
entries, its external-provisioner's and external-attacher's work, CSIStorageCapacity).
``start_csi_drivers`` starts them as the runner does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from agents.csi.driver import RETRY_AFTER, CSIDriverAgent
from agents.csi.settings import CAPACITY_NAMESPACE, DriverSettings, attacher_finalizer
from emulator.base.client.client import Client
from emulator.base.runtime.clock import Clock
from emulator.base.runtime.rng import Seeds

__all__ = [
    "CAPACITY_NAMESPACE",
    "RETRY_AFTER",
    "CSIDriverAgent",
    "DriverSettings",
    "attacher_finalizer",
    "start_csi_drivers",
]


def start_csi_drivers(
    tg: asyncio.TaskGroup,
    clock: Clock,
    new_client: Callable[[str], Client],
    seeds: Seeds,
    drivers: Sequence[DriverSettings],
) -> list[CSIDriverAgent]:
    """One agent per driver, task ``csi:<name>`` of ``tg``, drawing from stream ``csi/<name>``."""
    agents = []
    for settings in drivers:
        agent = CSIDriverAgent(
            new_client(f"csi:{settings.name}"), clock, seeds.stream(f"csi/{settings.name}"), settings
        )
        tg.create_task(agent.run(), name=f"csi:{settings.name}")
        agents.append(agent)
    return agents
