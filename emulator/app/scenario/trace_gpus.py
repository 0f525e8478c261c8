"""``gpuSharing: dra`` of the ``alibaba-gpu-2023`` trace format: GPUs as Dynamic Resource
Allocation devices, a GPU share as a claim on part of one device (consumable capacity).

This module owns the DRA form of a trace row and of a node-list row (the default,
``gpuSharing: device-plugin``, is ``workload_traces``: whole ``nvidia.com/gpu`` devices, the
share kept in an annotation). It does not read files (``replay``) nor start drivers (``drivers``).

Nodes. A node-list row's ``gpu`` GPUs are published by the simulated DRA driver
``gpu.nvidia.com`` (NVIDIA's DRA driver's name) in the node's ResourceSlice, as NVIDIA's
driver names them: devices ``gpu-0`` .. ``gpu-<n-1>``, attributes ``type: gpu`` and
``productName: <model>``; the Node has no ``nvidia.com/gpu`` capacity (no device plugin runs).
Each device also has ``allowMultipleAllocations: true`` and the capacity ``share``: ``1`` (the
whole GPU) with ``requestPolicy: {default: "1", validRange: {min: 1m, step: 1m}}``: a claim that
names no share takes the whole device, one that asks for ``share: 250m`` a quarter of it, and a
device serves several claims while their shares fit (``DRAConsumableCapacity``, alpha and off
in Kubernetes 1.34: a run with ``gpuSharing: dra`` turns it on in the API server and the
scheduler, and its loader says so in a warning). NVIDIA's driver publishes no share capacity:
``share`` is the emulator's stand-in for the trace's ``gpu_milli``.

Pods. A DeviceClass ``gpu.nvidia.com`` selects the driver's GPUs (``device.driver`` and the
``type`` attribute, as NVIDIA's chart's class does). A GPU pod gets the claim ``gpu`` from a
ResourceClaimTemplate (what a user writes: the resourceclaim controller makes one claim per
pod and deletes it with the pod), one template per distinct request in the pod's namespace:

==================  ==========================================  ===========================
trace row           the template's one request ``gpu``          template name
==================  ==========================================  ===========================
``num_gpu`` N       ``exactly: {count: N}`` (whole devices)      ``gpu-<N>``
``gpu_milli`` m     ``exactly: {capacity: {requests: {share:     ``gpu-share-<m>m``
(1-999)             <m>m}}}`` (part of one device)
``gpu_spec`` A|B    plus ``selectors: [cel: device.attributes[   ``...-<a>-<b>`` (lowercased)
                    "gpu.nvidia.com"].productName in ["A","B"]]``
no GPU              no claim                                     --
==================  ==========================================  ===========================

The container lists the claim in ``resources.claims``; ``gpu_spec`` becomes the selector
instead of a node affinity, CPU and memory stay as in the default mode.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from msgspec.structs import replace

from emulator.app.scenario.schema import NodeFile, Replay, Scenario
from emulator.app.scenario.workload_traces import GPU_MILLI_ANNOTATION, TraceNode, TracePod, trace_node, trace_pod
from emulator.base.api.core import ContainerResourceClaim, Node, Pod, PodResourceClaim
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.resource import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CapacityRequirements,
    CELDeviceSelector,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceRequest,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
)

__all__ = [
    "CONSUMABLE_CAPACITY_GATE",
    "DEVICE_PLUGIN",
    "DRA",
    "GPU_CLAIM",
    "GPU_DEVICE_CLASS",
    "GPU_DRIVER",
    "SHARE_CAPACITY",
    "dra_trace_node",
    "dra_trace_pod",
    "feature_gates",
    "gpu_attributes",
    "gpu_capacity",
    "gpu_claim_template",
    "gpu_device_class",
    "gpu_sharing_problems",
    "gpu_sharing_warnings",
    "template_name",
]

DEVICE_PLUGIN: Final = "device-plugin"
DRA: Final = "dra"
GPU_DRIVER: Final = "gpu.nvidia.com"
GPU_DEVICE_CLASS: Final = "gpu.nvidia.com"
GPU_CLAIM: Final = "gpu"
"""The pod's ``spec.resourceClaims`` entry and the template's request."""
SHARE_CAPACITY: Final = "share"
CONSUMABLE_CAPACITY_GATE: Final = "DRAConsumableCapacity"
_UNSAFE = re.compile(r"[^a-z0-9-]+")
_MAX_NAME: Final = 253


def gpu_device_class() -> DeviceClass:
    expr = f'device.driver == "{GPU_DRIVER}" && device.attributes["{GPU_DRIVER}"].type == "gpu"'
    selector = DeviceSelector(cel=CELDeviceSelector(expression=expr))
    return DeviceClass(metadata=ObjectMeta(name=GPU_DEVICE_CLASS), spec=DeviceClassSpec(selectors=[selector]))


def gpu_attributes(model: str) -> dict[str, DeviceAttribute]:
    """One GPU's attributes as NVIDIA's driver names them (``type``, ``productName``)."""
    out = {"type": DeviceAttribute(string_value="gpu")}
    if model:
        out["productName"] = DeviceAttribute(string_value=model)
    return out


def gpu_capacity() -> dict[str, DeviceCapacity]:
    """One GPU's ``share`` capacity: the whole device is ``1``, taken whole unless a claim asks less."""
    one = parse_quantity("1")
    policy = CapacityRequestPolicy(
        default=one, valid_range=CapacityRequestPolicyRange(min=parse_quantity("1m"), step=parse_quantity("1m"))
    )
    return {SHARE_CAPACITY: DeviceCapacity(value=one, request_policy=policy)}


