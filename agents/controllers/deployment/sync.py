"""The Deployment controller's writes and its shared sync steps (upstream ``sync.go``):
finding or creating the new ReplicaSet with its ``pod-template-hash`` and revision
(``new_replica_set``), scaling a ReplicaSet with the ``ScalingReplicaSet`` Event
(``Writer.scale``), proportional scaling of a Deployment resized mid-rollout (``scale``),
the revision-history cleanup (``cleanup``) and the status write (``sync_status``).

``Rollout`` is one sync's view: the Deployment as last written and its ReplicaSets. Where
upstream mutates the Deployment and writes it with ``UpdateStatus`` (which also persists
its annotations: the status strategy keeps only spec and labels), this writes the
``deployment.kubernetes.io/revision`` annotation with an update first, then the status:
the emulated API server's status subresource changes the status only.

Not here: the rollout strategies (``rolling``, ``recreate``), the progress conditions
(``progress``), the event handlers and queue (``controller``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Final

from msgspec.structs import replace

from agents.controllers.controllerutils import owner_ref
from agents.controllers.deployment.progress import rollout_status, stuck_requeue
from agents.controllers.deployment.util import (
    POD_TEMPLATE_HASH,
    REVISION,
    active,
    by_creation,
    calculate_status,
    compute_hash,
    equal_ignore_hash,
    find_active_or_latest,
    find_new_rs,
    find_old_rss,
    get_condition,
    has_progress_deadline,
    is_saturated,
    max_revision,
    max_surge,
    new_condition,
    new_rs_annotations,
    new_rs_new_replicas,
    replica_set_proportion,
    replicas_annotations,
    revision,
    set_condition,
    spec_replicas,
)
from emulator.base.api.apps import Deployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec
from emulator.base.api.core import LabelSelector
from emulator.base.api.errors import AlreadyExists, ApiError, NotFound
from emulator.base.api.meta import ObjectMeta, reference_to
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.runtime.clock import Clock

__all__ = [
    "Rollout",
    "Writer",
    "cleanup",
    "new_replica_set",
    "old_and_new",
    "scale",
    "sync_rollout_status",
    "sync_status",
]

NEW_RS_REASON: Final = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON: Final = "FoundNewReplicaSet"
FAILED_RS_CREATE_REASON: Final = "ReplicaSetCreateError"


@dataclass(slots=True)
class Rollout:
    """One sync of one Deployment: the Deployment as last written, its ReplicaSets."""

    d: Deployment
    rss: list[ReplicaSet]

    def put(self, rs: ReplicaSet) -> ReplicaSet:
        """``rs`` was written: later steps of this sync see that version."""
        uid = rs.metadata.uid
        self.rss = [rs if r.metadata.uid == uid else r for r in self.rss]
        if all(r.metadata.uid != uid for r in self.rss):
            self.rss.append(rs)
        return rs


class Writer:
    """The Deployment controller's client, clock and Event recorder, and its writes."""

    def __init__(self, client: Client, clock: Clock, recorder: EventRecorder) -> None:
        self.client = client
        self.clock = clock
        self.recorder = recorder
        self.scaled = 0

    def now(self) -> str:
        return self.clock.timestamp()

    async def event(self, d: Deployment, type_: str, reason: str, message: str) -> None:
        await self.recorder.event(reference_to(d), type_, reason, message)

    async def write_status(self, ro: Rollout, status: DeploymentStatus) -> None:
        """``UpdateStatus`` unless nothing changed."""
        if status != ro.d.status:
            ro.d = await self.client.update_status(replace(ro.d, status=status))

    async def set_revision(self, ro: Rollout, rev: str) -> None:
        """Upstream ``SetDeploymentRevision``, written at once (see the module docstring)."""
        d = ro.d
        if d.metadata.annotations.get(REVISION) == rev:
            return
        annotations = {**d.metadata.annotations, REVISION: rev}
        ro.d = await self.client.update(replace(d, metadata=replace(d.metadata, annotations=annotations)))

    async def scale(self, ro: Rollout, rs: ReplicaSet, new_scale: int, operation: str) -> tuple[bool, ReplicaSet]:
        """Upstream ``scaleReplicaSet``: write the size and the replica annotations if either
        changed; a ``ScalingReplicaSet`` Event when the size did."""
        d = ro.d
        replicas = d.spec.replicas or 0
        old_scale = rs.spec.replicas or 0
        annotations = dict(rs.metadata.annotations)
        annotations_changed = replicas_annotations(annotations, replicas, replicas + max_surge(d))
        if old_scale == new_scale and not annotations_changed:
            return False, rs
        wanted = replace(
            rs, metadata=replace(rs.metadata, annotations=annotations), spec=replace(rs.spec, replicas=new_scale)
        )
        updated: ReplicaSet = ro.put(await self.client.update(wanted))
        if old_scale == new_scale:
            return False, updated
        self.scaled += 1
        await self.event(
            d,
            "Normal",
            "ScalingReplicaSet",
            f"Scaled {operation} replica set {rs.metadata.name} from {old_scale} to {new_scale}",
        )
        return True, updated

    async def scale_and_record(self, ro: Rollout, rs: ReplicaSet, new_scale: int) -> tuple[bool, ReplicaSet]:
        """Upstream ``scaleReplicaSetAndRecordEvent``."""
        size = rs.spec.replicas or 0
        if size == new_scale:
            return False, rs
        return await self.scale(ro, rs, new_scale, "up" if size < new_scale else "down")


