"""The ``drain`` step: ``kubectl drain --ignore-daemonsets --delete-emptydir-data --force``.

What this module owns: which pods a drain evicts (``drainable``) and the drain itself
(``drain``): cordon, then one task per pod (``runner:drain:<node>:<ns>/<name>``, started in
(namespace, name) order) that evicts it through the Eviction API and waits until it is
gone. It does not decide evictions (``emulator.base.apiserver.eviction``) nor cordon
(``Cluster.set_unschedulable``).

==========================  ==========================================================
eviction answer             what the pod's task does (kubectl drain's ``evictPods``)
==========================  ==========================================================
admitted                    waits for the pod to be gone: a ``get`` every second
                            (``waitForDelete``), until NotFound or another UID
429 TooManyRequests         tries again 5 s later (a PDB allows no disruption yet)
404 NotFound                done: the pod is already gone
anything else               the step fails (``StepError``), as kubectl stops
==========================  ==========================================================

Pods left alone: those a DaemonSet controls (the DaemonSet would recreate them; kubectl's
``--ignore-daemonsets``) and mirror pods (annotation ``kubernetes.io/config.mirror``: the
kubelet owns them). The pods are those bound to the node when the drain lists them, after
the cordon. Not done within ``timeout`` (default ``schema.DRAIN_TIMEOUT``), the remaining
tasks are cancelled and the run fails like a timed-out ``waitFor``.
"""

from __future__ import annotations

import asyncio
import math
from functools import partial
from typing import TYPE_CHECKING, Final

import anyio

from emulator.app.scenario.schema import Drain
from emulator.base.api.core import Pod
from emulator.base.api.errors import NotFound, TooManyRequests

if TYPE_CHECKING:
    from emulator.app.scenario.cluster import Cluster

__all__ = ["EVICTION_RETRY", "MIRROR_ANNOTATION", "WAIT_INTERVAL", "drain", "drainable"]

EVICTION_RETRY: Final = 5.0
"""kubectl drain's wait after a 429 before evicting the pod again."""
WAIT_INTERVAL: Final = 1.0
"""kubectl drain's poll while it waits for an evicted pod to be gone."""
MIRROR_ANNOTATION: Final = "kubernetes.io/config.mirror"


def drainable(pod: Pod) -> bool:
    """Is the pod one a drain evicts (not a DaemonSet's, not a mirror pod)?"""
    if MIRROR_ANNOTATION in pod.metadata.annotations:
        return False
    return not any(r.controller and r.kind == "DaemonSet" for r in pod.metadata.owner_references)


async def _evict_until_gone(cluster: Cluster, pod: Pod, grace: int | None) -> None:
    client, clock = cluster.client, cluster.clock
    ns, name, uid = pod.metadata.namespace, pod.metadata.name, pod.metadata.uid
    while True:
        try:
            await client.evict(ns, name, grace_period_seconds=grace, uid=uid)
            break
        except TooManyRequests:
            await clock.sleep(EVICTION_RETRY)
        except NotFound:
            return
    while True:
        try:
            current = await client.get("Pod", name, ns)
        except NotFound:
            return
        if current.metadata.uid != uid:
            return
        await clock.sleep(WAIT_INTERVAL)


def _gone(left: list[Pod], pod: Pod, task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        left.remove(pod)


async def drain(cluster: Cluster, step: Drain) -> str | None:
    """Drain ``step.node``; None when every pod is gone in time, else the timeout's words."""
    await cluster.set_unschedulable(step.node, True)
    grace = None if step.grace_period is None else math.ceil(step.grace_period)
    left: list[Pod] = []
    with anyio.move_on_after(step.timeout):
        items, _ = await cluster.retrying(lambda: cluster.client.list("Pod", fields={"spec.nodeName": step.node}))
        pods = sorted((p for p in items if drainable(p)), key=lambda p: (p.metadata.namespace, p.metadata.name))
        left = list(pods)
        async with asyncio.TaskGroup() as tg:
            for pod in pods:
                where = f"runner:drain:{step.node}:{pod.metadata.namespace}/{pod.metadata.name}"
                task = tg.create_task(_evict_until_gone(cluster, pod, grace), name=where)
                task.add_done_callback(partial(_gone, left, pod))
        return None
    names = ", ".join(f"{p.metadata.namespace}/{p.metadata.name}" for p in left[:5])
    more = f" and {len(left) - 5} more" if len(left) > 5 else ""
    pods_left = f"{len(left)} pod{'' if len(left) == 1 else 's'} left"
    return f"drain {step.node} timed out after {step.timeout:g}s ({pods_left}: {names}{more})"
