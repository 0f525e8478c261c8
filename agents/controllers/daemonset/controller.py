"""``DaemonSetController``: upstream's ``pkg/controller/daemon`` as an agent, client
``controller:daemonset``, Events as ``daemonset-controller``.

It watches DaemonSets through the shared informers, and Nodes and pods from the first
DaemonSet it sees on (a run without DaemonSets opens neither watch). Handlers queue:

- a DaemonSet on its own changes, and on changes of the pods it controls (by the pod's
  controller reference; the pods are filed by owner in ``Placement``);
- every DaemonSet that should run on a node added or deleted, and every DaemonSet whose
  decision for a node changes when the node's labels or taints do (other node updates,
  such as status heartbeats, are ignored, as upstream's ``shouldIgnoreNodeUpdate``).

One worker syncs a set at a time, as upstream's ``syncDaemonSet``: the revision hash of the
template (``controller-revision-hash``; no ControllerRevision objects, see ``history``), then
``manage`` (create a pod for each node that should run one and has none; delete pods where
they should not run, extra ones, failed ones with a per-node backoff), then, if that wrote
nothing and some pod is outdated, the rolling update (``update``; ``OnDelete`` skips it),
then the status. A set whose expectations are not yet met gets only its status written,
without raising ``observedGeneration`` (upstream ``syncDaemonSet``: ``updateDaemonSetStatus``
with ``updateObservedGen`` false), so ``kubectl get ds`` counts pods while a burst lands.

Pods are created from the template with the daemon tolerations, the labels
``controller-revision-hash`` and ``pod-template-generation``, and the required node affinity
``metadata.name In [node]`` in place of any other, so the default scheduler binds them (no
``nodeName`` is set, as upstream since 1.12); in slow-start batches of at most
``BURST_REPLICAS`` per sync. Expectations: a set is not synced again until the creations
and deletions it asked for are seen (or ``EXPECTATIONS_TIMEOUT``). Events, upstream's
``podControl`` ones: ``SuccessfulCreate`` "Created pod: agent-x7k2p", ``SuccessfulDelete``
"Deleted pod: …", ``FailedCreate``/``FailedDelete``, and ``FailedDaemonPod`` (Warning) for a
failed pod it deletes.

Left out: ``ControllerRevision`` history and ``collisionCount``, adoption of orphan pods,
the 30 s status resync of upstream's informers (a status is written on every sync that
changes it, and after ``minReadySeconds`` when pods wait to become available).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from msgspec.structs import replace

from agents.controllers.base import OWNER_INDEX, BaseController
from agents.controllers.context import ControllerContext
from agents.controllers.controllerutils import (
    EXPECTATIONS_TIMEOUT,
    BatchError,
    controller_ref,
    pod_from_template,
    slow_start_batch,
)
from agents.controllers.daemonset.eligibility import (
    daemon_pod_template,
    daemon_tolerations,
    is_pod_updated,
    node_should_run,
    replace_node_name_affinity,
    template_generation,
)
from agents.controllers.daemonset.manage import (
    Eligibility,
    FailedPodBackoff,
    daemon_status,
    manage,
)
from agents.controllers.daemonset.placement import Placement, relevant
from agents.controllers.daemonset.update import rolling_update, surge_enabled
from agents.controllers.history import CONTROLLER_REVISION_HASH, sync_history, template_hash, truncate_history
from emulator.base.api.apps import ControllerRevision, DaemonSet, DaemonSetStatus
from emulator.base.api.core import Node, Pod, Toleration
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.meta import ObjectReference
from emulator.base.client.indexer import CONTROLLER_UID_INDEX
from emulator.base.client.informer import Informer

PodKey = tuple[str, str]

__all__ = ["BURST_REPLICAS", "COMPONENT", "NAME", "DaemonSetController"]

NAME: Final = "daemonset"
COMPONENT: Final = "daemonset-controller"
BURST_REPLICAS: Final = 250
"""Upstream ``BurstReplicas``: at most this many creations (and deletions) per sync."""

Key = tuple[str, str]


@dataclass(slots=True)
class _Pending:
    at: float
    creates: int = 0
    deletes: set[PodKey] = field(default_factory=set)


def _pod_key(pod: Pod) -> PodKey:
    return (pod.metadata.namespace, pod.metadata.name)


class DaemonSetController(BaseController):
    """Reconciles DaemonSets; ``await run()`` until cancelled."""

    NAME = NAME
    KIND = "DaemonSet"
    COUNTS = ("syncs", "created", "deleted", "statusUpdates", "errors")

    def __init__(self, ctx: ControllerContext, *, workers: int = 1) -> None:
        super().__init__(ctx, workers=workers)
        self._nodes: Informer | None = None
        self._history: Informer | None = None
        self._placement = Placement()
        self._pending: dict[Key, _Pending] = {}
        self._backoff = FailedPodBackoff()
        self._node_names: list[str] | None = None
        """Node names in order; rebuilt after a node is added or deleted."""
        self._decisions: dict[str, tuple[str, dict[str, tuple[str, tuple[bool, bool]]]]] = {}
        """DaemonSet UID → (template hash, node name → (node resourceVersion, decision))."""

    # --- handlers -------------------------------------------------------------------------

    def _watch(self) -> None:
        if self._nodes is None:
            self._nodes = self.informers.handlers("Node", self._node_added, self._node_updated, self._node_deleted)

    def on_add(self, ds: DaemonSet) -> None:
        self._watch()
        super().on_add(ds)

    def on_delete(self, ds: DaemonSet) -> None:
        key = (ds.metadata.namespace, ds.metadata.name)
        self._pending.pop(key, None)
        self._placement.forget(ds.metadata.uid)
        self._backoff.forget_owner(ds.metadata.uid)
        self._decisions.pop(ds.metadata.uid, None)

    def _sets_sorted(self) -> list[DaemonSet]:
        assert self.primary is not None
        return [self.primary.store[k] for k in sorted(self.primary.store)]

    def _node_added(self, node: Node) -> None:
        self._node_names = None
        for ds in self._sets_sorted():
            if node_should_run(node, ds)[0]:
                self.queue.add((ds.metadata.namespace, ds.metadata.name))

    def _node_updated(self, old: Node, new: Node) -> None:
        if old.metadata.labels == new.metadata.labels and old.spec.taints == new.spec.taints:
            return
        for ds in self._sets_sorted():
            if node_should_run(old, ds) != node_should_run(new, ds):
                self.queue.add((ds.metadata.namespace, ds.metadata.name))

    def _node_deleted(self, node: Node) -> None:
        self._node_names = None
        for ds in self._sets_sorted():
            self.queue.add((ds.metadata.namespace, ds.metadata.name))

    def on_dependent_add(self, pod: Pod) -> None:
        ref = self.owner_ref(pod)
        if ref is None:
            return
        self._placement.add(ref.uid, pod)
        key = (pod.metadata.namespace, ref.name)
        pending = self._pending.get(key)
        if pending is not None:
            pending.creates -= 1
            if pod.metadata.deletion_timestamp is not None:
                pending.deletes.discard(_pod_key(pod))
        self.queue.add(key)

    def on_dependent_update(self, old: Pod, new: Pod) -> None:
        refs = self.owner_refs(old, new)
        old_ref, new_ref = controller_ref(old), controller_ref(new)
        if old_ref is not None:
            self._placement.remove(old_ref.uid, old)
        if new_ref is not None and new_ref.kind == "DaemonSet":
            self._placement.add(new_ref.uid, new)
        moved = (old_ref.uid if old_ref else None) != (new_ref.uid if new_ref else None)
        for ref in refs:
            if not moved and not relevant(old, new):
                continue
            key = (new.metadata.namespace, ref.name)
            pending = self._pending.get(key)
            if pending is not None and new.metadata.deletion_timestamp is not None:
                pending.deletes.discard(_pod_key(new))
            self.queue.add(key)

    def on_dependent_delete(self, pod: Pod) -> None:
        ref = self.owner_ref(pod)
        if ref is None:
            return
        self._placement.remove(ref.uid, pod)
        key = (pod.metadata.namespace, ref.name)
        pending = self._pending.get(key)
        if pending is not None:
            pending.deletes.discard(_pod_key(pod))
        self.queue.add(key)

    def _satisfied(self, key: Key) -> bool:
        pending = self._pending.get(key)
        if pending is None:
            return True
        if (pending.creates <= 0 and not pending.deletes) or self.clock.now() - pending.at > EXPECTATIONS_TIMEOUT:
            del self._pending[key]
            return True
        return False

    # --- sync -----------------------------------------------------------------------------

    async def process(self, key: Key) -> None:
        assert self.primary is not None
        ds: DaemonSet | None = self.primary.store.get(key)
        if ds is None or self.dependents is None or self._nodes is None:
            return
        await self.dependents.synced.wait()
        await self._nodes.synced.wait()
        if ds.metadata.deletion_timestamp is not None:
            return
        now = self.clock.now()
        hash_ = template_hash(ds.spec.template, ds.status.collision_count)
        generation = template_generation(ds)
        eligible = self._eligibility(ds, hash_)
        by_node = self._placement.by_node(ds.metadata.uid)
        if not self._satisfied(key):
            # waiting for its own writes (their events queue it again): the status only
            try:
                await self._write_status(
                    key, ds, daemon_status(ds, eligible, by_node, hash_, generation, now, observe=False)
                )
            except ApiError:
                self.counts["errors"] += 1
                self.queue.add_rate_limited(key)
            return
        self.counts["syncs"] += 1
        outdated = any(
            p.metadata.labels.get(CONTROLLER_REVISION_HASH) != hash_ and not is_pod_updated(p, hash_, generation)
            for p in self._placement.pods(ds.metadata.uid)
        )
        requeue: float | None = None
        try:
            old = await self._construct_history(ds, hash_)
            plan = manage(ds, eligible, by_node, hash_, self._backoff, now, surge=surge_enabled(ds))
            requeue = plan.requeue_after
            for pod, node in plan.failed:
                who = f"{pod.metadata.namespace}/{pod.metadata.name}"
                msg = f"Found failed daemon pod {who} on node {node}, will try to kill it"
                await self.recorder.event(self._ref(ds), "Warning", "FailedDaemonPod", msg)
            wrote = await self._sync_nodes(key, ds, plan.delete, plan.create_on, hash_)
            if not wrote and outdated and ds.spec.update_strategy.type == "RollingUpdate":
                update = rolling_update(ds, eligible, by_node, hash_, generation, now)
                await self._sync_nodes(key, ds, update.delete, update.create_on, hash_)
            live = {
                hash_,
                *(p.metadata.labels.get(CONTROLLER_REVISION_HASH, "") for p in self._placement.pods(ds.metadata.uid)),
            }
            await truncate_history(self.client, old, live, ds.spec.revision_history_limit)
            await self._write_status(key, ds, daemon_status(ds, eligible, by_node, hash_, generation, now))
        except ApiError:
            self.counts["errors"] += 1
            self.queue.add_rate_limited(key)
            return
        self.queue.forget(key)
        if requeue is not None:
            self.queue.add_after(key, requeue)

    async def _write_status(self, key: Key, ds: DaemonSet, status: DaemonSetStatus) -> None:
        """Upstream ``updateDaemonSetStatus``'s write: only a changed status; and a sync again
        after ``minReadySeconds`` while ready pods wait to become available."""
        if status != ds.status:
            await self.client.update_status(replace(ds, status=status))
            self.counts["statusUpdates"] += 1
        if ds.spec.min_ready_seconds > 0 and status.number_ready != status.number_available:
            self.queue.add_after(key, float(ds.spec.min_ready_seconds))

    async def _construct_history(self, ds: DaemonSet, hash_: str) -> list[ControllerRevision]:
        """Upstream ``constructHistory``: the template's ControllerRevision written (or renumbered
        to be the newest); the older ones, for ``cleanupHistory``."""
        if self._history is None:
            self._history = self.informers.handlers("ControllerRevision", indexers=OWNER_INDEX)
        await self._history.synced.wait()
        owned = self._history.by_index(CONTROLLER_UID_INDEX, ds.metadata.uid)
        _, old = await sync_history(self.client, owned, ds, ds.spec.template, f"{ds.metadata.name}-{hash_}", hash_)
        return old

    def _eligibility(self, ds: DaemonSet, hash_: str) -> Eligibility:
        """``node_should_run`` of every node, in name order; a node's decision is kept until
        the node (its resourceVersion) or the template (its hash) changes, so a sync of a set
        on 1,000 nodes does not redo 1,000 selector and taint checks."""
        assert self._nodes is not None
        store = self._nodes.store
        if self._node_names is None:
            self._node_names = sorted(name for _, name in store)
        cached = self._decisions.get(ds.metadata.uid)
        if cached is None or cached[0] != hash_:
            cached = (hash_, {})
            self._decisions[ds.metadata.uid] = cached
        decisions = cached[1]
        tolerations: list[Toleration] | None = None
        out: Eligibility = {}
        for name in self._node_names:
            node = store[("", name)]
            rv = node.metadata.resource_version
            hit = decisions.get(name)
            if hit is None or hit[0] != rv:
                if tolerations is None:
                    tolerations = daemon_tolerations(ds.spec.template.spec)
                hit = decisions[name] = (rv, node_should_run(node, ds, tolerations))
            out[name] = hit[1]
        if len(decisions) > len(out):
            for name in [n for n in decisions if n not in out]:
                del decisions[name]
        return out

    def _ref(self, ds: DaemonSet) -> ObjectReference:
        return ObjectReference(
            api_version=ds.api_version,
            kind="DaemonSet",
            namespace=ds.metadata.namespace,
            name=ds.metadata.name,
            uid=ds.metadata.uid,
        )

    async def _sync_nodes(self, key: Key, ds: DaemonSet, delete: list[Pod], create_on: list[str], hash_: str) -> bool:
        """Upstream ``syncNodes``: create on ``create_on``, delete ``delete`` (each capped at
        ``BURST_REPLICAS``); whether anything was asked for."""
        create_on = create_on[:BURST_REPLICAS]
        delete = delete[:BURST_REPLICAS]
        if not create_on and not delete:
            return False
        pending = self._pending.setdefault(key, _Pending(at=self.clock.now()))
        pending.at = self.clock.now()
        pending.creates += len(create_on)
        pending.deletes.update(_pod_key(p) for p in delete)
        template = daemon_pod_template(ds, hash_)
        error: ApiError | None = None

        async def create(i: int) -> None:
            node = create_on[i]
            pod = pod_from_template(template, ds, ds.metadata.namespace)
            pod = replace(pod, spec=replace(pod.spec, affinity=replace_node_name_affinity(pod.spec.affinity, node)))
            try:
                made = await self.client.create(pod)
            except ApiError as err:
                pending.creates -= 1
                await self.recorder.event(self._ref(ds), "Warning", "FailedCreate", f"Error creating: {err}")
                raise
            self.counts["created"] += 1
            await self.recorder.event(self._ref(ds), "Normal", "SuccessfulCreate", f"Created pod: {made.metadata.name}")

        if create_on:
            try:
                await slow_start_batch(len(create_on), create)
            except BatchError as err:
                skipped = len(create_on) - err.succeeded - len(err.errors)
                pending.creates -= skipped
                first = err.errors[0]
                error = first if isinstance(first, ApiError) else None
                if error is None:
                    raise first from err
        for pod in delete:
            try:
                await self.client.delete("Pod", pod.metadata.name, pod.metadata.namespace, uid=pod.metadata.uid)
            except NotFound:
                pending.deletes.discard(_pod_key(pod))
                continue
            except ApiError as err:
                pending.deletes.discard(_pod_key(pod))
                await self.recorder.event(self._ref(ds), "Warning", "FailedDelete", f"Error deleting: {err}")
                error = error or err
                continue
            self.counts["deleted"] += 1
            await self.recorder.event(self._ref(ds), "Normal", "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")
        if error is not None:
            raise error
        return True