def old_and_new(ro: Rollout) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
    """(the new ReplicaSet or None, all the old ones) of the rollout's current state."""
    new_rs = find_new_rs(ro.d, ro.rss)
    return new_rs, find_old_rss(ro.d, ro.rss, new_rs)


async def new_replica_set(w: Writer, ro: Rollout, create: bool) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
    """Upstream ``getAllReplicaSetsAndSyncRevision``/``getNewReplicaSet``: the new
    ReplicaSet (its revision and ``minReadySeconds`` brought up to date; created when
    ``create`` and missing) and the old ones."""
    existing, old_rss = old_and_new(ro)
    new_revision = max_revision(old_rss) + 1
    d = ro.d
    if existing is not None:
        annotations = dict(existing.metadata.annotations)
        changed = new_rs_annotations(d, annotations, new_revision, exists=True)
        if changed or existing.spec.min_ready_seconds != d.spec.min_ready_seconds:
            wanted = replace(
                existing,
                metadata=replace(existing.metadata, annotations=annotations),
                spec=replace(existing.spec, min_ready_seconds=d.spec.min_ready_seconds),
            )
            return ro.put(await w.client.update(wanted)), old_rss
        await w.set_revision(ro, existing.metadata.annotations.get(REVISION, ""))
        if has_progress_deadline(ro.d) and get_condition(ro.d.status, "Progressing") is None:
            msg = f'Found new replica set "{existing.metadata.name}"'
            cond = new_condition("Progressing", "True", FOUND_NEW_RS_REASON, msg, w.now())
            await w.write_status(ro, set_condition(ro.d.status, cond))
        return existing, old_rss
    if not create:
        return None, old_rss
    return await _create_new(w, ro, old_rss, new_revision), old_rss


async def _create_new(w: Writer, ro: Rollout, old_rss: list[ReplicaSet], new_revision: int) -> ReplicaSet:
    d = ro.d
    template_hash = compute_hash(d.spec.template, d.status.collision_count)
    labels = {**d.spec.template.metadata.labels, POD_TEMPLATE_HASH: template_hash}
    template = replace(d.spec.template, metadata=replace(d.spec.template.metadata, labels=labels))
    selector = d.spec.selector or LabelSelector()
    selector = replace(selector, match_labels={**selector.match_labels, POD_TEMPLATE_HASH: template_hash})
    name = f"{d.metadata.name}-{template_hash}"
    new_rs = ReplicaSet(
        metadata=ObjectMeta(name=name, namespace=d.metadata.namespace, owner_references=[owner_ref(d)], labels=labels),
        spec=ReplicaSetSpec(
            replicas=0, min_ready_seconds=d.spec.min_ready_seconds, selector=selector, template=template
        ),
    )
    replicas = new_rs_new_replicas(d, [*old_rss, new_rs], new_rs)
    annotations: dict[str, str] = {}
    new_rs_annotations(d, annotations, new_revision, exists=False)
    new_rs = replace(
        new_rs,
        metadata=replace(new_rs.metadata, annotations=annotations),
        spec=replace(new_rs.spec, replicas=replicas),
    )
    already = False
    try:
        created: ReplicaSet = await w.client.create(new_rs)
    except AlreadyExists:
        # the name is taken: ours (an informer behind) or a hash collision
        current: ReplicaSet = await w.client.get("ReplicaSet", name, d.metadata.namespace)
        ref = next((r for r in current.metadata.owner_references if r.controller), None)
        if ref is None or ref.uid != d.metadata.uid or not equal_ignore_hash(d.spec.template, current.spec.template):
            count = (d.status.collision_count or 0) + 1
            await w.write_status(ro, replace(ro.d.status, collision_count=count))
            raise
        created, already = current, True
    except ApiError as err:
        msg = f'Failed to create new replica set "{name}": {err}'
        if has_progress_deadline(d):
            cond = new_condition("Progressing", "False", FAILED_RS_CREATE_REASON, msg, w.now())
            await w.write_status(ro, set_condition(ro.d.status, cond))
        await w.event(d, "Warning", FAILED_RS_CREATE_REASON, msg)
        raise
    ro.put(created)
    if not already and replicas > 0:
        await w.event(d, "Normal", "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to {replicas}")
    await w.set_revision(ro, str(new_revision))
    if not already and has_progress_deadline(ro.d):
        cond = new_condition("Progressing", "True", NEW_RS_REASON, f'Created new replica set "{name}"', w.now())
        await w.write_status(ro, set_condition(ro.d.status, cond))
    return created


