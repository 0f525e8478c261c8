"""The Deployment controller (upstream ``pkg/controller/deployment/deployment_controller.go``)
as an agent with the client ``controller:deployment``: event handlers, the work queue and
``syncDeployment``'s dispatch.

Handlers (upstream's): a Deployment added, changed or deleted is queued; a ReplicaSet is
queued under the Deployment controlling it, or, an orphan, under every Deployment in its
namespace whose selector matches it (one of them may adopt it); a pod's deletion queues
its Deployment when that uses Recreate (the new ReplicaSet waits for the old pods to go).
The pod informer starts with the first Deployment, so runs without Deployments never watch
pods here; the pods are only indexed (ReplicaSet UID → pods not Succeeded or Failed).

``sync`` for one key, as upstream's ``syncDeployment``:

================================  ==========================================================
Deployment                        what the sync does
================================  ==========================================================
gone                              nothing
selects everything                ``SelectingAll`` Warning; only observedGeneration written
being deleted                     status only
paused                            Progressing DeploymentPaused; ``sync`` (scale, cleanup)
a scaling event (a ReplicaSet's   ``sync.scale``: proportional scaling across the active
  desired-replicas annotation       ReplicaSets
  differs from spec.replicas)
otherwise                         ``rolling.rollout_rolling`` or ``recreate.rollout_recreate``
================================  ==========================================================

Errors re-queue the key rate-limited, as upstream's ``handleErr``. Not here: the steps
themselves (``sync``, ``rolling``, ``recreate``, ``progress``, ``util``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.context import ControllerContext
from agents.controllers.controllerrefmanager import adopt, can_adopt, claim_action, release
from agents.controllers.controllerutils import controller_ref
from agents.controllers.deployment.progress import paused_condition
from agents.controllers.deployment.recreate import rollout_recreate
from agents.controllers.deployment.rolling import rollout_rolling
from agents.controllers.deployment.sync import Rollout, Writer, cleanup, new_replica_set, scale, sync_status
from agents.controllers.deployment.util import DESIRED_REPLICAS, active
from agents.controllers.workqueue import WorkQueue
from emulator.api.apps import Deployment, ReplicaSet
from emulator.api.core import Pod
from emulator.api.errors import ApiError
from emulator.api.labelselector import label_selector_matches
from emulator.api.meta import OwnerReference
from emulator.client.informer import Informer

__all__ = ["COMPONENT", "NAME", "DeploymentController"]

NAME: Final = "deployment"
COMPONENT: Final = "deployment-controller"

Key = tuple[str, str]


def _key(obj: Any) -> Key:
    return (obj.metadata.namespace, obj.metadata.name)


def _selects_everything(d: Deployment) -> bool:
    sel = d.spec.selector
    return sel is not None and not sel.match_labels and not sel.match_expressions


class DeploymentController:
    """Upstream's ``DeploymentController``."""

    def __init__(self, ctx: ControllerContext, *, workers: int = 1) -> None:
        self.client = ctx.client(NAME)
        self.clock = ctx.clock
        self.informers = ctx.informers
        self.writer = Writer(self.client, ctx.clock, ctx.recorder(NAME, COMPONENT))
        self.queue: WorkQueue[Key] = WorkQueue(ctx.clock, self.client.name)
        self.workers = workers
        self.ready = asyncio.Event()
        self._deployments: Informer | None = None
        self._rss: Informer | None = None
        self._pods: Informer | None = None
        self._d_key: dict[str, Key] = {}
        """Deployment UID → its key."""
        self._by_ns: dict[str, dict[Key, None]] = {}
        """namespace → its Deployments."""
        self._rs_of: dict[str, dict[Key, None]] = {}
        """Deployment UID → the ReplicaSets it controls."""
        self._rs_owner: dict[Key, str] = {}
        """ReplicaSet key → the UID of the Deployment controlling it."""
        self._rs_orphans: dict[str, dict[Key, None]] = {}
        """namespace → ReplicaSets without a controller."""
        self._rs_key: dict[str, Key] = {}
        """ReplicaSet UID → its key."""
        self._running: dict[str, dict[Key, None]] = {}
        """ReplicaSet UID → its pods not Succeeded or Failed."""
        self._pod_rs: dict[Key, str] = {}
        self.syncs = 0
        self.errors = 0

    def __repr__(self) -> str:
        return f"<DeploymentController syncs={self.syncs} scaled={self.writer.scaled} {self.queue!r}>"

    def statistics(self) -> dict[str, Any]:
        """Counters for the run report; empty while no object of its kind was ever seen."""
        if not self.syncs:
            return {}
        return {"syncs": self.syncs, "scaled": self.writer.scaled, "errors": self.errors, "retries": self.queue.retries}

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            self._deployments = self.informers.handlers("Deployment", self._d_added, self._d_updated, self._d_deleted)
            self._rss = self.informers.handlers("ReplicaSet", self._rs_added, self._rs_updated, self._rs_deleted)
            self.queue.run_workers(tg, self.workers, self._sync)
            self.ready.set()

    # --- Deployment handlers --------------------------------------------------------------

    def _d_added(self, d: Deployment) -> None:
        key = _key(d)
        self._d_key[d.metadata.uid] = key
        self._by_ns.setdefault(key[0], {})[key] = None
        if self._pods is None:
            self._pods = self.informers.handlers("Pod", self._pod_added, self._pod_updated, self._pod_deleted)
        self.queue.add(key)

    def _d_updated(self, old: Deployment, cur: Deployment) -> None:
        if old.metadata.uid != cur.metadata.uid:
            self._d_deleted(old)
            self._d_added(cur)
            return
        self.queue.add(_key(cur))

    def _d_deleted(self, d: Deployment) -> None:
        key = _key(d)
        if self._d_key.get(d.metadata.uid) == key:
            del self._d_key[d.metadata.uid]
        self._by_ns.get(key[0], {}).pop(key, None)
        self.queue.add(key)

    # --- ReplicaSet handlers --------------------------------------------------------------

    def _deployment_for(self, ref: OwnerReference | None, namespace: str) -> Key | None:
        if ref is None or ref.kind != "Deployment":
            return None
        key = self._d_key.get(ref.uid)
        return key if key is not None and key == (namespace, ref.name) else None

    def _index_rs(self, rs: ReplicaSet) -> None:
        key = _key(rs)
        self._rs_key[rs.metadata.uid] = key
        ref = controller_ref(rs)
        owner = ref.uid if ref is not None and ref.kind == "Deployment" else None
        was = self._rs_owner.get(key)
        if was is not None and was != owner:
            self._rs_of.get(was, {}).pop(key, None)
            del self._rs_owner[key]
        if owner is not None:
            self._rs_of.setdefault(owner, {})[key] = None
            self._rs_owner[key] = owner
        orphans = self._rs_orphans.setdefault(key[0], {})
        if ref is None:
            orphans[key] = None
        else:
            orphans.pop(key, None)

    def _orphan_rs_seen(self, rs: ReplicaSet) -> None:
        if self._deployments is None:
            return
        for d_key in self._by_ns.get(rs.metadata.namespace, {}):
            d = self._deployments.store.get(d_key)
            if d is not None and label_selector_matches(d.spec.selector, rs.metadata.labels):
                self.queue.add(d_key)

    def _rs_added(self, rs: ReplicaSet) -> None:
        self._index_rs(rs)
        ref = controller_ref(rs)
        if ref is None:
            self._orphan_rs_seen(rs)
        elif (d_key := self._deployment_for(ref, rs.metadata.namespace)) is not None:
            self.queue.add(d_key)

    def _rs_updated(self, old: ReplicaSet, cur: ReplicaSet) -> None:
        if old.metadata.resource_version == cur.metadata.resource_version:
            return
        self._index_rs(cur)
        ns = cur.metadata.namespace
        cur_ref, old_ref = controller_ref(cur), controller_ref(old)
        ref_changed = (cur_ref.uid if cur_ref else None) != (old_ref.uid if old_ref else None)
        if ref_changed and (old_key := self._deployment_for(old_ref, ns)) is not None:
            self.queue.add(old_key)
        if cur_ref is not None:
            if (d_key := self._deployment_for(cur_ref, ns)) is not None:
                self.queue.add(d_key)
            return
        if ref_changed or old.metadata.labels != cur.metadata.labels:
            self._orphan_rs_seen(cur)

    def _rs_deleted(self, rs: ReplicaSet) -> None:
        key = _key(rs)
        self._rs_key.pop(rs.metadata.uid, None)
        owner = self._rs_owner.pop(key, None)
        if owner is not None:
            self._rs_of.get(owner, {}).pop(key, None)
        self._rs_orphans.get(key[0], {}).pop(key, None)
        if (d_key := self._deployment_for(controller_ref(rs), rs.metadata.namespace)) is not None:
            self.queue.add(d_key)

    # --- pod handlers (Recreate) ----------------------------------------------------------

    def _index_pod(self, pod: Pod, *, gone: bool = False) -> None:
        key = _key(pod)
        ref = controller_ref(pod)
        rs_uid = ref.uid if ref is not None and ref.kind == "ReplicaSet" else None
        if gone or pod.status.phase in ("Succeeded", "Failed"):
            rs_uid = None
        was = self._pod_rs.get(key)
        if was is not None and was != rs_uid:
            running = self._running.get(was)
            if running is not None:
                running.pop(key, None)
                if not running:
                    del self._running[was]
            del self._pod_rs[key]
        if rs_uid is not None:
            self._running.setdefault(rs_uid, {})[key] = None
            self._pod_rs[key] = rs_uid

    def _pod_added(self, pod: Pod) -> None:
        self._index_pod(pod)

    def _pod_updated(self, old: Pod, cur: Pod) -> None:
        self._index_pod(cur)

    def _pod_deleted(self, pod: Pod) -> None:
        """Upstream ``deletePod``: a Recreate Deployment whose pods are all gone is synced."""
        self._index_pod(pod, gone=True)
        ref = controller_ref(pod)
        if ref is None or ref.kind != "ReplicaSet" or self._deployments is None:
            return
        rs_key = self._rs_key.get(ref.uid)
        d_uid = self._rs_owner.get(rs_key) if rs_key is not None else None
        d_key = self._d_key.get(d_uid) if d_uid is not None else None
        d = self._deployments.store.get(d_key) if d_key is not None else None
        if d is None or d.spec.strategy.type != "Recreate":
            return
        rs_uids = [self._rs_uid(k) for k in self._rs_of.get(d.metadata.uid, {})]
        if not any(u in self._running for u in rs_uids if u is not None):
            self.queue.add(_key(d))

    def _rs_uid(self, key: Key) -> str | None:
        rs = self._rss.store.get(key) if self._rss is not None else None
        return rs.metadata.uid if rs is not None else None

    def _pods_running(self, rs: ReplicaSet) -> bool:
        return bool(self._running.get(rs.metadata.uid))

    # --- sync -----------------------------------------------------------------------------

    async def _sync(self, key: Key) -> None:
        self.syncs += 1
        if not await self.queue.process(key, self.sync, (ApiError,)):
            self.errors += 1

    async def sync(self, key: Key) -> None:
        """Upstream ``syncDeployment`` for one key (raises what should be retried)."""
        assert self._deployments is not None
        assert self._rss is not None
        if self._pods is not None:
            await self._pods.synced.wait()
        await self._rss.synced.wait()
        d: Deployment | None = self._deployments.store.get(key)
        if d is None:
            return
        w = self.writer
        if _selects_everything(d):
            msg = "This deployment is selecting all pods. A non-empty selector is required."
            await w.event(d, "Warning", "SelectingAll", msg)
            if d.status.observed_generation < d.metadata.generation:
                status = replace(d.status, observed_generation=d.metadata.generation)
                await self.client.update_status(replace(d, status=status))
            return
        ro = Rollout(d, await self._claim(d))
        if d.metadata.deletion_timestamp is not None:
            new_rs, old_rss = await new_replica_set(w, ro, create=False)
            await sync_status(w, ro, new_rs, old_rss)
            return
        if (paused := paused_condition(d, w.now())) is not None:
            await w.write_status(ro, paused)
        if ro.d.spec.paused or await self._scaling_event(ro):
            new_rs, old_rss = await new_replica_set(w, ro, create=False)
            await scale(w, ro, new_rs, old_rss)
            if ro.d.spec.paused:
                await cleanup(w, ro, old_rss)
            await sync_status(w, ro, new_rs, old_rss)
            return
        if ro.d.spec.strategy.type == "Recreate":
            delay = await rollout_recreate(w, ro, self._pods_running)
        else:
            delay = await rollout_rolling(w, ro)
        if delay is not None:
            if delay <= 0:
                self.queue.add_rate_limited(key)
            else:
                self.queue.add_after(key, delay)

    async def _scaling_event(self, ro: Rollout) -> bool:
        """Upstream ``isScalingEvent``: an active ReplicaSet's desired-replicas annotation
        differs from ``spec.replicas``."""
        new_rs, old_rss = await new_replica_set(self.writer, ro, create=False)
        for rs in active([*old_rss, new_rs]):
            try:
                desired = int(rs.metadata.annotations[DESIRED_REPLICAS])
            except (KeyError, ValueError):
                continue
            if desired != ro.d.spec.replicas:
                return True
        return False

    async def _claim(self, d: Deployment) -> list[ReplicaSet]:
        """Upstream ``getReplicaSetsForDeployment``: the ReplicaSets it controls, after
        adopting matching orphans and releasing those its selector no longer matches."""
        assert self._rss is not None
        ns = d.metadata.namespace
        keys = sorted({**self._rs_of.get(d.metadata.uid, {}), **self._rs_orphans.get(ns, {})})
        claimed: list[ReplicaSet] = []
        checked = False
        for k in keys:
            rs: ReplicaSet | None = self._rss.store.get(k)
            if rs is None:
                continue
            action = claim_action(rs, d, label_selector_matches(d.spec.selector, rs.metadata.labels))
            if action == "keep":
                claimed.append(rs)
            elif action == "release":
                await release(self.client, rs, d)
            elif action == "adopt":
                if not checked:
                    await can_adopt(self.client, d)
                    checked = True
                adopted = await adopt(self.client, rs, d)
                if adopted is not None:
                    self._index_rs(adopted)
                    claimed.append(adopted)
        return claimed
