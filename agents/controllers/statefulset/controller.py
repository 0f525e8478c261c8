"""``StatefulSetController``: upstream's ``pkg/controller/statefulset`` as an agent, client
``controller:statefulset``, Events as ``statefulset-controller``.

It watches StatefulSets through the shared informers, and pods from the first StatefulSet
it sees on (a run without StatefulSets never opens a pod watch), with the pod informer's
controller-UID index (a sync reads only its own pods). Pod handlers queue the owning set
(a pod update that changes nothing a sync reads, such as its binding, queues nothing); one
worker syncs a set at a time:

1. revisions: the update revision is ``<set>-<hash of spec.template>``, the current one
   ``status.currentRevision`` (the update revision for a new set). Each is a ControllerRevision
   the controller writes (``history.sync_history``, upstream's ``getStatefulSetRevisions``) and
   reads the current template back from; the oldest unused ones past ``revisionHistoryLimit``
   are deleted (``truncateHistory``);
2. ``control.plan_sync`` decides; the plan's writes run in order: failed pods deleted,
   pods created (``Parallel``: in slow-start batches), pods deleted (with the pod's UID as
   precondition, so a stale cache never deletes a pod's successor);
3. the status is written when it changed.

A set with ``volumeClaimTemplates`` (``claims``, ``claimcontrol``): each replica's claims are
created before its pod (a pod already there whose claims went missing while it is Pending gets
them again, upstream's ``createMissingPersistentVolumeClaims``), and every sync first brings the
claims' owner references in line with ``persistentVolumeClaimRetentionPolicy`` for every pod of
the set (upstream does it for condemned pods first, then replica by replica; here all at once
before the plan's writes), so the garbage collector deletes a claim with its set (whenDeleted
Delete) or with its scaled-down pod (whenScaled Delete). Claims are never deleted by this
controller. The claim informer opens with the first set that has templates.

A pod that turns Ready queues its set again ``minReadySeconds`` + 1 s later (upstream
``updatePod``), so ``availableReplicas`` counts it then, whatever the pod management policy.

Writes it waits to see (its *expectations*, by pod name, since a StatefulSet's pod names are
known in advance; upstream's controller has none and leans on AlreadyExists instead): a set
is not synced again until the informer shows the pods it created and the deletions it asked
for, or ``EXPECTATIONS_TIMEOUT`` passed. A failed write re-queues the set with the queue's
per-item backoff.

Events, upstream's: ``SuccessfulCreate`` "create Pod web-0 in StatefulSet web successful",
``SuccessfulDelete`` "delete Pod web-2 in StatefulSet web successful", and
``FailedCreate``/``FailedDelete`` with the error. Garbage collection of the pods of a
deleted set is not this controller's (the garbage collector's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from msgspec.structs import replace

from agents.controllers.base import OWNER_INDEX, BaseController
from agents.controllers.context import ControllerContext
from agents.controllers.controllerutils import EXPECTATIONS_TIMEOUT, BatchError, is_pod_ready, slow_start_batch
from agents.controllers.history import (
    CONTROLLER_REVISION_HASH,
    revision_name,
    revision_template,
    sync_history,
    template_hash,
    truncate_history,
)
from agents.controllers.statefulset.claimcontrol import create_claims, update_claim_owners
from agents.controllers.statefulset.claims import storage_matches
from agents.controllers.statefulset.control import Plan, Revisions, plan_sync
from agents.controllers.statefulset.identity import pod_revision
from emulator.base.api.apps import StatefulSet
from emulator.base.api.core import Pod
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.meta import ObjectReference
from emulator.base.client.indexer import CONTROLLER_UID_INDEX
from emulator.base.client.informer import Informer

__all__ = ["COMPONENT", "NAME", "StatefulSetController"]

NAME: Final = "statefulset"
COMPONENT: Final = "statefulset-controller"

Key = tuple[str, str]


@dataclass(slots=True)
class _Pending:
    """Pod names a set's last sync created or deleted, not yet seen by the informer."""

    at: float
    creates: set[str] = field(default_factory=set)
    deletes: set[str] = field(default_factory=set)


def _signature(pod: Pod) -> tuple[object, ...]:
    """What a sync reads of a pod: phase, readiness and since when, deletion, revision."""
    ready = next((c for c in pod.status.conditions if c.type == "Ready" and c.status == "True"), None)
    return (
        pod.status.phase,
        None if ready is None else ready.last_transition_time,
        pod.metadata.deletion_timestamp,
        pod_revision(pod),
    )


