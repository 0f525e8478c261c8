"""Loading a ``replay`` step's trace and a ``nodes: [{fromFile}]`` node list at load time.

This module owns the one step between a scenario's reference to a trace file and the
``TimedPod``/``Node`` values the runner plays: reading the file (bounded, UTF-8, through
``emulator.base.inputs``), running the streaming readers of ``traces.py`` over its lines, naming
rows that have no name, scaling times, the ``gpuSharing: dra`` form (``trace_gpus``: the
DeviceClass and claim templates a replay's pods use, the GPUs a node list's DRA driver
publishes), and refusing what the API server would refuse (an
invalid name, namespace or label) at the row's line, so nothing fails half-way through a run.
It does not run anything (``cluster.py`` creates the pods) nor know a format's columns.
"""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from emulator.app.scenario.readers import ScenarioError
from emulator.app.scenario.schema import GpuSharing, NodeFile, Replay, Scenario, TimedPod, generated_name
from emulator.app.scenario.schema.devices import MAX_DEVICES
from emulator.app.scenario.trace_gpus import DRA, dra_trace_node, dra_trace_pod, gpu_device_class
from emulator.app.scenario.workload_traces import TraceError, read_nodes, read_pods, trace_node, trace_pod
from emulator.base.api.core import Node, Pod
from emulator.base.api.errors import Invalid
from emulator.base.api.resource import ResourceClaimTemplate
from emulator.base.api.validation import validate
from emulator.base.inputs import ReadError, read_text

__all__ = ["NAME_PREFIX", "load_node_file", "load_replay", "with_gpu_sharing"]

NAME_PREFIX = "trace"
"""Row ``i`` (0-based) without a ``name`` becomes pod ``trace-<i>``."""


def _read(base_dir: Path, name: str, path: str, file: str) -> tuple[str, list[str]]:
    target = base_dir / name
    try:
        text = read_text(target)
    except ReadError as err:
        raise ScenarioError(file, path, f"cannot read file: {err.reason}: {target}") from None
    return str(target), text.splitlines()


def _check(obj: Pod | Node | ResourceClaimTemplate, source: str, line: int) -> None:
    try:
        validate(obj)
    except Invalid as err:
        raise TraceError(source, line, 1, "", err.message) from None


def load_replay(step: Replay, base_dir: Path, path: str, file: str) -> Replay:
    """``step`` with its ``pods`` (and the ``priority-<n>`` classes they need) read from its file;
    ``path`` is the step's YAML path in scenario ``file``, for an unreadable file."""
    source, lines = _read(base_dir, step.file, f"{path}.file", file)
    namespace = step.namespace or "default"
    pods: list[TimedPod] = []
    classes: dict[str, int] = {}
    dra = step.gpu_sharing == DRA
    templates: dict[tuple[str, str], ResourceClaimTemplate] = {}
    for i, entry in enumerate(read_pods(lines, source, step.format)):
        if step.limit is not None and i >= step.limit:
            break
        name = generated_name(NAME_PREFIX, i)
        if dra:
            pod, template = dra_trace_pod(entry, name=name, namespace=namespace, time_scale=step.time_scale)
            if template is not None and (key := (pod.metadata.namespace, template.metadata.name)) not in templates:
                _check(template, source, entry.line)  # refused now rather than half-way through the run
                templates[key] = template
        else:
            pod = trace_pod(entry, name=name, namespace=namespace, time_scale=step.time_scale)
        _check(pod, source, entry.line)
        cls = pod.spec.priority_class_name
        if cls.startswith("priority-") and cls[len("priority-") :].lstrip("-").isdigit():
            classes[cls] = int(cls[len("priority-") :])
        pods.append(TimedPod(at=entry.arrival * step.time_scale, line=entry.line, pod=pod))
    objects = [gpu_device_class(), *templates.values()] if templates else []
    return replace(step, namespace=namespace, pods=pods, priority_classes=classes, objects=objects)


def load_node_file(entry: NodeFile, base_dir: Path, path: str, file: str) -> NodeFile:
    """``entry`` with its ``items`` read from ``fromFile``."""
    source, lines = _read(base_dir, entry.from_file, f"{path}.fromFile", file)
    items: list[Node] = []
    gpus: dict[str, tuple[int, str]] = {}
    for node in read_nodes(lines, source):
        if entry.gpu_sharing == DRA:
            if node.gpu > MAX_DEVICES:
                raise TraceError(source, node.line, 1, "gpu", f"expected at most {MAX_DEVICES} GPUs (one slice)")
            obj = dra_trace_node(node)
            if node.gpu:
                gpus[node.name] = (node.gpu, node.model)
        else:
            obj = trace_node(node)
        _check(obj, source, node.line)
        items.append(obj)
    return replace(entry, items=items, gpus=gpus)


def with_gpu_sharing(scenario: Scenario, mode: GpuSharing, file: str) -> Scenario:
    """``scenario`` (loaded from ``file``) with every ``alibaba-gpu-2023`` node list and replay
    read again with ``gpuSharing: mode`` (``compare --gpu-sharing``); ``scenario`` itself when it
    has them so already."""
    base_dir = Path(file).parent
    nodes = [
        load_node_file(replace(n, gpu_sharing=mode), base_dir, f"nodes[{i}]", file)
        if isinstance(n, NodeFile) and n.gpu_sharing != mode
        else n
        for i, n in enumerate(scenario.nodes)
    ]
    steps = [
        load_replay(replace(s, gpu_sharing=mode), base_dir, f"steps[{i}].replay", file)
        if isinstance(s, Replay) and s.format == "alibaba-gpu-2023" and s.gpu_sharing != mode
        else s
        for i, s in enumerate(scenario.steps)
    ]
    if all(a is b for a, b in zip(nodes, scenario.nodes, strict=True)) and all(
        a is b for a, b in zip(steps, scenario.steps, strict=True)
    ):
        return scenario
    return replace(scenario, nodes=nodes, steps=steps)
