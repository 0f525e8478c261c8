"""Workload traces in: pure, streaming readers of job tables, one ``TracePod`` per row.

This module owns turning the lines of a trace file into plain values (``TracePod``,
``TraceNode``) and those values into API objects (``trace_pod``, ``trace_node``), and the
error of a bad row (``TraceError``: ``<file>:<line>:<column>: <column name>: <detail>``, the
column being the character where the field starts). It does not open files (the caller hands
it lines, so it works on any iterable and holds one row at a time), talk to a cluster or
decide when pods are created (the ``replay`` step does, from ``TracePod.arrival``).

Rows must come in arrival order (never going backwards): a replay creates them as it reads.

``format: csv`` (a header row, comma-separated, RFC 4180 quoting within one line):

============  ========  ===================================================================
column        required  meaning
============  ========  ===================================================================
``arrival``   yes       when the pod is created, from the replay's start (``90s``, ``1m`` or
                        plain seconds)
``duration``  yes       how long it runs once started (``run-duration`` annotation)
``cpu``       yes       CPU request (a quantity: ``500m``, ``2``)
``memory``    yes       memory request (a quantity: ``1Gi``)
``gpu``       no        whole ``nvidia.com/gpu`` devices (requests = limits, as upstream
                        requires of extended resources)
``priority``  no        a PriorityClass name, or an integer (the class ``priority-<n>``)
``name``      no        the pod's name (default ``<prefix>-<row>``, the row counted from 0)
``namespace`` no        the pod's namespace (default: the step's)
``labels``    no        ``k=v;k=v``
============  ========  ===================================================================

``format: alibaba-gpu-2023`` (``cluster-trace-gpu-v2023``, the FGD paper's openb trace):
pods ``name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos, pod_phase,
creation_time, deletion_time, scheduled_time`` (times in seconds); nodes ``sn, cpu_milli,
memory_mib, gpu, model``. What is approximated, because Kubernetes has no equivalent:

- ``gpu_milli`` (a share of one GPU, 1-999 when ``num_gpu`` is 1): by default
  (``gpuSharing: device-plugin``) Kubernetes' device plugin API hands out whole devices, so
  the pod asks for one whole ``nvidia.com/gpu`` and keeps the share in the annotation
  ``emulator.k8s.io/gpu-milli``. GPU packing is therefore coarser than
  in the paper (a node's 8 GPUs hold 8 such pods, not up to 8000/share). ``gpuSharing: dra``
  (``trace_gpus``) makes GPUs DRA devices and a share a claim on part of one device instead.
- ``gpu_spec`` (allowed models, ``V100M16|V100M32``): a required node affinity ``In`` on the
  node label ``nvidia.com/gpu.product`` (the label NVIDIA's GPU feature discovery sets), which a
  node from the node list gets from its ``model``.
- ``qos``: ``Guaranteed`` sets limits equal to requests (upstream's Guaranteed class); ``LS``,
  ``BE`` and ``Burstable`` have requests only (Burstable): BestEffort would drop the requests the
  trace is about. The value is kept as the label ``emulator.k8s.io/trace-qos``.
- duration: ``deletion_time - scheduled_time`` (the run-duration counts from the start), or
  ``deletion_time - creation_time`` for a pod the trace never scheduled; an empty
  ``deletion_time`` (alive at the end of the trace) runs to the end of the scenario.
  ``pod_phase`` (the final phase in the trace) is not replayed: the emulator decides phases.
- arrival: ``creation_time`` minus the first row's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Final

import msgspec

from emulator.app.scenario.limits import parse_simulated_duration
from emulator.app.scenario.readers import ScenarioError
from emulator.app.scenario.schema import RUN_DURATION_ANNOTATION, TraceFormat
from emulator.base.api.core import (
    Affinity,
    Container,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeStatus,
    Pod,
    PodSpec,
    ResourceRequirements,
)
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import Quantity, fits_int64_milli, parse_quantity
from emulator.base.inputs import show
from emulator.base.runtime.clock import format_duration

__all__ = [
    "ALIBABA_NODE_COLUMNS",
    "ALIBABA_POD_COLUMNS",
    "CSV_OPTIONAL",
    "CSV_REQUIRED",
    "GPU_MILLI_ANNOTATION",
    "GPU_MODEL_LABEL",
    "GPU_RESOURCE",
    "QOS_LABEL",
    "TraceError",
    "TraceFormat",
    "TraceNode",
    "TracePod",
    "read_nodes",
    "read_pods",
    "trace_node",
    "trace_pod",
]

GPU_RESOURCE: Final = "nvidia.com/gpu"
GPU_MODEL_LABEL: Final = "nvidia.com/gpu.product"
GPU_MILLI_ANNOTATION: Final = "emulator.k8s.io/gpu-milli"
QOS_LABEL: Final = "emulator.k8s.io/trace-qos"

CSV_REQUIRED: Final = ("arrival", "duration", "cpu", "memory")
CSV_OPTIONAL: Final = ("gpu", "priority", "name", "namespace", "labels")
ALIBABA_POD_COLUMNS: Final = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
ALIBABA_NODE_COLUMNS: Final = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
_QOS: Final = ("LS", "BE", "Burstable", "Guaranteed")


class TraceError(ScenarioError):
    """A bad trace file: ``<file>:<line>:<column>: <column name>: <detail>`` (a ``ScenarioError``:
    the loader reports it like any other)."""

    def __init__(self, file: str, line: int, column: int, name: str, detail: str) -> None:
        super().__init__(file, name, detail, line=line, column=column)


class TracePod(msgspec.Struct, frozen=True, kw_only=True):
    """One row: when, how long, what it asks for. Units: seconds, millicores, bytes."""

    line: int
    arrival: float
    duration: float | None
    """None: runs until the scenario ends."""
    cpu_milli: int
    memory: int
    gpu: int = 0
    guaranteed: bool = False
    """Limits equal to requests for CPU and memory too."""
    priority_class: str = ""
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    gpu_models: list[str] = []
    gpu_milli: int = 0
    """``alibaba-gpu-2023``'s ``gpu_milli`` (a share of one GPU when 1-999)."""


