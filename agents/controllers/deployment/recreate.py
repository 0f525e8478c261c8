"""The Recreate strategy (upstream ``recreate.go``): every old ReplicaSet is scaled to zero,
and only when no old pod is left running (``old_pods_running``: terminating pods count
until they are gone, as upstream's pod map does) is the new ReplicaSet created and scaled
to ``spec.replicas``. Not here: how the controller knows the old pods (its pod index,
passed in as ``pods_running``).
"""

from __future__ import annotations

from collections.abc import Callable

from agents.controllers.deployment.sync import Rollout, Writer, cleanup, new_replica_set, sync_rollout_status
from agents.controllers.deployment.util import active, deployment_complete, status_replicas
from emulator.base.api.apps import ReplicaSet

__all__ = ["old_pods_running", "rollout_recreate"]


def old_pods_running(
    new_rs: ReplicaSet | None, old_rss: list[ReplicaSet], pods_running: Callable[[ReplicaSet], bool]
) -> bool:
    """Upstream ``oldPodsRunning``: an old ReplicaSet reports replicas, or has a pod that is
    not Succeeded or Failed."""
    if status_replicas(old_rss) > 0:
        return True
    new_uid = new_rs.metadata.uid if new_rs is not None else None
    return any(pods_running(rs) for rs in old_rss if rs.metadata.uid != new_uid)


async def rollout_recreate(w: Writer, ro: Rollout, pods_running: Callable[[ReplicaSet], bool]) -> float | None:
    """Upstream ``rolloutRecreate``; the requeue delay ``sync_rollout_status`` asks for."""
    new_rs, old_rss = await new_replica_set(w, ro, create=False)
    scaled_down = False
    for rs in active(old_rss):
        scaled, _ = await w.scale_and_record(ro, rs, 0)
        scaled_down = scaled_down or scaled
    if scaled_down:
        return await sync_rollout_status(w, ro, new_rs, old_rss)
    if old_pods_running(new_rs, old_rss, pods_running):
        return await sync_rollout_status(w, ro, new_rs, old_rss)
    if new_rs is None:
        new_rs, old_rss = await new_replica_set(w, ro, create=True)
    assert new_rs is not None
    await w.scale_and_record(ro, new_rs, ro.d.spec.replicas or 0)
    if deployment_complete(ro.d, ro.d.status):
        await cleanup(w, ro, old_rss)
    return await sync_rollout_status(w, ro, new_rs, old_rss)
