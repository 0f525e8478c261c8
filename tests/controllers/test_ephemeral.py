"""The ephemeral-volume controller on the virtual clock (upstream
``pkg/controller/volume/ephemeral``): a pod's generic ephemeral volume gets the claim
``<pod>-<volume>`` from its template, controlled by the pod, deleted with it by the garbage
collector; a claim of that name the pod does not own is the pod's ``FailedBinding`` Event."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from msgspec.structs import replace

from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.storage import PersistentVolumeClaim, StorageClass
from emulator.base.api.volumes import (
    EphemeralVolumeSource,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimTemplate,
    Volume,
    VolumeResourceRequirements,
)
from tests.builders import pod
from tests.cluster import Cluster, open_cluster
from tests.controllers.stsdsworld import Controllers

SPEC = PersistentVolumeClaimSpec(
    access_modes=["ReadWriteOnce"],
    storage_class_name="fast",
    resources=VolumeResourceRequirements(requests={"storage": parse_quantity("1Gi")}),
)


def scratch_pod(name: str = "app") -> object:
    template = PersistentVolumeClaimTemplate(
        metadata=ObjectMeta(labels={"type": "scratch"}, annotations={"note": "x"}), spec=SPEC
    )
    p = pod(name)
    volumes = [Volume(name="scratch", ephemeral=EphemeralVolumeSource(volume_claim_template=template))]
    return replace(p, spec=replace(p.spec, volumes=volumes))


@asynccontextmanager
async def world() -> AsyncIterator[Cluster]:
    async with open_cluster(namespaces=("default",)) as c:
        await c.start(
            Controllers(c, ["ephemeral-volume-controller", "garbagecollector", "pvc-protection"]), "controllers"
        )
        c.server.create(StorageClass(metadata=ObjectMeta(name="fast"), provisioner="ebs.csi.aws.com"))
        await c.at(1.0)
        yield c


def claims(c: Cluster) -> dict[str, PersistentVolumeClaim]:
    return {p.metadata.name: p for p in c.server.list("PersistentVolumeClaim")[0]}


@pytest.mark.asyncio
async def test_the_claim_is_made_from_the_template_owned_by_the_pod_and_collected_with_it() -> None:
    async with world() as c:
        c.server.create(scratch_pod())
        await c.at(2.0)
        claim = claims(c)["app-scratch"]
        assert claim.metadata.labels == {"type": "scratch"}
        assert claim.metadata.annotations == {"note": "x"}
        assert claim.spec.storage_class_name == "fast"
        (ref,) = claim.metadata.owner_references
        p = c.pod("app", "default")
        assert (ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
            "Pod",
            "app",
            p.metadata.uid,
            True,
            True,
        )
        c.server.delete("Pod", "app", "default", grace_period_seconds=0)
        await c.at(10.0)
        assert claims(c) == {}


@pytest.mark.asyncio
async def test_a_claim_the_pod_does_not_own_is_an_event_on_the_pod() -> None:
    async with world() as c:
        c.server.create(PersistentVolumeClaim(metadata=ObjectMeta(name="app-scratch", namespace="default"), spec=SPEC))
        c.server.create(scratch_pod())
        await c.at(3.0)
        events = [e for e in c.server.list("Event")[0] if e.involved_object.name == "app"]
        assert events
        e = events[0]
        assert (e.type, e.reason, e.source.component) == ("Warning", "FailedBinding", "ephemeral_volume")
        assert e.message == (
            "ephemeral volume scratch: PVC default/app-scratch was not created for pod default/app (pod is not owner)"
        )
        assert claims(c)["app-scratch"].metadata.owner_references == []


@pytest.mark.asyncio
async def test_a_claim_deleted_under_a_live_pod_is_made_again() -> None:
    """Upstream ``onPVCDelete``: the pod is queued again and its claim re-created."""
    async with world() as c:
        c.server.create(scratch_pod())
        await c.at(2.0)
        first = claims(c)["app-scratch"].metadata.uid
        c.server.delete("PersistentVolumeClaim", "app-scratch", "default")
        await c.at(3.0)
        again = claims(c)["app-scratch"]
        assert again.metadata.uid != first
        assert again.metadata.owner_references[0].name == "app"