class TraceNode(msgspec.Struct, frozen=True, kw_only=True):
    line: int
    name: str
    cpu_milli: int
    memory: int
    gpu: int
    model: str = ""


# --- lines to fields ----------------------------------------------------------------------


def _fields(text: str) -> list[tuple[str, int]]:
    """Split one CSV line into (value, 1-based start column) pairs (RFC 4180 quoting)."""
    out: list[tuple[str, int]] = []
    i, n = 0, len(text)
    while True:
        start = i
        if i < n and text[i] == '"':
            value: list[str] = []
            i += 1
            while i < n:
                if text[i] == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        value.append('"')
                        i += 2
                        continue
                    break
                value.append(text[i])
                i += 1
            i += 1  # the closing quote (or past the end)
            j = text.find(",", i)
            j = n if j < 0 else j
            out.append(("".join(value) + text[i:j], start + 1))
            i = j
        else:
            j = text.find(",", i)
            j = n if j < 0 else j
            out.append((text[i:j], start + 1))
            i = j
        if i >= n:
            return out
        i += 1  # the comma


class _Row:
    """One data row's fields by column name, and errors that point at them."""

    def __init__(self, file: str, line: int, text: str, header: dict[str, int]) -> None:
        self.file, self.line, self.text = file, line, text
        self.fields = _fields(text)
        self.header = header
        if len(self.fields) != len(header):
            last = self.fields[-1][1] if self.fields else 1
            raise TraceError(
                file, line, last, "", f"expected {len(header)} fields (the header's), got {len(self.fields)}"
            )

    def fail(self, name: str, detail: str) -> TraceError:
        return TraceError(self.file, self.line, self.fields[self.header[name]][1], name, detail)

    def get(self, name: str) -> str:
        i = self.header.get(name)
        return "" if i is None else self.fields[i][0].strip()

    def required(self, name: str) -> str:
        value = self.get(name)
        if not value:
            raise self.fail(name, "required, got an empty field")
        return value

    def duration(self, name: str) -> float:
        value = self.required(name)
        try:
            return parse_simulated_duration(float(value) if _is_number(value) else value)
        except ValueError:
            raise self.fail(name, f'expected a duration like "90s" or a number of seconds, got {show(value)}') from None

    def quantity(self, name: str, value: str | None = None, suffix: str = "") -> Quantity:
        text = self.required(name) if value is None else value
        try:
            q = parse_quantity(text + suffix)
        except ValueError:
            raise self.fail(name, f"expected a quantity, got {show(text)}") from None
        if q.milli < 0 or not fits_int64_milli(q):
            raise self.fail(name, f"expected a quantity >= 0 of at most int64, got {show(text)}")
        return q

    def integer(self, name: str, *, default: int | None = None) -> int:
        value = self.get(name)
        if not value and default is not None:
            return default
        try:
            n = int(value)
        except ValueError:
            raise self.fail(name, f"expected an integer >= 0, got {show(value)}") from None
        if n < 0:
            raise self.fail(name, f"expected an integer >= 0, got {show(value)}")
        return n

    def seconds(self, name: str) -> float | None:
        value = self.get(name)
        if not value:
            return None
        try:
            t = float(value)
        except ValueError:
            raise self.fail(name, f"expected a number of seconds, got {show(value)}") from None
        if not math.isfinite(t) or t < 0:
            raise self.fail(name, f"expected a finite number of seconds >= 0, got {show(value)}")
        return t


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _rows(lines: Iterable[str], file: str, required: tuple[str, ...], known: tuple[str, ...]) -> Iterator[_Row]:
    header: dict[str, int] | None = None
    for number, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        if number == 1:
            text = text.removeprefix("\ufeff")  # a byte-order mark, as spreadsheets write
        if not text.strip():
            continue
        if header is None:
            header = {}
            for name, column in _fields(text):
                name = name.strip()
                if name not in known:
                    raise TraceError(file, number, column, name, f"unknown column (known: {', '.join(known)})")
                if name in header:
                    raise TraceError(file, number, column, name, "duplicate column")
                header[name] = len(header)
            missing = [name for name in required if name not in header]
            if missing:
                raise TraceError(file, number, 1, "", f"missing required column(s): {', '.join(missing)}")
            continue
        yield _Row(file, number, text, header)
    if header is None:
        raise TraceError(file, 1, 1, "", "empty file: expected a header row")


