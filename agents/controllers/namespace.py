"""``NamespaceController``: upstream's ``pkg/controller/namespace/namespace_controller.go`` with
its deleter (``deletion/namespaced_resources_deleter.go``), one agent with the client
``controller:namespace``.

A deleted Namespace is only marked (``deletionTimestamp``, phase ``Terminating``) while its
``kubernetes`` spec finalizer remains (``emulator.base.apiserver.registry.nodes``), and the API
server refuses creates into it (upstream's NamespaceLifecycle admission: Forbidden). This
controller then empties it:

=====================================  ==========================================================
sync of a Namespace                    action
=====================================  ==========================================================
gone, not being deleted, or without    nothing
``kubernetes`` in ``spec.finalizers``
being deleted                          every namespaced object, kind by kind (``CONTENT``:
                                       workloads first, so the garbage collector's dependents
                                       go with them), deleted with ``Background`` propagation;
                                       pods gracefully, as any delete
content remains                        re-queued after ``estimate / 2 + 1`` s (upstream's
                                       ``ResourcesRemainingError``): the estimate is the longest
                                       ``terminationGracePeriodSeconds`` of the non-terminal pods
                                       left, 15 s (``finalizerEstimateSeconds``) when objects
                                       wait on finalizers
empty                                  ``kubernetes`` removed from ``spec.finalizers`` (the
                                       finalize write), which removes the Namespace
=====================================  ==========================================================

Every change to a terminating Namespace queues it after ``namespaceDeletionGracePeriod``
(5 s), as upstream. Not modelled: the status conditions the deleter writes
(``NamespaceContentRemaining``...) and discovery (the kinds are the emulator's own).
It reads Namespaces through an informer of its own client and the content with ``list``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.context import ControllerContext
from agents.controllers.workqueue import WorkQueue
from emulator.base.api.core import Namespace, NamespaceSpec
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.client.informer import Informer

__all__ = ["CONTENT", "FINALIZER_KUBERNETES", "NAME", "ContentRemaining", "NamespaceController"]

NAME: Final = "namespace"
FINALIZER_KUBERNETES: Final = "kubernetes"
DELETION_GRACE_PERIOD: Final = 5.0
"""Upstream ``namespaceDeletionGracePeriod``."""
FINALIZER_ESTIMATE_SECONDS: Final = 15
DEFAULT_GRACE: Final = 30
"""A pod's ``terminationGracePeriodSeconds`` when unset (upstream defaults it to 30)."""

CONTENT: Final = (
    "CronJob",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "ReplicaSet",
    "ControllerRevision",
    "Pod",
    "Service",
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
    "ConfigMap",
    "Secret",
    "PersistentVolumeClaim",
    "ResourceClaimTemplate",
    "ResourceClaim",
    "CSIStorageCapacity",
    "Lease",
    "Event",
)
"""Every namespaced kind the API server stores, in deletion order (``tests/controllers/
test_namespace.py`` checks it against the registry)."""

_TERMINAL: Final = ("Succeeded", "Failed")


class ContentRemaining(Exception):
    """Objects without finalizers or a grace period are still there: retried with the
    queue's rate limit (upstream: an error, ``AddRateLimited``)."""


class NamespaceController:
    """Empties and finalizes terminating Namespaces (see the module docstring)."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client(NAME)
        self.clock = ctx.clock
        self.queue: WorkQueue[str] = WorkQueue(ctx.clock, self.client.name)
        self.informer = Informer(self.client, "Namespace")
        self.informer.add_handlers(self._enqueue, lambda _old, new: self._enqueue(new), lambda _ns: None)
        self.counts = dict.fromkeys(("syncs", "deleted", "finalized", "errors"), 0)

    def __repr__(self) -> str:
        return f"<NamespaceController {self.counts} {self.queue!r}>"

    def statistics(self) -> dict[str, Any]:
        """Counts for the run report; ``{}`` until a namespace was deleted."""
        return dict(self.counts) if self.counts["syncs"] else {}

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.informer.run(), name=f"{self.client.name}:informer:namespaces")
            self.queue.run_workers(tg, 1, self._process)

    def _enqueue(self, ns: Namespace) -> None:
        if ns.metadata.deletion_timestamp is not None:
            self.queue.add_after(ns.metadata.name, DELETION_GRACE_PERIOD)

    async def _process(self, name: str) -> None:
        self.counts["syncs"] += 1
        if not await self.queue.process(name, self.sync, (ApiError, ContentRemaining)):
            self.counts["errors"] += 1

    async def sync(self, name: str) -> None:
        ns: Namespace | None = self.informer.store.get(("", name))
        if ns is None or ns.metadata.deletion_timestamp is None or FINALIZER_KUBERNETES not in ns.spec.finalizers:
            return
        estimate = await self._delete_content(name)
        if estimate > 0:
            self.queue.add_after(name, estimate // 2 + 1)
            return
        await self._finalize(name)

    async def _delete_content(self, namespace: str) -> int:
        """Delete everything in ``namespace``; the seconds to wait for what remains (0: empty)."""
        estimate = 0
        for kind in CONTENT:
            items, _ = await self.client.list(kind, namespace=namespace)
            if not items:
                continue
            if kind == "Pod":
                estimate = max(estimate, _pods_estimate(items))
            for obj in items:
                if obj.metadata.deletion_timestamp is not None:
                    continue
                try:
                    await self.client.delete(kind, obj.metadata.name, namespace, propagation_policy="Background")
                    self.counts["deleted"] += 1
                except NotFound:
                    pass
            left, _ = await self.client.list(kind, namespace=namespace)
            if left and estimate == 0:
                if any(o.metadata.finalizers for o in left):
                    estimate = FINALIZER_ESTIMATE_SECONDS
                else:
                    raise ContentRemaining(f"unexpected items still remain in namespace: {namespace} for {kind}")
        return estimate

    async def _finalize(self, name: str) -> None:
        """Remove ``kubernetes`` from ``spec.finalizers``: the Namespace goes when none is left."""
        try:
            fresh: Namespace = await self.client.get("Namespace", name)
        except NotFound:
            return
        finalizers = [f for f in fresh.spec.finalizers if f != FINALIZER_KUBERNETES]
        try:
            await self.client.update_status(replace(fresh, spec=NamespaceSpec(finalizers=finalizers)))
        except NotFound:
            return
        except Conflict:
            self.queue.add(name)
            return
        self.counts["finalized"] += 1


def _pods_estimate(pods: list[Any]) -> int:
    """Upstream ``estimateGracefulTerminationForPods``: the longest grace of the live pods."""
    graces = (p.spec.termination_grace_period_seconds for p in pods if p.status.phase not in _TERMINAL)
    return max((DEFAULT_GRACE if g is None else g for g in graces), default=0)
