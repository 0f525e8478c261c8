"""Checks of a loaded ``Scenario`` against the limits that one field's type cannot express.

This module owns the limits of ``limits.py`` that span several fields or need more than a
bound: totals over entries and steps (nodes, ``createPods`` pods, scheduler instances), the
timeline's horizon (the earliest time each step can start, sleeps and paced ``createPods``
added up, must stay within ``MAX_SECONDS`` unless ``until`` ends the run first), periods that
may be 0 (off) but otherwise not below ``MIN_PERIOD_SECONDS``, and bounds kept off the schema's
types so that their messages stay those the loader already gives (``ratePerSecond``,
``imagePullSlow.factor``).

``limit_errors(scenario)`` yields ``(path, detail)`` in file order, paths as the loader writes
them (``steps[3].createPods.ratePerSecond``); the loader reports the first as a
``ScenarioError``. Per-field bounds (every duration at most ``MAX_SECONDS``, finite floats)
are the loader's schema walk; this module does not read files or raise.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from emulator.app.scenario.limits import (
    MAX_FACTOR,
    MAX_SCHEDULER_INSTANCES,
    MAX_SECONDS,
    MAX_TOTAL_NODES,
    MAX_TOTAL_PODS,
    MIN_PERIOD_SECONDS,
    MIN_RATE_PER_SECOND,
)
from emulator.app.scenario.schema import (
    Create,
    CreateNodes,
    CreatePods,
    Fault,
    FaultSpec,
    ImagePullSlow,
    Replay,
    Scenario,
    SchedulerInstances,
    Sleep,
    WatchCut,
)
from emulator.base.runtime.clock import format_duration

__all__ = ["limit_errors"]

_DAY: Final = format_duration(MAX_SECONDS)


def limit_errors(scenario: Scenario) -> Iterator[tuple[str, str]]:
    """Every limit ``scenario`` passes, as ``(path, detail)``, in file order."""
    yield from _periods(scenario)
    yield from _faults(scenario)
    yield from _nodes(scenario)
    yield from _pods(scenario)
    yield from _horizon(scenario)


def _period(path: str, seconds: float | None, *, off: bool = True) -> Iterator[tuple[str, str]]:
    """A period below ``MIN_PERIOD_SECONDS``; ``off``: 0 is allowed (and means off)."""
    if seconds is not None and 0 < seconds < MIN_PERIOD_SECONDS:
        expected = f"a duration >= {format_duration(MIN_PERIOD_SECONDS)}"
        yield path, f"expected {'0 (off) or ' if off else ''}{expected}, got {format_duration(seconds)}"


def _periods(scenario: Scenario) -> Iterator[tuple[str, str]]:
    kubelet = scenario.kubelet
    yield from _period("kubelet.heartbeatInterval", kubelet.heartbeat_interval)
    yield from _period("kubelet.nodeStatusReportFrequency", kubelet.node_status_report_frequency)


def _all_faults(scenario: Scenario) -> Iterator[tuple[str, FaultSpec]]:
    """Every fault with its YAML path: the top-level ones, then those of ``fault`` steps."""
    for i, fault in enumerate(scenario.faults):
        yield f"faults[{i}].{fault.__struct_config__.tag}", fault
    for i, step in enumerate(scenario.steps):
        if isinstance(step, Fault):
            yield f"steps[{i}].fault.{step.fault.__struct_config__.tag}", step.fault


def _faults(scenario: Scenario) -> Iterator[tuple[str, str]]:
    instances = scenario.scheduler_options.instances
    if instances > MAX_SCHEDULER_INSTANCES:
        yield "schedulerOptions.instances", _too_many("scheduler instances", MAX_SCHEDULER_INSTANCES, instances)
    for path, fault in _all_faults(scenario):
        if isinstance(fault, WatchCut):
            yield from _period(f"{path}.every", fault.every, off=False)
        elif isinstance(fault, ImagePullSlow) and fault.factor is not None and fault.factor > MAX_FACTOR:
            yield f"{path}.factor", f"expected a factor of at most {MAX_FACTOR}, got {fault.factor:g}"
        elif isinstance(fault, SchedulerInstances):
            instances += fault.instances
            if instances > MAX_SCHEDULER_INSTANCES:
                detail = _too_many("scheduler instances", MAX_SCHEDULER_INSTANCES, instances)
                yield f"{path}.instances", f"{detail} with the earlier ones"


def _too_many(what: str, limit: int, got: int) -> str:
    return f"at most {limit:,} {what} in all, got {got:,}"


def _nodes(scenario: Scenario) -> Iterator[tuple[str, str]]:
    total = sum(1 for obj in scenario.objects if obj.kind == "Node")
    if total > MAX_TOTAL_NODES:
        yield "objects", _too_many("nodes", MAX_TOTAL_NODES, total)
        return
    for i, group in enumerate(scenario.nodes):
        total += group.count
        if total > MAX_TOTAL_NODES:
            yield f"nodes[{i}].count", _too_many("nodes", MAX_TOTAL_NODES, total)
            return
    for i, step in enumerate(scenario.steps):
        if isinstance(step, CreateNodes):
            total += step.nodes.count
            path = f"steps[{i}].createNodes.count"
        elif isinstance(step, Create):
            total += sum(1 for obj in step.objects if obj.kind == "Node")
            path = f"steps[{i}].create"
        else:
            continue
        if total > MAX_TOTAL_NODES:
            yield path, _too_many("nodes", MAX_TOTAL_NODES, total)
            return


def _pods(scenario: Scenario) -> Iterator[tuple[str, str]]:
    total = 0
    for i, step in enumerate(scenario.steps):
        if isinstance(step, Replay):
            total += len(step.pods)
            if total > MAX_TOTAL_PODS:
                yield f"steps[{i}].replay", _too_many("createPods pods", MAX_TOTAL_PODS, total)
                return
            continue
        if not isinstance(step, CreatePods):
            continue
        rate = step.rate_per_second
        if rate is not None and rate < MIN_RATE_PER_SECOND:
            yield (
                f"steps[{i}].createPods.ratePerSecond",
                f"expected at least one pod a day (a rate >= 1/86400 per second), got {rate:g}",
            )
        total += step.count
        if total > MAX_TOTAL_PODS:
            yield f"steps[{i}].createPods.count", _too_many("createPods pods", MAX_TOTAL_PODS, total)
            return


def _horizon(scenario: Scenario) -> Iterator[tuple[str, str]]:
    """The earliest time each step can start stays within a day, unless ``until`` comes first."""
    if scenario.until is not None:
        return
    t = 0.0
    for i, step in enumerate(scenario.steps):
        if step.at is not None:
            t = max(t, step.at)
        if isinstance(step, Sleep):
            t += step.duration
        elif isinstance(step, CreatePods) and step.rate_per_second is not None:
            t += (step.count - 1) / step.rate_per_second
        elif isinstance(step, Replay) and step.pods:
            t += step.pods[-1].at
        if t > MAX_SECONDS:
            tag = step.__struct_config__.tag
            yield (
                f"steps[{i}].{tag}",
                f"the timeline reaches {format_duration(t)} here, past the limit of {_DAY} (1 day); "
                "shorten it, or set until to end the run earlier",
            )
            return
