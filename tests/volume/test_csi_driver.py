"""End to end on virtual time: the PV controller, the protection controllers and a simulated
CSI driver (``agents.csi``) together. The scheduler's part (``selected-node``, the attach/detach
controller's VolumeAttachments) is written by the test, as those agents would."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from msgspec.structs import replace

from agents.csi import CAPACITY_NAMESPACE, CSIDriverAgent, DriverSettings, attacher_finalizer
from emulator.base.api.core import Namespace
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.storage import (
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
    VolumeAttachment,
    VolumeAttachmentSource,
    VolumeAttachmentSpec,
)
from emulator.base.client.client import Latency
from tests.builders import node
from tests.volume.world import World, claim, klass, world

ZONE = "topology.kubernetes.io/zone"
EBS = DriverSettings(
    name="ebs.csi.aws.com",
    topology_keys=(ZONE,),
    attach_limit=25,
    provision_delay=Latency(2.0),
    attach_delay=Latency(1.0),
    capacity_per_topology=10 * 2**30,
)


@asynccontextmanager
async def driven(*objects: Any, settings: DriverSettings = EBS) -> AsyncIterator[tuple[World, CSIDriverAgent]]:
    nodes = [node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "b"})]
    async with world(*nodes, *objects) as w:
        w.server.create(Namespace(metadata=ObjectMeta(name="kube-system")))
        agent = CSIDriverAgent(w.cluster.client(f"csi:{settings.name}"), w.clock, random.Random(7), settings)
        await w.cluster.start(agent, "csi")
        yield w, agent


def _zones(pv: Any) -> list[str]:
    (term,) = pv.spec.node_affinity.required.node_selector_terms
    (expr,) = term.match_expressions
    assert (expr.key, expr.operator) == (ZONE, "In")
    return list(expr.values)


def _capacity(w: World) -> dict[tuple[str, str], int]:
    caps = w.server.list("CSIStorageCapacity", namespace=CAPACITY_NAMESPACE)[0]
    return {(c.node_topology.match_labels[ZONE], c.storage_class_name): c.capacity.value for c in caps}


@pytest.mark.asyncio
async def test_wait_for_first_consumer_provisions_in_the_selected_nodes_zone() -> None:
    async with driven(klass("ebs", wait=True), claim("data", "1Gi", cls="ebs")) as (w, _agent):
        driver = w.server.get("CSIDriver", "ebs.csi.aws.com")
        assert (driver.spec.attach_required, driver.spec.storage_capacity) == (True, True)
        for name in ("n1", "n2"):
            (entry,) = w.server.get("CSINode", name).spec.drivers
            assert (entry.name, entry.node_id, entry.topology_keys, entry.allocatable.count) == (
                "ebs.csi.aws.com",
                name,
                [ZONE],
                25,
            )
        assert _capacity(w) == {("a", "ebs"): 10 * 2**30, ("b", "ebs"): 10 * 2**30}
        await w.clock.sleep_until(5.0)
        assert w.phases() == {}  # waiting for a consumer
        c = w.pvc("data")
        assert c is not None
        w.server.update(
            replace(c, metadata=replace(c.metadata, annotations={**c.metadata.annotations, ANN_SELECTED_NODE: "n2"}))
        )
        await w.clock.sleep_until(6.9)
        assert w.phases() == {}  # provisionDelay 2 s
        await w.clock.sleep_until(7.5)
        pv = w.pv(f"pvc-{c.metadata.uid}")
        assert pv is not None
        assert _zones(pv) == ["b"]
        assert pv.metadata.annotations[ANN_DYNAMICALLY_PROVISIONED] == "ebs.csi.aws.com"
        assert (pv.spec.csi.driver, pv.spec.persistent_volume_reclaim_policy) == ("ebs.csi.aws.com", "Delete")
        assert pv.spec.capacity["storage"].value == 2**30
        assert w.bindings() == {"data": (pv.metadata.name, "Bound")}
        assert _capacity(w) == {("a", "ebs"): 10 * 2**30, ("b", "ebs"): 9 * 2**30}
        reasons = {r for _n, r, _m in w.events()}
        assert reasons == {"WaitForFirstConsumer", "ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"}


@pytest.mark.asyncio
async def test_immediate_provisions_without_a_node_within_allowed_topologies() -> None:
    allowed = [TopologySelectorTerm(match_label_expressions=[TopologySelectorLabelRequirement(key=ZONE, values=["a"])])]
    async with driven(klass("ebs", allowed_topologies=allowed), claim("data", cls="ebs")) as (w, _agent):
        await w.clock.sleep_until(3.0)
        c = w.pvc("data")
        assert c is not None
        pv = w.pv(f"pvc-{c.metadata.uid}")
        assert pv is not None
        assert _zones(pv) == ["a"]
        assert w.bindings() == {"data": (pv.metadata.name, "Bound")}


@pytest.mark.parametrize(("policy", "want"), [("Delete", {}), ("Retain", {"Released"})])
@pytest.mark.asyncio
async def test_claim_deleted_reclaims_the_provisioned_volume(policy: str, want: set[str]) -> None:
    async with driven(klass("ebs", policy=policy), claim("data", cls="ebs")) as (w, _agent):
        await w.clock.sleep_until(3.0)
        c = w.pvc("data")
        assert c is not None
        assert c.metadata.finalizers == ["kubernetes.io/pvc-protection"]
        assert w.bindings()["data"][1] == "Bound"
        w.server.delete("PersistentVolumeClaim", "data", "default")
        await w.clock.sleep_until(6.0)
        assert w.pvc("data") is None
        assert set(w.phases().values()) == set(want)
        if policy == "Delete":  # the space is free again
            assert set(_capacity(w).values()) == {10 * 2**30}


@pytest.mark.asyncio
async def test_no_capacity_left_fails_and_gives_the_node_back() -> None:
    async with driven(klass("ebs", wait=True), claim("big", "20Gi", cls="ebs")) as (w, _agent):
        c = w.pvc("big")
        assert c is not None
        w.server.update(replace(c, metadata=replace(c.metadata, annotations={ANN_SELECTED_NODE: "n1"})))
        await w.clock.sleep_until(3.0)
        assert w.phases() == {}
        (failed,) = w.events("ProvisioningFailed")
        assert "ResourceExhausted" in failed[2]
        c = w.pvc("big")
        assert c is not None
        assert ANN_SELECTED_NODE not in c.metadata.annotations


@pytest.mark.asyncio
async def test_the_attacher_attaches_after_its_delay_and_detaches_on_deletion() -> None:
    async with driven() as (w, _agent):
        va = VolumeAttachment(
            metadata=ObjectMeta(name="csi-1"),
            spec=VolumeAttachmentSpec(
                attacher="ebs.csi.aws.com", node_name="n1", source=VolumeAttachmentSource(persistent_volume_name="pv-1")
            ),
        )
        w.server.create(va)
        other = replace(va, metadata=ObjectMeta(name="other"), spec=replace(va.spec, attacher="other.csi"))
        w.server.create(other)
        start = w.clock.now()
        await w.clock.sleep_until(start + 0.9)
        assert not w.server.get("VolumeAttachment", "csi-1").status.attached
        await w.clock.sleep_until(start + 1.1)
        got = w.server.get("VolumeAttachment", "csi-1")
        assert got.status.attached is True
        assert got.metadata.finalizers == [attacher_finalizer("ebs.csi.aws.com")]
        assert not w.server.get("VolumeAttachment", "other").status.attached
        w.server.delete("VolumeAttachment", "csi-1")
        await w.clock.sleep_until(start + 3.0)
        assert [v.metadata.name for v in w.server.list("VolumeAttachment")[0]] == ["other"]


@pytest.mark.asyncio
async def test_race_claim_deleted_while_provisioning_makes_no_volume() -> None:
    async with driven(klass("ebs"), claim("data", cls="ebs")) as (w, agent):
        await w.clock.sleep_until(1.0)  # handed off; the provisioner waits its 2 s
        assert agent.provisioner.in_flight == {("default", "data")}
        w.server.delete("PersistentVolumeClaim", "data", "default")
        await w.clock.sleep_until(10.0)
        assert w.phases() == {}
        assert agent.counts["provisioned"] == 0
