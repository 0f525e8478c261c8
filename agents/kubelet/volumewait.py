"""A pod's claims, waited for before its containers start: upstream's kubelet volume manager
(``pkg/kubelet/volumemanager``: the desired-state populator's ``getPVCExtractPV`` and
``WaitForAttachAndMount``) for ``persistentVolumeClaim`` and generic ephemeral volumes
(claim ``<pod>-<volume>``, which must be controlled by the pod).

A claim volume is ready when its claim exists, is not being deleted, is ``Bound`` with a
``volumeName``, that PersistentVolume exists, and -- for a CSI volume (its own ``spec.csi`` or a
migrated in-tree source, ``emulator.base.api.csimigration``) whose driver needs attaching (a
CSIDriver with ``attachRequired: false`` does not; no CSIDriver object means it does) -- the
VolumeAttachment ``csi-<sha256(handle+driver+node)>`` has ``status.attached: true``. Mounting
adds no delay beyond the attach (simplification: no mount/unmount phase is modelled).

``VolumeWait.wait`` is called by the pod worker before the ConfigMap/Secret mounts and the image
pulls; a pod with no claim volume returns at once (a loop over its volume list, no call). While
it waits, the kubelet watches exactly the objects the pod's claims lead to -- each claim, its
PV, the driver's CSIDriver and the VolumeAttachment, one field-selected watch per object
(``metadata.name``) -- and re-checks on their events, no polling; the watches close when the
wait ends (the pod starts or goes away).

Events, upstream's (Warning ``FailedMount``, ``Unable to attach or mount volumes: unmounted
volumes=[data], unattached volumes=[data], failed to process volumes=[data]: <error>``):
at once when a claim cannot be processed (``error processing PVC ns/x: failed to fetch PVC
from API server: persistentvolumeclaims "x" not found``, ``... PVC is not bound``), again
when that error changes, and with ``timed out waiting for the condition`` each time
``podAttachAndMountTimeout`` (2 min 3 s) passes without every volume ready.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final

from emulator.base.api.core import Pod, PodSpec
from emulator.base.api.csimigration import attachment_name, csi_source
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from emulator.base.runtime.clock import Clock

__all__ = ["ATTACH_AND_MOUNT_TIMEOUT", "VolumeWait", "Watches", "claim_volumes"]

ATTACH_AND_MOUNT_TIMEOUT: Final = 123.0
"""Upstream ``podAttachAndMountTimeout``: 2 min 3 s."""

Event = Callable[[Pod, str, str, str], Awaitable[None]]


def claim_volumes(spec: PodSpec) -> list[tuple[str, str | None]]:
    """(volume name, claim name or None for an ephemeral volume) of the pod's claim volumes."""
    out: list[tuple[str, str | None]] = []
    for v in spec.volumes:
        if v.persistent_volume_claim is not None:
            out.append((v.name, v.persistent_volume_claim.claim_name))
        elif v.ephemeral is not None:
            out.append((v.name, None))
    return out


