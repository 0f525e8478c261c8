"""The storage-object-in-use protection controllers (upstream ``pkg/controller/volume/pvcprotection``
and ``pvprotection``), clients ``controller:pvc-protection`` and ``controller:pv-protection``.

The API server adds the finalizers on create (the ``StorageObjectInUseProtection`` admission,
``emulator/base/apiserver/registry/storage.py``); these controllers add a missing one to a
live object and remove it from an object being deleted once nothing uses it:

- a claim is in use while a pod of its namespace that is scheduled (``nodeName`` set) and
  not terminated (phase neither Succeeded nor Failed) names it in a ``persistentVolumeClaim``
  volume, or through an ``ephemeral`` volume (the claim ``<pod>-<volume>``);
- a volume is in use while its phase is ``Bound``.

Each watches through its own client, the claim controller the pods only from the first claim
on (a run without claims never opens that watch).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, ClassVar, Final

from msgspec.structs import replace

from agents.controllers.context import ControllerContext
from agents.controllers.workqueue import WorkQueue
from emulator.base.api.core import Pod
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.storage import (
    PV_PROTECTION_FINALIZER,
    PVC_PROTECTION_FINALIZER,
    PersistentVolume,
    PersistentVolumeClaim,
    pod_claim_names,
)
from emulator.base.client.informer import Informer

__all__ = ["PVCProtectionController", "PVProtectionController", "claims_of_pod"]

Key = tuple[str, str]


def claims_of_pod(pod: Pod) -> list[str]:
    """The claims ``pod`` uses (its ``persistentVolumeClaim`` and ephemeral volumes), in
    volume order; none while it is unscheduled or terminated."""
    if not pod.spec.node_name or pod.status.phase in ("Succeeded", "Failed"):
        return []
    return pod_claim_names(pod)


class _Protection:
    """One kind's finalizer: add it to live objects, remove it when deletion may proceed."""

    NAME: ClassVar[str]
    KIND: ClassVar[str]
    FINALIZER: ClassVar[str]

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client(self.NAME)
        self.clock = ctx.clock
        self.queue: WorkQueue[Key] = WorkQueue(ctx.clock, self.client.name)
        self.ready = asyncio.Event()
        self.counts = {"added": 0, "removed": 0, "errors": 0}
        self.objects: Informer | None = None
        self._tg: asyncio.TaskGroup | None = None

    def statistics(self) -> dict[str, Any]:
        return dict(self.counts) if self.objects is not None and self.objects.store else {}

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            self.objects = Informer(self.client, self.KIND)
            self.objects.add_handlers(self.on_object, lambda _old, new: self.on_object(new))
            tg.create_task(self.objects.run(), name=f"{self.client.name}:{self.KIND}")
            self.queue.run_workers(tg, 1, self._process)
            await self.objects.synced.wait()
            self.ready.set()

    def on_object(self, obj: Any) -> None:
        meta = obj.metadata
        wants = meta.deletion_timestamp is None and self.FINALIZER not in meta.finalizers
        if wants or (meta.deletion_timestamp is not None and self.FINALIZER in meta.finalizers):
            self.queue.add((meta.namespace, meta.name))

    async def _process(self, key: Key) -> None:
        if await self.queue.process(key, self.sync, (ApiError,)):
            return
        self.counts["errors"] += 1

    async def sync(self, key: Key) -> None:
        assert self.objects is not None
        obj = self.objects.get(key[1], key[0])
        if obj is None:
            return
        meta = obj.metadata
        if meta.deletion_timestamp is None:
            if self.FINALIZER not in meta.finalizers:
                await self._write(obj, [*meta.finalizers, self.FINALIZER])
                self.counts["added"] += 1
            return
        if self.FINALIZER in meta.finalizers and not await self.in_use(obj):
            await self._write(obj, [f for f in meta.finalizers if f != self.FINALIZER])
            self.counts["removed"] += 1

    async def _write(self, obj: Any, finalizers: list[str]) -> None:
        with contextlib.suppress(NotFound):
            await self.client.update(replace(obj, metadata=replace(obj.metadata, finalizers=finalizers)))

    async def in_use(self, obj: Any) -> bool:
        raise NotImplementedError


class PVCProtectionController(_Protection):
    NAME: ClassVar[str] = "pvc-protection"
    KIND: ClassVar[str] = "PersistentVolumeClaim"
    FINALIZER: ClassVar[str] = PVC_PROTECTION_FINALIZER

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.pods: Informer | None = None

    def on_object(self, obj: Any) -> None:
        if self.pods is None and self._tg is not None:
            self.pods = Informer(self.client, "Pod")
            self.pods.add_handlers(None, self.on_pod_update, self.on_pod)
            self._tg.create_task(self.pods.run(), name=f"{self.client.name}:Pod")
        super().on_object(obj)

    def on_pod(self, pod: Pod) -> None:
        """A pod deleted (or done with its claims): its claims being deleted may go."""
        self._queue_claims(pod, pod_claim_names(pod))

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if claims_of_pod(old) and not claims_of_pod(new):
            self._queue_claims(new, claims_of_pod(old))

    def _queue_claims(self, pod: Pod, names: list[str]) -> None:
        assert self.objects is not None
        for name in names:
            claim = self.objects.get(name, pod.metadata.namespace)
            if claim is not None and claim.metadata.deletion_timestamp is not None:
                self.queue.add((pod.metadata.namespace, name))

    async def in_use(self, obj: PersistentVolumeClaim) -> bool:
        """Upstream asks its pod informer, then the API server (the cache may lag): here the
        API server's pods of the namespace."""
        pods, _ = await self.client.list("Pod", namespace=obj.metadata.namespace)
        return any(obj.metadata.name in claims_of_pod(p) for p in pods)


class PVProtectionController(_Protection):
    NAME: ClassVar[str] = "pv-protection"
    KIND: ClassVar[str] = "PersistentVolume"
    FINALIZER: ClassVar[str] = PV_PROTECTION_FINALIZER

    async def in_use(self, obj: PersistentVolume) -> bool:
        return obj.status.phase == "Bound"


PROTECTION_CONTROLLERS: Final = (PVCProtectionController, PVProtectionController)
