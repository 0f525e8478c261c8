"""The pods/eviction subresource's decisions (upstream ``pkg/registry/core/pod/storage/eviction.go``).

What this module owns: the pure rules of an eviction, over the pod and the
PodDisruptionBudgets of its namespace; ``ApiServer.evict`` (``server``) reads the store,
asks ``plan`` and writes what it says. It writes nothing itself and knows no store.

One eviction, in upstream's order:

=====================================================  =======================================
the pod                                                 outcome
=====================================================  =======================================
Succeeded, Failed, Pending, or already terminating      deleted; PDBs not consulted
                                                        (``canIgnorePDB``)
no PDB of its namespace selects it                      deleted
more than one PDB selects it                            500: "This pod has more than one
                                                        PodDisruptionBudget, ..."; nothing
                                                        changes
not Ready, PDB ``unhealthyPodEvictionPolicy:            deleted, the budget untouched
AlwaysAllow``
not Ready, ``IfHealthyBudget`` (or unset) and the       deleted, the budget untouched
PDB has ``currentHealthy >= desiredHealthy > 0``
otherwise: ``checkAndDecrement``                        PDB status not observed yet
                                                        (``observedGeneration < generation``)
                                                        → 429; ``disruptionsAllowed == 0`` →
                                                        429 with the budget as cause; more than
                                                        ``MAX_DISRUPTED_PODS`` pending → 403;
                                                        else one status write
                                                        (``disruptionsAllowed - 1``, the pod in
                                                        ``disruptedPods``), then deleted
=====================================================  =======================================

"Deleted" is upstream 1.34's ``addConditionAndDeletePod``: the pod first gets the
``DisruptionTarget`` condition (reason ``EvictionByEvictionAPI``), then an ordinary delete
(graceful for a bound, running pod). A PDB's selector that is absent selects nothing;
``{}`` selects every pod of the namespace (policy/v1). The store is synchronous, so the
upstream retry loop on a Conflict of the PDB write has nothing to retry here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from msgspec.structs import replace

from emulator.base.api.core import Pod, PodCondition
from emulator.base.api.errors import Forbidden, TooManyRequests
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.api.meta import Condition
from emulator.base.api.policy import PodDisruptionBudget

__all__ = [
    "DISRUPTION_TARGET",
    "EVICTION_REASON",
    "MAX_DISRUPTED_PODS",
    "MORE_THAN_ONE_PDB",
    "EvictionPlan",
    "MoreThanOnePdb",
    "can_ignore_pdb",
    "check_and_decrement",
    "matching_pdbs",
    "plan",
    "with_disruption_target",
]

DISRUPTION_TARGET: Final = "DisruptionTarget"
EVICTION_REASON: Final = "EvictionByEvictionAPI"
EVICTION_MESSAGE: Final = "Eviction API: evicting"
MAX_DISRUPTED_PODS: Final = 2000
"""Upstream ``MaxDisruptedPodSize``: pending evictions a budget may hold."""
MORE_THAN_ONE_PDB: Final = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
)
VIOLATES_BUDGET: Final = "Cannot evict pod as it would violate the pod's disruption budget."


@dataclass(frozen=True, slots=True)
class EvictionPlan:
    """What ``ApiServer.evict`` writes: ``budget`` (a PDB's new status) first, if any,
    then the pod's DisruptionTarget condition and its delete."""

    outcome: Literal["ignore-pdb", "no-pdb", "unhealthy", "decrement"]
    budget: PodDisruptionBudget | None = None


class MoreThanOnePdb(Exception):
    """Two budgets select the pod: the caller answers 500 (``MORE_THAN_ONE_PDB``)."""


def can_ignore_pdb(pod: Pod) -> bool:
    """Upstream ``canIgnorePDB``: a terminal, pending or terminating pod is deleted at once."""
    return pod.status.phase in ("Succeeded", "Failed", "Pending") or pod.metadata.deletion_timestamp is not None


def _ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def matching_pdbs(pod: Pod, pdbs: list[PodDisruptionBudget]) -> list[PodDisruptionBudget]:
    """The budgets of the pod's namespace whose selector selects it (an absent selector
    selects nothing)."""
    return [
        pdb
        for pdb in pdbs
        if pdb.metadata.namespace == pod.metadata.namespace
        and pdb.spec.selector is not None
        and label_selector_matches(pdb.spec.selector, pod.metadata.labels)
    ]


def _allowed_condition(pdb: PodDisruptionBudget, now: str) -> list[Condition]:
    """Upstream ``UpdateDisruptionAllowedCondition`` with ``meta.SetStatusCondition``."""
    allowed = pdb.status.disruptions_allowed > 0
    status, reason = ("True", "SufficientPods") if allowed else ("False", "InsufficientPods")
    out: list[Condition] = []
    found = False
    for c in pdb.status.conditions:
        if c.type == "DisruptionAllowed":
            found = True
            when = c.last_transition_time if c.status == status and c.last_transition_time else now
            c = replace(
                c, status=status, reason=reason, observed_generation=pdb.status.observed_generation,
                last_transition_time=when,
            )  # fmt: skip
        out.append(c)
    if not found:
        out.append(
            Condition(
                type="DisruptionAllowed",
                status=status,
                reason=reason,
                observed_generation=pdb.status.observed_generation,
                last_transition_time=now,
            )
        )
    return out


def check_and_decrement(pdb: PodDisruptionBudget, pod_name: str, now: str) -> PodDisruptionBudget:
    """Upstream ``checkAndDecrement``: the budget with one disruption spent on ``pod_name``,
    or the 429/403 that refuses it."""
    name, status = pdb.metadata.name, pdb.status
    if status.observed_generation < pdb.metadata.generation:
        raise TooManyRequests(
            VIOLATES_BUDGET,
            causes=(f"The disruption budget {name} is still being processed by the server.",),
            retry_after_seconds=10,
        )
    if status.disruptions_allowed < 0:
        raise Forbidden(f'poddisruptionbudgets.policy "{name}" is forbidden: pdb disruptions allowed is negative')
    if len(status.disrupted_pods) > MAX_DISRUPTED_PODS:
        raise Forbidden(
            f'poddisruptionbudgets.policy "{name}" is forbidden: DisruptedPods map too big - too many evictions '
            "not confirmed by PDB controller"
        )
    if status.disruptions_allowed == 0:
        raise TooManyRequests(
            VIOLATES_BUDGET,
            causes=(
                f"The disruption budget {name} needs {status.desired_healthy} healthy pods "
                f"and has {status.current_healthy} currently",
            ),
        )
    spent = replace(
        pdb,
        status=replace(
            status,
            disruptions_allowed=status.disruptions_allowed - 1,
            disrupted_pods={**status.disrupted_pods, pod_name: now},
        ),
    )
    if spent.status.disruptions_allowed == 0:
        spent = replace(spent, status=replace(spent.status, conditions=_allowed_condition(spent, now)))
    return spent


def plan(pod: Pod, pdbs: list[PodDisruptionBudget], now: str) -> EvictionPlan:
    """The eviction of ``pod`` given every PDB of its namespace (see the module's table).
    Raises the budget's refusal, or ``MoreThanOnePdb`` (upstream answers that with a
    failure Status of code 500, which the caller raises as an ``InternalError``)."""
    if can_ignore_pdb(pod):
        return EvictionPlan("ignore-pdb")
    chosen = matching_pdbs(pod, pdbs)
    if not chosen:
        return EvictionPlan("no-pdb")
    if len(chosen) > 1:
        raise MoreThanOnePdb
    (pdb,) = chosen
    if not _ready(pod):
        if pdb.spec.unhealthy_pod_eviction_policy == "AlwaysAllow":
            return EvictionPlan("unhealthy")
        if pdb.status.current_healthy >= pdb.status.desired_healthy > 0:
            return EvictionPlan("unhealthy")
    return EvictionPlan("decrement", check_and_decrement(pdb, pod.metadata.name, now))


def with_disruption_target(pod: Pod, now: str) -> Pod:
    """The pod with ``DisruptionTarget=True`` (reason ``EvictionByEvictionAPI``), as
    ``podutil.UpdatePodCondition``: the transition time moves only when the status does."""
    wanted = PodCondition(
        type=DISRUPTION_TARGET, status="True", reason=EVICTION_REASON, message=EVICTION_MESSAGE,
        last_transition_time=now,
    )  # fmt: skip
    conditions = list(pod.status.conditions)
    for i, c in enumerate(conditions):
        if c.type == DISRUPTION_TARGET:
            if c.status == wanted.status and c.last_transition_time:
                wanted = replace(wanted, last_transition_time=c.last_transition_time)
            conditions[i] = wanted
            break
    else:
        conditions.append(wanted)
    return replace(pod, status=replace(pod.status, conditions=conditions))
