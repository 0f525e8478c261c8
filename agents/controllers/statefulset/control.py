"""What one sync of a StatefulSet does: upstream's ``updateStatefulSet``
(``stateful_set_control.go``) as a pure function from the set and its pods to a ``Plan``.

Pods are sorted into ``replicas`` (ordinals ``start .. start+replicas-1``, ``start`` being
``spec.ordinals.start`` or 0; a missing one to create from ``new_versioned_pod``) and
``condemned`` (every other ordinal, above or below the range, as upstream's
``podInOrdinalRange``). Then, as upstream, in this
order, where *monotonic* means ``podManagementPolicy: OrderedReady``:

=====================================  ==================================================
replica ``i`` (lowest first)           action
=====================================  ==================================================
Failed or Succeeded                    delete it (unless terminating); monotonic: stop.
                                       A later sync, once it is gone, creates it again
missing                                create; monotonic: stop here
terminating                            monotonic: stop (wait for it to go)
not Running and Ready                  monotonic: stop (wait)
Ready, not yet ``minReadySeconds``     monotonic: stop, sync again when it will be
=====================================  ==================================================

=====================================  ==================================================
condemned (highest ordinal first)      action
=====================================  ==================================================
terminating                            monotonic: stop; else next
not Running and Ready (or not yet      monotonic: stop
available), and not the first
unhealthy pod of the set
otherwise                              delete; monotonic: stop
=====================================  ==================================================

Then, with ``updateStrategy: RollingUpdate`` (``OnDelete`` stops before), from the highest
ordinal down to ``partition``: the first pod not at the update revision and not terminating
is deleted (one per sync; it comes back at the update revision), and an unhealthy pod on
the way stops the walk. The ``MaxUnavailableStatefulSet`` alpha gate is off, as upstream's
default, so ``rollingUpdate.maxUnavailable`` is not read. The ``partition`` counts from the
first ordinal (upstream's ``updateMin`` indexes the replicas).

The status is computed from the pods and counts the plan's own creations and deletions as
upstream's does; a rolling update completes (``currentRevision := updateRevision``) when every
replica is updated and ready. This module does not write anything (``controller`` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from msgspec.structs import replace

from agents.controllers.controllerutils import is_pod_available, is_pod_ready, pod_ready_time
from agents.controllers.statefulset.claims import update_storage
from agents.controllers.statefulset.identity import new_versioned_pod, ordinal_of, pod_revision, start_ordinal
from emulator.base.api.apps import StatefulSet, StatefulSetStatus
from emulator.base.api.core import Pod
from emulator.base.api.podtemplate import PodTemplateSpec

__all__ = ["Plan", "Revisions", "plan_sync"]


@dataclass(frozen=True, slots=True)
class Revisions:
    current: str
    update: str
    current_template: PodTemplateSpec
    update_template: PodTemplateSpec


@dataclass(slots=True)
class Plan:
    """The writes of one sync, in order, and when to sync again."""

    deletes_failed: list[Pod] = field(default_factory=list)
    creates: list[Pod] = field(default_factory=list)
    deletes: list[Pod] = field(default_factory=list)
    requeue_after: float | None = None
    status: StatefulSetStatus = field(default_factory=StatefulSetStatus)


def _terminating(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is not None


def _running_and_ready(pod: Pod) -> bool:
    return pod.status.phase == "Running" and is_pod_ready(pod)


def _healthy(pod: Pod) -> bool:
    return _running_and_ready(pod) and not _terminating(pod)


def _terminal(pod: Pod) -> bool:
    return pod.status.phase in ("Failed", "Succeeded")


def _available_in(pod: Pod, min_ready: int, now: float) -> float:
    """Seconds until a ready pod has been ready ``min_ready`` seconds (0 when it has)."""
    since = pod_ready_time(pod)
    return 0.0 if since is None else max(0.0, since + min_ready - now)


def _status(sts: StatefulSet, pods: list[Pod], revs: Revisions, now: float) -> StatefulSetStatus:
    replicas = ready = available = current = updated = 0
    min_ready = sts.spec.min_ready_seconds
    for pod in pods:
        replicas += 1
        if _running_and_ready(pod):
            ready += 1
            if is_pod_available(pod, min_ready, now):
                available += 1
        if not _terminating(pod):
            rev = pod_revision(pod)
            current += rev == revs.current
            updated += rev == revs.update
    return replace(
        sts.status,
        observed_generation=sts.metadata.generation,
        replicas=replicas,
        ready_replicas=ready,
        available_replicas=available,
        current_replicas=current,
        updated_replicas=updated,
        current_revision=revs.current,
        update_revision=revs.update,
    )


def _count_created(status: StatefulSetStatus, pod: Pod, revs: Revisions) -> StatefulSetStatus:
    rev = pod_revision(pod)
    return replace(
        status,
        replicas=status.replicas + 1,
        current_replicas=status.current_replicas + (rev == revs.current),
        updated_replicas=status.updated_replicas + (rev == revs.update),
    )


def _count_deleted(status: StatefulSetStatus, pod: Pod, revs: Revisions) -> StatefulSetStatus:
    rev = pod_revision(pod)
    return replace(
        status,
        current_replicas=status.current_replicas - (rev == revs.current),
        updated_replicas=status.updated_replicas - (rev == revs.update),
    )


def complete_rolling_update(sts: StatefulSet, status: StatefulSetStatus) -> StatefulSetStatus:
    """Upstream ``completeRollingUpdate``: all updated and ready → the update is current."""
    if (
        sts.spec.update_strategy.type == "RollingUpdate"
        and status.updated_replicas == status.replicas
        and status.ready_replicas == status.replicas
    ):
        return replace(status, current_replicas=status.updated_replicas, current_revision=status.update_revision)
    return status


def plan_sync(sts: StatefulSet, pods: list[Pod], revs: Revisions, now: float) -> Plan:
    """The plan of one sync of ``sts`` whose (controlled) pods are ``pods``."""
    plan = Plan(status=_status(sts, pods, revs, now))
    plan.status = _walk(sts, pods, revs, now, plan)
    plan.status = complete_rolling_update(sts, plan.status)
    return plan


def _walk(sts: StatefulSet, pods: list[Pod], revs: Revisions, now: float, plan: Plan) -> StatefulSetStatus:
    status = plan.status
    name = sts.metadata.name
    count = sts.spec.replicas if sts.spec.replicas is not None else 1
    replicas: list[Pod | None] = [None] * count
    condemned: list[tuple[int, Pod]] = []
    start = start_ordinal(sts)
    for each in sorted(pods, key=lambda p: p.metadata.name):
        ordinal = ordinal_of(name, each.metadata.name)
        if start <= ordinal < start + count:
            replicas[ordinal - start] = each
        elif ordinal >= 0:
            condemned.append((ordinal, each))
    condemned.sort(key=lambda c: c[0])

    def new(i: int) -> Pod:
        pod = new_versioned_pod(revs.current_template, revs.update_template, revs.current, revs.update, sts, start + i)
        return update_storage(sts, pod, start + i)  # upstream newStatefulSetPod's updateStorage

    first_unhealthy: Pod | None = next((p for p in replicas if p is not None and not _healthy(p)), None)
    if first_unhealthy is None:
        first_unhealthy = next((p for _, p in condemned if not _healthy(p)), None)
    if sts.metadata.deletion_timestamp is not None:
        return status

    monotonic = sts.spec.pod_management_policy != "Parallel"
    min_ready = sts.spec.min_ready_seconds
    created: set[int] = set()
    pod: Pod | None
    for i in range(count):
        pod = replicas[i]
        if pod is not None and _terminal(pod):
            # upstream processReplica (1.34): delete it; the next sync, once the pod is gone,
            # creates it again (never two pods of one name at once)
            if not _terminating(pod):
                plan.deletes_failed.append(pod)
            created.add(i)  # on its way out: the update walk below leaves it alone
            if monotonic:
                return status
            continue
        if pod is None:
            fresh = new(i)
            plan.creates.append(fresh)
            created.add(i)
            status = _count_created(status, fresh, revs)
            if monotonic:
                return status
            continue
        if _terminating(pod) and monotonic:
            return status
        if not _running_and_ready(pod) and monotonic:
            return status
        if monotonic and min_ready > 0 and not is_pod_available(pod, min_ready, now):
            plan.requeue_after = _available_in(pod, min_ready, now)
            return status

    for _, doomed in reversed(condemned):
        if _terminating(doomed):
            if monotonic:
                return status
            continue
        waiting = not _running_and_ready(doomed) or not is_pod_available(doomed, min_ready, now)
        if monotonic and waiting and doomed is not first_unhealthy:
            return status  # not Running and Ready (or not yet available): wait
        plan.deletes.append(doomed)
        status = _count_deleted(status, doomed, revs)
        if monotonic:
            return status

    strategy = sts.spec.update_strategy
    if strategy.type != "RollingUpdate":
        return status
    partition = (
        strategy.rolling_update.partition
        if strategy.rolling_update is not None and strategy.rolling_update.partition is not None
        else 0
    )
    for target in range(count - 1, partition - 1, -1):
        pod = replicas[target]
        if target in created or pod is None:
            return status  # just created, or a finished pod being replaced: not healthy yet
        if pod_revision(pod) != revs.update and not _terminating(pod):
            plan.deletes.append(pod)
            return replace(status, current_replicas=status.current_replicas - 1)
        if not _healthy(pod):
            return status
    return status
