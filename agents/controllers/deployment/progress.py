"""The Deployment's Progressing condition and ``progressDeadlineSeconds`` (upstream
``progress.go`` and the paused conditions of ``sync.go``).

``rollout_status`` is upstream's ``syncRolloutStatus`` after the counts: with a deadline and
a rollout not yet complete, Progressing becomes

=================================================  =====  =========================
when                                               status reason
=================================================  =====  =========================
the rollout is complete (``deployment_complete``)  True   NewReplicaSetAvailable
any progress since the last status (more updated,  True   ReplicaSetUpdated (its
  ready or available replicas, fewer old ones)            lastUpdateTime now)
no progress for ``progressDeadlineSeconds`` since  False  ProgressDeadlineExceeded
  the condition's lastUpdateTime
=================================================  =====  =========================

and a ``ReplicaFailure`` of the new (else any) ReplicaSet is copied to the Deployment.
When nothing changed, ``stuck_requeue`` says when to look again (upstream's
``requeueStuckDeployment``: the deadline plus a second, or at once rate-limited under a
second). ``paused_condition`` is ``checkPausedConditions``: Progressing Unknown with
DeploymentPaused / DeploymentResumed.

Not here: the counts and Available (``util.calculate_status``), writing (``sync``).
"""

from __future__ import annotations

from typing import Final

from agents.controllers.deployment.util import (
    calculate_status,
    deployment_complete,
    get_condition,
    has_progress_deadline,
    new_condition,
    remove_condition,
    set_condition,
)
from emulator.base.api.apps import Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "NEW_RS_AVAILABLE_REASON",
    "PAUSED_REASON",
    "RESUMED_REASON",
    "RS_UPDATED_REASON",
    "TIMED_OUT_REASON",
    "paused_condition",
    "rollout_status",
    "stuck_requeue",
]

NEW_RS_AVAILABLE_REASON: Final = "NewReplicaSetAvailable"
RS_UPDATED_REASON: Final = "ReplicaSetUpdated"
TIMED_OUT_REASON: Final = "ProgressDeadlineExceeded"
PAUSED_REASON: Final = "DeploymentPaused"
RESUMED_REASON: Final = "DeploymentResumed"


def _progressing(d: Deployment, new: DeploymentStatus) -> bool:
    """Upstream ``DeploymentProgressing``."""
    old = d.status
    return (
        new.updated_replicas > old.updated_replicas
        or (new.replicas - new.updated_replicas) < (old.replicas - old.updated_replicas)
        or new.ready_replicas > old.ready_replicas
        or new.available_replicas > old.available_replicas
    )


def _timed_out(d: Deployment, status: DeploymentStatus, now: float) -> bool:
    """Upstream ``DeploymentTimedOut``."""
    if not has_progress_deadline(d):
        return False
    cond = get_condition(status, "Progressing")
    if cond is None or cond.reason == NEW_RS_AVAILABLE_REASON:
        return False
    if cond.reason == TIMED_OUT_REASON:
        return True
    if not cond.last_update_time:
        return False
    return parse_timestamp(cond.last_update_time) + (d.spec.progress_deadline_seconds or 0) < now


def _replica_failure(all_rss: list[ReplicaSet | None], new_rs: ReplicaSet | None) -> DeploymentCondition | None:
    """Upstream ``getReplicaFailures``: the new ReplicaSet's ReplicaFailure first."""
    for rss in ([new_rs], all_rss):
        for rs in rss:
            if rs is None:
                continue
            for c in rs.status.conditions:
                if c.type == "ReplicaFailure":
                    return DeploymentCondition(
                        type=c.type,
                        status=c.status,
                        reason=c.reason,
                        message=c.message,
                        last_transition_time=c.last_transition_time,
                        last_update_time=c.last_transition_time,
                    )
    return None


def rollout_status(
    d: Deployment, all_rss: list[ReplicaSet | None], new_rs: ReplicaSet | None, now: float, now_ts: str
) -> DeploymentStatus:
    """Upstream ``syncRolloutStatus``'s new status (see the module docstring)."""
    status = calculate_status(all_rss, new_rs, d, now_ts)
    if not has_progress_deadline(d):
        status = remove_condition(status, "Progressing")
    current = get_condition(d.status, "Progressing")
    complete = (
        status.replicas == status.updated_replicas and current is not None and current.reason == NEW_RS_AVAILABLE_REASON
    )
    if has_progress_deadline(d) and not complete:
        name = f'ReplicaSet "{new_rs.metadata.name}"' if new_rs is not None else f'Deployment "{d.metadata.name}"'
        if deployment_complete(d, status):
            msg = f"{name} has successfully progressed."
            status = set_condition(status, new_condition("Progressing", "True", NEW_RS_AVAILABLE_REASON, msg, now_ts))
        elif _progressing(d, status):
            cond = new_condition("Progressing", "True", RS_UPDATED_REASON, f"{name} is progressing.", now_ts)
            if current is not None:
                if current.status == "True":
                    cond = DeploymentCondition(
                        type=cond.type,
                        status=cond.status,
                        reason=cond.reason,
                        message=cond.message,
                        last_update_time=now_ts,
                        last_transition_time=current.last_transition_time,
                    )
                status = remove_condition(status, "Progressing")
            status = set_condition(status, cond)
        elif _timed_out(d, status, now):
            msg = f"{name} has timed out progressing."
            status = set_condition(status, new_condition("Progressing", "False", TIMED_OUT_REASON, msg, now_ts))
    failure = _replica_failure(all_rss, new_rs)
    if failure is not None:
        status = set_condition(status, failure)
    else:
        status = remove_condition(status, "ReplicaFailure")
    return status


def stuck_requeue(d: Deployment, status: DeploymentStatus, now: float) -> float | None:
    """Upstream ``requeueStuckDeployment``: seconds until the deadline check is due (plus
    one), 0 for "now, rate-limited", None when no check is needed."""
    current = get_condition(d.status, "Progressing")
    if not has_progress_deadline(d) or current is None:
        return None
    if deployment_complete(d, status) or current.reason == TIMED_OUT_REASON:
        return None
    if not current.last_update_time:
        return None
    after = parse_timestamp(current.last_update_time) + (d.spec.progress_deadline_seconds or 0) - now
    if after < 1.0:
        return 0.0
    return after + 1.0


def paused_condition(d: Deployment, now_ts: str) -> DeploymentStatus | None:
    """Upstream ``checkPausedConditions``: the status to write, or None."""
    if not has_progress_deadline(d):
        return None
    cond = get_condition(d.status, "Progressing")
    if cond is not None and cond.reason == TIMED_OUT_REASON:
        return None
    paused_exists = cond is not None and cond.reason == PAUSED_REASON
    if d.spec.paused and not paused_exists:
        new = new_condition("Progressing", "Unknown", PAUSED_REASON, "Deployment is paused", now_ts)
    elif not d.spec.paused and paused_exists:
        new = new_condition("Progressing", "Unknown", RESUMED_REASON, "Deployment is resumed", now_ts)
    else:
        return None
    return set_condition(d.status, new)
