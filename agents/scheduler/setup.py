"""From typed settings to what the scheduler agent needs: the plugin registry (in-tree plus
``schedulerOptions.plugins`` and the ``kube_emulator.plugins`` entry points), the decoded
KubeSchedulerConfiguration, the per-instance options.

What this module owns:

* ``SchedulerSettings``: everything a scenario tells the scheduler agent, as plain typed data
  (the scenario layer builds it from its ``Scenario``: ``emulator/app/scenario/schedulers.py``).
  It is the seam between the layers: no scenario object crosses it.
* ``build_scheduler_setup(settings)``: registry, profiles and options, or ``SetupError``
  (``<file>: <path>: <detail>``, naming the scenario file and the path inside it). With
  ``construct=True`` it also builds every profile's plugins once, on a stopped clock and
  without a client, so that a plugin whose constructor raises is bad input
  (``initializing plugin "X": ...``) before anything runs.

The CLI's check (``emulator/app/commands/common.py``, before ``validate``/``run`` go on) calls it
with ``construct=True``; ``scheduler.start_schedulers`` calls it to start the agents. It does
not own loading the configuration document (``config.py``), the registry (``registry.py``)
nor starting instances (``scheduler.py``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agents.scheduler.config import ConfigError, load_config
from agents.scheduler.framework.interface import PluginFactory, ProfileSpec
from agents.scheduler.framework.plugin_set import PluginInitError
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.options import SchedulerOptions
from agents.scheduler.plugins.dynamicresources import Features
from agents.scheduler.registry import build_registry
from emulator.base.inputs import PlainInputError
from emulator.base.runtime.clock import StoppedClock

__all__ = [
    "DRA_FEATURE_FIELDS",
    "SchedulerSettings",
    "SchedulerSetup",
    "SetupError",
    "build_scheduler_setup",
    "dra_features_for",
]

DRA_FEATURE_FIELDS: Final = {
    "DRAAdminAccess": "admin_access",
    "DRAPrioritizedList": "prioritized_list",
    "DRAPartitionableDevices": "partitionable_devices",
    "DRADeviceTaints": "device_taints",
    "DRADeviceBindingConditions": "device_binding_and_status",
    "DRAConsumableCapacity": "consumable_capacity",
}
"""Upstream's DRA feature gate → the field of the allocator's ``Features`` it sets."""


class SetupError(PlainInputError, ValueError):
    """A scheduler configuration problem: ``<file>: <path>: <detail>``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SchedulerSettings:
    """What the scheduler agent reads from a scenario (``schedulerOptions`` and ``scheduler``)."""

    source: str
    """The scenario file (or name), to name in errors."""
    instances: int = 1
    assume_cache: bool = True
    queueing_hints: bool = True
    in_flight_events: bool = True
    cycle_cost_fixed: float = 0.0
    cycle_cost_per_node: float = 0.0
    plugins: Mapping[str, str] = field(default_factory=dict)
    """Out-of-tree plugins: plugin name → ``package.module:Class``."""
    config: Mapping[str, Any] | None = None
    """The KubeSchedulerConfiguration document, raw (None: the defaults)."""
    config_file: str = ""
    """The file ``config`` was read from (empty: ``source``)."""
    config_path: str = "scheduler"
    """Where ``config`` sits in ``config_file``: ``scheduler`` when inline, empty for its own file."""
    client_qps: float | None = None
    client_burst: int | None = None
    """Override ``clientConnection.qps``/``burst`` (bench: upstream's ``schedulerApiClientQPS``/``Burst``)."""
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    """Feature gates that differ from v1.34's defaults; the DRA ones (``DRA_FEATURE_FIELDS``)
    set ``SchedulerOptions.dra_features`` (empty: the defaults, ``dra_features`` None)."""


@dataclass(frozen=True, slots=True)
class SchedulerSetup:
    instances: int
    profiles: list[ProfileSpec]
    registry: Mapping[str, PluginFactory]
    options: SchedulerOptions
    missing_plugins: list[str]


def _registry(settings: SchedulerSettings) -> dict[str, PluginFactory]:
    """In-tree, then ``kube_emulator.plugins`` entry points, then ``schedulerOptions.plugins``."""
    try:
        return build_registry(settings.plugins)
    except (ConfigError, ImportError) as err:
        raise SetupError(f"{settings.source}: {err}") from None


def build_scheduler_setup(settings: SchedulerSettings, *, construct: bool = False) -> SchedulerSetup:
    """The registry, profiles and options of ``settings``; ``SetupError`` if they are bad.

    ``construct``: also build every profile's plugins once (see the module docstring)."""
    registry = _registry(settings)
    where = settings.config_file or settings.source
    prefix = settings.config_path if settings.config is not None else "scheduler"
    if settings.config is None:
        where = settings.source
    try:
        config = load_config(dict(settings.config) if settings.config is not None else None, registry)
    except ConfigError as err:
        path = ".".join(p for p in (prefix, err.path) if p)
        raise SetupError(f"{where}: {path}: {err.detail}" if path else f"{where}: {err.detail}") from None
    missing = sorted({m for p in config.profiles for m in p.missing_plugins})
    options = SchedulerOptions(
        assume_cache=settings.assume_cache,
        queueing_hints=settings.queueing_hints,
        in_flight_events=settings.in_flight_events,
        cycle_cost_fixed=settings.cycle_cost_fixed,
        cycle_cost_per_node=settings.cycle_cost_per_node,
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        pod_initial_backoff=float(config.pod_initial_backoff_seconds),
        pod_max_backoff=float(config.pod_max_backoff_seconds),
        client_qps=config.client_qps if settings.client_qps is None else settings.client_qps,
        client_burst=config.client_burst if settings.client_burst is None else settings.client_burst,
        dra_features=dra_features_for(settings.feature_gates),
    )
    setup = SchedulerSetup(
        instances=settings.instances,
        profiles=[p.to_spec() for p in config.profiles],
        registry=registry,
        options=options,
        missing_plugins=missing,
    )
    if construct:
        _construct(setup, settings, where, prefix)
    return setup


def dra_features_for(gates: Mapping[str, bool]) -> Features | None:
    """The allocator's gates with ``gates`` over v1.34's defaults (None: no DRA gate set)."""
    chosen = {DRA_FEATURE_FIELDS[name]: on for name, on in gates.items() if name in DRA_FEATURE_FIELDS}
    return Features(**chosen) if chosen else None


def _construct(setup: SchedulerSetup, settings: SchedulerSettings, where: str, prefix: str) -> None:
    """Build each profile's plugins once; a constructor that raises is a ``SetupError``
    naming the plugin, at ``schedulerOptions.plugins.<name>`` when the scenario declares it
    there, else at the profile."""
    for i, spec in enumerate(setup.profiles):
        try:
            Framework(spec, setup.registry, clock=StoppedClock(), rng=random.Random(0))
        except PluginInitError as err:
            if err.plugin in settings.plugins:
                raise SetupError(f"{settings.source}: schedulerOptions.plugins.{err.plugin}: {err}") from None
            path = ".".join(p for p in (prefix, f"profiles[{i}]") if p)
            raise SetupError(f"{where}: {path}: {err}") from None
        except ValueError as err:
            path = ".".join(p for p in (prefix, f"profiles[{i}]") if p)
            raise SetupError(f"{where}: {path}: {err}") from None
