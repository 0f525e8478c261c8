"""Termination of a deleted NodeClaim (kubernetes-sigs/karpenter v1.9.1
``pkg/controllers/nodeclaim/lifecycle/controller.go`` ``finalize``,
``pkg/controllers/node/termination/controller.go`` ``finalize``/``awaitDrain``,
``terminator/terminator.go`` ``Drain``/``DeleteExpiringPods``, ``pkg/utils/pod``).

- The termination time: a NodeClaim with ``spec.terminationGracePeriod`` gets the annotation
  ``karpenter.sh/nodeclaim-termination-timestamp`` = its ``deletionTimestamp`` plus that
  period (RFC 3339), once, with a ``TerminationGracePeriodExpiring`` Warning on it; while its
  node drains, the same Warning on the node (deduplicated by Karpenter's recorder).
- The drain: the node is tainted ``karpenter.sh/disrupted:NoSchedule``. The pods waiting for
  eviction are those not terminal, not tolerating that taint, not terminating for more than a
  minute past their ``deletionTimestamp`` (``IsStuckTerminating``), not mirror pods (an owner
  reference ``v1`` ``Node``); DaemonSet pods (an owner reference ``apps/v1`` ``DaemonSet``) are
  waited for, evicted and force-deleted like the others, in their own priority groups. With
  a termination time, a waiting pod not yet terminating (or terminating past that time) whose
  ``terminationGracePeriodSeconds`` before it has passed is deleted at once with the grace left
  (at least 1 s): PDBs and ``karpenter.sh/do-not-disrupt`` are bypassed, and a ``Disrupted``
  Event says so. The others are evicted through the eviction API (PDBs apply), one group at a
  time (``groupPodsByPriority``: non-critical non-DaemonSet, non-critical DaemonSet, then with
  ``priorityClassName`` ``system-cluster-critical``/``system-node-critical`` the same two), pods
  with ``karpenter.sh/do-not-disrupt: "true"`` or tolerating the taint never.
- The volumes (``awaitVolumeDetachment``): once drained, the VolumeAttachments whose
  ``spec.nodeName`` is the node (listed through the API server, sorted by name), minus those
  whose PersistentVolume a pod on the node that is not drainable uses (``filterVolumeAttachments``:
  pod -> claim, ``persistentVolumeClaim`` or generic ephemeral ``<pod>-<volume>``, read through
  the API server -> ``spec.volumeName``; an attachment without ``persistentVolumeName`` never
  waits), are waited for, with an ``AwaitingVolumeDetachment`` Event on the node; past the
  termination time they are not.
- Then the instance is deleted through the cloud (``awaitInstanceTermination``; the kwok
  provider's ``Delete`` reports the instance gone at once, so no 5 s requeue) and the
  ``karpenter.sh/termination`` finalizer removed. The conditions are written just before the
  cloud call rather than just after it: a failed write (a conflict) then leaves the node for the
  next pass to run through again, as upstream's Node finalizer leaves it. A NodeClaim without a node (never registered)
  skips all of this; with a ``providerID`` it still gets ``InstanceTerminating``
  (``nodeclaim/lifecycle`` ``finalize``).
- The NodeClaim's conditions (operatorpkg's rules, ``conditions``), written by one status update
  (the optimistic lock of upstream's merge patch) only when the pass changed them:

  =======================  =============================================================
  condition                set
  =======================  =============================================================
  ``Drained``              Unknown ``Draining`` while pods wait for eviction, then True
  ``VolumesDetached``      True with no attachment pending; Unknown
                           ``AwaitingVolumeDetachment`` while waiting; False
                           ``TerminationGracePeriodElapsed`` when no longer waited for
  ``InstanceTerminating``  True once the cloud deleted the instance
  =======================  =============================================================

  A pass that stops early (pods or attachments waiting, a failed write) leaves the NodeClaim to
  the next pass of the agent (every 0.5 s, standing in for upstream's 1 s ``RequeueAfter`` and
  its Node watch).
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any, Final

from msgspec.structs import replace

from agents.autoscaler.karpenter.conditions import ConditionSet, nodeclaim_conditions
from agents.autoscaler.karpenter.events import KEvent, evict_pod, node_awaiting_volume_detachment, node_failed_to_drain
from agents.autoscaler.karpenter.queue import DISRUPTED_TAINT
from emulator.base.api.core import Node, Pod
from emulator.base.api.errors import ApiError, NotFound, TooManyRequests
from emulator.base.api.karpenter import NodeClaim
from emulator.base.api.storage import VolumeAttachment, pod_claim_names
from emulator.base.api.taints import toleration_tolerates_taint
from emulator.base.runtime.clock import calendar_epoch, format_timestamp, parse_duration, parse_timestamp

__all__ = [
    "TERMINATION_TIMESTAMP",
    "drainable",
    "filter_volume_attachments",
    "priority_groups",
    "terminate",
    "waiting_eviction",
]

TERMINATION_TIMESTAMP: Final = "karpenter.sh/nodeclaim-termination-timestamp"
"""``NodeClaimTerminationTimestampAnnotationKey``."""
DO_NOT_DISRUPT: Final = "karpenter.sh/do-not-disrupt"
STUCK_AFTER: Final = 60.0
_CRITICAL: Final = ("system-cluster-critical", "system-node-critical")


def _owned_by(pod: Pod, api_version: str, kind: str) -> bool:
    """``IsOwnedBy``: any owner reference of that apiVersion and kind."""
    return any(o.api_version == api_version and o.kind == kind for o in pod.metadata.owner_references)


def _tolerates_disrupted(pod: Pod) -> bool:
    """``ToleratesDisruptedNoScheduleTaint``."""
    return any(toleration_tolerates_taint(t, DISRUPTED_TAINT) for t in pod.spec.tolerations)


def drainable(pod: Pod, now: float) -> bool:
    """``IsDrainable``: not tolerating the disrupted taint, not stuck terminating (more than a
    minute past its ``deletionTimestamp``), not a mirror pod."""
    if _owned_by(pod, "v1", "Node") or _tolerates_disrupted(pod):
        return False
    ts = pod.metadata.deletion_timestamp
    return not (ts is not None and now - parse_timestamp(ts) > STUCK_AFTER)


def waiting_eviction(pod: Pod, now: float) -> bool:
    """``IsWaitingEviction``: not terminal and ``IsDrainable``."""
    return pod.status.phase not in ("Succeeded", "Failed") and drainable(pod, now)


def _evictable(pod: Pod) -> bool:
    """``IsEvictable`` (the pod is already waiting eviction): active, not ``do-not-disrupt``."""
    return pod.metadata.deletion_timestamp is None and pod.metadata.annotations.get(DO_NOT_DISRUPT) != "true"


def _go_time(t: float) -> str:
    """Go's ``%v`` of a UTC ``time.Time``."""
    return (calendar_epoch() + timedelta(seconds=math.floor(t))).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _expiring(obj: Any, when: str) -> KEvent:
    return KEvent(
        obj, "Warning", "TerminationGracePeriodExpiring", f"All pods will be deleted by {when}", (obj.metadata.name,)
    )