class StatefulSetController(BaseController):
    """Reconciles StatefulSets; ``await run()`` until cancelled."""

    NAME = NAME
    KIND = "StatefulSet"
    COUNTS = ("syncs", "created", "deleted", "statusUpdates", "errors", "claimsCreated", "claimsUpdated")

    def __init__(self, ctx: ControllerContext, *, workers: int = 1) -> None:
        super().__init__(ctx, workers=workers)
        self._history: Informer | None = None
        self._claims: Informer | None = None
        self._pending: dict[Key, _Pending] = {}

    # --- handlers -------------------------------------------------------------------------

    def on_delete(self, sts: StatefulSet) -> None:
        key = (sts.metadata.namespace, sts.metadata.name)
        self._pending.pop(key, None)
        self.queue.add(key)

    def on_dependent_add(self, pod: Pod) -> None:
        ref = self.owner_ref(pod)
        if ref is None:
            return
        key = (pod.metadata.namespace, ref.name)
        pending = self._pending.get(key)
        if pending is not None:
            pending.creates.discard(pod.metadata.name)
            if pod.metadata.deletion_timestamp is not None:
                pending.deletes.discard(pod.metadata.name)
        self.queue.add(key)

    def on_dependent_update(self, old: Pod, new: Pod) -> None:
        refs = self.owner_refs(old, new)
        if len(refs) == 1 and _signature(old) == _signature(new):
            return  # nothing a sync reads changed (the binding, other conditions)
        for ref in refs:
            key = (new.metadata.namespace, ref.name)
            pending = self._pending.get(key)
            if pending is not None and new.metadata.deletion_timestamp is not None:
                pending.deletes.discard(new.metadata.name)
            self.queue.add(key)
            self._requeue_when_available(key, old, new)

    def _requeue_when_available(self, key: Key, old: Pod, new: Pod) -> None:
        """Upstream ``stateful_set.go`` ``updatePod``: a pod that turns Ready queues its set again
        ``minReadySeconds`` (plus upstream's one second against skew) later, when it will count
        as available; nothing else would (``Parallel`` has no sync waiting on it)."""
        assert self.primary is not None
        sts: StatefulSet | None = self.primary.store.get(key)
        if sts is None or sts.spec.min_ready_seconds <= 0 or is_pod_ready(old) or not is_pod_ready(new):
            return
        self.queue.add_after(key, float(sts.spec.min_ready_seconds) + 1.0)

    def on_dependent_delete(self, pod: Pod) -> None:
        ref = self.owner_ref(pod)
        if ref is None:
            return
        key = (pod.metadata.namespace, ref.name)
        pending = self._pending.get(key)
        if pending is not None:
            pending.deletes.discard(pod.metadata.name)
        self.queue.add(key)

    def _satisfied(self, key: Key) -> bool:
        pending = self._pending.get(key)
        if pending is None:
            return True
        if (not pending.creates and not pending.deletes) or self.clock.now() - pending.at > EXPECTATIONS_TIMEOUT:
            del self._pending[key]
            return True
        return False

    # --- sync -----------------------------------------------------------------------------

    async def _revisions(self, sts: StatefulSet, pods: Sequence[Pod]) -> Revisions:
        """The current and update revisions, as ControllerRevisions (upstream
        ``getStatefulSetRevisions`` then ``truncateHistory``)."""
        if self._history is None:
            self._history = self.informers.handlers("ControllerRevision", indexers=OWNER_INDEX)
        await self._history.synced.wait()
        owned = self._history.by_index(CONTROLLER_UID_INDEX, sts.metadata.uid)
        hash_ = template_hash(sts.spec.template, sts.status.collision_count)
        update_name = revision_name(sts.metadata.name, sts.spec.template, sts.status.collision_count)
        update_rev, old = await sync_history(self.client, owned, sts, sts.spec.template, update_name, hash_)
        current = sts.status.current_revision or update_rev.metadata.name
        current_rev = next((r for r in old if r.metadata.name == current), None)
        current_template = revision_template(current_rev) if current_rev is not None else None
        live = {update_rev.metadata.name, current, *(p.metadata.labels.get(CONTROLLER_REVISION_HASH, "") for p in pods)}
        await truncate_history(self.client, old, live, sts.spec.revision_history_limit)
        return Revisions(
            current=current if current_template is not None else update_rev.metadata.name,
            update=update_rev.metadata.name,
            current_template=current_template if current_template is not None else sts.spec.template,
            update_template=sts.spec.template,
        )

    async def process(self, key: Key) -> None:
        assert self.primary is not None
        sts: StatefulSet | None = self.primary.store.get(key)
        if sts is None or self.dependents is None:
            return
        await self.dependents.synced.wait()
        if not self._satisfied(key):
            return
        self.counts["syncs"] += 1
        pods = self.owned(self.dependents, sts)
        try:
            if sts.spec.volume_claim_templates:
                await self._sync_claims(sts, pods)
            plan = plan_sync(sts, pods, await self._revisions(sts, pods), self.clock.now())
            await self._execute(key, sts, plan)
            if plan.status != sts.status:
                await self.client.update_status(replace(sts, status=plan.status))
                self.counts["statusUpdates"] += 1
        except ApiError:
            self.counts["errors"] += 1
            self.queue.add_rate_limited(key)
            return
        self.queue.forget(key)
        if plan.requeue_after is not None:
            self.queue.add_after(key, plan.requeue_after)

    async def _claim_informer(self) -> Informer:
        if self._claims is None:
            self._claims = self.informers.handlers("PersistentVolumeClaim")
        await self._claims.synced.wait()
        return self._claims

    async def _sync_claims(self, sts: StatefulSet, pods: Sequence[Pod]) -> None:
        """Claims of Pending pods (or pods whose volumes do not name them) created again when
        missing (upstream ``createMissingPersistentVolumeClaims``, ``UpdateStatefulPod``);
        owner references per the policy."""
        claims = await self._claim_informer()
        for pod in pods:
            missing = pod.status.phase == "Pending" or not storage_matches(sts, pod)
            if missing and pod.metadata.deletion_timestamp is None:
                self.counts["claimsCreated"] += (await create_claims(self.client, self.recorder, claims, sts, pod))[1]
            self.counts["claimsUpdated"] += await update_claim_owners(self.client, self.recorder, claims, sts, pod)

    def _expect(self, key: Key, *, creates: Sequence[Pod] = (), deletes: Sequence[Pod] = ()) -> None:
        pending = self._pending.setdefault(key, _Pending(at=self.clock.now()))
        pending.at = self.clock.now()
        pending.creates.update(p.metadata.name for p in creates)
        pending.deletes.update(p.metadata.name for p in deletes)

    def _unexpect(self, sts: StatefulSet, pod: Pod, which: str) -> None:
        """A write that failed will never be observed."""
        pending = self._pending.get((sts.metadata.namespace, sts.metadata.name))
        if pending is not None:
            (pending.creates if which == "creates" else pending.deletes).discard(pod.metadata.name)

    async def _execute(self, key: Key, sts: StatefulSet, plan: Plan) -> None:
        if plan.deletes_failed:
            self._expect(key, deletes=plan.deletes_failed)
            for pod in plan.deletes_failed:
                await self._delete(sts, pod)
        if plan.creates:
            creates = plan.creates

            async def create(i: int) -> None:
                await self._create(sts, creates[i])

            try:
                await slow_start_batch(len(creates), create)
            except BatchError as err:
                raise err.errors[0] from err
        if plan.deletes:
            self._expect(key, deletes=plan.deletes)
            for pod in plan.deletes:
                await self._delete(sts, pod)

    def _ref(self, sts: StatefulSet) -> ObjectReference:
        return ObjectReference(
            api_version=sts.api_version,
            kind="StatefulSet",
            namespace=sts.metadata.namespace,
            name=sts.metadata.name,
            uid=sts.metadata.uid,
        )

    async def _create(self, sts: StatefulSet, pod: Pod) -> None:
        verb = f"create Pod {pod.metadata.name} in StatefulSet {sts.metadata.name}"
        # expected one by one, as each is tried: a batch that stops early leaves none unseen
        self._expect((sts.metadata.namespace, sts.metadata.name), creates=[pod])
        try:
            made = None
            if sts.spec.volume_claim_templates:  # upstream CreateStatefulPod: the claims first
                made, n = await create_claims(self.client, self.recorder, await self._claim_informer(), sts, pod)
                self.counts["claimsCreated"] += n
            created = await self.client.create(pod)
            if made is not None:
                claims = await self._claim_informer()
                self.counts["claimsUpdated"] += await update_claim_owners(
                    self.client, self.recorder, claims, sts, created, made
                )
        except ApiError as err:
            self._unexpect(sts, pod, "creates")
            await self.recorder.event(self._ref(sts), "Warning", "FailedCreate", f"{verb} failed error: {err}")
            raise
        self.counts["created"] += 1
        await self.recorder.event(self._ref(sts), "Normal", "SuccessfulCreate", f"{verb} successful")

    async def _delete(self, sts: StatefulSet, pod: Pod) -> None:
        verb = f"delete Pod {pod.metadata.name} in StatefulSet {sts.metadata.name}"
        try:
            await self.client.delete("Pod", pod.metadata.name, pod.metadata.namespace, uid=pod.metadata.uid)
        except NotFound:
            self._unexpect(sts, pod, "deletes")
            return
        except ApiError as err:
            self._unexpect(sts, pod, "deletes")
            await self.recorder.event(self._ref(sts), "Warning", "FailedDelete", f"{verb} failed error: {err}")
            raise
        self.counts["deleted"] += 1
        await self.recorder.event(self._ref(sts), "Normal", "SuccessfulDelete", f"{verb} successful")
