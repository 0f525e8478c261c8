"""The driver's external-provisioner (upstream ``kubernetes-csi/external-provisioner`` on
``sig-storage-lib-external-provisioner``).

It provisions a claim the PV controller handed to the driver (``volume.kubernetes.io/storage-provisioner``
or its beta twin = the driver's name), still unbound, of an existing StorageClass, and for a
``WaitForFirstConsumer`` class once the scheduler wrote ``volume.kubernetes.io/selected-node``:
Event ``Provisioning``, then after ``provisionDelay`` (the driver's seeded stream) the PV
``pvc-<claim uid>`` (``topology.build_volume``) and Event ``ProvisioningSucceeded``; the PV
controller then binds the two.

Where the volume lives: the selected node's segment (WaitForFirstConsumer), or for an Immediate
class a segment of the known nodes admitted by its ``allowedTopologies``, drawn from the
driver's stream among those with room (a driver places the volume; its PV's node affinity says
where). With capacity tracking, a segment without room for the request fails with
``ResourceExhausted`` (Event ``ProvisioningFailed``) and, for a selected node, the
annotation is removed so that the scheduler picks again (upstream's rescheduling). Failures are
retried after ``RETRY_AFTER``.

It deletes the volumes it provisioned once Released with reclaim policy ``Delete``.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from agents.csi.keyqueue import KeyQueue
from agents.csi.topology import Segment, allowed, build_volume, segment_of, volume_name
from emulator.base.api.errors import AlreadyExists, ApiError, NotFound
from emulator.base.api.storage import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    BETA_STORAGE_CLASS,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

if TYPE_CHECKING:
    from agents.csi.driver import CSIDriverAgent

__all__ = ["Provisioner"]

Key = tuple[str, str]


def _class_name(claim: PersistentVolumeClaim) -> str:
    return claim.metadata.annotations.get(BETA_STORAGE_CLASS, claim.spec.storage_class_name or "")


class ProvisioningError(Exception):
    """A provisioning attempt that failed: its Event message, and whether to reschedule."""

    def __init__(self, message: str, *, reschedule: bool = False) -> None:
        super().__init__(message)
        self.reschedule = reschedule


class Provisioner:
    def __init__(self, agent: CSIDriverAgent) -> None:
        self.agent = agent
        self.claims: KeyQueue[Key] = KeyQueue(agent.clock)
        self.volumes: KeyQueue[str] = KeyQueue(agent.clock)
        self.in_flight: set[Key] = set()

    def start(self) -> None:
        a = self.agent
        a.informer("PersistentVolumeClaim").add_handlers(self._claim, lambda _o, n: self._claim(n))
        a.informer("PersistentVolume").add_handlers(self._volume, lambda _o, n: self._volume(n), self._volume_gone)
        a.informer("StorageClass").add_handlers(lambda _c: a.capacity.changed(), None, lambda _c: a.capacity.changed())
        a.spawn(self.claims.run(self._sync_claim), "provisioner")
        a.spawn(self.volumes.run(self._sync_volume), "deleter")

    # --- claims -------------------------------------------------------------------------

    def _claim(self, claim: PersistentVolumeClaim) -> None:
        if self._wanted(claim) is not None:
            self.claims.add((claim.metadata.namespace, claim.metadata.name))

    def _wanted(self, claim: PersistentVolumeClaim) -> StorageClass | None:
        """The claim's class if the driver should provision the claim now, else None."""
        a = self.agent
        ann = claim.metadata.annotations
        if claim.metadata.deletion_timestamp is not None or claim.spec.volume_name:
            return None
        if a.name not in (ann.get(ANN_STORAGE_PROVISIONER), ann.get(ANN_BETA_STORAGE_PROVISIONER)):
            return None
        sc: StorageClass | None = a.informer("StorageClass").get(_class_name(claim))
        if sc is None:
            return None
        if sc.volume_binding_mode == "WaitForFirstConsumer" and not ann.get(ANN_SELECTED_NODE):
            return None
        if a.informer("PersistentVolume").get(volume_name(claim)) is not None:
            return None
        return sc

    async def _sync_claim(self, key: Key) -> None:
        if key in self.in_flight:
            return
        claim = self.agent.informer("PersistentVolumeClaim").get(key[1], key[0])
        if claim is None or self._wanted(claim) is None:
            return
        self.in_flight.add(key)
        self.agent.spawn(self._provision(key), f"provision:{key[0]}/{key[1]}")

    async def _provision(self, key: Key) -> None:
        a = self.agent
        claim = a.informer("PersistentVolumeClaim").get(key[1], key[0])
        try:
            if claim is None:
                return
            msg = f'External provisioner is provisioning volume for claim "{key[0]}/{key[1]}"'
            await a.event(claim, "Normal", "Provisioning", msg)
            await a.clock.sleep(a.settings.provision_delay.sample(a.rng))
            claim = a.informer("PersistentVolumeClaim").get(key[1], key[0])
            sc = None if claim is None else self._wanted(claim)
            if claim is None or sc is None:
                return
            try:
                segment = self._place(claim, sc)
                pv = build_volume(a.name, claim, sc, segment, a.settings.topology_keys)
                await a.client.create(pv)
            except AlreadyExists:
                return
            except (ProvisioningError, ApiError) as err:
                await self._failed(claim, sc, err)
                a.spawn(a.retry_later(self.claims, key), f"retry:provision:{key[0]}/{key[1]}")
                return
            a.counts["provisioned"] += 1
            a.capacity.provisioned(segment, pv)
            await a.event(
                claim, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {pv.metadata.name}"
            )
        finally:
            self.in_flight.discard(key)

    def _place(self, claim: PersistentVolumeClaim, sc: StorageClass) -> Segment:
        """The segment the new volume lives in (see the module docstring)."""
        a = self.agent
        keys = a.settings.topology_keys
        request = claim.spec.resources.requests.get("storage")
        size = 0 if request is None else request.value
        selected = claim.metadata.annotations.get(ANN_SELECTED_NODE, "")
        if sc.volume_binding_mode == "WaitForFirstConsumer":
            node = a.informer("Node").get(selected)
            segment = None if node is None else segment_of(node.metadata.labels, keys)
            if segment is None:
                raise ProvisioningError(f'node "{selected}" has no topology for {", ".join(keys)}', reschedule=True)
            if not a.capacity.fits(segment, size):
                raise ProvisioningError(
                    "rpc error: code = ResourceExhausted desc = not enough capacity in the topology segment",
                    reschedule=True,
                )
            return segment
        candidates = [s for s in a.capacity.segments() if allowed(s, keys, sc.allowed_topologies)]
        if not candidates:
            raise ProvisioningError("no topology segment of the cluster is allowed for the class")
        roomy = [s for s in candidates if a.capacity.fits(s, size)]
        if not roomy:
            raise ProvisioningError(
                "rpc error: code = ResourceExhausted desc = not enough capacity in any topology segment"
            )
        return roomy[0] if len(roomy) == 1 else a.rng.choice(roomy)

    async def _failed(self, claim: PersistentVolumeClaim, sc: StorageClass, err: Exception) -> None:
        a = self.agent
        msg = f'failed to provision volume with StorageClass "{sc.metadata.name}": {err}'
        await a.event(claim, "Warning", "ProvisioningFailed", msg)
        if isinstance(err, ProvisioningError) and err.reschedule and ANN_SELECTED_NODE in claim.metadata.annotations:
            ann = {k: v for k, v in claim.metadata.annotations.items() if k != ANN_SELECTED_NODE}
            with contextlib.suppress(ApiError):
                await a.client.update(replace(claim, metadata=replace(claim.metadata, annotations=ann)))

    # --- deletion -----------------------------------------------------------------------

    def _ours(self, volume: PersistentVolume) -> bool:
        return volume.metadata.annotations.get(ANN_DYNAMICALLY_PROVISIONED) == self.agent.name

    def _volume(self, volume: PersistentVolume) -> None:
        if not self._ours(volume):
            return
        self.agent.capacity.seen(volume)
        if volume.status.phase == "Released" and volume.spec.persistent_volume_reclaim_policy == "Delete":
            self.volumes.add(volume.metadata.name)

    def _volume_gone(self, volume: PersistentVolume) -> None:
        if self._ours(volume):
            self.agent.capacity.gone(volume)

    async def _sync_volume(self, name: str) -> None:
        a = self.agent
        volume: Any = a.informer("PersistentVolume").get(name)
        if volume is None or volume.metadata.deletion_timestamp is not None or volume.status.phase != "Released":
            return
        try:
            await a.client.delete("PersistentVolume", name, uid=volume.metadata.uid)
        except NotFound:
            return
        except ApiError:
            a.spawn(a.retry_later(self.volumes, name), f"retry:delete:{name}")
            return
        a.counts["deleted"] += 1
