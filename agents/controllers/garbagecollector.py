"""``GarbageCollector``: upstream's garbage collector controller
(``pkg/controller/garbagecollector``) as an agent, client ``controller:garbagecollector``.

It keeps the ``OwnerGraph`` (``gcgraph``) from the shared informers and works one queue of
``(verb, uid)`` items with one worker (upstream runs 20; one keeps runs deterministic):

- ``delete`` (``attemptToDeleteItem``): read the item live (gone, or another uid: done).
  Being deleted with ``foregroundDeletion``: when none of its dependents with
  ``blockOwnerDeletion: true`` is left, remove the finalizer; else queue them. Otherwise
  classify its owners by a live read of each (``classifyReferences``): *dangling* (not
  found, or another uid), *waiting* (being deleted with ``foregroundDeletion``) or *solid*.
  With a solid owner, only the references to dangling and waiting owners are removed. With
  none: an item that waits for an owner and has dependents itself is deleted with
  ``Foreground``; any other is deleted with the policy its own finalizers name
  (``Background`` by default). Deletes carry the uid and resourceVersion preconditions; a
  Conflict with unchanged owners is retried without the resourceVersion, as upstream.
- ``orphan`` (``attemptToOrphanWorker``): remove the owner's reference from every dependent,
  then the owner's ``orphan`` finalizer.

A failed item (an API error other than NotFound) is retried with the queue's per-item
backoff. Owners absent once stay absent (uids are never reused): a set of them spares the
reads when thousands of dependents of one owner are collected (upstream's
``absentOwnerCache``). An owner reference to a kind this API server does not serve is
treated as solid (upstream cannot resolve it either, and never deletes for it).

Watched: the workload kinds (``GC_KINDS``) from the start; Pods only once one of those
objects exists, so a run without workloads never opens the pod watch (cost: nothing in a
150,000-bare-pod run). PersistentVolumeClaims once another controller opened their
shared informer (the StatefulSet controller for a set with ``volumeClaimTemplates``, the
ephemeral-volume controller once storage exists): only those make owned claims; likewise
ResourceClaims once the resourceclaim controller opened theirs (from the first claim or
template on: the claims it makes for pods). Consequently a bare pod
whose owner reference dangles is collected only once some workload object has been seen. Not
watched: Nodes and Leases (a deleted node's Lease is not collected) -- their watches would
cost every run. Ownership is checked in the dependent's namespace (or cluster scope for
cluster-scoped owner kinds); a namespaced owner of another namespace therefore reads as
absent. No Events are recorded (upstream's only one, ``OwnerRefInvalidNamespace``, is left
out). Does not own the finalizer rules of ``delete`` (the API server's ``deletion``).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final, Literal

from msgspec.structs import replace

from agents.controllers.context import ControllerContext
from agents.controllers.gcgraph import FOREGROUND, ORPHAN, OwnerGraph, Work
from agents.controllers.workqueue import WorkQueue
from emulator.base.api.codec import KINDS
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.api.meta import OwnerReference
from emulator.base.client.retry import Backoff, retry_on_conflict

__all__ = ["GC_KINDS", "NAME", "GarbageCollector"]

NAME: Final = "garbagecollector"
GC_KINDS: Final = (
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
    "Service",
    "PodDisruptionBudget",
)
"""Watched from the start; Pods are added once one of these exists."""
_SERVED: Final = frozenset(kind for _, kind in KINDS)
_CLUSTER_SCOPED: Final = frozenset({"Node", "Namespace", "PriorityClass"})
UPDATE_RETRY: Final = Backoff(steps=5, duration=0.010, factor=1.0)
"""Removing a finalizer or an owner reference: re-read and retry on Conflict (client-go's
``DefaultRetry`` without its jitter, so no rng is needed)."""
OwnerState = Literal["solid", "dangling", "waiting"]


class GarbageCollector:
    """Cascading deletion: Background, Foreground and Orphan."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.clock = ctx.clock
        self.client = ctx.client(NAME)
        self.graph = OwnerGraph()
        self.queue: WorkQueue[Work] = WorkQueue(self.clock, self.client.name)
        self._pods_watched = False
        self._absent: set[tuple[str, str, str, str]] = set()
        self.deleted = 0
        self.orphaned = 0
        self.finalizers_removed = 0
        self.references_removed = 0
        self.errors = 0

    def __repr__(self) -> str:
        return f"<GarbageCollector {self.graph!r} deleted={self.deleted} orphaned={self.orphaned}>"

    def statistics(self) -> dict[str, Any]:
        return {
            "objects": len(self.graph.nodes),
            "deleted": self.deleted,
            "orphaned": self.orphaned,
            "finalizersRemoved": self.finalizers_removed,
            "ownerReferencesRemoved": self.references_removed,
            "errors": self.errors,
        }

    # --- informers ------------------------------------------------------------------------

    def _queue_work(self, work: list[Work]) -> None:
        for item in work:
            self.queue.add(item)

    def _on_add(self, obj: Any) -> None:
        if not self._pods_watched and obj.kind != "Pod":
            self._watch_pods()
        self._queue_work(self.graph.upsert(obj))

    def _on_update(self, old: Any, new: Any) -> None:
        o, n = old.metadata, new.metadata
        if (
            o.owner_references == n.owner_references
            and o.deletion_timestamp == n.deletion_timestamp
            and o.finalizers == n.finalizers
            and o.uid == n.uid
        ):
            return  # a status or spec write: nothing the graph keeps (most pod events)
        if o.uid != n.uid:  # deleted and made again between two events
            self._queue_work(self.graph.remove(old))
        self._queue_work(self.graph.upsert(new))

    def _on_delete(self, obj: Any) -> None:
        self._queue_work(self.graph.remove(obj))

    def _watch_pods(self) -> None:
        self._pods_watched = True
        self.ctx.informers.handlers("Pod", self._on_add, self._on_update, self._on_delete)

    async def _synced(self) -> None:
        """Upstream's workers start once every monitor has synced: an orphaning or a
        foreground deletion must see all the dependents."""
        for kind in (*GC_KINDS, "Pod", "PersistentVolumeClaim", "ResourceClaim"):
            if self.ctx.informers.started(kind):
                await self.ctx.informers.informer(kind).synced.wait()

    def _watch_claims(self) -> None:
        self.ctx.informers.handlers("PersistentVolumeClaim", self._on_add, self._on_update, self._on_delete)

    def _watch_resource_claims(self) -> None:
        self.ctx.informers.handlers("ResourceClaim", self._on_add, self._on_update, self._on_delete)

    async def run(self) -> None:
        for kind in GC_KINDS:
            self.ctx.informers.handlers(kind, self._on_add, self._on_update, self._on_delete)
        self.ctx.informers.when_started("PersistentVolumeClaim", self._watch_claims)
        self.ctx.informers.when_started("ResourceClaim", self._watch_resource_claims)
        async with asyncio.TaskGroup() as tg:
            self.queue.run_workers(tg, 1, self._sync)

    # --- the worker -----------------------------------------------------------------------

    async def _sync(self, item: Work) -> None:
        await self._synced()
        verb, uid = item
        try:
            if verb == "orphan":
                await self._orphan(uid)
            else:
                await self._attempt_to_delete(uid)
        except ApiError:
            self.errors += 1
            self.queue.add_rate_limited(item)
            return
        self.queue.forget(item)

    async def _live(self, kind: str, name: str, namespace: str, uid: str) -> Any | None:
        """The object now, or None if it is gone or was made again with another uid."""
        try:
            obj = await self.client.get(kind, name, "" if kind in _CLUSTER_SCOPED else namespace)
        except NotFound:
            return None
        return obj if obj.metadata.uid == uid else None

    async def _attempt_to_delete(self, uid: str) -> None:
        node = self.graph.nodes.get(uid)
        if node is None or (node.deleting and not node.deleting_dependents):
            return
        latest = await self._live(node.kind, node.name, node.namespace, uid)
        if latest is None:
            return  # the informer will tell
        meta = latest.metadata
        if meta.deletion_timestamp is not None and FOREGROUND in meta.finalizers:
            blocking = self.graph.blocking_dependents(uid)
            if not blocking:
                await self._remove_finalizer(node.kind, node.name, node.namespace, uid, FOREGROUND)
                return
            self._queue_work([("delete", d.uid) for d in blocking if not d.deleting_dependents])
            return
        if not meta.owner_references:
            return
        solid: list[OwnerReference] = []
        dangling: list[OwnerReference] = []
        waiting: list[OwnerReference] = []
        for ref in meta.owner_references:
            state = await self._owner_state(ref, node.namespace)
            {"solid": solid, "dangling": dangling, "waiting": waiting}[state].append(ref)
        if solid:
            gone = {r.uid for r in (*dangling, *waiting)}
            if gone:
                await self._remove_references(node.kind, node.name, node.namespace, uid, gone)
            return
        if waiting and self.graph.has_dependents(uid):
            policy = "Foreground"
        elif ORPHAN in meta.finalizers:
            policy = "Orphan"
        elif FOREGROUND in meta.finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        await self._delete(latest, policy)

    async def _owner_state(self, ref: OwnerReference, namespace: str) -> OwnerState:
        """``isDangling`` and the owner's foreground deletion, read live."""
        if ref.kind not in _SERVED:
            return "solid"  # unresolvable: never a reason to delete
        if ref.kind in _CLUSTER_SCOPED:
            namespace = ""
        key = (ref.kind, namespace, ref.name, ref.uid)
        if key in self._absent:
            return "dangling"
        owner = await self._live(ref.kind, ref.name, namespace, ref.uid)
        if owner is None:
            self._absent.add(key)
            return "dangling"
        if owner.metadata.deletion_timestamp is not None and FOREGROUND in owner.metadata.finalizers:
            return "waiting"
        return "solid"

    async def _delete(self, latest: Any, policy: str) -> None:
        meta = latest.metadata
        try:
            await self.client.delete(
                latest.kind,
                meta.name,
                meta.namespace,
                uid=meta.uid,
                resource_version=meta.resource_version,
                propagation_policy=policy,
            )
        except NotFound:
            return
        except Conflict:
            now = await self._live(latest.kind, meta.name, meta.namespace, meta.uid)
            if now is None or now.metadata.owner_references != meta.owner_references:
                raise  # retried: the item is looked at again
            try:
                await self.client.delete(
                    latest.kind, meta.name, meta.namespace, uid=meta.uid, propagation_policy=policy
                )
            except NotFound:
                return
        self.deleted += 1

    async def _orphan(self, uid: str) -> None:
        node = self.graph.nodes.get(uid)
        if node is None:
            return
        for dep in self.graph.dependents_of(uid):
            await self._remove_references(dep.kind, dep.name, dep.namespace, dep.uid, {uid})
            self.orphaned += 1
        await self._remove_finalizer(node.kind, node.name, node.namespace, uid, ORPHAN)

    # --- writes, re-read on Conflict ------------------------------------------------------

    async def _remove_references(self, kind: str, name: str, namespace: str, uid: str, owners: set[str]) -> None:
        async def attempt() -> None:
            obj = await self._live(kind, name, namespace, uid)
            if obj is None:
                return
            refs = obj.metadata.owner_references
            kept = [r for r in refs if r.uid not in owners]
            if len(kept) == len(refs):
                return
            await self.client.update(replace(obj, metadata=replace(obj.metadata, owner_references=kept)))
            self.references_removed += len(refs) - len(kept)

        with contextlib.suppress(NotFound):  # gone meanwhile: nothing left to do
            await retry_on_conflict(UPDATE_RETRY, attempt, clock=self.clock)

    async def _remove_finalizer(self, kind: str, name: str, namespace: str, uid: str, finalizer: str) -> None:
        async def attempt() -> None:
            obj = await self._live(kind, name, namespace, uid)
            if obj is None or finalizer not in obj.metadata.finalizers:
                return
            kept = [f for f in obj.metadata.finalizers if f != finalizer]
            await self.client.update(replace(obj, metadata=replace(obj.metadata, finalizers=kept)))
            self.finalizers_removed += 1

        with contextlib.suppress(NotFound):  # gone meanwhile: nothing left to do
            await retry_on_conflict(UPDATE_RETRY, attempt, clock=self.clock)
