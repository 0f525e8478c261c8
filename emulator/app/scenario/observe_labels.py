"""Short labels for the series' markers: a step when it played, a fault when it started.

``step_label(3, cordon)`` is ``steps[3].cordon node-2``: the step's path as errors name it, then
what it acts on, in a few words (``createPods web x6``, ``delete Pod app=web``,
``scale Deployment/web -> 3``). ``fault_markers(plan)`` gives (start, label) of every armed
fault of a ``FaultPlan``: ``fault nodeHeartbeatStop node-2``; its start is the later of when it
was armed and its own ``start`` (``at`` for ``scheduler`` and ``watchCut`` faults; a periodic
``watchCut``'s first cut).
"""

from __future__ import annotations

import os

from emulator.app.scenario.faults import FaultPlan
from emulator.app.scenario.schema import (
    ApiError,
    ApiLatency,
    ContainerStartFailure,
    Cordon,
    Create,
    CreateNodes,
    CreatePods,
    Delete,
    Drain,
    Fault,
    FaultSpec,
    ImagePullSlow,
    NodeHeartbeatStop,
    NodePartition,
    Replay,
    Scale,
    SchedulerInstances,
    Sleep,
    Step,
    Uncordon,
    Update,
    WaitFor,
    WatchCut,
    WatchDelay,
    WatchReorder,
)
from emulator.base.api.labelparse import format_label_selector

__all__ = ["fault_label", "fault_markers", "step_label"]


def _join(*parts: str | None) -> str:
    return " ".join(p for p in parts if p)


def fault_label(spec: FaultSpec) -> str:
    """``fault <type> <target>``."""
    tag = str(type(spec).__struct_config__.tag)
    match spec:
        case NodeHeartbeatStop() | NodePartition():
            target = spec.node
        case ImagePullSlow():
            target = _join(spec.node, spec.image)
        case ContainerStartFailure():
            selector = format_label_selector(spec.selector)
            target = _join(spec.node, selector)
        case ApiError():
            target = _join(spec.verb, spec.kind, spec.agent, spec.error)
        case ApiLatency():
            target = _join(spec.verb, spec.kind, spec.agent)
        case WatchDelay() | WatchCut() | WatchReorder():
            target = _join(spec.agent, spec.kind)
        case SchedulerInstances():
            target = f"+{spec.instances}"
    return _join("fault", tag, target)


def fault_markers(plan: FaultPlan | None) -> list[tuple[float, str]]:
    """(start, label) of each armed fault, in the plan's order."""
    out: list[tuple[float, str]] = []
    for fault in plan.faults if plan is not None else ():
        armed, spec = fault.armed_at, fault.spec
        if armed is None:
            continue
        if isinstance(spec, SchedulerInstances):
            start: float | None = max(armed, spec.at or 0.0)
        elif isinstance(spec, WatchCut):
            start = next(iter(FaultPlan.cut_times(spec, armed)), None)
        else:
            begin = getattr(spec, "start", None)
            start = armed if begin is None else max(begin, armed)
        if start is not None:
            out.append((start, fault_label(spec)))
    return out


def _what(step: Step) -> str:
    match step:
        case CreatePods():
            return f"{step.name_prefix} x{step.count}"
        case Create():
            objs = step.objects
            if len(objs) == 1:
                return f"{type(objs[0]).__name__}/{objs[0].metadata.name}"
            return f"{len(objs)} objects"
        case CreateNodes():
            return f"{step.nodes.name_prefix} x{step.nodes.count}"
        case Replay():
            return f"{os.path.basename(step.file)} x{len(step.pods)}"
        case Delete():
            which = step.name or (format_label_selector(step.selector) if step.selector is not None else "all")
            return f"{step.kind} {which}"
        case Scale():
            return f"{step.kind}/{step.name} -> {step.replicas}"
        case Update():
            return f"{step.kind}/{step.name}"
        case Drain() | Cordon() | Uncordon():
            return step.node
        case Sleep():
            return f"{step.duration:g}s"
        case WaitFor():
            return _join(step.condition, format_label_selector(step.selector), step.name)
        case Fault():
            return fault_label(step.fault).removeprefix("fault ")


def step_label(index: int, step: Step) -> str:
    """``steps[<index>].<verb> <what>``."""
    return _join(f"steps[{index}].{step.__struct_config__.tag}", _what(step))
