"""The PodDisruptionBudget status arithmetic of upstream's disruption controller
(``pkg/controller/disruption/disruption.go``), as plain functions over pods and a budget.

================================  ===========================================================
spec                              expectedPods / desiredHealthy
================================  ===========================================================
``maxUnavailable`` (int or %)     sum of the pods' controllers' scales; that sum minus
                                  maxUnavailable (percent of it, rounded up), at least 0
``minAvailable`` int              the number of selected pods; minAvailable
``minAvailable`` %                sum of the controllers' scales; that percent, rounded up
neither                           0; 0
================================  ===========================================================

The controllers' scale (``expected_scale``, upstream ``getExpectedScale``): each selected pod's
controller ownerReference is resolved by a ``ControllerFinder`` (the controller module looks up
Deployments through their ReplicaSets, bare ReplicaSets and StatefulSets in the shared
informers); a pod without a controller is *unmanaged* (reported, not counted); a controller
no finder knows fails the sync (``ScaleError``, upstream's "found no controllers for pod").

``currentHealthy`` counts pods that are Ready, not being deleted, and not in
``disruptedPods`` (evictions admitted in the last ``DELETION_TIMEOUT``); entries older than
that are dropped from the map (with a ``NotDeleted`` Event upstream), and the earliest
expiry is when the budget must be synced again. ``disruptionsAllowed`` =
currentHealthy − desiredHealthy, 0 when negative or when nothing is expected. The
``DisruptionAllowed`` condition: True/SufficientPods when disruptions are allowed, else
False/InsufficientPods; False/SyncFailed (with the error) when the sync failed.

``unhealthyPodEvictionPolicy`` is not read here: upstream applies it in the Eviction API.
This module does no I/O: the controller (``disruption``) owns informers, queue and writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from msgspec.structs import replace

from emulator.base.api.core import LabelSelector, Pod
from emulator.base.api.intstr import scaled_value
from emulator.base.api.meta import Condition, OwnerReference
from emulator.base.api.policy import PodDisruptionBudget, PodDisruptionBudgetStatus
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "DELETION_TIMEOUT",
    "DISRUPTION_ALLOWED",
    "DISRUPTION_TARGET",
    "INSUFFICIENT_PODS",
    "STALE_POD_DISRUPTION_TIMEOUT",
    "SUFFICIENT_PODS",
    "SYNC_FAILED",
    "ControllerFinder",
    "ScaleError",
    "build_disrupted_pod_map",
    "count_healthy_pods",
    "expected_pod_count",
    "expected_scale",
    "fail_safe_status",
    "go_selector",
    "is_pod_ready",
    "new_status",
    "set_condition",
    "stale_disruption_wait",
]

DELETION_TIMEOUT: Final = 120.0
"""Upstream ``DeletionTimeout``: how long a ``disruptedPods`` entry is believed."""
STALE_POD_DISRUPTION_TIMEOUT: Final = 120.0
"""Upstream ``stalePodDisruptionTimeout``: a DisruptionTarget condition on a pod that is still
not terminating this long after it was set is reset to False."""
DISRUPTION_TARGET: Final = "DisruptionTarget"
DISRUPTION_ALLOWED: Final = "DisruptionAllowed"
SUFFICIENT_PODS: Final = "SufficientPods"
INSUFFICIENT_PODS: Final = "InsufficientPods"
SYNC_FAILED: Final = "SyncFailed"

ControllerFinder = Callable[[OwnerReference, str], tuple[str, int] | None]
"""``find(controller_ref, namespace)``: (the uid of the object whose scale counts, its scale),
or None when this reference names no controller with a scale."""


class ScaleError(Exception):
    """The expected pod count cannot be computed (the message is upstream's error text)."""


def is_pod_ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


# --- expected pods --------------------------------------------------------------------------


def expected_scale(pods: Sequence[Pod], find: ControllerFinder) -> tuple[int, list[str]]:
    """Upstream ``getExpectedScale``: (sum of the controllers' scales, unmanaged pod names)."""
    scales: dict[str, int] = {}
    unmanaged: list[str] = []
    for pod in pods:
        ref = next((r for r in pod.metadata.owner_references if r.controller), None)
        if ref is None:
            unmanaged.append(pod.metadata.name)
            continue
        if ref.uid in scales:
            continue
        found = find(ref, pod.metadata.namespace)
        if found is None:
            raise ScaleError(f'found no controllers for pod "{pod.metadata.name}"')
        uid, scale = found
        scales[uid] = scale
    return sum(scales.values()), unmanaged


def expected_pod_count(
    pdb: PodDisruptionBudget, pods: Sequence[Pod], find: ControllerFinder
) -> tuple[int, int, list[str]]:
    """Upstream ``getExpectedPodCount``: (expectedPods, desiredHealthy, unmanaged pod names);
    ``ScaleError`` when a controller cannot be found or a value is not a valid percent."""
    spec = pdb.spec
    try:
        if spec.max_unavailable is not None:
            expected, unmanaged = expected_scale(pods, find)
            max_unavailable = scaled_value(spec.max_unavailable, expected, round_up=True)
            return expected, max(0, expected - max_unavailable), unmanaged
        if spec.min_available is not None:
            if isinstance(spec.min_available, int):
                return len(pods), spec.min_available, []
            expected, unmanaged = expected_scale(pods, find)
            return expected, scaled_value(spec.min_available, expected, round_up=True), unmanaged
    except ValueError as err:
        raise ScaleError(str(err)) from None
    return 0, 0, []


# --- health ---------------------------------------------------------------------------------


def build_disrupted_pod_map(
    pods: Sequence[Pod], pdb: PodDisruptionBudget, now: float
) -> tuple[dict[str, str], float | None, list[Pod]]:
    """Upstream ``buildDisruptedPodMap``: (the entries still believed, the earliest time one
    of them expires or None, the pods whose entry expired without their deletion)."""
    disrupted = pdb.status.disrupted_pods
    kept: dict[str, str] = {}
    recheck: float | None = None
    not_deleted: list[Pod] = []
    if not disrupted:
        return kept, recheck, not_deleted
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None:
            continue
        at = disrupted.get(pod.metadata.name)
        if at is None:
            continue
        expires = parse_timestamp(at) + DELETION_TIMEOUT
        # Upstream drops an entry once its expiry is *before* now; at exactly its expiry it
        # is dropped here too (countHealthyPods already counts the pod then), so that the
        # recheck, due at that instant, never re-queues itself with no time passing.
        if expires <= now:
            not_deleted.append(pod)
            continue
        if recheck is None or expires < recheck:
            recheck = expires
        kept[pod.metadata.name] = at
    return kept, recheck, not_deleted


def count_healthy_pods(pods: Sequence[Pod], disrupted: Mapping[str, str], now: float) -> int:
    """Upstream ``countHealthyPods``: Ready pods neither being deleted nor recently evicted."""
    healthy = 0
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None:
            continue
        at = disrupted.get(pod.metadata.name)
        if at is not None and parse_timestamp(at) + DELETION_TIMEOUT > now:
            continue
        if is_pod_ready(pod):
            healthy += 1
    return healthy


def stale_disruption_wait(pod: Pod, now: float) -> float | None:
    """Upstream ``nonTerminatingPodHasStaleDisruptionCondition``: None when the pod has no
    DisruptionTarget=True condition to clean up (terminating, terminal, none, or set by the
    kubelet), else the seconds until it is stale (0: now)."""
    if pod.metadata.deletion_timestamp is not None or pod.status.phase in ("Succeeded", "Failed"):
        return None
    cond = next((c for c in pod.status.conditions if c.type == DISRUPTION_TARGET), None)
    if cond is None or cond.status != "True" or cond.reason == "TerminationByKubelet":
        return None
    since = parse_timestamp(cond.last_transition_time) if cond.last_transition_time else now
    return max(0.0, STALE_POD_DISRUPTION_TIMEOUT - (now - since))


# --- status ---------------------------------------------------------------------------------


def set_condition(conditions: Sequence[Condition], new: Condition, now: str) -> list[Condition]:
    """``apimeta.SetStatusCondition``: replace the condition of ``new.type`` (its transition
    time moves only when the status changes), or append it stamped ``now``."""
    out = list(conditions)
    for i, old in enumerate(out):
        if old.type != new.type:
            continue
        transition = old.last_transition_time if old.status == new.status else now
        out[i] = replace(new, last_transition_time=transition or now)
        return out
    out.append(replace(new, last_transition_time=new.last_transition_time or now))
    return out


def _allowed_condition(status: PodDisruptionBudgetStatus) -> Condition:
    """Upstream ``UpdateDisruptionAllowedCondition``'s condition for ``status``."""
    if status.disruptions_allowed > 0:
        return Condition(
            type=DISRUPTION_ALLOWED,
            status="True",
            reason=SUFFICIENT_PODS,
            observed_generation=status.observed_generation,
        )
    return Condition(
        type=DISRUPTION_ALLOWED,
        status="False",
        reason=INSUFFICIENT_PODS,
        observed_generation=status.observed_generation,
    )


def _conditions_up_to_date(pdb: PodDisruptionBudget) -> bool:
    """Upstream ``ConditionsAreUpToDate``."""
    cond = next((c for c in pdb.status.conditions if c.type == DISRUPTION_ALLOWED), None)
    if cond is None or pdb.status.observed_generation != pdb.metadata.generation:
        return False
    return cond.status == ("True" if pdb.status.disruptions_allowed > 0 else "False")


def new_status(
    pdb: PodDisruptionBudget,
    current_healthy: int,
    desired_healthy: int,
    expected: int,
    disrupted: Mapping[str, str],
    now: str,
) -> PodDisruptionBudgetStatus | None:
    """Upstream ``updatePdbStatus``: the status to write, or None when the stored one is
    already exactly this (no write)."""
    allowed = current_healthy - desired_healthy
    if expected <= 0 or allowed <= 0:
        allowed = 0
    old = pdb.status
    if (
        old.current_healthy == current_healthy
        and old.desired_healthy == desired_healthy
        and old.expected_pods == expected
        and old.disruptions_allowed == allowed
        and old.disrupted_pods == disrupted
        and old.observed_generation == pdb.metadata.generation
        and _conditions_up_to_date(pdb)
    ):
        return None
    status = PodDisruptionBudgetStatus(
        observed_generation=pdb.metadata.generation,
        disrupted_pods=dict(disrupted),
        disruptions_allowed=allowed,
        current_healthy=current_healthy,
        desired_healthy=desired_healthy,
        expected_pods=expected,
        conditions=old.conditions,
    )
    return replace(status, conditions=set_condition(old.conditions, _allowed_condition(status), now))


def fail_safe_status(pdb: PodDisruptionBudget, message: str, now: str) -> PodDisruptionBudgetStatus:
    """Upstream ``failSafe``: no disruptions allowed, condition False/SyncFailed with the error."""
    old = pdb.status
    cond = Condition(
        type=DISRUPTION_ALLOWED,
        status="False",
        reason=SYNC_FAILED,
        message=message,
        observed_generation=old.observed_generation,
    )
    return replace(old, disruptions_allowed=0, conditions=set_condition(old.conditions, cond, now))


# --- messages -------------------------------------------------------------------------------


def go_selector(selector: LabelSelector | None) -> str:
    """Go's ``%v`` of a ``*metav1.LabelSelector`` (as upstream's UnmanagedPods Event prints it)."""
    if selector is None:
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted(selector.match_labels.items()))
    exprs = ",".join(
        f"LabelSelectorRequirement{{Key:{e.key},Operator:{e.operator},Values:[{' '.join(e.values)}],}}"
        for e in selector.match_expressions
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
