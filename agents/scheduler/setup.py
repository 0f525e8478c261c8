"""From a scenario to what the scheduler agent needs: the plugin registry (in-tree plus
``schedulerOptions.plugins`` and the ``kube_emulator.plugins`` entry points), the decoded
KubeSchedulerConfiguration, the per-instance options.

``build_scheduler_setup`` is called twice per run: once by the CLI before anything runs,
so a bad configuration is bad input (exit 2, ``SetupError`` naming the scenario file and
the path inside it), and once by the runner to start the agents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.scheduler.config import ConfigError, load_config
from agents.scheduler.framework.interface import PluginFactory, ProfileSpec
from agents.scheduler.scheduler import SchedulerOptions
from emulator.inputs import PlainInputError

__all__ = ["SchedulerSetup", "SetupError", "build_scheduler_setup"]


class SetupError(PlainInputError, ValueError):
    """A scheduler configuration problem: ``<file>: <path>: <detail>``."""


@dataclass(frozen=True, slots=True)
class SchedulerSetup:
    instances: int
    profiles: list[ProfileSpec]
    registry: Mapping[str, PluginFactory]
    options: SchedulerOptions
    missing_plugins: list[str]


def _registry(plugins: Mapping[str, str], source: str) -> dict[str, PluginFactory]:
    """In-tree, then ``kube_emulator.plugins`` entry points, then ``schedulerOptions.plugins``."""
    from agents.scheduler.registry import build_registry

    try:
        return build_registry(plugins)
    except (ConfigError, ImportError) as err:
        raise SetupError(f"{source}: {err}") from None


def build_scheduler_setup(scenario: Any, source: str = "") -> SchedulerSetup:
    opts = scenario.scheduler_options
    source = source or scenario.name
    registry = _registry(opts.plugins, source)
    doc = scenario.scheduler.document if scenario.scheduler is not None else None
    where, prefix = source, "scheduler"
    if scenario.scheduler is not None:
        where, prefix = scenario.scheduler.file or source, scenario.scheduler.path
    try:
        config = load_config(doc, registry)
    except ConfigError as err:
        path = ".".join(p for p in (prefix, err.path) if p)
        raise SetupError(f"{where}: {path}: {err.detail}" if path else f"{where}: {err.detail}") from None
    missing = sorted({m for p in config.profiles for m in p.missing_plugins})
    options = SchedulerOptions(
        assume_cache=opts.assume_cache,
        queueing_hints=opts.queueing_hints,
        in_flight_events=opts.in_flight_events,
        cycle_cost_fixed=opts.cycle_cost.fixed,
        cycle_cost_per_node=opts.cycle_cost.per_node,
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        pod_initial_backoff=float(config.pod_initial_backoff_seconds),
        pod_max_backoff=float(config.pod_max_backoff_seconds),
    )
    return SchedulerSetup(
        instances=opts.instances,
        profiles=[p.to_spec() for p in config.profiles],
        registry=registry,
        options=options,
        missing_plugins=missing,
    )
