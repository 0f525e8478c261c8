"""The kubelet's part of DRA on the virtual clock (upstream ``pkg/kubelet/cm/dra``): a pod's
containers start only once each of its claims exists, is the pod's, is reserved for it and
allocated, and its driver's plugin on the node has prepared it (``NodePrepareResources``,
taking the plugin's time); until then the pod waits, woken by the claims' watch events and the
plugin registrations, with upstream's ``FailedPrepareDynamicResources`` Events. A pod's end
unprepares the claims no other pod on the node uses."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import pytest

from agents.kubelet import Kubelet, KubeletSettings
from emulator.base.api.core import Event
from emulator.base.client.kubeletplugins import ClaimRef, KubeletPlugins
from emulator.base.runtime.clock import Clock
from tests.builders import node
from tests.cluster import Cluster, open_cluster
from tests.dra.world import DRIVER, allocate, claim, claim_pod, served

PREPARE = 2.0


class FakePlugin:
    """A driver's kubelet plugin that takes ``PREPARE`` seconds and records its calls."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.calls: list[tuple[float, str, list[str]]] = []

    @property
    def driver(self) -> str:
        return DRIVER

    async def node_prepare_resources(self, claims: Sequence[ClaimRef]) -> None:
        self.calls.append((self.clock.now(), "prepare", [c.name for c in claims]))
        await self.clock.sleep(PREPARE)

    def node_unprepare_resources(self, claims: Sequence[ClaimRef]) -> None:
        self.calls.append((self.clock.now(), "unprepare", [c.name for c in claims]))


@asynccontextmanager
async def world(*, register: bool = True) -> AsyncIterator[tuple[Cluster, Kubelet, KubeletPlugins, FakePlugin]]:
    with served():
        async with open_cluster(namespaces=("default",)) as c:
            c.server.create(node("n1"))
            plugins = KubeletPlugins()
            plugin = FakePlugin(c.clock)
            if register:
                plugins.register("n1", plugin)
            kubelet = await c.start_kubelet("n1", KubeletSettings(heartbeat_interval=0, dra_plugins=plugins))
            yield c, kubelet, plugins, plugin


def events(c: Cluster) -> list[tuple[float, str]]:
    return [
        (r.time, r.new.message)
        for r in c.writes
        if r.kind == "Event" and r.verb == "create" and isinstance(r.new, Event)
        if r.new.reason == "FailedPrepareDynamicResources"
    ]


def phase(c: Cluster, name: str = "app") -> str:
    return c.pod(name).status.phase


@pytest.mark.asyncio
async def test_the_pod_waits_for_its_claim_then_its_drivers_prepare() -> None:
    async with world() as (c, _, _, plugin):
        p = c.server.create(claim_pod("app", claim_name="gpu-claim", node="n1"))
        await c.at(5.0)
        assert phase(c) == "Pending"
        c.server.create(claim("gpu-claim"))
        await c.at(10.0)
        assert phase(c) == "Pending"
        uid = c.server.get("ResourceClaim", "gpu-claim", "default").metadata.uid
        allocate(c.server, "gpu-claim", p)
        await c.at(20.0)
        assert phase(c) == "Running"
        assert plugin.calls == [(10.0, "prepare", ["gpu-claim"])]
        prefix = "Failed to prepare dynamic resources: "
        assert events(c) == [
            (0.0, prefix + 'fetch ResourceClaim gpu-claim: resourceclaims.resource.k8s.io "gpu-claim" not found'),
            (5.0, prefix + f"pod app ({p.metadata.uid}) is not allowed to use ResourceClaim gpu-claim ({uid})"),
        ]
        (running,) = [r.time for r in c.of("Pod", "app", "updateStatus") if r.new.status.phase == "Running"]
        assert running == 10.0 + PREPARE


@pytest.mark.asyncio
async def test_a_template_claim_not_created_yet() -> None:
    async with world() as (c, _, _, _):
        c.server.create(claim_pod("app", node="n1"))
        await c.at(3.0)
        assert events(c) == [
            (0.0, 'Failed to prepare dynamic resources: pod "default/app": ResourceClaim not created yet')
        ]
        assert phase(c) == "Pending"


@pytest.mark.asyncio
async def test_an_unregistered_driver_holds_the_pod_until_it_registers() -> None:
    async with world(register=False) as (c, _, plugins, plugin):
        c.server.create(claim("gpu-claim"))
        p = c.server.create(claim_pod("app", claim_name="gpu-claim", node="n1"))
        allocate(c.server, "gpu-claim", p)
        await c.at(5.0)
        assert events(c) == [(0.0, f"Failed to prepare dynamic resources: DRA driver {DRIVER} is not registered")]
        plugins.register("n1", plugin)
        await c.at(10.0)
        assert phase(c) == "Running"
        assert plugin.calls == [(5.0, "prepare", ["gpu-claim"])]


@pytest.mark.asyncio
async def test_a_shared_claim_is_prepared_once_and_unprepared_after_its_last_pod() -> None:
    async with world() as (c, _, _, plugin):
        c.server.create(claim("shared"))
        a = c.server.create(claim_pod("a", claim_name="shared", node="n1"))
        b = c.server.create(claim_pod("b", claim_name="shared", node="n1"))
        allocate(c.server, "shared", a, b)
        await c.at(10.0)
        assert (phase(c, "a"), phase(c, "b")) == ("Running", "Running")
        assert [call[1] for call in plugin.calls] == ["prepare"]
        c.server.delete("Pod", "a", "default", grace_period_seconds=0)
        await c.at(12.0)
        assert [call[1] for call in plugin.calls] == ["prepare"]
        c.server.delete("Pod", "b", "default", grace_period_seconds=0)
        await c.at(14.0)
        assert plugin.calls[-1] == (12.0, "unprepare", ["shared"])


@pytest.mark.asyncio
async def test_pods_without_claims_never_wait() -> None:
    from tests.builders import pod

    async with world() as (c, kubelet, _, plugin):
        c.server.create(pod("plain", node="n1"))
        await c.at(2.0)
        assert phase(c, "plain") == "Running"
        assert kubelet._claims.waits == 0
        assert plugin.calls == []


@pytest.mark.asyncio
async def test_race_the_pod_is_deleted_while_it_waits_for_its_claim() -> None:
    """The wait ends with the pod: its claim watches close, nothing is prepared."""
    async with world() as (c, kubelet, _, plugin):
        c.server.create(claim_pod("app", claim_name="gpu-claim", node="n1"))
        await c.at(2.0)
        assert [w.name for w in c.server.watchers() if w.kind == "ResourceClaim"] == ["kubelet:n1"]
        c.server.delete("Pod", "app", "default", grace_period_seconds=0)
        await c.at(4.0)
        assert [w for w in c.server.watchers() if w.kind == "ResourceClaim"] == []
        c.server.create(claim("gpu-claim"))
        await c.at(6.0)
        assert plugin.calls == []
        assert kubelet._claims.waits == 1