async def _termination_time(agent: Any, claim: NodeClaim) -> tuple[str | None, NodeClaim]:
    """``ensureTerminationGracePeriodTerminationTimeAnnotation``; the annotation's value and the
    NodeClaim as written (an ``ApiError`` when writing it fails)."""
    ann = claim.metadata.annotations
    if TERMINATION_TIMESTAMP in ann:
        return ann[TERMINATION_TIMESTAMP], claim
    tgp = claim.spec.termination_grace_period if claim.spec is not None else None
    if tgp is None or claim.metadata.deletion_timestamp is None:
        return None, claim
    when = format_timestamp(parse_timestamp(claim.metadata.deletion_timestamp) + parse_duration(tgp))
    meta = replace(claim.metadata, annotations={**ann, TERMINATION_TIMESTAMP: when})
    written = await agent.client.update(replace(claim, metadata=meta))  # an ApiError: the caller requeues
    await agent.recorder.publish(_expiring(claim, when))
    return when, written


async def _delete_expiring(agent: Any, pods: list[Pod], expiry: float, now: float) -> set[str]:
    """``DeleteExpiringPods`` for the pods not terminating, or terminating past ``expiry``; the
    UIDs of the pods it deleted."""
    deleted: set[str] = set()
    for pod in pods:
        ts = pod.metadata.deletion_timestamp
        if ts is not None and parse_timestamp(ts) <= expiry:
            continue
        grace_s = pod.spec.termination_grace_period_seconds
        if grace_s is None or not now > expiry - grace_s:
            continue
        grace = max(int(expiry - now), 1)
        msg = (
            f"Deleting the pod to accommodate the terminationTime {_go_time(expiry)} of the node. The pod was "
            f"granted {grace} seconds of grace-period of its {grace_s} terminationGracePeriodSeconds. This "
            "bypasses the PDB of the pod and the do-not-disrupt annotation."
        )
        await agent.recorder.publish(KEvent(pod, "Normal", "Disrupted", msg, (pod.metadata.name,)))
        try:
            await agent.client.delete(
                "Pod", pod.metadata.name, pod.metadata.namespace, grace_period_seconds=grace, uid=pod.metadata.uid
            )
            agent.counters["podsDisrupted"] += 1
            deleted.add(pod.metadata.uid)
        except NotFound:
            continue
    return deleted


