"""The Deployment controller (upstream ``pkg/controller/deployment/deployment_controller.go``)
as an agent with the client ``controller:deployment``: event handlers, the work queue and
``syncDeployment``'s dispatch.

Handlers (upstream's): a Deployment added, changed or deleted is queued; a ReplicaSet is
queued under the Deployment controlling it, or, an orphan, under every Deployment in its
namespace whose selector matches it (one of them may adopt it); a pod's deletion queues
its Deployment when that uses Recreate (the new ReplicaSet waits for the old pods to go).
The pod informer starts with the first Deployment, so runs without Deployments never watch
pods here; the ReplicaSets and pods are read by their controller's UID (the informers'
controller-UID index, ``BaseController.owned``).

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

from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.base import OWNER_INDEX, BaseController
from agents.controllers.context import ControllerContext
from agents.controllers.controllerrefmanager import adopt, can_adopt, claim_action, release
from agents.controllers.controllerutils import controller_ref
from agents.controllers.deployment.progress import paused_condition
from agents.controllers.deployment.recreate import rollout_recreate
from agents.controllers.deployment.rolling import rollout_rolling
from agents.controllers.deployment.sync import Rollout, Writer, cleanup, new_replica_set, scale, sync_status
from agents.controllers.deployment.util import DESIRED_REPLICAS, active
from emulator.base.api.apps import Deployment, ReplicaSet
from emulator.base.api.core import Pod
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.client.indexer import CONTROLLER_UID_INDEX, ORPHAN
from emulator.base.client.informer import Informer

__all__ = ["COMPONENT", "NAME", "DeploymentController"]

NAME: Final = "deployment"
COMPONENT: Final = "deployment-controller"

Key = tuple[str, str]


def _key(obj: Any) -> Key:
    return (obj.metadata.namespace, obj.metadata.name)


def _selects_everything(d: Deployment) -> bool:
    sel = d.spec.selector
    return sel is not None and not sel.match_labels and not sel.match_expressions


class DeploymentController(BaseController):
    """Upstream's ``DeploymentController``."""

    NAME = NAME
    KIND = "Deployment"

    def __init__(self, ctx: ControllerContext, *, workers: int = 1) -> None:
        super().__init__(ctx, workers=workers)
        self.writer = Writer(self.client, ctx.clock, self.recorder)
        self._rss: Informer | None = None
        self._by_ns: dict[str, dict[Key, None]] = {}
        """namespace → its Deployments."""

    def statistics(self) -> dict[str, Any]:
        """Counters for the run report; empty while no object of its kind was ever seen."""
        if not self.counts["syncs"]:
            return {}
        c = self.counts
        return {"syncs": c["syncs"], "scaled": self.writer.scaled, "errors": c["errors"], "retries": self.queue.retries}

    def started(self) -> None:
        self._rss = self.informers.handlers(
            "ReplicaSet", self._rs_added, self._rs_updated, self._rs_deleted, indexers=OWNER_INDEX
        )

    # --- Deployment handlers --------------------------------------------------------------

    def on_add(self, d: Deployment) -> None:
        key = _key(d)
        self._by_ns.setdefault(key[0], {})[key] = None
        self.watch_dependents()
        self.queue.add(key)

    def on_update(self, old: Deployment, cur: Deployment) -> None:
        if old.metadata.uid != cur.metadata.uid:
            self.on_delete(old)
            self.on_add(cur)
            return
        self.queue.add(_key(cur))

    def on_delete(self, d: Deployment) -> None:
        key = _key(d)
        self._by_ns.get(key[0], {}).pop(key, None)
        self.queue.add(key)

    # --- ReplicaSet handlers --------------------------------------------------------------

    def _orphan_rs_seen(self, rs: ReplicaSet) -> None:
        if self.primary is None:
            return
        for d_key in self._by_ns.get(rs.metadata.namespace, {}):
            d = self.primary.store.get(d_key)
            if d is not None and label_selector_matches(d.spec.selector, rs.metadata.labels):
                self.queue.add(d_key)

    def _rs_added(self, rs: ReplicaSet) -> None:
        ref = controller_ref(rs)
        if ref is None:
            self._orphan_rs_seen(rs)
        elif (d_key := self.resolve(ref, rs.metadata.namespace)) is not None:
            self.queue.add(d_key)

    def _rs_updated(self, old: ReplicaSet, cur: ReplicaSet) -> None:
        if old.metadata.resource_version == cur.metadata.resource_version:
            return
        ns = cur.metadata.namespace
        cur_ref, old_ref = controller_ref(cur), controller_ref(old)
        ref_changed = (cur_ref.uid if cur_ref else None) != (old_ref.uid if old_ref else None)
        if ref_changed and (old_key := self.resolve(old_ref, ns)) is not None:
            self.queue.add(old_key)
        if cur_ref is not None:
            if (d_key := self.resolve(cur_ref, ns)) is not None:
                self.queue.add(d_key)
            return
        if ref_changed or old.metadata.labels != cur.metadata.labels:
            self._orphan_rs_seen(cur)

    def _rs_deleted(self, rs: ReplicaSet) -> None:
        if (d_key := self.resolve(controller_ref(rs), rs.metadata.namespace)) is not None:
            self.queue.add(d_key)

    # --- pod handlers (Recreate) ----------------------------------------------------------

    def on_dependent_delete(self, pod: Pod) -> None:
        """Upstream ``deletePod``: a Recreate Deployment whose pods are all gone is synced."""
        ref = controller_ref(pod)
        if ref is None or ref.kind != "ReplicaSet" or self.primary is None or self._rss is None:
            return
        rs: ReplicaSet | None = self._rss.store.get((pod.metadata.namespace, ref.name))
        if rs is None or rs.metadata.uid != ref.uid:
            return
        d_key = self.resolve(controller_ref(rs), rs.metadata.namespace)
        d = self.primary.store.get(d_key) if d_key is not None else None
        if d is None or d.spec.strategy.type != "Recreate":
            return
        if not any(self._pods_running(r) for r in self.owned(self._rss, d)):
            self.queue.add(_key(d))

    def _pods_running(self, rs: ReplicaSet) -> bool:
        """Whether a pod of ``rs`` is neither Succeeded nor Failed."""
        if self.dependents is None:
            return False
        return any(p.status.phase not in ("Succeeded", "Failed") for p in self.owned(self.dependents, rs))

    # --- sync -----------------------------------------------------------------------------

    async def sync(self, key: Key) -> None:
        """Upstream ``syncDeployment`` for one key (raises what should be retried)."""
        assert self.primary is not None
        assert self._rss is not None
        if self.dependents is not None:
            await self.dependents.synced.wait()
        await self._rss.synced.wait()
        d: Deployment | None = self.primary.store.get(key)
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
        owned = self._rss.index_keys(CONTROLLER_UID_INDEX, d.metadata.uid)
        orphans = [k for k in self._rss.index_keys(CONTROLLER_UID_INDEX, ORPHAN) if k[0] == ns]
        keys = sorted({*owned, *orphans})
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
                    claimed.append(adopted)
        return claimed
