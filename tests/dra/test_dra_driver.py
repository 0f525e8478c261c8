"""The simulated DRA driver (``agents.dra``) on the virtual clock: one ResourceSlice per node it
serves (upstream's naming and pool shape), published when the Node appears and removed with
it; its kubelet plugin registered on each of those nodes; the same seed, the same slices and
delays."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from agents.dra import DRADriverAgent, DRADriverSettings, NodeDevices
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.resource import DeviceAttribute, DeviceCapacity, ResourceSlice
from emulator.base.client.client import Latency
from emulator.base.client.kubeletplugins import ClaimRef, KubeletPlugins
from tests.builders import node
from tests.cluster import Cluster, open_cluster
from tests.dra.world import DRIVER, served

A100 = NodeDevices(
    count=4,
    attributes={"model": DeviceAttribute(string_value="A100"), "memoryGiB": DeviceAttribute(int_value=80)},
    capacity={"memory": DeviceCapacity(value=parse_quantity("80Gi"))},
    prepare_delay=Latency(1.0, 0.5),
)
SETTINGS = DRADriverSettings(name=DRIVER, nodes={"n1": A100, "n2": A100})


@asynccontextmanager
async def driven(seed: int = 0) -> AsyncIterator[tuple[Cluster, DRADriverAgent, KubeletPlugins]]:
    with served():
        async with open_cluster(seed=seed, namespaces=("default",)) as c:
            for n in ("n1", "n2", "n3"):
                c.server.create(node(n))
            plugins = KubeletPlugins()
            agent = DRADriverAgent(c.client(f"dra:{DRIVER}"), c.clock, random.Random(seed), SETTINGS, plugins)
            await c.start(agent, "dra")
            await c.at(1.0)
            yield c, agent, plugins


def slices(c: Cluster) -> dict[str, ResourceSlice]:
    return {s.spec.node_name or "": s for s in c.server.list("ResourceSlice")[0]}


@pytest.mark.asyncio
async def test_one_slice_per_served_node() -> None:
    async with driven() as (c, _, plugins):
        got = slices(c)
        assert sorted(got) == ["n1", "n2"]  # n3 has no devices
        s = got["n1"]
        assert s.metadata.name.startswith(f"n1-{DRIVER}-")
        assert len(s.metadata.name) == len(f"n1-{DRIVER}-") + 5
        (owner,) = s.metadata.owner_references
        assert (owner.api_version, owner.kind, owner.name, owner.uid, owner.controller) == (
            "v1",
            "Node",
            "n1",
            c.node("n1").metadata.uid,
            True,
        )
        pool = s.spec.pool
        assert (s.spec.driver, pool.name, pool.generation, pool.resource_slice_count) == (DRIVER, "n1", 1, 1)
        assert [d.name for d in s.spec.devices] == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
        assert s.spec.devices[0].attributes["model"].string_value == "A100"
        assert s.spec.devices[3].capacity["memory"].value == parse_quantity("80Gi")
        assert (plugins.drivers("n1"), plugins.drivers("n3")) == ([DRIVER], [])


@pytest.mark.asyncio
async def test_a_node_deleted_takes_its_slice_and_plugin_and_a_new_one_gets_them() -> None:
    async with driven() as (c, agent, plugins):
        c.server.delete("Node", "n1")
        await c.at(2.0)
        assert sorted(slices(c)) == ["n2"]
        assert plugins.get("n1", DRIVER) is None
        c.server.create(node("n1"))
        await c.at(3.0)
        assert sorted(slices(c)) == ["n1", "n2"]
        assert plugins.get("n1", DRIVER) is not None
        assert (agent.counts["slices_created"], agent.counts["slices_deleted"]) == (3, 1)


@pytest.mark.asyncio
async def test_prepare_takes_the_groups_delay_from_the_drivers_stream() -> None:
    async with driven(seed=3) as (c, agent, plugins):
        plugin = plugins.get("n1", DRIVER)
        assert plugin is not None
        expected = Latency(1.0, 0.5).sample(random.Random(3))
        start = c.clock.now()
        claim = ClaimRef("default", "c", "uid-1")
        await plugin.node_prepare_resources([claim])
        assert c.clock.now() - start == pytest.approx(expected)
        plugin.node_unprepare_resources([claim])
        assert (agent.counts["prepared"], agent.counts["unprepared"]) == (1, 1)


async def _run(seed: int) -> list[Any]:
    async with driven(seed) as (c, _, plugins):
        plugin = plugins.get("n2", DRIVER)
        assert plugin is not None
        await plugin.node_prepare_resources([ClaimRef("default", "c", "u")])
        return [(s.metadata.name, s.spec.devices) for s in c.server.list("ResourceSlice")[0]] + [c.clock.now()]


@pytest.mark.asyncio
async def test_the_same_seed_publishes_the_same_slices() -> None:
    assert await _run(5) == await _run(5)
