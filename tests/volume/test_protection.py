"""The protection finalizers: added by the API server on create (``StorageObjectInUseProtection``),
removed by pvc-protection once no scheduled, unfinished pod uses the claim and by
pv-protection once the volume is no longer Bound (upstream ``pvcprotection``, ``pvprotection``)."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.controllers.volume import claims_of_pod
from emulator.base.api.storage import PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER
from emulator.base.api.volumes import EphemeralVolumeSource, PersistentVolumeClaimVolumeSource, Volume
from tests.builders import pod
from tests.volume.world import claim, volume, world


def _user(name: str, claim_name: str, node: str = "n1") -> object:
    p = pod(name, node=node)
    vol = Volume(name="data", persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim_name))
    return replace(p, spec=replace(p.spec, volumes=[vol]))


@pytest.mark.asyncio
async def test_admission_adds_the_finalizers() -> None:
    async with world(names=()) as w:
        pv = w.server.create(volume("v1"))
        pvc = w.server.create(claim("c1"))
        assert pv.metadata.finalizers == [PV_PROTECTION_FINALIZER]
        assert pvc.metadata.finalizers == [PVC_PROTECTION_FINALIZER]


@pytest.mark.asyncio
async def test_a_claim_in_use_stays_until_its_pod_is_done() -> None:
    async with world(volume("v1"), claim("c1"), _user("web", "c1")) as w:
        await w.clock.sleep_until(1.0)
        w.server.delete("PersistentVolumeClaim", "c1", "default")
        await w.clock.sleep_until(5.0)
        c1 = w.pvc("c1")
        assert c1
        assert c1.metadata.deletion_timestamp
        assert c1.metadata.finalizers == [PVC_PROTECTION_FINALIZER]
        assert w.phases() == {"v1": "Bound"}
        # pv-protection: a Bound volume being deleted stays
        w.server.delete("PersistentVolume", "v1")
        await w.clock.sleep_until(6.0)
        assert w.pv("v1") is not None
        web = w.server.get("Pod", "web", "default")
        w.server.update_status(replace(web, status=replace(web.status, phase="Succeeded")))
        await w.clock.sleep_until(10.0)
        assert w.pvc("c1") is None
        assert w.pv("v1") is None  # Released (Retain), then no longer in use


def test_claims_of_pod() -> None:
    p = _user("web", "c1")
    eph = Volume(name="scratch", ephemeral=EphemeralVolumeSource())
    p = replace(p, spec=replace(p.spec, volumes=[*p.spec.volumes, eph]))  # type: ignore[attr-defined]
    assert claims_of_pod(p) == ["c1", "web-scratch"]  # type: ignore[arg-type]
    assert claims_of_pod(replace(p, spec=replace(p.spec, node_name=""))) == []  # type: ignore[attr-defined,arg-type]
