"""The RollingUpdate strategy (upstream ``rolling.go``): scale the new ReplicaSet up as far
as ``maxSurge`` allows, then the old ones down as far as ``maxUnavailable`` allows, one
step per sync (each ReplicaSet status change brings the next sync).

==================================  ====================================================
step                                bound
==================================  ====================================================
scale up the new ReplicaSet         all ReplicaSets' replicas ≤ replicas + maxSurge
                                    (``util.new_rs_new_replicas``)
clean up unhealthy old replicas     at most allPods - minAvailable - the new one's
                                    unavailable; oldest ReplicaSets first
scale down old ReplicaSets          available pods stay ≥ replicas - maxUnavailable
==================================  ====================================================

When neither moves and the rollout is complete, old revisions beyond
``revisionHistoryLimit`` are deleted. Not here: the writes themselves (``sync.Writer``).
"""

from __future__ import annotations

from agents.controllers.deployment.sync import Rollout, Writer, cleanup, new_replica_set, sync_rollout_status
from agents.controllers.deployment.util import (
    active,
    available_replicas,
    by_creation,
    deployment_complete,
    max_unavailable,
    new_rs_new_replicas,
    spec_replicas,
)
from emulator.base.api.apps import ReplicaSet

__all__ = ["rollout_rolling"]


async def rollout_rolling(w: Writer, ro: Rollout) -> float | None:
    """Upstream ``rolloutRolling``; the requeue delay ``sync_rollout_status`` asks for."""
    new_rs, old_rss = await new_replica_set(w, ro, create=True)
    assert new_rs is not None
    all_rss: list[ReplicaSet] = [*old_rss, new_rs]
    if await _reconcile_new(w, ro, all_rss, new_rs):
        return await sync_rollout_status(w, ro, new_rs, old_rss)
    if await _reconcile_old(w, ro, all_rss, active(old_rss), new_rs):
        return await sync_rollout_status(w, ro, new_rs, old_rss)
    if deployment_complete(ro.d, ro.d.status):
        await cleanup(w, ro, old_rss)
    return await sync_rollout_status(w, ro, new_rs, old_rss)


async def _reconcile_new(w: Writer, ro: Rollout, all_rss: list[ReplicaSet], new_rs: ReplicaSet) -> bool:
    """Upstream ``reconcileNewReplicaSet``."""
    replicas = ro.d.spec.replicas or 0
    size = new_rs.spec.replicas or 0
    if size == replicas:
        return False
    if size > replicas:
        return (await w.scale_and_record(ro, new_rs, replicas))[0]
    return (await w.scale_and_record(ro, new_rs, new_rs_new_replicas(ro.d, all_rss, new_rs)))[0]


async def _reconcile_old(
    w: Writer, ro: Rollout, all_rss: list[ReplicaSet], old_rss: list[ReplicaSet], new_rs: ReplicaSet
) -> bool:
    """Upstream ``reconcileOldReplicaSets``."""
    if spec_replicas(old_rss) == 0:
        return False
    d = ro.d
    min_available = (d.spec.replicas or 0) - max_unavailable(d)
    new_unavailable = (new_rs.spec.replicas or 0) - new_rs.status.available_replicas
    max_scaled_down = spec_replicas(all_rss) - min_available - new_unavailable
    if max_scaled_down <= 0:
        return False
    old_rss, cleaned = await _cleanup_unhealthy(w, ro, old_rss, max_scaled_down)
    scaled = await _scale_down_old(w, ro, [*old_rss, new_rs], old_rss)
    return cleaned + scaled > 0


async def _cleanup_unhealthy(
    w: Writer, ro: Rollout, old_rss: list[ReplicaSet], max_cleanup: int
) -> tuple[list[ReplicaSet], int]:
    """Upstream ``cleanupUnhealthyReplicas``: scale old ReplicaSets down by their
    unavailable replicas (oldest first), at most ``max_cleanup`` in all."""
    old_rss = sorted(old_rss, key=by_creation)
    total = 0
    for i, rs in enumerate(old_rss):
        if total >= max_cleanup:
            break
        size = rs.spec.replicas or 0
        if size == 0 or size == rs.status.available_replicas:
            continue
        count = min(max_cleanup - total, size - rs.status.available_replicas)
        _, old_rss[i] = await w.scale_and_record(ro, rs, size - count)
        total += count
    return old_rss, total


async def _scale_down_old(w: Writer, ro: Rollout, all_rss: list[ReplicaSet], old_rss: list[ReplicaSet]) -> int:
    """Upstream ``scaleDownOldReplicaSetsForRollingUpdate``: the available replicas above
    ``minAvailable`` go, from the oldest ReplicaSets first."""
    d = ro.d
    min_available = (d.spec.replicas or 0) - max_unavailable(d)
    available = available_replicas(all_rss)
    if available <= min_available:
        return 0
    goal = available - min_available
    total = 0
    for rs in sorted(old_rss, key=by_creation):
        if total >= goal:
            break
        size = rs.spec.replicas or 0
        if size == 0:
            continue
        count = min(size, goal - total)
        await w.scale_and_record(ro, rs, size - count)
        total += count
    return total
