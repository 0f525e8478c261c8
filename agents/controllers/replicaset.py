"""The ReplicaSet controller (upstream ``pkg/controller/replicaset``): keeps
``spec.replicas`` active pods of each ReplicaSet, and its status.

Reconcile loop: informer handlers queue ``(namespace, name)`` keys on a ``WorkQueue``; one
worker syncs a key as upstream's ``syncReplicaSet`` does:

1. claim pods (``controllerrefmanager``): adopt orphans the selector matches, release owned
   pods it no longer matches;
2. if the expectations are met (every creation and deletion asked for was seen by the pod
   informer, or 5 minutes passed) and the ReplicaSet is not being deleted, ``manage``:
   create the missing pods in slow-start batches (1, 2, 4, …; at most ``BURST_REPLICAS``
   per sync), or delete the surplus, first those ``deletion_order`` ranks first (the
   related pods of the ranks are those of every ReplicaSet with the same controller);
3. write the status (``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``,
   ``availableReplicas``, ``observedGeneration``, the ``ReplicaFailure`` condition) if it
   changed; with ``minReadySeconds`` and all replicas ready but not yet all available,
   sync again after ``minReadySeconds`` (upstream's ``AddAfter``).

A failed sync is queued again rate-limited. Events as upstream's ``RealPodControl``:
``SuccessfulCreate`` "Created pod: web-abc12", ``FailedCreate`` "Error creating: …",
``SuccessfulDelete`` "Deleted pod: …", ``FailedDelete`` "Error deleting: …".

Cost: nothing per pod is recomputed per sync. The pod handlers keep, per ReplicaSet UID,
its status counts (``replicasetutils.PodCounts``, each pod's contribution, replaced in O(1)
per event; a pod moves between counts by the controller references of its old and new
version). Upstream recounts the pods at every sync: the 10,000-replica benchmark
(``bench/scenarios/deployment-10k-1000nodes.yaml``, 9,438 syncs) runs in about 10 s with
these counts and did not finish in 600 s recounting. The counts, not the pod informer's
controller-UID index, also list a ReplicaSet's pods: they see a claim (``_claim``) before
the informer does. Orphans are remembered per namespace, and an orphan (or an owned
pod whose labels changed) is noted as a candidate of the ReplicaSets it concerns, so a
sync looks only at those. The pod informer starts when the first ReplicaSet is seen, so
runs without ReplicaSets never watch pods here.

Not here: the pods' lifecycle (kubelet), cascading deletion (garbage collector), and
ReplicaSets of Deployments (the deployment controller scales them like any client would).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.base import BaseController
from agents.controllers.context import ControllerContext
from agents.controllers.controllerrefmanager import adopt, can_adopt, claim_action, release
from agents.controllers.controllerutils import (
    BatchError,
    Expectations,
    controller_ref,
    deletion_order,
    is_pod_active,
    is_pod_ready,
    pod_from_template,
    related_ranks,
    slow_start_batch,
)
from agents.controllers.replicasetutils import PodCounts, calculate_status
from emulator.base.api.apps import ReplicaSet, ReplicaSetStatus
from emulator.base.api.core import Pod
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.api.meta import OwnerReference, reference_to
from emulator.base.client.informer import Informer

__all__ = ["BURST_REPLICAS", "COMPONENT", "NAME", "ReplicaSetController"]

NAME: Final = "replicaset"
COMPONENT: Final = "replicaset-controller"
BURST_REPLICAS: Final = 500
"""Upstream ``BurstReplicas``: the most pods one sync creates or deletes."""

Key = tuple[str, str]


def _key(obj: Any) -> Key:
    return (obj.metadata.namespace, obj.metadata.name)


def _pod_key(key: Key) -> str:
    return f"{key[0]}/{key[1]}"


class ReplicaSetController(BaseController):
    """Upstream's ``ReplicaSetController`` as an agent with the client ``controller:replicaset``."""

    NAME = NAME
    KIND = "ReplicaSet"
    COUNTS = ("syncs", "created", "deleted", "adopted", "released", "errors")
    RETRY_ON = (ApiError, BatchError)

    def __init__(self, ctx: ControllerContext, *, workers: int = 1, burst_replicas: int = BURST_REPLICAS) -> None:
        super().__init__(ctx, workers=workers)
        self.expectations = Expectations(ctx.clock)
        self.burst_replicas = burst_replicas
        self._by_ns: dict[str, dict[Key, None]] = {}
        """namespace → keys of its ReplicaSets."""
        self._counts: dict[str, PodCounts] = {}
        """ReplicaSet UID → the status counts of the pods it controls."""
        self._orphans: dict[str, dict[Key, None]] = {}
        """namespace → pods without a controller."""
        self._adopt: dict[Key, dict[Key, None]] = {}
        """ReplicaSet key → orphans its selector matched when last seen (adoption candidates)."""
        self._release: dict[str, dict[Key, None]] = {}
        """ReplicaSet UID → owned pods whose labels changed (release candidates)."""

    def statistics(self) -> dict[str, Any]:
        """Counters for the run report; empty while no object of its kind was ever seen."""
        if not self.counts["syncs"]:
            return {}
        return {**self.counts, "retries": self.queue.retries}

    # --- ReplicaSet handlers ----------------------------------------------------------------

    def on_add(self, rs: ReplicaSet) -> None:
        key = _key(rs)
        self._by_ns.setdefault(key[0], {})[key] = None
        self._counts.setdefault(rs.metadata.uid, PodCounts(dict(rs.spec.template.metadata.labels)))
        self.watch_dependents()
        self._find_orphans(rs)
        self.queue.add(key)

    def on_update(self, old: ReplicaSet, cur: ReplicaSet) -> None:
        if old.metadata.uid != cur.metadata.uid:
            self.on_delete(old)
            self.on_add(cur)
            return
        if old.spec.selector != cur.spec.selector:
            self._find_orphans(cur)
            counts = self._counts.get(cur.metadata.uid)
            if counts is not None:
                self._release.setdefault(cur.metadata.uid, {}).update(dict.fromkeys(counts.pods))
        self.queue.add(_key(cur))

    def on_delete(self, rs: ReplicaSet) -> None:
        key = _key(rs)
        self._by_ns.get(key[0], {}).pop(key, None)
        self._adopt.pop(key, None)
        self._release.pop(rs.metadata.uid, None)
        counts = self._counts.get(rs.metadata.uid)
        if counts is not None and not counts.pods:
            del self._counts[rs.metadata.uid]
        self.expectations.delete(key)
        self.queue.add(key)

    def _find_orphans(self, rs: ReplicaSet) -> None:
        """Note the namespace's orphans ``rs`` selects as its adoption candidates."""
        orphans = self._orphans.get(rs.metadata.namespace)
        if not orphans or self.dependents is None:
            return
        store = self.dependents.store
        found = [k for k in orphans if label_selector_matches(rs.spec.selector, store[k].metadata.labels)]
        if found:
            self._adopt.setdefault(_key(rs), {}).update(dict.fromkeys(found))

    # --- pod handlers -------------------------------------------------------------------------

    def _index(self, pod: Pod, was: Pod | None = None) -> None:
        """Keep ``_counts``/``_orphans`` current with ``pod``'s latest version (``was``: the
        version counted before, if any)."""
        key = _key(pod)
        ref = controller_ref(pod)
        uid = ref.uid if ref is not None and ref.kind == "ReplicaSet" else None
        was_ref = controller_ref(was) if was is not None else None
        if was_ref is not None and was_ref.uid != uid:
            self._uncount(was_ref, key)
        if uid is not None:
            # counted even before its ReplicaSet is seen (the two informers are not in step);
            # a sync relabels the counts with the template's labels
            self._counts.setdefault(uid, PodCounts({})).put(key, pod)
        orphans = self._orphans.setdefault(key[0], {})
        if controller_ref(pod) is None:
            orphans[key] = None
        else:
            orphans.pop(key, None)

    def _orphan_seen(self, pod: Pod) -> None:
        """Upstream: an orphan's ReplicaSets are synced, so one of them may adopt it."""
        key = _key(pod)
        if self.primary is None:
            return
        for rs_key in self._by_ns.get(key[0], {}):
            rs = self.primary.store.get(rs_key)
            if rs is not None and label_selector_matches(rs.spec.selector, pod.metadata.labels):
                self._adopt.setdefault(rs_key, {})[key] = None
                self.queue.add(rs_key)

    def on_dependent_add(self, pod: Pod) -> None:
        self._index(pod)
        if pod.metadata.deletion_timestamp is not None:
            self._deletion_seen(pod)
            return
        ref = controller_ref(pod)
        if ref is None:
            self._orphan_seen(pod)
            return
        rs_key = self.resolve(ref, pod.metadata.namespace)
        if rs_key is not None:
            self.expectations.creation_observed(rs_key)
            self.queue.add(rs_key)

    def on_dependent_update(self, old: Pod, cur: Pod) -> None:
        if old.metadata.resource_version == cur.metadata.resource_version:
            return
        self._index(cur, old)
        ns = cur.metadata.namespace
        labels_changed = old.metadata.labels != cur.metadata.labels
        if cur.metadata.deletion_timestamp is not None:
            self._deletion_seen(cur)
            if labels_changed:
                self._deletion_seen(old)
            return
        cur_ref, old_ref = controller_ref(cur), controller_ref(old)
        ref_changed = (cur_ref.uid if cur_ref else None) != (old_ref.uid if old_ref else None)
        if ref_changed and (old_key := self.resolve(old_ref, ns)) is not None:
            self.queue.add(old_key)
        if cur_ref is not None:
            rs_key = self.resolve(cur_ref, ns)
            if rs_key is None:
                return
            if labels_changed:
                self._release.setdefault(cur_ref.uid, {})[_key(cur)] = None
            self.queue.add(rs_key)
            rs = self.primary.store.get(rs_key) if self.primary is not None else None
            if rs is not None and rs.spec.min_ready_seconds > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                self.queue.add_after(rs_key, rs.spec.min_ready_seconds + 1.0)
            return
        if labels_changed or ref_changed:
            self._orphan_seen(cur)

    def _deletion_seen(self, pod: Pod) -> None:
        """Upstream ``deletePod``: a deletion (or a pod marked for one) is observed."""
        rs_key = self.resolve(controller_ref(pod), pod.metadata.namespace)
        if rs_key is not None:
            self.expectations.deletion_observed(rs_key, _pod_key(_key(pod)))
            self.queue.add(rs_key)

    def _uncount(self, ref: OwnerReference, key: Key) -> None:
        """``key`` is no longer a pod of the ReplicaSet ``ref`` names; counts left empty are
        dropped once that ReplicaSet is gone."""
        counts = self._counts.get(ref.uid)
        if counts is not None:
            counts.drop(key)
            if not counts.pods and self.resolve(ref, key[0]) is None:
                del self._counts[ref.uid]

    def on_dependent_delete(self, pod: Pod) -> None:
        key = _key(pod)
        if (ref := controller_ref(pod)) is not None:
            self._uncount(ref, key)
        self._orphans.get(key[0], {}).pop(key, None)
        self._deletion_seen(pod)

    # --- sync ---------------------------------------------------------------------------------

    async def sync(self, key: Key) -> None:
        """Upstream ``syncReplicaSet`` for one key (raises what should be retried)."""
        assert self.primary is not None
        rs: ReplicaSet | None = self.primary.store.get(key)
        if rs is None:
            self.expectations.delete(key)
            return
        pods = self.watch_dependents()
        await pods.synced.wait()
        rs = self.primary.store.get(key)
        if rs is None:
            return
        needs_sync = self.expectations.satisfied(key) and rs.metadata.deletion_timestamp is None
        counts = self._counts.setdefault(rs.metadata.uid, PodCounts(dict(rs.spec.template.metadata.labels)))
        if counts.template_labels != rs.spec.template.metadata.labels:
            counts.relabel(rs.spec.template.metadata.labels, pods.store)
        await self._claim(rs, pods)
        err: Exception | None = None
        diff = counts.active - (rs.spec.replicas or 0)
        if needs_sync:
            try:
                await self._manage(rs, counts, pods)
            except (ApiError, BatchError) as e:
                err = e
        updated = await self._write_status(rs, calculate_status(rs, counts, pods.store, err, diff, self.clock))
        if (
            err is None
            and updated.spec.min_ready_seconds > 0
            and updated.status.ready_replicas == updated.spec.replicas
            and updated.status.available_replicas != updated.spec.replicas
        ):
            self.queue.add_after(key, float(updated.spec.min_ready_seconds))
        if err is not None:
            raise err

    async def _claim(self, rs: ReplicaSet, pods: Informer) -> None:
        """Upstream ``claimPods`` over the candidates the handlers noted; a pod adopted or
        released is counted (or no longer) at once, before the pod informer shows it."""
        key, uid = _key(rs), rs.metadata.uid
        checked = False
        for pod_key in list(self._release.pop(uid, {})):
            pod = pods.store.get(pod_key)
            if pod is None:
                continue
            matches = label_selector_matches(rs.spec.selector, pod.metadata.labels)
            if claim_action(pod, rs, matches) == "release":
                updated = await release(self.client, pod, rs)
                if updated is not None:
                    self.counts["released"] += 1
                    self._index(updated, pod)
        candidates = self._adopt.pop(key, {})
        for n, pod_key in enumerate(candidates):
            pod = pods.store.get(pod_key)
            if pod is None:
                continue
            matches = label_selector_matches(rs.spec.selector, pod.metadata.labels)
            if claim_action(pod, rs, matches) != "adopt" or not is_pod_active(pod):
                continue
            try:
                if not checked:
                    await can_adopt(self.client, rs)
                    checked = True
                updated = await adopt(self.client, pod, rs)
            except ApiError:
                self._adopt.setdefault(key, {}).update(dict.fromkeys(list(candidates)[n:]))
                raise
            if updated is not None:
                self.counts["adopted"] += 1
                self._index(updated, pod)

    async def _manage(self, rs: ReplicaSet, counts: PodCounts, pods: Informer) -> None:
        """Upstream ``manageReplicas``: create or delete pods towards ``spec.replicas``."""
        key = _key(rs)
        diff = counts.active - (rs.spec.replicas or 0)
        if diff < 0:
            n = min(-diff, self.burst_replicas)
            self.expectations.expect_creations(key, n)
            try:
                await slow_start_batch(n, lambda _: self._create(rs))
            except BatchError as err:
                self.expectations.lower_creations(key, n - err.succeeded)
                raise
        elif diff > 0:
            n = min(diff, self.burst_replicas)
            victims = self._pods_to_delete(rs, counts, pods, n)
            self.expectations.expect_deletions(key, [_pod_key(_key(p)) for p in victims])
            results = await asyncio.gather(*(self._delete(rs, p) for p in victims), return_exceptions=True)
            first: BaseException | None = None
            for pod, r in zip(victims, results, strict=True):
                if isinstance(r, BaseException):
                    self.expectations.deletion_observed(key, _pod_key(_key(pod)))
                    if not isinstance(r, NotFound) and first is None:
                        first = r
            if first is not None:
                raise first

    def _pods_to_delete(self, rs: ReplicaSet, counts: PodCounts, pods: Informer, n: int) -> list[Pod]:
        """Upstream ``getPodsToDelete``: ranked by ``deletion_order`` when only some go."""
        active = [p for k in sorted(counts.pods) if counts.pods[k][0] and (p := pods.store.get(k)) is not None]
        if n >= len(active):
            return active
        related = list(self._related_pods(rs, pods))
        return deletion_order(active, related_ranks(active, related), self.clock.now())[:n]

    def _related_pods(self, rs: ReplicaSet, pods: Informer) -> Iterable[Pod]:
        """Upstream ``getIndirectlyRelatedPods``: the pods of every ReplicaSet with the same
        controller as ``rs`` (none when ``rs`` has no controller)."""
        ref = controller_ref(rs)
        if ref is None or self.primary is None:
            return
        for rs_key in sorted(self._by_ns.get(rs.metadata.namespace, {})):
            other = self.primary.store.get(rs_key)
            other_ref = controller_ref(other) if other is not None else None
            if other is None or other_ref is None or other_ref.uid != ref.uid:
                continue
            counts = self._counts.get(other.metadata.uid)
            for k in sorted(counts.pods if counts is not None else ()):
                if (p := pods.store.get(k)) is not None:
                    yield p

    async def _create(self, rs: ReplicaSet) -> None:
        pod = pod_from_template(rs.spec.template, rs, rs.metadata.namespace)
        try:
            created = await self.client.create(pod)
        except ApiError as err:
            await self.recorder.event(reference_to(rs), "Warning", "FailedCreate", f"Error creating: {err}")
            raise
        self.counts["created"] += 1
        await self.recorder.event(
            reference_to(rs), "Normal", "SuccessfulCreate", f"Created pod: {created.metadata.name}"
        )

    async def _delete(self, rs: ReplicaSet, pod: Pod) -> None:
        meta = pod.metadata
        try:
            await self.client.delete("Pod", meta.name, meta.namespace)
        except ApiError as err:
            if not isinstance(err, NotFound):
                await self.recorder.event(reference_to(rs), "Warning", "FailedDelete", f"Error deleting: {err}")
            raise
        self.counts["deleted"] += 1
        await self.recorder.event(reference_to(rs), "Normal", "SuccessfulDelete", f"Deleted pod: {meta.name}")

    # --- status -------------------------------------------------------------------------------

    async def _write_status(self, rs: ReplicaSet, status: ReplicaSetStatus) -> ReplicaSet:
        """Upstream ``updateReplicaSetStatus``: write when anything (or the observed
        generation) changed; one retry on a fresh copy after a conflict."""
        status = replace(status, observed_generation=rs.metadata.generation)
        if status == rs.status:
            return rs
        try:
            updated: ReplicaSet = await self.client.update_status(replace(rs, status=status))
        except Conflict:
            fresh: ReplicaSet = await self.client.get("ReplicaSet", rs.metadata.name, rs.metadata.namespace)
            status = replace(status, observed_generation=fresh.metadata.generation)
            updated = await self.client.update_status(replace(fresh, status=status))
        return updated
