"""policy/v1 PodDisruptionBudget: the spec, and the status the disruption controller writes.

``minAvailable`` / ``maxUnavailable`` are IntOrStrings (``1`` or ``"50%"``); at most one is
set (``workloadvalidation``). The disruption controller and the Eviction API are not here.
"""

from __future__ import annotations

from emulator.base.api.core import LabelSelector
from emulator.base.api.intstr import IntOrString
from emulator.base.api.meta import Condition, K8s, ObjectMeta

__all__ = ["PodDisruptionBudget", "PodDisruptionBudgetSpec", "PodDisruptionBudgetStatus"]


class PodDisruptionBudgetSpec(K8s, frozen=True):
    min_available: IntOrString | None = None
    selector: LabelSelector | None = None
    max_unavailable: IntOrString | None = None
    unhealthy_pod_eviction_policy: str | None = None
    """``IfHealthyBudget`` or ``AlwaysAllow``; unset means IfHealthyBudget."""


class PodDisruptionBudgetStatus(K8s, frozen=True):
    observed_generation: int = 0
    disrupted_pods: dict[str, str] = {}
    """Pod name → the time its eviction was admitted."""
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    conditions: list[Condition] = []


class PodDisruptionBudget(K8s, frozen=True):
    api_version: str = "policy/v1"
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodDisruptionBudgetSpec = PodDisruptionBudgetSpec()
    status: PodDisruptionBudgetStatus = PodDisruptionBudgetStatus()