def _daemon(pod: Pod) -> bool:
    """``IsOwnedByDaemonSet``."""
    return _owned_by(pod, "apps/v1", "DaemonSet")


def priority_groups(pods: list[Pod]) -> list[list[Pod]]:
    """``groupPodsByPriority``: non-critical non-DaemonSet, non-critical DaemonSet, critical
    non-DaemonSet, critical DaemonSet."""
    return [
        [p for p in pods if (p.spec.priority_class_name in _CRITICAL) == critical and _daemon(p) == daemon]
        for critical in (False, True)
        for daemon in (False, True)
    ]


def _eviction_reason(claim: NodeClaim) -> str:
    """``evictionReason``: the NodeClaim's ``DisruptionReason`` (when True), else forceful."""
    for c in claim.status.conditions if claim.status is not None else []:
        if c.type == "DisruptionReason" and c.status == "True":
            return c.reason
    return "Forceful Termination"


async def _drain(d: Any, node: Node, expiry: float | None, claim: NodeClaim) -> bool:
    """``Terminator.Drain``: True once no pod waits for eviction; each failing pass publishes
    ``FailedDraining`` (``awaitDrain``), each eviction ``Evicted`` and each eviction a PDB
    refuses ``FailedDraining`` (``eviction.go`` ``Evict``)."""
    agent = d.agent
    now = agent.clock.now()
    waiting = [p for p in d.pods_on(node.metadata.name) if waiting_eviction(p, now)]
    forced = await _delete_expiring(agent, waiting, expiry, now) if expiry is not None else set()
    groups = priority_groups(waiting)
    for group in groups:
        if not group:
            continue
        # awaitDrain's event goes out as Drain returns, before the eviction queue evicts
        await agent.recorder.publish(node_failed_to_drain(node, f"{len(waiting)} pods are waiting to be evicted"))
        for pod in group:
            if not _evictable(pod) or pod.metadata.uid in forced:
                continue  # a pod just deleted is terminating: not evicted (nor counted) again
            try:
                await agent.client.evict(pod.metadata.namespace, pod.metadata.name, uid=pod.metadata.uid)
            except NotFound:
                continue
            except TooManyRequests:
                await agent.recorder.publish(node_failed_to_drain(node, "evicting pod violates a PDB"))
                continue
            agent.counters["podsDisrupted"] += 1
            await agent.recorder.publish(evict_pod(pod, _eviction_reason(claim)))
        return False
    return True


async def filter_volume_attachments(
    client: Any, attachments: list[VolumeAttachment], pods: list[Pod], now: float
) -> list[VolumeAttachment]:
    """``filterVolumeAttachments``: ``attachments`` minus those without a PersistentVolume name
    and those whose PV a pod of ``pods`` (the node's) that is not drainable uses, its claims read
    through ``client`` (a claim not found is skipped; another error propagates)."""
    if not attachments:
        return attachments
    skip: set[str] = set()
    for pod in pods:
        if drainable(pod, now):
            continue
        for name in pod_claim_names(pod):
            try:
                pvc = await client.get("PersistentVolumeClaim", name, pod.metadata.namespace)
            except NotFound:
                continue
            skip.add(pvc.spec.volume_name or "")
    return [
        va
        for va in attachments
        if va.spec.source.persistent_volume_name is not None and va.spec.source.persistent_volume_name not in skip
    ]