# --- readers -------------------------------------------------------------------------------


def _labels(row: _Row) -> dict[str, str]:
    text = row.get("labels")
    labels: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        key, eq, value = part.partition("=")
        if not eq or not key:
            raise row.fail("labels", f"expected k=v;k=v, got {show(part)}")
        labels[key] = value
    return labels


def _priority(row: _Row) -> str:
    value = row.get("priority")
    if value and (value.lstrip("-").isdigit()):
        return f"priority-{int(value)}"
    return value


def read_pods(lines: Iterable[str], file: str, fmt: TraceFormat) -> Iterator[TracePod]:
    """The rows of a pod trace, one at a time; ``TraceError`` on the first bad one."""
    if fmt == "csv":
        rows = _rows(lines, file, CSV_REQUIRED, CSV_REQUIRED + CSV_OPTIONAL)
        return _check_order(_csv_pods(rows), file, "arrival")
    rows = _rows(lines, file, ALIBABA_POD_COLUMNS, ALIBABA_POD_COLUMNS)
    return _check_order(_alibaba_pods(rows), file, "creation_time")


def _check_order(pods: Iterator[tuple[TracePod, _Row]], file: str, column: str) -> Iterator[TracePod]:
    last = 0.0
    for pod, row in pods:
        if pod.arrival < last:
            raise row.fail(
                column, f"rows must come in arrival order: {pod.arrival:g}s is before the previous {last:g}s"
            )
        last = pod.arrival
        yield pod


def _csv_pods(rows: Iterator[_Row]) -> Iterator[tuple[TracePod, _Row]]:
    for row in rows:
        pod = TracePod(
            line=row.line,
            arrival=row.duration("arrival"),
            duration=row.duration("duration"),
            cpu_milli=row.quantity("cpu").milli,
            memory=row.quantity("memory").value,
            gpu=row.integer("gpu", default=0),
            priority_class=_priority(row),
            name=row.get("name"),
            namespace=row.get("namespace"),
            labels=_labels(row),
        )
        yield pod, row