def _go_list(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


class Watches:
    """Field-selected watches of single objects, opened on first read, woken on any event
    (tasks ``<prefix>:<role>:<kind>/<name>``; the DRA claim wait uses them too)."""

    def __init__(self, client: Client, tg: asyncio.TaskGroup, prefix: str, role: str = "volumes") -> None:
        self._client = client
        self._tg = tg
        self._prefix = prefix
        self._role = role
        self._informers: dict[tuple[str, str, str], Informer] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.changed = asyncio.Event()

    async def get(self, kind: str, namespace: str, name: str) -> Any:
        key = (kind, namespace, name)
        informer = self._informers.get(key)
        if informer is None:
            informer = Informer(self._client, kind, namespace=namespace or None, fields={"metadata.name": name})
            wake = self.changed.set
            informer.add_handlers(lambda _o: wake(), lambda _o, _n: wake(), lambda _o: wake())
            self._informers[key] = informer
            self._tasks.append(self._tg.create_task(informer.run(), name=f"{self._prefix}:{self._role}:{kind}/{name}"))
        await informer.synced.wait()
        return informer.store.get((namespace, name))

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()


class VolumeWait:
    """What one kubelet does about its pods' claim volumes."""

    def __init__(self, clock: Clock, client: Client, node_name: str, event: Event, prefix: str) -> None:
        self._clock = clock
        self._client = client
        self._node = node_name
        self._event = event
        self._prefix = prefix
        self.waits = 0
        self.failed_mounts = 0

    def __repr__(self) -> str:
        return f"<VolumeWait waits={self.waits} failed_mounts={self.failed_mounts}>"

    async def _volume_problem(self, pod: Pod, volume: str, claim: str | None, w: Watches) -> tuple[str, bool]:
        """('' , _) when ready; else (processing error or '', unattached)."""
        ns = pod.metadata.namespace
        name = claim if claim is not None else f"{pod.metadata.name}-{volume}"
        pvc = await w.get("PersistentVolumeClaim", ns, name)
        prefix = f"error processing PVC {ns}/{name}"
        if pvc is None:
            return f'{prefix}: failed to fetch PVC from API server: persistentvolumeclaims "{name}" not found', False
        if claim is None and not any(r.controller and r.uid == pod.metadata.uid for r in pvc.metadata.owner_references):
            return (
                f"{prefix}: PVC {ns}/{name} was not created for pod {ns}/{pod.metadata.name} (pod is not owner)",
                False,
            )
        if pvc.metadata.deletion_timestamp is not None:
            return f"{prefix}: PVC is being deleted", False
        if pvc.status.phase != "Bound":
            return f"{prefix}: PVC is not bound", False
        if not pvc.spec.volume_name:
            return f"{prefix}: PVC has empty pvc.Spec.VolumeName", False
        pv = await w.get("PersistentVolume", "", pvc.spec.volume_name)
        if pv is None:
            return (
                f"{prefix}: failed to fetch PV {pvc.spec.volume_name} from API server: "
                f'persistentvolumes "{pvc.spec.volume_name}" not found'
            ), False
        source = csi_source(pv)
        if source is None:
            return "", False
        driver, handle = source
        csidriver = await w.get("CSIDriver", "", driver)
        if csidriver is not None and csidriver.spec.attach_required is False:
            return "", False
        va = await w.get("VolumeAttachment", "", attachment_name(handle, driver, self._node))
        return "", va is None or va.status.attached is not True

    async def _check(self, pod: Pod, claims: list[tuple[str, str | None]], w: Watches) -> tuple[str, bool]:
        """('', False) when every claim volume is ready, else the error ``WaitForAttachAndMount``
        reports and whether a volume failed to process (else the caller adds the timeout)."""
        unmounted: list[str] = []
        unattached: list[str] = []
        failed: list[str] = []
        errors: list[str] = []
        for volume, claim in claims:
            error, waiting = await self._volume_problem(pod, volume, claim, w)
            if error:
                failed.append(volume)
                errors.append(error)
            if error or waiting:
                unmounted.append(volume)
            if waiting:  # a volume that failed to process is not in the desired state yet
                unattached.append(volume)
        if not unmounted:
            return "", False
        head = (
            f"unmounted volumes={_go_list(unmounted)}, unattached volumes={_go_list(unattached)}, "
            f"failed to process volumes={_go_list(failed)}"
        )
        return (f"{head}: {'; '.join(errors)}", True) if errors else (head, False)

    async def wait(self, pod: Callable[[], Pod]) -> None:
        """Return once every claim volume of ``pod()`` is ready (see the module docstring)."""
        claims = claim_volumes(pod().spec)
        if not claims:
            return
        self.waits += 1
        async with asyncio.TaskGroup() as tg:
            w = Watches(self._client, tg, f"{self._prefix}:{pod().metadata.name}")
            alarm: asyncio.Task[None] | None = None

            async def ring(at: float) -> None:
                await self._clock.sleep_until(at)
                w.changed.set()

            try:
                deadline = self._clock.now() + ATTACH_AND_MOUNT_TIMEOUT
                alarm = tg.create_task(ring(deadline), name=f"{self._prefix}:volumes:timeout")
                last = ""
                while True:
                    w.changed.clear()
                    problem, processing = await self._check(pod(), claims, w)
                    if not problem:
                        return
                    if processing and problem != last:
                        await self._report(pod(), problem)
                    last = problem if processing else ""
                    if self._clock.now() >= deadline:
                        if not processing:
                            await self._report(pod(), f"{problem}: timed out waiting for the condition")
                        deadline = self._clock.now() + ATTACH_AND_MOUNT_TIMEOUT
                        alarm = tg.create_task(ring(deadline), name=f"{self._prefix}:volumes:timeout")
                    await w.changed.wait()
            finally:
                if alarm is not None:
                    alarm.cancel()
                w.close()

    async def _report(self, pod: Pod, error: str) -> None:
        self.failed_mounts += 1
        await self._event(pod, "Warning", "FailedMount", f"Unable to attach or mount volumes: {error}")