async def _pending_volume_attachments(agent: Any, node: str, now: float) -> list[VolumeAttachment]:
    """``pendingVolumeAttachments``: ``GetVolumeAttachments`` (a list through the API server,
    filtered on ``spec.nodeName`` as upstream's cache index does), then the filter."""
    items, _ = await agent.client.list("VolumeAttachment")
    attachments = sorted((va for va in items if va.spec.node_name == node), key=lambda va: va.metadata.name)
    if not attachments:
        return attachments
    pods = sorted(
        (p for p in agent.pods.objects() if p.spec.node_name == node),
        key=lambda p: (p.metadata.namespace, p.metadata.name),
    )
    return await filter_volume_attachments(agent.client, attachments, pods, now)


async def _await_termination(d: Any, node: Node, expiry: float | None, claim: NodeClaim, cs: ConditionSet) -> bool:
    """``awaitDrain``, ``awaitVolumeDetachment`` and ``awaitInstanceTermination`` in turn, each
    setting its condition in ``cs``; True once the instance may go."""
    agent = d.agent
    if not await _drain(d, node, expiry, claim):
        cs.set("Drained", "Unknown", "Draining", "Draining")
        return False
    cs.set_true("Drained")
    now = agent.clock.now()
    try:
        pending = await _pending_volume_attachments(agent, node.metadata.name, now)
    except ApiError:
        return False  # upstream returns the error: the NodeClaim is requeued
    if not pending:
        cs.set_true("VolumesDetached")
    elif expiry is None or not now > expiry:
        await agent.recorder.publish(node_awaiting_volume_detachment(node, [va.metadata.name for va in pending]))
        cs.set("VolumesDetached", "Unknown", "AwaitingVolumeDetachment", "AwaitingVolumeDetachment")
        return False
    else:
        cs.set("VolumesDetached", "False", "TerminationGracePeriodElapsed", "TerminationGracePeriodElapsed")
    cs.set_true("InstanceTerminating")  # the kwok provider's Delete: the instance is gone (the caller deletes it)
    return True


async def terminate(d: Any, claim: NodeClaim) -> None:
    """Taint, drain (forced at the termination time), wait for the volumes, delete the instance,
    write the conditions, drop the finalizer (module docstring); ``d`` the agent's ``Disruption``."""
    agent = d.agent
    name = claim.metadata.name
    d.terminating[name] = None
    try:
        when, claim = await _termination_time(agent, claim)
    except ApiError:
        return  # lifecycle/controller.go finalize requeues: no drain without the deadline
    node: Node | None = agent.nodes.get(claim.status.node_name or name, "")
    cs = nodeclaim_conditions(claim, agent.clock.timestamp)
    if node is not None:
        if when is not None:
            await agent.recorder.publish(_expiring(node, when))
        if not await d.set_taint(node.metadata.name, True):
            return
        done = await _await_termination(d, node, parse_timestamp(when) if when is not None else None, claim, cs)
    else:
        done = True
        if claim.status.provider_id:
            cs.set_true("InstanceTerminating")
    if cs.changed:
        status = replace(claim.status, conditions=cs.items)
        try:
            claim = await agent.client.update_status(replace(claim, status=status))
        except NotFound:  # gone already: upstream ignores it and goes on with the node
            if done and node is not None:
                await agent.cloud.delete(node.metadata.name)
            _forget(d, name)
            return
        except ApiError:
            return  # a conflict: the next pass reads the NodeClaim again
    if not done:
        return
    if node is not None:
        await agent.cloud.delete(node.metadata.name)
    try:
        await agent.client.update(replace(claim, metadata=replace(claim.metadata, finalizers=[])))
    except ApiError:
        return
    _forget(d, name)


def _forget(d: Any, name: str) -> None:
    d.terminating.pop(name, None)
    d.marked.pop(name, None)
    d.pod_sets.pop(name, None)
