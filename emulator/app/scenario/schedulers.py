"""The scenario's side of the scheduler seam: a ``Scenario`` (and, for a ``scheduler`` fault,
its own configuration) as the agent layer's typed ``SchedulerSettings``.

The scheduler agent never reads scenario objects: the CLI's check, ``hunt`` and the runner
build its settings here and hand them over. It owns nothing else: building and starting
instances is ``agents.scheduler.start_schedulers``.
"""

from __future__ import annotations

from agents.scheduler import SchedulerSettings
from emulator.app.scenario.schema import Scenario, SchedulerConfig
from emulator.app.scenario.trace_gpus import feature_gates

__all__ = ["scheduler_settings"]


def scheduler_settings(
    scenario: Scenario, source: str = "", config: SchedulerConfig | None = None
) -> SchedulerSettings:
    """``scenario``'s scheduler settings; ``config`` replaces its KubeSchedulerConfiguration
    (a ``scheduler`` fault's). ``source``: the file to name in errors (default: the name)."""
    opts = scenario.scheduler_options
    doc = scenario.scheduler if config is None else config
    return SchedulerSettings(
        source=source or scenario.name,
        instances=opts.instances,
        assume_cache=opts.assume_cache,
        queueing_hints=opts.queueing_hints,
        in_flight_events=opts.in_flight_events,
        cycle_cost_fixed=opts.cycle_cost.fixed,
        cycle_cost_per_node=opts.cycle_cost.per_node,
        plugins=dict(opts.plugins),
        config=doc.document if doc is not None else None,
        config_file=doc.file if doc is not None else "",
        config_path=doc.path if doc is not None else "scheduler",
        feature_gates=feature_gates(scenario),
    )
