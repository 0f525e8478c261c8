"""A pod's claim volumes, as upstream's kubelet volume manager waits for them
(``getPVCExtractPV``, ``WaitForAttachAndMount``): a missing or unbound claim keeps the pod
``ContainerCreating`` with upstream's ``FailedMount`` Events; it starts once the claim is bound
(written by hand, as the PV controller would) and, for an attachable CSI volume, its
VolumeAttachment is attached (written by hand, as the driver's attacher would). Woken by the
watched objects' events: no polling."""

from __future__ import annotations

import asyncio

import pytest
from msgspec.structs import replace

from emulator.base.api.codec import convert
from emulator.base.api.core import Event, Pod
from emulator.base.api.csimigration import attachment_name
from emulator.base.api.errors import NotFound
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.storage import (
    CSIPersistentVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    VolumeAttachment,
    VolumeAttachmentSource,
    VolumeAttachmentSpec,
)
from emulator.base.api.volumes import PersistentVolumeClaimSpec, VolumeResourceRequirements
from tests.kubelet.test_kubelet import NODE, PULLING, World, world


def _pod(name: str, claim: str) -> Pod:
    return convert(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "nodeName": NODE,
                "containers": [{"name": "app", "image": "nginx:1.27"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
            },
        },
        Pod,
    )


def _events(w: World, reason: str) -> list[tuple[float, str]]:
    return [
        (r.time, r.new.message)
        for r in w.cluster.writes
        if r.kind == "Event" and r.verb == "create" and isinstance(r.new, Event) and r.new.reason == reason
    ]


def _claim(name: str) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            storage_class_name="",
            resources=VolumeResourceRequirements(requests={"storage": parse_quantity("1Gi")}),
        ),
    )


def _bind(w: World, claim: str, volume: str, driver: str = "ebs.csi.aws.com") -> None:
    server = w.cluster.server
    pvc = server.get("PersistentVolumeClaim", claim, "default")
    ref = ObjectReference(kind="PersistentVolumeClaim", namespace="default", name=claim, uid=pvc.metadata.uid)
    server.create(
        PersistentVolume(
            metadata=ObjectMeta(name=volume),
            spec=PersistentVolumeSpec(
                capacity={"storage": parse_quantity("1Gi")},
                access_modes=["ReadWriteOnce"],
                claim_ref=ref,
                csi=CSIPersistentVolumeSource(driver=driver, volume_handle=f"h-{volume}"),
            ),
        )
    )
    pvc = server.update(replace(pvc, spec=replace(pvc.spec, volume_name=volume)))
    server.update_status(replace(pvc, status=replace(pvc.status, phase="Bound")))


def _attach(w: World, volume: str, *, attached: bool, driver: str = "ebs.csi.aws.com") -> None:
    server = w.cluster.server
    name = attachment_name(f"h-{volume}", driver, NODE)
    va = VolumeAttachment(
        metadata=ObjectMeta(name=name),
        spec=VolumeAttachmentSpec(
            attacher=driver, source=VolumeAttachmentSource(persistent_volume_name=volume), node_name=NODE
        ),
    )
    try:
        got = server.get("VolumeAttachment", name)
    except NotFound:
        got = server.create(va)
    server.update_status(replace(got, status=replace(got.status, attached=attached)))


@pytest.mark.asyncio
async def test_a_missing_claim_keeps_the_pod_creating_with_upstreams_event() -> None:
    async with world(PULLING) as w:
        w.server.create(_pod("db-0", "data-db-0"))
        await w.at(200)
        assert w.pod("db-0").status.phase == "Pending"
        (first, *rest) = _events(w, "FailedMount")
        assert first == (
            0.0,
            "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to "
            "process volumes=[data]: error processing PVC default/data-db-0: failed to fetch PVC from API "
            'server: persistentvolumeclaims "data-db-0" not found',
        )
        assert rest == [], "the same error is not reported again until it changes"
        w.server.create(_claim("data-db-0"))
        await w.at(201)
        assert _events(w, "FailedMount")[-1][1].endswith("error processing PVC default/data-db-0: PVC is not bound")
        assert w.pod("db-0").status.phase == "Pending"


@pytest.mark.asyncio
async def test_the_pod_starts_once_the_claim_is_bound_and_the_volume_attached() -> None:
    async with world(PULLING) as w:
        w.server.create(_claim("data"))
        w.server.create(_pod("app", "data"))
        await w.at(10)
        assert w.pod("app").status.phase == "Pending"
        _bind(w, "data", "pv-1")
        await w.at(20)
        assert w.pod("app").status.phase == "Pending", "bound, not attached"
        _attach(w, "pv-1", attached=False)
        await w.at(140)
        assert w.pod("app").status.phase == "Pending"
        timed_out = [m for _, m in _events(w, "FailedMount") if m.endswith("timed out waiting for the condition")]
        assert timed_out == [
            "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data], "
            "failed to process volumes=[]: timed out waiting for the condition"
        ]
        _attach(w, "pv-1", attached=True)
        await w.at(160)
        # attached at 140 s, then the 5 s pull and the 1 s start
        assert w.when("app", "Running") == 146.0


@pytest.mark.asyncio
async def test_a_pod_without_claims_opens_no_watch() -> None:
    async with world(PULLING) as w:
        w.server.create(
            convert(
                {
                    "metadata": {"name": "plain", "namespace": "default"},
                    "spec": {"nodeName": NODE, "containers": [{"name": "app", "image": "nginx:1.27"}]},
                },
                Pod,
            )
        )
        await w.at(10)
        assert w.pod("plain").status.phase == "Running"
        assert w.kubelet._volumes.waits == 0


@pytest.mark.asyncio
async def test_a_pod_deleted_while_it_waits_closes_its_watches() -> None:
    async with world(PULLING) as w:
        w.server.create(_pod("db-0", "data-db-0"))
        await w.at(5)
        watching = [t.get_name() for t in asyncio.all_tasks() if ":volumes:" in t.get_name()]
        assert watching, "the claim is watched while the pod waits"
        w.server.delete("Pod", "db-0", "default", grace_period_seconds=0)
        await w.at(40)
        assert [t.get_name() for t in asyncio.all_tasks() if ":volumes:" in t.get_name()] == []
