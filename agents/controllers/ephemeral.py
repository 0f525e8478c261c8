"""``EphemeralVolumeController``: upstream's ``pkg/controller/volume/ephemeral``, client
``controller:ephemeral-volume-controller``, Events as ``ephemeral_volume``.

For each pod (not being deleted) with a generic ephemeral volume (``ephemeral.volumeClaimTemplate``)
it creates the claim ``<pod name>-<volume name>`` from the template: the template's labels,
annotations and spec, the pod as controller (``controller: true``, ``blockOwnerDeletion:
true``), so the garbage collector deletes the claim with the pod. A claim of that name that the
pod does not control is an error: the Warning Event ``FailedBinding`` "ephemeral volume <v>: PVC
<ns>/<claim> was not created for pod <ns>/<pod> (pod is not owner)" on the pod, and the pod is
retried with the queue's backoff. A deleted claim queues the pods that name it (upstream's
``onPVCDelete``), so it is made again while its pod lives.

What it watches, for cost: pods only from the first StorageClass or PersistentVolume on (a
claim needs one of them to ever bind), or from the moment another controller has opened the
shared pod informer; a run without storage never pays for a pod watch here. Claims are
watched from the first pod with an ephemeral volume on. Simplification:
in a run with neither, a bare pod's ephemeral claim is not made (it could never bind).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from agents.controllers.context import ControllerContext
from agents.controllers.controllerutils import is_controlled_by, owner_ref
from agents.controllers.workqueue import WorkQueue
from emulator.base.api.core import Pod
from emulator.base.api.errors import AlreadyExists, ApiError
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.storage import PersistentVolumeClaim
from emulator.base.client.informer import Informer

__all__ = ["COMPONENT", "NAME", "EphemeralVolumeController", "claim_name"]

NAME: Final = "ephemeral-volume-controller"
COMPONENT: Final = "ephemeral_volume"

Key = tuple[str, str]


def claim_name(pod: Pod, volume_name: str) -> str:
    """Upstream ``ephemeral.VolumeClaimName``."""
    return f"{pod.metadata.name}-{volume_name}"


def _has_ephemeral(pod: Pod) -> bool:
    return any(v.ephemeral is not None for v in pod.spec.volumes)


class EphemeralVolumeError(ApiError):
    """A claim of the ephemeral name exists and is not the pod's."""


class EphemeralVolumeController:
    """Creates the claims of pods' generic ephemeral volumes; ``await run()`` until cancelled."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.informers = ctx.informers
        self.client = ctx.client(NAME)
        self.recorder = ctx.recorder(NAME, COMPONENT)
        self.queue: WorkQueue[Key] = WorkQueue(ctx.clock, self.client.name)
        self.pods: Informer | None = None
        self.claims: Informer | None = None
        self.counts = dict.fromkeys(("syncs", "created", "errors"), 0)

    def statistics(self) -> dict[str, Any]:
        return {**self.counts, "queue": len(self.queue)} if self.counts["syncs"] else {}

    async def run(self) -> None:
        self.informers.when_started("Pod", self._watch_pods)
        async with asyncio.TaskGroup() as tg:
            # the triggers through this controller's own client, not the shared one: a run
            # without storage writes exactly what it wrote before
            for kind in ("StorageClass", "PersistentVolume"):
                trigger = Informer(self.client, kind)
                trigger.add_handlers(lambda _obj: self._watch_pods(), None, None)
                tg.create_task(trigger.run(), name=f"{self.client.name}:{kind}")
            self.queue.run_workers(tg, 1, self._process)

    def _watch_pods(self) -> None:
        if self.pods is not None:
            return
        self.pods = self.informers.handlers("Pod", self._enqueue, lambda _old, new: self._enqueue(new))

    def _enqueue(self, pod: Pod) -> None:
        if pod.metadata.deletion_timestamp is None and _has_ephemeral(pod):
            if self.claims is None:  # the claim watch opens with the first ephemeral pod
                self.claims = self.informers.handlers("PersistentVolumeClaim", on_delete=self._on_claim_delete)
            self.queue.add((pod.metadata.namespace, pod.metadata.name))

    def _on_claim_delete(self, claim: PersistentVolumeClaim) -> None:
        """Upstream ``onPVCDelete``: the pod whose ephemeral claim it was, if it still lives."""
        assert self.pods is not None
        for ref in claim.metadata.owner_references:
            if ref.kind == "Pod" and ref.controller:
                pod: Pod | None = self.pods.store.get((claim.metadata.namespace, ref.name))
                if pod is not None and pod.metadata.uid == ref.uid:
                    self._enqueue(pod)

    async def _process(self, key: Key) -> None:
        self.counts["syncs"] += 1
        if not await self.queue.process(key, self._sync, (ApiError,)):
            self.counts["errors"] += 1

    async def _sync(self, key: Key) -> None:
        assert self.pods is not None
        assert self.claims is not None
        await self.pods.synced.wait()
        await self.claims.synced.wait()
        pod: Pod | None = self.pods.store.get(key)
        if pod is None or pod.metadata.deletion_timestamp is not None:
            return
        for volume in pod.spec.volumes:
            try:
                await self._handle_volume(pod, volume.name)
            except ApiError as err:
                ref = ObjectReference(api_version="v1", kind="Pod", namespace=key[0], name=key[1], uid=pod.metadata.uid)
                await self.recorder.event(ref, "Warning", "FailedBinding", f"ephemeral volume {volume.name}: {err}")
                raise

    async def _handle_volume(self, pod: Pod, volume_name: str) -> None:
        assert self.claims is not None
        volume = next(v for v in pod.spec.volumes if v.name == volume_name)
        if volume.ephemeral is None or volume.ephemeral.volume_claim_template is None:
            return
        name = claim_name(pod, volume.name)
        ns = pod.metadata.namespace
        existing: PersistentVolumeClaim | None = self.claims.store.get((ns, name))
        if existing is not None:
            if not is_controlled_by(existing, pod):  # upstream ephemeral.VolumeIsForPod
                raise EphemeralVolumeError(
                    f"PVC {ns}/{name} was not created for pod {ns}/{pod.metadata.name} (pod is not owner)"
                )
            return
        template = volume.ephemeral.volume_claim_template
        claim = PersistentVolumeClaim(
            metadata=ObjectMeta(
                name=name,
                namespace=ns,
                owner_references=[owner_ref(pod)],
                labels=dict(template.metadata.labels),
                annotations=dict(template.metadata.annotations),
            ),
            spec=template.spec,
        )
        try:
            await self.client.create(claim)
        except AlreadyExists:
            return  # the informer is behind; the next sync checks its owner
        except ApiError as err:
            raise ApiError(f"create PVC {name}: {err}") from err
        self.counts["created"] += 1
