"""The attach/detach controller on the virtual clock (upstream ``pkg/controller/volume/attachdetach``
for CSI): a pod on a node whose claim is bound to an attachable CSI volume gets a
VolumeAttachment named as upstream's ``getAttachmentName``; it is deleted once no pod of that
node uses the volume. Binding and ``status.attached`` are written by hand, as the PV controller
and the driver's attacher would."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.csimigration import attachment_name, csi_source
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.storage import (
    CSIDriver,
    CSIDriverSpec,
    CSIPersistentVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    VolumeAttachment,
    VolumeAttachmentSource,
    VolumeAttachmentSpec,
)
from emulator.base.api.volumes import (
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource,
    Volume,
    VolumeResourceRequirements,
)
from tests.builders import pod
from tests.cluster import Cluster, open_cluster
from tests.controllers.stsdsworld import Controllers


def pv(name: str, **source: Any) -> PersistentVolume:
    return PersistentVolume(
        metadata=ObjectMeta(name=name, labels=source.pop("labels", {})),
        spec=PersistentVolumeSpec(
            capacity={"storage": parse_quantity("1Gi")}, access_modes=["ReadWriteOnce"], **source
        ),
    )


def bind(c: Cluster, claim: str, volume: str) -> None:
    """What the PV controller writes: both halves of the binding."""
    pvc = c.server.get("PersistentVolumeClaim", claim, "default")
    v = c.server.get("PersistentVolume", volume, "")
    ref = ObjectReference(kind="PersistentVolumeClaim", namespace="default", name=claim, uid=pvc.metadata.uid)
    c.server.update(replace(v, spec=replace(v.spec, claim_ref=ref)))
    pvc = c.server.update(replace(pvc, spec=replace(pvc.spec, volume_name=volume)))
    c.server.update_status(replace(pvc, status=replace(pvc.status, phase="Bound")))


def claim(name: str) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            storage_class_name="",
            resources=VolumeResourceRequirements(requests={"storage": parse_quantity("1Gi")}),
        ),
    )


def user(name: str, claim_name: str, node: str) -> Any:
    p = pod(name)
    volumes = [Volume(name="data", persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim_name))]
    return replace(p, spec=replace(p.spec, volumes=volumes, node_name=node))


@asynccontextmanager
async def world() -> AsyncIterator[Cluster]:
    async with open_cluster(namespaces=("default",)) as c:
        await c.start(Controllers(c, ["attachdetach-controller"]), "controllers")
        await c.at(1.0)
        yield c


def attachments(c: Cluster) -> dict[str, VolumeAttachment]:
    return {a.metadata.name: a for a in c.server.list("VolumeAttachment")[0]}


@pytest.mark.asyncio
async def test_a_bound_csi_volume_of_a_scheduled_pod_is_attached_then_detached() -> None:
    async with world() as c:
        c.server.create(pv("pv-1", csi=CSIPersistentVolumeSource(driver="ebs.csi.aws.com", volume_handle="vol-1")))
        c.server.create(claim("data"))
        c.server.create(user("app", "data", "node-0"))
        await c.at(2.0)
        assert attachments(c) == {}, "claim not bound yet"
        bind(c, "data", "pv-1")
        await c.at(3.0)
        name = "csi-" + hashlib.sha256(b"vol-1ebs.csi.aws.comnode-0").hexdigest()
        (va,) = attachments(c).values()
        assert va.metadata.name == name
        assert (va.spec.attacher, va.spec.source.persistent_volume_name, va.spec.node_name) == (
            "ebs.csi.aws.com",
            "pv-1",
            "node-0",
        )
        # a second pod on the same node: still one attachment; the first leaving keeps it
        c.server.create(user("app2", "data", "node-0"))
        await c.at(4.0)
        c.server.delete("Pod", "app", "default", grace_period_seconds=0)
        await c.at(5.0)
        assert list(attachments(c)) == [name]
        c.server.delete("Pod", "app2", "default", grace_period_seconds=0)
        await c.at(6.0)
        assert attachments(c) == {}


@pytest.mark.asyncio
async def test_a_driver_without_attach_is_not_attached_and_a_missing_csidriver_is() -> None:
    async with world() as c:
        c.server.create(
            CSIDriver(metadata=ObjectMeta(name="nfs.csi.k8s.io"), spec=CSIDriverSpec(attach_required=False))
        )
        c.server.create(pv("pv-nfs", csi=CSIPersistentVolumeSource(driver="nfs.csi.k8s.io", volume_handle="share")))
        c.server.create(
            pv("pv-pd", gce_persistent_disk={"pdName": "disk-1"}, labels={"topology.kubernetes.io/zone": "us-a"})
        )
        for name in ("a", "b"):
            c.server.create(claim(name))
        bind(c, "a", "pv-nfs")
        bind(c, "b", "pv-pd")
        c.server.create(user("p1", "a", "node-1"))
        c.server.create(user("p2", "b", "node-1"))
        await c.at(3.0)
        (va,) = attachments(c).values()
        assert va.spec.attacher == "pd.csi.storage.gke.io"
        assert va.metadata.name == attachment_name(
            "projects/UNSPECIFIED/zones/us-a/disks/disk-1", va.spec.attacher, "node-1"
        )


@pytest.mark.parametrize(
    ("source", "want"),
    [
        ({"aws_elastic_block_store": {"volumeID": "aws://us-east-1a/vol-0abc"}}, ("ebs.csi.aws.com", "vol-0abc")),
        ({"aws_elastic_block_store": {"volumeID": "vol-0abc"}}, ("ebs.csi.aws.com", "vol-0abc")),
        (
            {"gce_persistent_disk": {"pdName": "d"}},
            ("pd.csi.storage.gke.io", "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"),
        ),
        (
            {"gce_persistent_disk": {"pdName": "d"}, "labels": {"topology.kubernetes.io/zone": "us-c1-a__us-c1-b"}},
            ("pd.csi.storage.gke.io", "projects/UNSPECIFIED/regions/us-c1/disks/d"),
        ),
        ({"azure_disk": {"diskURI": "/sub/x/disk"}}, ("disk.csi.azure.com", "/sub/x/disk")),
        ({"cinder": {"volumeID": "c-1"}}, ("cinder.csi.openstack.org", "c-1")),
        ({"host_path": {"path": "/tmp"}}, None),
    ],
)
def test_csi_migration_translation(source: dict[str, Any], want: tuple[str, str] | None) -> None:
    assert csi_source(pv("x", **source)) == want


@pytest.mark.asyncio
async def test_a_finished_pod_no_longer_needs_its_volume() -> None:
    """Upstream's desired state drops a terminated pod's volumes: the attachment is deleted."""
    async with world() as c:
        c.server.create(pv("pv-1", csi=CSIPersistentVolumeSource(driver="ebs.csi.aws.com", volume_handle="vol-1")))
        c.server.create(claim("data"))
        bind(c, "data", "pv-1")
        c.server.create(user("job", "data", "node-0"))
        await c.at(2.0)
        assert len(attachments(c)) == 1
        p = c.pod("job", "default")
        c.server.update_status(replace(p, status=replace(p.status, phase="Succeeded")))
        await c.at(3.0)
        assert attachments(c) == {}


@pytest.mark.asyncio
async def test_an_attachment_made_by_someone_else_later_is_left_alone() -> None:
    """Upstream's actual state holds what it attached and what it found at start-up only."""
    async with world() as c:
        c.server.create(pv("pv-1", csi=CSIPersistentVolumeSource(driver="ebs.csi.aws.com", volume_handle="vol-1")))
        await c.at(2.0)
        c.server.create(
            VolumeAttachment(
                metadata=ObjectMeta(name="va-a"),
                spec=VolumeAttachmentSpec(
                    attacher="ebs.csi.aws.com",
                    source=VolumeAttachmentSource(persistent_volume_name="pv-1"),
                    node_name="node-0",
                ),
            )
        )
        c.server.create(claim("data"))
        bind(c, "data", "pv-1")
        c.server.create(user("app", "data", "node-1"))
        await c.at(3.0)
        assert sorted(a.spec.node_name for a in attachments(c).values()) == ["node-0", "node-1"]
