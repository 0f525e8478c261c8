"""A DaemonSet's rolling update, pure: upstream's ``rollingUpdate`` (``update.go``).

``desired_counts`` gives ``(maxSurge, maxUnavailable, desiredNumberScheduled)``: the
percentages scaled by the nodes that should run a pod, rounded up; both 0 (an impossible
setting the API server lets through) means ``maxUnavailable`` 1. Per node, the pods not
being deleted split into the *new* pod (``is_pod_updated``) and the *old* one; more than one
of either leaves the node to ``manage``.

Without surge (``maxSurge`` 0), nodes in name order:

=======================================  =====================================================
node                                     decision
=======================================  =====================================================
no pod, or both an old and a new one     counts as unavailable (``manage`` acts on it)
only a new pod                           unavailable while it is not available
old pod, not available                   delete it, and count it as unavailable (upstream
                                         since kubernetes/kubernetes#123233, v1.31)
old pod, available                       a candidate, while the unavailable count is below
                                         ``maxUnavailable``
=======================================  =====================================================

then as many candidates are deleted as ``maxUnavailable`` minus the unavailable count allows;
``manage`` creates the new pods on the next sync. Counting the replaced unavailable old pods
matters when updates follow one another: an old pod that is down (say a previous update's pod
that never became Ready) is replaced, and no available pod is taken down beside it, so updates
that never become Ready hold ``maxUnavailable`` nodes down, not one more per update.

With surge: a node whose old pod is unavailable gets a new pod at once; a node with an
available old pod is a surge candidate while fewer than ``maxSurge`` new pods are waiting to
become available; a node whose new pod is available loses its old pod. A node that should no
longer run the pod loses its old pod only once enough pods elsewhere are available (upstream's
rule: with surge, availability never drops). It does not write anything (``controller``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.controllers.controllerutils import is_pod_available
from agents.controllers.daemonset.eligibility import is_pod_updated
from agents.controllers.daemonset.manage import Eligibility
from emulator.base.api.apps import DaemonSet
from emulator.base.api.core import Pod
from emulator.base.api.intstr import scaled_value

__all__ = ["UpdatePlan", "desired_counts", "rolling_update", "surge_enabled"]


@dataclass(slots=True)
class UpdatePlan:
    delete: list[Pod] = field(default_factory=list)
    create_on: list[str] = field(default_factory=list)


def surge_enabled(ds: DaemonSet) -> bool:
    """Upstream ``AllowsSurge``: RollingUpdate with a non-zero ``maxSurge``."""
    strategy = ds.spec.update_strategy
    if strategy.type != "RollingUpdate" or strategy.rolling_update is None:
        return False
    surge = strategy.rolling_update.max_surge
    return surge is not None and surge not in (0, "0%")


def desired_counts(ds: DaemonSet, eligible: Eligibility, by_node: dict[str, list[Pod]]) -> tuple[int, int, int]:
    """``(maxSurge, maxUnavailable, desiredNumberScheduled)``; nodes that should run a pod
    and have none are added to ``by_node`` (with no pods), as upstream's do."""
    desired = 0
    for name, (should_run, _) in eligible.items():
        if should_run:
            desired += 1
            by_node.setdefault(name, [])
    ru = ds.spec.update_strategy.rolling_update
    unavailable = scaled_value(ru.max_unavailable, desired, round_up=True) if ru and ru.max_unavailable else 0
    surge = scaled_value(ru.max_surge, desired, round_up=True) if ru and ru.max_surge else 0
    if desired > 0 and unavailable == 0 and surge == 0:
        unavailable = 1
    return surge, unavailable, desired


def _split(pods: list[Pod], hash_: str, generation: int) -> tuple[Pod | None, Pod | None, bool]:
    """Upstream ``findUpdatedPodsOnNode``: (new, old, ok); not ok with two of a kind."""
    new: Pod | None = None
    old: Pod | None = None
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None:
            continue
        if is_pod_updated(pod, hash_, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def rolling_update(
    ds: DaemonSet,
    eligible: Eligibility,
    by_node: dict[str, list[Pod]],
    hash_: str,
    generation: int,
    now: float,
) -> UpdatePlan:
    by_node = {name: list(pods) for name, pods in by_node.items()}
    max_surge, max_unavailable, desired = desired_counts(ds, eligible, by_node)
    min_ready = ds.spec.min_ready_seconds
    plan = UpdatePlan()
    if max_surge == 0:
        unavailable = 0
        replace_now: list[Pod] = []
        candidates: list[Pod] = []
        for name in sorted(by_node):
            new, old, ok = _split(by_node[name], hash_, generation)
            if not ok or (new is None) == (old is None):
                unavailable += 1
            elif new is not None:
                if not is_pod_available(new, min_ready, now):
                    unavailable += 1
            elif old is not None:
                if not is_pod_available(old, min_ready, now):
                    replace_now.append(old)
                    unavailable += 1
                elif unavailable < max_unavailable:
                    candidates.append(old)
        room = max(0, min(max_unavailable - unavailable, len(candidates)))
        plan.delete = replace_now + candidates[:room]
        return plan

    surged = available = 0
    not_to_run: list[Pod] = []
    allowed: list[str] = []
    candidate_nodes: list[str] = []
    for name in sorted(by_node):
        new, old, ok = _split(by_node[name], hash_, generation)
        if not ok:
            surged += 1
            continue
        if new is not None:
            available += is_pod_available(new, min_ready, now)
        elif old is not None:
            available += is_pod_available(old, min_ready, now)
        decision = eligible.get(name)
        if decision is None:
            continue  # the node is gone: its pods are the pod GC's
        if not decision[0]:
            if old is not None:
                not_to_run.append(old)
            continue
        if old is None:
            continue
        if new is None:
            if not is_pod_available(old, min_ready, now):
                allowed.append(name)
            elif surged < max_surge:
                candidate_nodes.append(name)
        elif not is_pod_available(new, min_ready, now):
            surged += 1
        else:
            plan.delete.append(old)
    deletable = min(available - desired, len(not_to_run))
    if deletable > 0:
        plan.delete.extend(not_to_run[:deletable])
    room = max(0, min(max_surge - surged, len(candidate_nodes)))
    plan.create_on = allowed + candidate_nodes[:room]
    return plan