def _alibaba_pods(rows: Iterator[_Row]) -> Iterator[tuple[TracePod, _Row]]:
    origin: float | None = None
    for row in rows:
        created = row.seconds("creation_time")
        if created is None:
            raise row.fail("creation_time", "required, got an empty field")
        origin = created if origin is None else origin
        deleted = row.seconds("deletion_time")
        scheduled = row.seconds("scheduled_time")
        start = created if scheduled is None else scheduled
        if deleted is not None and deleted < start:
            which = "creation_time" if scheduled is None else "scheduled_time"
            raise row.fail("deletion_time", f"{deleted:g} is before {which} {start:g}")
        num_gpu = row.integer("num_gpu")
        gpu_milli = row.integer("gpu_milli", default=0)
        if gpu_milli > 1000:
            raise row.fail("gpu_milli", f"expected 0-1000 (a share of one GPU), got {gpu_milli}")
        qos = row.get("qos")
        if qos not in _QOS:
            raise row.fail("qos", f"expected one of {', '.join(_QOS)}, got {show(qos)}")
        annotations = {}
        if 0 < gpu_milli < 1000:
            annotations[GPU_MILLI_ANNOTATION] = str(gpu_milli)
        spec = row.get("gpu_spec")
        pod = TracePod(
            line=row.line,
            arrival=created - origin,
            duration=None if deleted is None else deleted - start,
            cpu_milli=row.integer("cpu_milli"),
            memory=row.integer("memory_mib") * 2**20,
            gpu=max(num_gpu, 1 if gpu_milli else 0),
            guaranteed=qos == "Guaranteed",
            name=row.required("name"),
            labels={QOS_LABEL: qos},
            annotations=annotations,
            gpu_models=[m for m in spec.split("|") if m] if spec else [],
            gpu_milli=gpu_milli,
        )
        yield pod, row


def read_nodes(lines: Iterable[str], file: str) -> Iterator[TraceNode]:
    """The rows of an ``alibaba-gpu-2023`` node list."""
    for row in _rows(lines, file, ALIBABA_NODE_COLUMNS, ALIBABA_NODE_COLUMNS):
        yield TraceNode(
            line=row.line,
            name=row.required("sn"),
            cpu_milli=row.integer("cpu_milli"),
            memory=row.integer("memory_mib") * 2**20,
            gpu=row.integer("gpu"),
            model=row.get("model"),
        )


# --- API objects ---------------------------------------------------------------------------


def _resources(cpu_milli: int, memory: int, gpu: int) -> dict[str, Quantity]:
    out = {"cpu": parse_quantity(f"{cpu_milli}m"), "memory": parse_quantity(str(memory))}
    if gpu:
        out[GPU_RESOURCE] = parse_quantity(str(gpu))
    return out


def trace_pod(entry: TracePod, *, name: str, namespace: str, time_scale: float = 1.0) -> Pod:
    """The Pod a row becomes; ``name`` and ``namespace`` when the row has none.
    ``time_scale`` multiplies its duration (as the replay's arrivals)."""
    annotations = dict(entry.annotations)
    if entry.duration is not None:
        annotations[RUN_DURATION_ANNOTATION] = format_duration(entry.duration * time_scale)
    requests = _resources(entry.cpu_milli, entry.memory, entry.gpu)
    if entry.guaranteed:
        limits = dict(requests)
    else:
        limits = {GPU_RESOURCE: requests[GPU_RESOURCE]} if entry.gpu else {}
    affinity = None
    if entry.gpu_models:
        term = NodeSelectorTerm(
            match_expressions=[NodeSelectorRequirement(key=GPU_MODEL_LABEL, operator="In", values=entry.gpu_models)]
        )
        affinity = Affinity(
            node_affinity=NodeAffinity(
                required_during_scheduling_ignored_during_execution=NodeSelector(node_selector_terms=[term])
            )
        )
    container = Container(
        name="main", image="busybox", resources=ResourceRequirements(requests=requests, limits=limits)
    )
    meta = ObjectMeta(
        name=entry.name or name,
        namespace=entry.namespace or namespace,
        labels=dict(entry.labels),
        annotations=annotations,
    )
    spec = PodSpec(containers=[container], affinity=affinity, priority_class_name=entry.priority_class)
    return Pod(metadata=meta, spec=spec)


def trace_node(entry: TraceNode) -> Node:
    """The Node a node-list row becomes: its capacity (110 pods, upstream kubelet's default)."""
    room = _resources(entry.cpu_milli, entry.memory, entry.gpu)
    room["pods"] = parse_quantity("110")
    labels = {"kubernetes.io/hostname": entry.name}
    if entry.model:
        labels[GPU_MODEL_LABEL] = entry.model
    return Node(
        metadata=ObjectMeta(name=entry.name, labels=labels),
        status=NodeStatus(capacity=room, allocatable=dict(room)),
    )
