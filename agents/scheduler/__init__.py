"""The kube-scheduler agent (queue, cache, framework, plugins, cycles): its public surface.

The application layer (``emulator/app/scenario``, ``bench``, ``commands``, ...) imports these names
from ``agents.scheduler`` and nothing deeper (an import-linter contract in ``pyproject.toml``
says so); tests and the agent itself may use the modules. Each name is loaded on first use
(PEP 562 ``__getattr__``), so ``import agents.scheduler`` costs nothing until one is read.

- running: ``start_schedulers`` (the one place a run builds and starts instances),
  ``SchedulerGroup``, ``Scheduler``, ``SchedulerOptions``, ``SchedulerSettings``,
  ``build_scheduler_setup``, ``SetupError``, ``MetricsRecorder`` (a benchmark's timers);
- configuration: ``load_config``, ``load_config_file``, ``read_config_document``,
  ``build_registry``, ``ConfigError``, ``CONFIG_API_VERSION``, ``CONFIG_KIND``;
- explaining: ``explain_objects`` (a pod against fixed objects), ``ProfileError``,
  ``Explanation``, ``ExplainRecorder`` (``run --explain``), ``WORKLOAD_KINDS``;
- checking: ``CacheComparer`` (an instance against the API server, for the invariants);
- DRA: ``DraFeatures``, ``DraAllocationError``, ``ClaimAllocator`` (claims allocated without a
  pod, as scheduler_perf's ``allocResourceClaims``), ``DRA_FEATURE_FIELDS`` and
  ``dra_features_for`` (the gates ``SchedulerSettings.feature_gates`` sets);
- simulating: ``SchedulingSimulator`` (the profile's PreFilter and Filter plugins on a forkable
  snapshot: the Cluster Autoscaler's predicate checker);
- framework names the callers read: ``Code``, ``ExtensionPoint``, ``PluginFactory``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents.scheduler.args import ConfigError
    from agents.scheduler.claim_allocator import ClaimAllocator
    from agents.scheduler.comparer import CacheComparer
    from agents.scheduler.config import API_VERSION as CONFIG_API_VERSION
    from agents.scheduler.config import KIND as CONFIG_KIND
    from agents.scheduler.config import load_config, load_config_file, read_config_document
    from agents.scheduler.explain import ExplainRecorder, Explanation
    from agents.scheduler.explain_static import INPUT_KINDS as WORKLOAD_KINDS
    from agents.scheduler.explain_static import ProfileError, explain_objects
    from agents.scheduler.framework.interface import ExtensionPoint, PluginFactory
    from agents.scheduler.framework.types import Code
    from agents.scheduler.metrics import MetricsRecorder
    from agents.scheduler.options import SchedulerOptions
    from agents.scheduler.plugins.dynamicresources import AllocationError as DraAllocationError
    from agents.scheduler.plugins.dynamicresources import Features as DraFeatures
    from agents.scheduler.registry import build_registry
    from agents.scheduler.scheduler import Scheduler, SchedulerGroup, start_schedulers
    from agents.scheduler.setup import (
        DRA_FEATURE_FIELDS,
        SchedulerSettings,
        SetupError,
        build_scheduler_setup,
        dra_features_for,
    )
    from agents.scheduler.simulator import SchedulingSimulator

__all__ = [
    "CONFIG_API_VERSION",
    "CONFIG_KIND",
    "DRA_FEATURE_FIELDS",
    "WORKLOAD_KINDS",
    "CacheComparer",
    "ClaimAllocator",
    "Code",
    "ConfigError",
    "DraAllocationError",
    "DraFeatures",
    "ExplainRecorder",
    "Explanation",
    "ExtensionPoint",
    "MetricsRecorder",
    "PluginFactory",
    "ProfileError",
    "Scheduler",
    "SchedulerGroup",
    "SchedulerOptions",
    "SchedulerSettings",
    "SchedulingSimulator",
    "SetupError",
    "build_registry",
    "build_scheduler_setup",
    "dra_features_for",
    "explain_objects",
    "load_config",
    "load_config_file",
    "read_config_document",
    "start_schedulers",
]

_WHERE: dict[str, tuple[str, str]] = {
    "CONFIG_API_VERSION": ("config", "API_VERSION"),
    "CONFIG_KIND": ("config", "KIND"),
    "DRA_FEATURE_FIELDS": ("setup", "DRA_FEATURE_FIELDS"),
    "WORKLOAD_KINDS": ("explain_static", "INPUT_KINDS"),
    "CacheComparer": ("comparer", "CacheComparer"),
    "ClaimAllocator": ("claim_allocator", "ClaimAllocator"),
    "Code": ("framework.types", "Code"),
    "ConfigError": ("args", "ConfigError"),
    "DraAllocationError": ("plugins.dynamicresources", "AllocationError"),
    "DraFeatures": ("plugins.dynamicresources", "Features"),
    "ExplainRecorder": ("explain", "ExplainRecorder"),
    "Explanation": ("explain", "Explanation"),
    "ExtensionPoint": ("framework.interface", "ExtensionPoint"),
    "MetricsRecorder": ("metrics", "MetricsRecorder"),
    "PluginFactory": ("framework.interface", "PluginFactory"),
    "ProfileError": ("explain_static", "ProfileError"),
    "Scheduler": ("scheduler", "Scheduler"),
    "SchedulerGroup": ("scheduler", "SchedulerGroup"),
    "SchedulerOptions": ("options", "SchedulerOptions"),
    "SchedulerSettings": ("setup", "SchedulerSettings"),
    "SetupError": ("setup", "SetupError"),
    "SchedulingSimulator": ("simulator", "SchedulingSimulator"),
    "build_registry": ("registry", "build_registry"),
    "build_scheduler_setup": ("setup", "build_scheduler_setup"),
    "dra_features_for": ("setup", "dra_features_for"),
    "explain_objects": ("explain_static", "explain_objects"),
    "load_config": ("config", "load_config"),
    "load_config_file": ("config", "load_config_file"),
    "read_config_document": ("config", "read_config_document"),
    "start_schedulers": ("scheduler", "start_schedulers"),
}
"""Exported name → (module under ``agents.scheduler``, its name there)."""


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{where[0]}"), where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
