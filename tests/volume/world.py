"""The test world of the volume controllers and the CSI driver agent: a cluster on virtual
time with the PV controller and the protection controllers started as the manager starts
them, and builders of PVs, claims, classes (upstream's ``newVolume``/``newClaim`` shape)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from agents.controllers.manager import WorkloadController, start_workload_controllers
from emulator.base.api.core import LabelSelector
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.storage import (
    CSIPersistentVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeSpec,
    StorageClass,
    VolumeResourceRequirements,
)
from tests.cluster import Cluster, OnCluster, open_cluster

__all__ = ["VOLUME_CONTROLLERS", "World", "claim", "klass", "volume", "world"]

VOLUME_CONTROLLERS = ("persistentvolume-binder", "pvc-protection", "pv-protection")


def volume(
    name: str,
    size: str = "1Gi",
    *,
    modes: Sequence[str] = ("ReadWriteOnce",),
    cls: str = "",
    claim: str = "",
    claim_uid: str = "",
    policy: str = "Retain",
    labels: dict[str, str] | None = None,
    mode: str | None = None,
    annotations: dict[str, str] | None = None,
) -> PersistentVolume:
    ref = (
        ObjectReference(kind="PersistentVolumeClaim", namespace="default", name=claim, uid=claim_uid) if claim else None
    )
    return PersistentVolume(
        metadata=ObjectMeta(name=name, labels=labels or {}, annotations=annotations or {}),
        spec=PersistentVolumeSpec(
            capacity={"storage": parse_quantity(size)},
            access_modes=list(modes),
            claim_ref=ref,
            persistent_volume_reclaim_policy=policy,
            storage_class_name=cls,
            volume_mode=mode,
            csi=CSIPersistentVolumeSource(driver="static.csi", volume_handle=name),
        ),
    )


def claim(
    name: str,
    size: str = "1Gi",
    *,
    modes: Sequence[str] = ("ReadWriteOnce",),
    cls: str | None = "",
    volume_name: str = "",
    selector: dict[str, str] | None = None,
    mode: str | None = None,
    annotations: dict[str, str] | None = None,
) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace="default", annotations=annotations or {}),
        spec=PersistentVolumeClaimSpec(
            access_modes=list(modes),
            resources=VolumeResourceRequirements(requests={"storage": parse_quantity(size)}),
            storage_class_name=cls,
            volume_name=volume_name,
            selector=LabelSelector(match_labels=selector) if selector is not None else None,
            volume_mode=mode,
        ),
    )


def klass(
    name: str, provisioner: str = "ebs.csi.aws.com", *, wait: bool = False, policy: str = "Delete", **kw: Any
) -> StorageClass:
    return StorageClass(
        metadata=ObjectMeta(name=name),
        provisioner=provisioner,
        reclaim_policy=policy,
        volume_binding_mode="WaitForFirstConsumer" if wait else "Immediate",
        **kw,
    )


@dataclass
class World(OnCluster):
    cluster: Cluster
    controllers: list[WorkloadController]

    def pv(self, name: str) -> PersistentVolume | None:
        return next((v for v in self.server.list("PersistentVolume")[0] if v.metadata.name == name), None)

    def pvc(self, name: str) -> PersistentVolumeClaim | None:
        return next((c for c in self.server.list("PersistentVolumeClaim")[0] if c.metadata.name == name), None)

    def bindings(self) -> dict[str, tuple[str, str]]:
        """Claim → (volume name, phase) for every claim."""
        return {
            c.metadata.name: (c.spec.volume_name, c.status.phase) for c in self.server.list("PersistentVolumeClaim")[0]
        }

    def phases(self) -> dict[str, str]:
        return {v.metadata.name: v.status.phase for v in self.server.list("PersistentVolume")[0]}

    def events(self, reason: str | None = None) -> list[tuple[str, str, str]]:
        evs = self.server.list("Event")[0]
        return [(e.involved_object.name, e.reason, e.message) for e in evs if reason is None or e.reason == reason]


@asynccontextmanager
async def world(*objects: Any, names: Sequence[str] = VOLUME_CONTROLLERS) -> AsyncIterator[World]:
    async with open_cluster(namespaces=("default",)) as c:
        for obj in objects:
            c.server.create(obj)
        started: list[WorkloadController] = []
        ready = asyncio.Event()

        async def run() -> None:
            async with asyncio.TaskGroup() as tg:
                started.extend(start_workload_controllers(tg, c.clock, c.client, names))
                ready.set()

        c.spawn(run(), "controllers")
        await ready.wait()
        yield World(c, started)
