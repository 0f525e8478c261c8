"""The PersistentVolume controller (upstream ``pkg/controller/volume/persistentvolume``,
``pv_controller.go`` and ``pv_controller_base.go``), client ``controller:persistentvolume-binder``,
Events as ``persistentvolume-controller``.

A claim sync (``syncClaim``) binds an unbound claim: to the volume it names
(``spec.volumeName``), or to the best match (``pvutil.find_best_match``: a volume pre-bound to
it, else the smallest Available one of its class, access modes, volume mode and selector);
a claim of a ``WaitForFirstConsumer`` class is matched only to a volume pre-bound to it (the
scheduler's binder sets ``claimRef``) and otherwise waits for the scheduler's
``volume.kubernetes.io/selected-node`` (Event ``WaitForFirstConsumer``). With no volume and a
class, provisioning is handed to the class's external provisioner: the claim gets
``volume.kubernetes.io/storage-provisioner`` and its beta twin and an ``ExternalProvisioning``
Event (an in-tree provisioner name is translated to its CSI driver, as CSI migration does).
The two-sided bind (``bind``) writes, in upstream's order, the volume's ``claimRef`` (and
``pv.kubernetes.io/bound-by-controller`` when the controller chose it), its phase ``Bound``,
the claim's ``volumeName`` with ``pv.kubernetes.io/bind-completed`` (and bound-by-controller
when it chose), then the claim's status (``Bound``, access modes, capacity). A bound claim
whose volume went away or names another claim becomes ``Lost``.

A volume sync (``syncVolume``) keeps phases: ``Available`` when unclaimed (or pre-bound to a
claim not yet bound), ``Bound``; when its claim is gone, ``Released`` and the reclaim policy:
``Retain`` keeps it, ``Delete`` deletes it unless a provisioner made it
(``pv.kubernetes.io/provisioned-by``: the external provisioner deletes those). A phase
change stamps ``lastPhaseTransitionTime``.

Simplifications: a statically created volume with ``Delete`` is deleted by this controller
(upstream asks an in-tree deleter plugin, which the emulator has none of); ``Recycle`` is
treated as ``Retain``. Timing as upstream: a write error is not retried at once; every
claim and volume is synced again each ``SYNC_PERIOD`` (15 s, ``--pvclaimbinder-sync-period``)
on the injected clock, started with the first volume or claim, so a run without any pays
nothing. The controller watches through its own client (not the shared informers), so that
its lists never shift the shared client's seeded latency draws.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.context import ControllerContext
from agents.controllers.volume.cache import VersionedStore, VolumeStore
from agents.controllers.volume.handoff import ANN_MIGRATED_TO, IN_TREE_TO_CSI, external_message
from agents.controllers.volume.pvutil import (
    POD_CLAIM_INDEX,
    claim_class,
    claim_key,
    claim_ref,
    is_bound_to_claim,
    satisfy_problem,
    unscheduled_claims,
    volume_mode_mismatch,
)
from agents.controllers.workqueue import WorkQueue
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.meta import ObjectReference, reference_to
from emulator.base.api.storage import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from emulator.base.client.informer import Informer

__all__ = ["SYNC_PERIOD", "PersistentVolumeController"]

SYNC_PERIOD: Final = 15.0
"""Upstream ``--pvclaimbinder-sync-period`` default."""

Key = tuple[str, str]


def _annotate(obj: Any, **values: str) -> Any:
    ann = dict(obj.metadata.annotations)
    ann.update(values)
    return replace(obj, metadata=replace(obj.metadata, annotations=ann))


class PersistentVolumeController:
    """Binds claims to volumes, hands provisioning to provisioners, reclaims released volumes."""

    NAME: Final = "persistentvolume-binder"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client(self.NAME)
        self.clock = ctx.clock
        self.recorder = ctx.recorder(self.NAME, "persistentvolume-controller")
        self.volume_queue: WorkQueue[Key] = WorkQueue(ctx.clock, f"{self.client.name}:volumes")
        self.claim_queue: WorkQueue[Key] = WorkQueue(ctx.clock, f"{self.client.name}:claims")
        self.volumes = VolumeStore()
        self.claims: VersionedStore[PersistentVolumeClaim] = VersionedStore()
        self.classes: Informer | None = None
        self.pods: Informer | None = None
        """Pods by the claims they use while unscheduled, from the first claim on."""
        self.ready = asyncio.Event()
        self.counts = {"claimSyncs": 0, "volumeSyncs": 0, "errors": 0}
        self._tg: asyncio.TaskGroup | None = None
        self._resyncing = False

    def __repr__(self) -> str:
        return f"<PersistentVolumeController {self.counts}>"

    def statistics(self) -> dict[str, Any]:
        return dict(self.counts) if self._resyncing else {}

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            volumes = Informer(self.client, "PersistentVolume")
            claims = Informer(self.client, "PersistentVolumeClaim")
            self.classes = Informer(self.client, "StorageClass")
            volumes.add_handlers(self._volume_added, lambda _old, new: self._volume_added(new), self._volume_deleted)
            claims.add_handlers(self._claim_added, lambda _old, new: self._claim_added(new), self._claim_deleted)
            for inf in (volumes, claims, self.classes):
                tg.create_task(inf.run(), name=f"{self.client.name}:{inf.kind}")
            self.volume_queue.run_workers(tg, 1, self._sync_volume_key)
            self.claim_queue.run_workers(tg, 1, self._sync_claim_key)
            for inf in (volumes, claims, self.classes):
                await inf.synced.wait()
            self.ready.set()

    # --- informer handlers -----------------------------------------------------------------

    def _seen(self) -> None:
        if not self._resyncing and self._tg is not None:
            self._resyncing = True
            self._tg.create_task(self._resync(), name=f"{self.client.name}:resync")

    def _volume_added(self, volume: PersistentVolume) -> None:
        self._seen()
        if self.volumes.store(volume):
            self.volume_queue.add(("", volume.metadata.name))

    def _volume_deleted(self, volume: PersistentVolume) -> None:
        self.volumes.delete(volume)
        ref = volume.spec.claim_ref
        if ref is not None and self.claims.get(ref.name, ref.namespace) is not None:
            self.claim_queue.add((ref.namespace, ref.name))

    def _claim_added(self, claim: PersistentVolumeClaim) -> None:
        self._seen()
        if self.pods is None and self._tg is not None:
            self.pods = Informer(self.client, "Pod")
            self.pods.add_indexers({POD_CLAIM_INDEX: unscheduled_claims})
            self._tg.create_task(self.pods.run(), name=f"{self.client.name}:Pod")
        if self.claims.store(claim):
            self.claim_queue.add((claim.metadata.namespace, claim.metadata.name))

    def _claim_deleted(self, claim: PersistentVolumeClaim) -> None:
        """Upstream ``deleteClaim``: sync the claim's volume now, not at the next resync."""
        self.claims.delete(claim)
        name = claim.spec.volume_name
        if name and self.volumes.get(name) is not None:
            self.volume_queue.add(("", name))

    async def _resync(self) -> None:
        """Upstream ``resync``: every claim and volume is queued again each period."""
        while True:
            await self.clock.sleep(SYNC_PERIOD)
            for key in self.claims.keys():  # noqa: SIM118 (sorted keys)
                self.claim_queue.add(key)
            for key in self.volumes.keys():  # noqa: SIM118 (sorted keys)
                self.volume_queue.add(key)

    async def _sync_claim_key(self, key: Key) -> None:
        claim = self.claims.get(key[1], key[0])
        if claim is None:
            return
        self.counts["claimSyncs"] += 1
        try:
            await self.sync_claim(claim)
        except ApiError:
            self.counts["errors"] += 1  # upstream logs it; the next resync retries

    async def _sync_volume_key(self, key: Key) -> None:
        volume = self.volumes.get(key[1])
        if volume is None:
            return
        self.counts["volumeSyncs"] += 1
        try:
            await self.sync_volume(volume)
        except ApiError:
            self.counts["errors"] += 1

    # --- syncClaim -------------------------------------------------------------------------

    async def sync_claim(self, claim: PersistentVolumeClaim) -> None:
        if ANN_BIND_COMPLETED not in claim.metadata.annotations:
            await self._sync_unbound_claim(claim)
        else:
            await self._sync_bound_claim(claim)

    def _class(self, claim: PersistentVolumeClaim) -> StorageClass | None:
        name = claim_class(claim)
        return None if not name or self.classes is None else self.classes.get(name)

    def _delay_binding(self, claim: PersistentVolumeClaim) -> bool:
        """``IsDelayBindingMode``: the claim's class binds WaitForFirstConsumer."""
        sc = self._class(claim)
        return sc is not None and sc.volume_binding_mode == "WaitForFirstConsumer"

    async def _sync_unbound_claim(self, claim: PersistentVolumeClaim) -> None:
        if not claim.spec.volume_name:
            delay = self._delay_binding(claim)
            volume = self.volumes.find(claim, delay_binding=delay)
            if volume is not None:
                await self.bind(volume, claim)
                return
            if delay and ANN_SELECTED_NODE not in claim.metadata.annotations:
                await self._event(claim, "Normal", *self._delay_binding_event(claim))
            elif claim_class(claim):
                await self.provision_claim(claim)
                return
            else:
                msg = "no persistent volumes available for this claim and no storage class is set"
                await self._event(claim, "Normal", "FailedBinding", msg)
            await self._claim_status(claim, "Pending", None)
            return
        volume = self.volumes.get(claim.spec.volume_name)
        if volume is None:  # the named volume does not exist (yet): retry at the next sync
            await self._claim_status(claim, "Pending", None)
        elif volume.spec.claim_ref is None:
            if problem := satisfy_problem(volume, claim):
                msg = f'Cannot bind to requested volume "{volume.metadata.name}": {problem}'
                await self._event(claim, "Warning", "VolumeMismatch", msg)
                await self._claim_status(claim, "Pending", None)
            else:
                await self.bind(volume, claim)
        elif is_bound_to_claim(volume, claim):
            await self.bind(volume, claim)
        elif ANN_BOUND_BY_CONTROLLER not in claim.metadata.annotations:
            await self._claim_status(claim, "Pending", None)  # asked for a volume claimed by another

    async def _sync_bound_claim(self, claim: PersistentVolumeClaim) -> None:
        if not claim.spec.volume_name:
            msg = "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!"
            await self._claim_status(claim, "Lost", None, ("Warning", "ClaimLost", msg))
            return
        volume = self.volumes.get(claim.spec.volume_name)
        if volume is None:
            msg = "Bound claim has lost its PersistentVolume. Data on the volume is lost!"
            await self._claim_status(claim, "Lost", None, ("Warning", "ClaimLost", msg))
        elif volume.spec.claim_ref is None or volume.spec.claim_ref.uid == claim.metadata.uid:
            await self.bind(volume, claim)
        else:
            msg = "Two claims are bound to the same volume, this one is bound incorrectly"
            await self._claim_status(claim, "Lost", None, ("Warning", "ClaimMisbound", msg))

    def _delay_binding_event(self, claim: PersistentVolumeClaim) -> tuple[str, str]:
        """``emitEventForUnboundDelayBindingClaim``: the unscheduled pods using the claim,
        if any, else the first consumer is awaited."""
        pods = self.pods
        names = (
            [] if pods is None else sorted(p.metadata.name for p in pods.by_index(POD_CLAIM_INDEX, claim_key(claim)))
        )
        if not names:
            return "WaitForFirstConsumer", "waiting for first consumer to be created before binding"
        if len(names) == 1:
            return "WaitForPodScheduled", f"waiting for pod {names[0]} to be scheduled"
        return "WaitForPodScheduled", f"waiting for pods {','.join(names)} to be scheduled"

    # --- provisioning hand-off -------------------------------------------------------------

    async def provision_claim(self, claim: PersistentVolumeClaim) -> None:
        """``provisionClaim`` for an external provisioner: annotate the claim, tell the user."""
        name = claim_class(claim)
        sc = self._class(claim)
        if sc is None:
            msg = f'storageclass.storage.k8s.io "{name}" not found'
            await self._event(claim, "Warning", "ProvisioningFailed", msg)
            return
        provisioner = IN_TREE_TO_CSI.get(sc.provisioner, sc.provisioner)
        ann = claim.metadata.annotations
        wanted = {ANN_STORAGE_PROVISIONER: provisioner, ANN_BETA_STORAGE_PROVISIONER: provisioner}
        if provisioner != sc.provisioner:
            wanted[ANN_MIGRATED_TO] = provisioner
        if any(ann.get(k) != v for k, v in wanted.items()):
            try:
                claim = await self._write_claim(_annotate(claim, **wanted))
            except ApiError as err:
                await self._event(claim, "Warning", "ProvisioningFailed", f"Error saving claim: {err}")
                raise
        await self._event(claim, "Normal", "ExternalProvisioning", external_message(provisioner))

    # --- syncVolume ------------------------------------------------------------------------

    async def sync_volume(self, volume: PersistentVolume) -> None:
        ref = volume.spec.claim_ref
        if ref is None or not ref.uid:
            await self._volume_phase(volume, "Available")
            return
        claim = self.claims.get(ref.name, ref.namespace)
        if (claim is None or claim.metadata.uid != ref.uid) and volume.status.phase not in ("Released", "Failed"):
            claim = await self._claim_from_server(ref)
        if claim is not None and claim.metadata.uid != ref.uid:
            claim = None
        if claim is None:
            if volume.status.phase not in ("Released", "Failed"):
                volume = await self._volume_phase(volume, "Released")
            await self.reclaim(volume)
        elif not claim.spec.volume_name:
            if volume_mode_mismatch(claim, volume):
                claim_name, volume_name = claim.metadata.name, volume.metadata.name
                msg = f'Cannot bind PersistentVolume to requested PersistentVolumeClaim "{claim_name}" '
                await self._event(volume, "Warning", "VolumeMismatch", msg + "due to incompatible volumeMode.")
                msg = f'Cannot bind PersistentVolume "{volume_name}" to requested PersistentVolumeClaim '
                await self._event(claim, "Warning", "VolumeMismatch", msg + "due to incompatible volumeMode.")
                return
            self.claim_queue.add((claim.metadata.namespace, claim.metadata.name))
        elif claim.spec.volume_name == volume.metadata.name:
            await self._volume_phase(volume, "Bound")
        elif ANN_DYNAMICALLY_PROVISIONED in volume.metadata.annotations and (
            volume.spec.persistent_volume_reclaim_policy == "Delete"
        ):
            if volume.status.phase not in ("Released", "Failed"):
                volume = await self._volume_phase(volume, "Released")
            await self.reclaim(volume)
        elif ANN_BOUND_BY_CONTROLLER in volume.metadata.annotations:
            await self._unbind(volume)
        else:
            await self._volume_phase(volume, "Bound")

    async def _claim_from_server(self, ref: ObjectReference) -> PersistentVolumeClaim | None:
        """Upstream double-checks the API server before releasing a volume (a provisioner's
        or the scheduler's claim may not have reached the cache yet)."""
        try:
            claim: PersistentVolumeClaim = await self.client.get("PersistentVolumeClaim", ref.name, ref.namespace)
        except NotFound:
            return None
        self.claims.store(claim)
        return claim

    async def reclaim(self, volume: PersistentVolume) -> None:
        """``reclaimVolume``: Retain keeps the volume, Delete deletes it (a provisioned one is
        left to its provisioner), an unknown policy fails it."""
        policy = volume.spec.persistent_volume_reclaim_policy
        if policy in ("Retain", "Recycle"):
            return
        if policy != "Delete":
            msg = "Volume has unrecognized PersistentVolumeReclaimPolicy"
            await self._volume_phase(volume, "Failed", ("Warning", "VolumeUnknownReclaimPolicy", msg))
            return
        if ANN_DYNAMICALLY_PROVISIONED in volume.metadata.annotations or volume.metadata.deletion_timestamp:
            return  # the external provisioner deletes it
        with contextlib.suppress(NotFound):
            await self.client.delete("PersistentVolume", volume.metadata.name, uid=volume.metadata.uid)

    async def _unbind(self, volume: PersistentVolume) -> None:
        """``unbindVolume``: a volume the controller bound to a claim that went elsewhere."""
        ann = {k: v for k, v in volume.metadata.annotations.items() if k != ANN_BOUND_BY_CONTROLLER}
        spec = replace(volume.spec, claim_ref=None)
        volume = await self._write_volume(
            replace(volume, metadata=replace(volume.metadata, annotations=ann), spec=spec)
        )
        await self._volume_phase(volume, "Available")

    # --- the two-sided bind ----------------------------------------------------------------

    async def bind(self, volume: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        volume = await self._bind_volume(volume, claim)
        volume = await self._volume_phase(volume, "Bound")
        claim = await self._bind_claim(claim, volume)
        await self._claim_status(claim, "Bound", volume)

    async def _bind_volume(self, volume: PersistentVolume, claim: PersistentVolumeClaim) -> PersistentVolume:
        """``bindVolumeToClaim``: the claimRef (with the claim's UID), bound-by-controller
        when the volume was not pre-bound to this claim."""
        by_controller = not is_bound_to_claim(volume, claim)
        ref = volume.spec.claim_ref
        m = claim.metadata
        dirty = False
        if ref is None or (ref.name, ref.namespace, ref.uid) != (m.name, m.namespace, m.uid):
            volume = replace(volume, spec=replace(volume.spec, claim_ref=claim_ref(claim)))
            dirty = True
        if by_controller and ANN_BOUND_BY_CONTROLLER not in volume.metadata.annotations:
            volume = _annotate(volume, **{ANN_BOUND_BY_CONTROLLER: "yes"})
            dirty = True
        return await self._write_volume(volume) if dirty else volume

    async def _bind_claim(self, claim: PersistentVolumeClaim, volume: PersistentVolume) -> PersistentVolumeClaim:
        """``bindClaimToVolume``: ``volumeName`` (bound-by-controller when the controller
        chose the volume) and bind-completed."""
        dirty = False
        if claim.spec.volume_name != volume.metadata.name:
            claim = replace(claim, spec=replace(claim.spec, volume_name=volume.metadata.name))
            if ANN_BOUND_BY_CONTROLLER not in claim.metadata.annotations:
                claim = _annotate(claim, **{ANN_BOUND_BY_CONTROLLER: "yes"})
            dirty = True
        if ANN_BIND_COMPLETED not in claim.metadata.annotations:
            claim = _annotate(claim, **{ANN_BIND_COMPLETED: "yes"})
            dirty = True
        return await self._write_claim(claim) if dirty else claim

    # --- writes ----------------------------------------------------------------------------

    async def _write_volume(self, volume: PersistentVolume) -> PersistentVolume:
        out: PersistentVolume = await self.client.update(volume)
        self.volumes.store(out)
        return out

    async def _write_claim(self, claim: PersistentVolumeClaim) -> PersistentVolumeClaim:
        out: PersistentVolumeClaim = await self.client.update(claim)
        self.claims.store(out)
        return out

    async def _volume_phase(
        self, volume: PersistentVolume, phase: str, event: tuple[str, str, str] | None = None
    ) -> PersistentVolume:
        """``updateVolumePhase``: the phase (and its transition time when it changes)."""
        if volume.status.phase == phase:
            return volume
        status = replace(volume.status, phase=phase, last_phase_transition_time=self.clock.timestamp())
        out: PersistentVolume = await self.client.update_status(replace(volume, status=status))
        self.volumes.store(out)
        if event is not None:
            await self._event(out, *event)
        return out

    async def _claim_status(
        self,
        claim: PersistentVolumeClaim,
        phase: str,
        volume: PersistentVolume | None,
        event: tuple[str, str, str] | None = None,
    ) -> PersistentVolumeClaim:
        """``updateClaimStatus``: the phase; access modes and capacity from the volume (the
        capacity only as the claim becomes bound), cleared without one."""
        status = claim.status
        new = replace(status, phase=phase)
        if volume is None:
            new = replace(new, access_modes=[], capacity={})
        else:
            new = replace(new, access_modes=list(volume.spec.access_modes))
            cap = volume.spec.capacity.get("storage")
            if status.phase != phase and cap is not None and status.capacity.get("storage") != cap:
                new = replace(new, capacity=dict(volume.spec.capacity))
        if new == status:
            return claim
        out: PersistentVolumeClaim = await self.client.update_status(replace(claim, status=new))
        self.claims.store(out)
        if event is not None:
            await self._event(out, *event)
        return out

    async def _event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        await self.recorder.event(reference_to(obj), type_, reason, message)
