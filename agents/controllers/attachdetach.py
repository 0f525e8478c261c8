"""``AttachDetachController``: upstream's ``pkg/controller/volume/attachdetach`` for CSI volumes,
client ``controller:attachdetach-controller``.

Desired state of world, per node: every PersistentVolume that a pod scheduled there (not
Succeeded or Failed) reaches through a ``persistentVolumeClaim`` or a generic ephemeral volume
(claim ``<pod>-<volume>``), when the claim is Bound (``Bound`` phase and a ``volumeName``) to a
PV whose ``claimRef`` has the claim's UID, the PV is a CSI volume (its own ``spec.csi`` or an
in-tree source translated by CSI migration, ``emulator.base.api.csimigration``), and its driver
needs attaching: a CSIDriver with ``attachRequired: false`` skips it; no CSIDriver object means
attach required, as upstream's CSI plugin decides. Actual state: the VolumeAttachments of that
node (``spec.nodeName``) naming a PV that this controller created or found when it started
watching them (upstream's ``processVolumeAttachments`` at start-up); a VolumeAttachment someone
else creates later is not this controller's and is left alone, as upstream leaves it.

A node's sync makes the actual state the desired one: a missing VolumeAttachment is created as
upstream's CSI attacher creates it, named ``csi-<sha256(volumeHandle + driver + node)>``
(``getAttachmentName``), ``spec.attacher`` the driver, ``source.persistentVolumeName`` the PV,
``nodeName``; one no pod of the node needs any more is deleted. Setting ``status.attached`` is the
driver's external attacher's (not this controller's).

Simplifications (documented): upstream's reconciler runs every 100 ms over both states and
detaches only once the kubelet reports the volume unmounted (``node.status.volumesInUse``) or 6
minutes passed; here a node is synced on the events that change either state and a volume is
detached as soon as no pod of the node needs it (the kubelet here has no unmount phase). Every
node counts as controller-managed (the kubelet's ``controller-managed-attach-detach``
annotation, on by default). ``node.status.volumesAttached`` is not written, and no
``SuccessfulAttachVolume``/``FailedAttachVolume`` Events are recorded. Inline CSI volumes in
pods are not attached.

Cost: PersistentVolumes are watched through this controller's own client from the start; pods,
claims, CSIDrivers and VolumeAttachments (shared informers) only from the first PV on, so a run
without PersistentVolumes never pays for them.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from agents.controllers.context import ControllerContext
from agents.controllers.workqueue import WorkQueue
from emulator.base.api.core import Pod
from emulator.base.api.csimigration import attachment_name, csi_source
from emulator.base.api.errors import AlreadyExists, ApiError, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.storage import (
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeAttachment,
    VolumeAttachmentSource,
    VolumeAttachmentSpec,
    pod_claim_names,
)
from emulator.base.client.informer import Informer

__all__ = ["NAME", "AttachDetachController", "pod_claim_names"]

NAME: Final = "attachdetach-controller"
NODE_INDEX: Final = "spec.nodeName"
CLAIM_INDEX: Final = "claims"
VA_NODE_INDEX: Final = "va.nodeName"


def _node_of(pod: Pod) -> list[str]:
    return [pod.spec.node_name] if pod.spec.node_name and pod_claim_names(pod) else []


def _claims_of(pod: Pod) -> list[str]:
    return [f"{pod.metadata.namespace}/{c}" for c in pod_claim_names(pod)]


def _va_node(va: VolumeAttachment) -> list[str]:
    return [va.spec.node_name] if va.spec.source.persistent_volume_name else []


class AttachDetachController:
    """Creates and deletes VolumeAttachments; ``await run()`` until cancelled."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.informers = ctx.informers
        self.client = ctx.client(NAME)
        self.queue: WorkQueue[str] = WorkQueue(ctx.clock, self.client.name)
        self.pvs = Informer(self.client, "PersistentVolume")
        self.pods: Informer | None = None
        self.claims: Informer | None = None
        self.drivers: Informer | None = None
        self.attachments: Informer | None = None
        self.counts = dict.fromkeys(("syncs", "attached", "detached", "errors"), 0)
        self._actual: set[str] = set()
        """Names of the VolumeAttachments in the actual state of world."""

    def statistics(self) -> dict[str, Any]:
        return {**self.counts, "queue": len(self.queue)} if self.counts["syncs"] else {}

    async def run(self) -> None:
        self.pvs.add_handlers(self._on_pv, lambda _old, new: self._on_pv(new), self._on_pv)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.pvs.run(), name=f"{self.client.name}:PersistentVolume")
            self.queue.run_workers(tg, 1, self._process)

    # --- watches ------------------------------------------------------------------------

    def _watch(self) -> None:
        if self.pods is not None:
            return
        handlers = self.informers.handlers
        self.claims = handlers("PersistentVolumeClaim", self._on_claim, lambda _o, n: self._on_claim(n), self._on_claim)
        self.drivers = handlers("CSIDriver", self._on_driver, lambda _o, _n: self._on_driver(_n), self._on_driver)
        self.attachments = handlers(
            "VolumeAttachment",
            self._on_attachment_add,
            lambda _o, n: self._on_attachment(n),
            self._on_attachment_delete,
            indexers={VA_NODE_INDEX: _va_node},
        )
        self.pods = handlers(
            "Pod",
            self._on_pod,
            self._on_pod_update,
            self._on_pod,
            indexers={NODE_INDEX: _node_of, CLAIM_INDEX: _claims_of},
        )

    def _on_pv(self, pv: PersistentVolume) -> None:
        self._watch()
        ref = pv.spec.claim_ref
        if ref is not None:
            self._queue_claim_users(ref.namespace, ref.name)

    def _queue_claim_users(self, namespace: str, name: str) -> None:
        if self.pods is None:
            return
        for pod in self.pods.by_index(CLAIM_INDEX, f"{namespace}/{name}"):
            if pod.spec.node_name:
                self.queue.add(pod.spec.node_name)

    def _on_claim(self, claim: PersistentVolumeClaim) -> None:
        self._queue_claim_users(claim.metadata.namespace, claim.metadata.name)

    def _on_driver(self, _driver: Any) -> None:
        if self.pods is not None:
            for node in self.pods.index_values(NODE_INDEX):
                self.queue.add(node)

    def _on_attachment_add(self, va: VolumeAttachment) -> None:
        if self.attachments is None or not self.attachments.synced.is_set():
            self._actual.add(va.metadata.name)  # found at start-up
        self._on_attachment(va)

    def _on_attachment_delete(self, va: VolumeAttachment) -> None:
        self._actual.discard(va.metadata.name)
        self._on_attachment(va)

    def _on_attachment(self, va: VolumeAttachment) -> None:
        if va.spec.source.persistent_volume_name:
            self.queue.add(va.spec.node_name)

    def _on_pod(self, pod: Pod) -> None:
        for node in _node_of(pod):
            self.queue.add(node)

    def _on_pod_update(self, old: Pod, new: Pod) -> None:
        if old.spec.node_name != new.spec.node_name or old.status.phase != new.status.phase:
            self._on_pod(old)
            self._on_pod(new)

    # --- sync -----------------------------------------------------------------------------

    async def _process(self, node: str) -> None:
        self.counts["syncs"] += 1
        if not await self.queue.process(node, self._sync, (ApiError,)):
            self.counts["errors"] += 1

    def _attach_required(self, driver: str) -> bool:
        assert self.drivers is not None
        obj = self.drivers.store.get(("", driver))
        return obj is None or obj.spec.attach_required is not False

    def _volume(self, namespace: str, claim_name: str) -> PersistentVolume | None:
        """The PV a claim is bound to, or None while it is not (upstream ``getPVCFromCache``
        then ``getPVSpecFromCache``)."""
        assert self.claims is not None
        claim: PersistentVolumeClaim | None = self.claims.store.get((namespace, claim_name))
        if claim is None or claim.status.phase != "Bound" or not claim.spec.volume_name:
            return None
        pv: PersistentVolume | None = self.pvs.store.get(("", claim.spec.volume_name))
        if pv is None or pv.spec.claim_ref is None or pv.spec.claim_ref.uid != claim.metadata.uid:
            return None
        return pv

    def desired(self, node: str) -> dict[str, VolumeAttachment]:
        """The VolumeAttachments the pods of ``node`` need, by name."""
        assert self.pods is not None
        want: dict[str, VolumeAttachment] = {}
        for pod in self.pods.by_index(NODE_INDEX, node):
            if pod.status.phase in ("Succeeded", "Failed"):
                continue
            for claim in pod_claim_names(pod):
                pv = self._volume(pod.metadata.namespace, claim)
                source = None if pv is None else csi_source(pv)
                if pv is None or source is None or not self._attach_required(source[0]):
                    continue
                driver, handle = source
                name = attachment_name(handle, driver, node)
                want[name] = VolumeAttachment(
                    metadata=ObjectMeta(name=name),
                    spec=VolumeAttachmentSpec(
                        attacher=driver,
                        source=VolumeAttachmentSource(persistent_volume_name=pv.metadata.name),
                        node_name=node,
                    ),
                )
        return want

    async def _sync(self, node: str) -> None:
        assert self.pods is not None
        assert self.claims is not None
        assert self.drivers is not None
        assert self.attachments is not None
        for informer in (self.pvs, self.pods, self.claims, self.drivers, self.attachments):
            await informer.synced.wait()
        want = self.desired(node)
        have = {va.metadata.name: va for va in self.attachments.by_index(VA_NODE_INDEX, node)}
        for name in sorted(want):
            if name not in have:
                try:
                    await self.client.create(want[name])
                except AlreadyExists:
                    continue
                self._actual.add(name)
                self.counts["attached"] += 1
        for name in sorted(have):
            va = have[name]
            if name in want or name not in self._actual or va.metadata.deletion_timestamp is not None:
                continue
            try:
                await self.client.delete("VolumeAttachment", name, "", uid=va.metadata.uid)
            except NotFound:
                continue
            self._actual.discard(name)
            self.counts["detached"] += 1
