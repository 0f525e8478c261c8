"""``SchedulerOptions``: the knobs of one scheduler instance that are not part of the
KubeSchedulerConfiguration (``schedulerOptions`` in a scenario, plus the explain hook and a
benchmark's metrics recorder).

Built by ``setup.py`` from a scenario, read by the agent (``scheduler.py``) and its cycles
(``schedule_one.py``, ``binding_cycle.py``, ``failure_handler.py``). It sits below both so that
neither imports the other to reach it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from agents.scheduler.explain import Explanation
    from agents.scheduler.metrics import MetricsRecorder
    from agents.scheduler.plugins.dynamicresources import Features
    from emulator.base.api.core import Pod

__all__ = ["ExplainHook", "SchedulerOptions"]

ExplainHook: TypeAlias = "Callable[[int, float, Pod, Explanation], None]"
"""``hook(attempt, start, pod, explanation)``: called after every scheduling attempt."""


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    assume_cache: bool = True
    queueing_hints: bool = True
    in_flight_events: bool = True
    """False: the queue's in-flight protection is off (no in-flight events, no moveRequestCycle)."""
    cycle_cost_fixed: float = 0.0
    cycle_cost_per_node: float = 0.0
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    client_qps: float = 0.0
    """> 0: the scheduler's API client waits for tokens (``clientConnection.qps``)."""
    client_burst: int = 0
    explain: ExplainHook | None = None
    """Called after every attempt with its per-plugin explanation (``run --explain``)."""
    vectorized: bool = True
    """Filter and Score over the snapshot's NodeTable (False: node by node; same results)."""
    recorder: MetricsRecorder | None = None
    """Hears extension points' wall durations (benchmarks; ``metrics.MetricsRecorder``)."""
    dra_features: Features | None = None
    """The DRA feature gates DynamicResources and its allocator read (None: v1.34's defaults;
    a scheduler_perf workload's ``featureGates`` set them)."""