async def scale(w: Writer, ro: Rollout, new_rs: ReplicaSet | None, old_rss: list[ReplicaSet]) -> None:
    """Upstream ``scale``: a resized Deployment's replicas go to its one active ReplicaSet,
    or, mid-rollout, to every active one in proportion to its size (largest first; the
    rounding leftover to the first)."""
    d = ro.d
    replicas = d.spec.replicas or 0
    one = find_active_or_latest(new_rs, old_rss)
    if one is not None:
        if (one.spec.replicas or 0) != replicas:
            await w.scale_and_record(ro, one, replicas)
        return
    if is_saturated(d, new_rs):
        for old in active(old_rss):
            await w.scale_and_record(ro, old, 0)
        return
    if d.spec.strategy.type != "RollingUpdate":
        return
    live = active([*old_rss, new_rs])
    allowed = replicas + max_surge(d) if replicas > 0 else 0
    to_add = allowed - spec_replicas(live)
    if to_add > 0:  # larger first; of equal size the newer first
        live.sort(key=by_creation, reverse=True)
        live.sort(key=lambda rs: -(rs.spec.replicas or 0))
        operation = "up"
    elif to_add < 0:  # larger first; of equal size the older first
        live.sort(key=by_creation)
        live.sort(key=lambda rs: -(rs.spec.replicas or 0))
        operation = "down"
    else:
        operation = ""
    added = 0
    sizes: list[int] = []
    for rs in live:
        share = replica_set_proportion(rs, d, to_add, added) if to_add else 0
        sizes.append((rs.spec.replicas or 0) + share)
        added += share
    for i, rs in enumerate(live):
        size = sizes[i]
        if i == 0 and to_add:
            size = max(0, size + to_add - added)
        await w.scale(ro, rs, size, operation)


async def cleanup(w: Writer, ro: Rollout, old_rss: list[ReplicaSet]) -> None:
    """Upstream ``cleanupDeployment``: delete the oldest revisions beyond
    ``revisionHistoryLimit`` that are scaled to zero, observed and not being deleted."""
    limit = ro.d.spec.revision_history_limit
    if limit is None:
        return
    alive = [rs for rs in old_rss if rs.metadata.deletion_timestamp is None]
    diff = len(alive) - limit
    if diff <= 0:
        return
    alive.sort(key=lambda rs: (revision(rs), *by_creation(rs)))
    for rs in alive[:diff]:
        if (
            rs.status.replicas != 0
            or (rs.spec.replicas or 0) != 0
            or rs.metadata.generation > rs.status.observed_generation
        ):
            continue
        with contextlib.suppress(NotFound):
            await w.client.delete("ReplicaSet", rs.metadata.name, rs.metadata.namespace)


async def sync_status(w: Writer, ro: Rollout, new_rs: ReplicaSet | None, old_rss: list[ReplicaSet]) -> None:
    """Upstream ``syncDeploymentStatus``: counts and Available, written if changed."""
    all_rss = [*old_rss, new_rs]
    await w.write_status(ro, calculate_status(all_rss, new_rs, ro.d, w.now()))


async def sync_rollout_status(
    w: Writer, ro: Rollout, new_rs: ReplicaSet | None, old_rss: list[ReplicaSet]
) -> float | None:
    """Upstream ``syncRolloutStatus``: write the status with its progress conditions; when
    nothing changed, the delay after which to check the deadline (``stuck_requeue``)."""
    now = w.clock.now()
    status = rollout_status(ro.d, [*old_rss, new_rs], new_rs, now, w.now())
    if status == ro.d.status:
        return stuck_requeue(ro.d, status, now)
    await w.write_status(ro, status)
    return None
