"""Preemption shared by preemption plugins (upstream ``pkg/scheduler/framework/preemption``).

``evaluator`` decides where and whom to preempt (pure, on the cycle's snapshot); ``executor``
makes the API calls off the scheduling cycle and tracks the preemptors waiting for them.
The in-tree user is ``agents.scheduler.plugins.defaultpreemption``.
"""

from .evaluator import (
    MAX_INT32,
    PREEMPTION_NOT_HELPFUL,
    Candidate,
    Evaluator,
    PodDisruptionBudget,
    PreemptionPlugin,
    ScoreFunc,
    Victims,
    VictimSearchFunc,
    earliest_pod_start_time,
    filter_pods_with_pdb_violation,
    importance_key,
    pick_one_node_for_preemption,
    pod_priority,
    pod_start_time,
)
from .executor import DISRUPTION_TARGET, PREEMPTION_BY_SCHEDULER, Executor, ExecutorStats, with_disruption_target

__all__ = [
    "DISRUPTION_TARGET",
    "MAX_INT32",
    "PREEMPTION_BY_SCHEDULER",
    "PREEMPTION_NOT_HELPFUL",
    "Candidate",
    "Evaluator",
    "Executor",
    "ExecutorStats",
    "PodDisruptionBudget",
    "PreemptionPlugin",
    "ScoreFunc",
    "VictimSearchFunc",
    "Victims",
    "earliest_pod_start_time",
    "filter_pods_with_pdb_violation",
    "importance_key",
    "pick_one_node_for_preemption",
    "pod_priority",
    "pod_start_time",
    "with_disruption_target",
]