def _share(entry: TracePod) -> int:
    """The row's share of one GPU in milli (0: whole GPUs)."""
    return entry.gpu_milli if entry.gpu == 1 and 0 < entry.gpu_milli < 1000 else 0


def template_name(entry: TracePod) -> str:
    """The ResourceClaimTemplate a GPU row's pod uses (see the module docstring)."""
    share = _share(entry)
    name = f"gpu-share-{share}m" if share else f"gpu-{entry.gpu}"
    models = [_UNSAFE.sub("-", m.lower()).strip("-") for m in entry.gpu_models]
    full = "-".join([name, *filter(None, models)])
    if len(full) <= _MAX_NAME:  # else cut, with a digest of the models for uniqueness
        return full
    digest = hashlib.sha256("|".join(entry.gpu_models).encode()).hexdigest()[:10]
    return f"{full[: _MAX_NAME - 11].rstrip('-')}-{digest}"


def gpu_claim_template(entry: TracePod, namespace: str) -> ResourceClaimTemplate:
    share = _share(entry)
    selectors = []
    if entry.gpu_models:
        models = ", ".join(f'"{m}"' for m in entry.gpu_models)
        expr = f'device.attributes["{GPU_DRIVER}"].productName in [{models}]'
        selectors = [DeviceSelector(cel=CELDeviceSelector(expression=expr))]
    exactly = ExactDeviceRequest(
        device_class_name=GPU_DEVICE_CLASS,
        selectors=selectors,
        count=1 if share else entry.gpu,
        capacity=CapacityRequirements(requests={SHARE_CAPACITY: parse_quantity(f"{share}m")}) if share else None,
    )
    spec = ResourceClaimSpec(devices=DeviceClaim(requests=[DeviceRequest(name=GPU_CLAIM, exactly=exactly)]))
    meta = ObjectMeta(name=template_name(entry), namespace=namespace)
    return ResourceClaimTemplate(metadata=meta, spec=ResourceClaimTemplateSpec(spec=spec))


def dra_trace_pod(
    entry: TracePod, *, name: str, namespace: str, time_scale: float = 1.0
) -> tuple[Pod, ResourceClaimTemplate | None]:
    """The Pod a row becomes with ``gpuSharing: dra``, and the template its claim comes from
    (None: a row without GPUs, the same Pod as the default mode's)."""
    if not entry.gpu:
        return trace_pod(entry, name=name, namespace=namespace, time_scale=time_scale), None
    annotations = {k: v for k, v in entry.annotations.items() if k != GPU_MILLI_ANNOTATION}
    plain = replace(entry, gpu=0, gpu_models=[], annotations=annotations)
    pod = trace_pod(plain, name=name, namespace=namespace, time_scale=time_scale)
    template = gpu_claim_template(entry, pod.metadata.namespace)
    (container,) = pod.spec.containers
    resources = replace(container.resources, claims=[ContainerResourceClaim(name=GPU_CLAIM)])
    claims = [PodResourceClaim(name=GPU_CLAIM, resource_claim_template_name=template.metadata.name)]
    spec = replace(pod.spec, containers=[replace(container, resources=resources)], resource_claims=claims)
    return replace(pod, spec=spec), template


def dra_trace_node(entry: TraceNode) -> Node:
    """The Node a node-list row becomes with ``gpuSharing: dra``: no ``nvidia.com/gpu``
    capacity (its GPUs are the DRA driver's devices), the model label kept."""
    return trace_node(replace(entry, gpu=0))


def feature_gates(scenario: Scenario) -> dict[str, bool]:
    """The feature gates a run of ``scenario`` turns on: ``DRAConsumableCapacity`` when a trace
    shares GPUs through DRA (empty otherwise: v1.34's defaults)."""
    entries = [*scenario.nodes, *scenario.steps]
    dra = any(isinstance(e, NodeFile | Replay) and e.gpu_sharing == DRA for e in entries)
    return {CONSUMABLE_CAPACITY_GATE: True} if dra else {}


def _trace_entries(scenario: Scenario) -> list[tuple[str, str]]:
    """(path, gpuSharing) of the ``alibaba-gpu-2023`` node lists and replays, in file order."""
    out: list[tuple[str, str]] = [
        (f"nodes[{i}]", n.gpu_sharing) for i, n in enumerate(scenario.nodes) if isinstance(n, NodeFile)
    ]
    out += [
        (f"steps[{i}].replay", s.gpu_sharing)
        for i, s in enumerate(scenario.steps)
        if isinstance(s, Replay) and s.format == "alibaba-gpu-2023"
    ]
    return out


def gpu_sharing_problems(scenario: Scenario) -> list[tuple[str, str]]:
    """``(path, detail)`` of each trace entry whose ``gpuSharing`` differs from the first's: a
    trace's nodes and pods must request GPUs the same way."""
    entries = _trace_entries(scenario)
    return [
        (
            f"{path}.gpuSharing",
            f"expected {entries[0][1]}, as {entries[0][0]} (a trace's nodes and pods request GPUs the same way), "
            f"got {mode}",
        )
        for path, mode in entries[1:]
        if mode != entries[0][1]
    ]


def gpu_sharing_warnings(scenario: Scenario, file: str) -> list[str]:
    """The loader's warning that ``gpuSharing: dra`` turns on an alpha gate (none otherwise)."""
    dra = [path for path, mode in _trace_entries(scenario) if mode == DRA]
    if not dra:
        return []
    return [
        f"{file}: {dra[0]}.gpuSharing: dra turns on the feature gate {CONSUMABLE_CAPACITY_GATE} "
        "(alpha and off by default in Kubernetes 1.34) in the API server and the scheduler"
    ]
