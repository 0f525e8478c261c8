"""The scenario file's schema: what a user may write, as frozen msgspec Structs.

This package owns the *shape* of a loaded scenario and the pure helpers that expand it
(generated node and pod names). It does not read files or report errors: ``loader.py``
walks the YAML against these Structs (field names, required-ness, defaults and
constraints all come from here) and raises ``ScenarioError`` with the exact path.
Build a ``Scenario`` with the loader, not ``msgspec.convert``: API objects are an
untagged union, and the YAML form of steps and expectations is not the Structs' form.

Units once loaded: every duration is a float of seconds, every quantity an int of bytes
(``imagePullBandwidth``: bytes per second), label selectors are parsed ``LabelSelector``
values (the empty selector, the default, matches every pod), manifests are API Structs.

The package is the format's one surface (import its names from ``emulator.app.scenario.schema``),
laid out as the README's section reads, top to bottom; the loader walks it by reflection,
and every module holds declarations and the pure helpers that expand them:

=================  =========================================================================
module             owns
=================  =========================================================================
``base``           ``Spec`` (every Struct's base), the unit types, ``generated_name``
``cluster``        latencies, kubelet / API server / controllers / scheduler settings, nodes
``steps``          the timeline's steps (``Step``), their table and generated names
``faults``         the faults (``FaultSpec``) and their table
``expect``         the expectations (``Expectation``)
``storage``        the simulated CSI drivers (``StorageConfig``)
``devices``        a node group's simulated DRA devices (``GroupDevices``)
``load``           what the pods use, for the metrics API and the HPA (``LoadSpec``)
``autoscaling``    the Cluster Autoscaler's flags and node groups (``AutoscalingConfig``)
``__init__``       the ``Scenario``, and what the runner creates first and in which order
=================  =========================================================================

Run length: the timeline runs every step in order (a step with ``at`` first waits until
that simulated time; ``at`` never goes backwards). After the last step the run ends once
no Pod has been written for ``settle`` seconds (default 30s), or at ``until`` if given,
whichever comes first.

Limits: every number is bounded so that every accepted scenario finishes (durations at most
a day, periods at least a second, totals of nodes, pods and scheduler instances): the values
are in ``limits.py``, with why; the modules' types carry the per-field ones, ``totals.py``
checks those that span several fields, and the loader refuses NaN and infinities.
"""

from __future__ import annotations

from typing import Final, Literal

from emulator.app.scenario.schema.autoscaling import (
    EXPANDERS,
    AutoscalingConfig,
    CANodeGroup,
    ClusterAutoscalerConfig,
    InstanceTypesFile,
    KarpenterConfig,
    Priorities,
    autoscaling_problems,
    autoscaling_warnings,
)
from emulator.app.scenario.schema.base import (
    RUN_DURATION_ANNOTATION,
    ByteRate,
    Bytes,
    Count,
    Duration,
    GpuSharing,
    Spec,
    generated_name,
)
from emulator.app.scenario.schema.cluster import (
    ApiServerConfig,
    ControllersConfig,
    CycleCost,
    Delay,
    KubeletConfig,
    Latency,
    NodeFile,
    NodeGroup,
    SchedulerConfig,
    SchedulerOptions,
)
from emulator.app.scenario.schema.devices import AttributeValue, CapacityValue, GroupDevices, device_problems
from emulator.app.scenario.schema.expect import (
    Expectation,
    JobsComplete,
    MaxPodsPerNode,
    NoOvercommit,
    ObjectCount,
    PodCount,
    PodOnNode,
    PodsOnNodes,
    TopologySpread,
    WorkloadsReady,
)
from emulator.app.scenario.schema.faults import (
    AGENT_PATTERN,
    API_VERBS,
    ApiError,
    ApiLatency,
    ContainerStartFailure,
    FaultSpec,
    ImagePullSlow,
    NodeHeartbeatStop,
    NodePartition,
    SchedulerInstances,
    WatchCut,
    WatchDelay,
    WatchReorder,
)
from emulator.app.scenario.schema.load import LoadSpec, LoadStep, load_problems, load_rules
from emulator.app.scenario.schema.steps import (
    DRAIN_TIMEOUT,
    SCALABLE_KINDS,
    Cordon,
    Create,
    CreateNodes,
    CreatePods,
    Delete,
    Drain,
    Fault,
    Replay,
    Scale,
    Sleep,
    Step,
    StepBase,
    TimedPod,
    TraceFormat,
    Uncordon,
    Update,
    WaitFor,
)
from emulator.app.scenario.schema.storage import DriverCapacity, StorageConfig, StorageDriver, storage_problems
from emulator.base.api.codec import ApiObject

__all__ = [
    "AGENT_PATTERN",
    "API_VERBS",
    "DRAIN_TIMEOUT",
    "EXPANDERS",
    "PRECREATED_NAMESPACES",
    "RUN_DURATION_ANNOTATION",
    "SCALABLE_KINDS",
    "ApiError",
    "ApiLatency",
    "AttributeValue",
    "AutoscalingConfig",
    "ByteRate",
    "Bytes",
    "CANodeGroup",
    "CapacityValue",
    "ClusterAutoscalerConfig",
    "ContainerStartFailure",
    "Cordon",
    "Count",
    "Create",
    "CreateNodes",
    "CreatePods",
    "CycleCost",
    "Delay",
    "Delete",
    "Drain",
    "DriverCapacity",
    "Duration",
    "Expectation",
    "Fault",
    "FaultSpec",
    "GpuSharing",
    "GroupDevices",
    "ImagePullSlow",
    "InstanceTypesFile",
    "JobsComplete",
    "KarpenterConfig",
    "KubeletConfig",
    "Latency",
    "LoadSpec",
    "LoadStep",
    "MaxPodsPerNode",
    "NoOvercommit",
    "NodeFile",
    "NodeGroup",
    "NodeHeartbeatStop",
    "NodePartition",
    "ObjectCount",
    "PodCount",
    "PodOnNode",
    "PodsOnNodes",
    "Priorities",
    "Replay",
    "Scale",
    "Scenario",
    "SchedulerConfig",
    "SchedulerInstances",
    "SchedulerOptions",
    "Sleep",
    "Spec",
    "Step",
    "StepBase",
    "StorageConfig",
    "StorageDriver",
    "TimedPod",
    "TopologySpread",
    "TraceFormat",
    "Uncordon",
    "Update",
    "WaitFor",
    "WatchCut",
    "WatchDelay",
    "WatchReorder",
    "WorkloadsReady",
    "auto_namespaces",
    "autoscaling_problems",
    "autoscaling_warnings",
    "creation_order",
    "device_problems",
    "generated_name",
    "load_problems",
    "load_rules",
    "storage_problems",
]

PRECREATED_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces a new cluster has (the runner also creates every namespace objects refer to)."""


class Scenario(Spec, frozen=True, kw_only=True):
    name: str
    description: str = ""
    seed: int = 0
    clock: Literal["virtual", "real"] = "virtual"
    until: Duration | None = None
    """Stop the run at this simulated time."""
    settle: Duration = 30.0
    """After the last step, end once no Pod has been written for this long."""
    latency: Latency = Latency()
    api_server: ApiServerConfig = ApiServerConfig()
    controllers: ControllersConfig = ControllersConfig()
    kubelet: KubeletConfig = KubeletConfig()
    images: dict[str, Bytes] = {}
    """Image name -> size."""
    scheduler: SchedulerConfig | None = None
    scheduler_options: SchedulerOptions = SchedulerOptions()
    objects: list[ApiObject] = []
    """Created when the run starts, before ``nodes`` and the first step."""
    nodes: list[NodeGroup | NodeFile] = []
    storage: StorageConfig = StorageConfig()
    """Simulated CSI drivers (see ``storage``)."""
    load: list[LoadSpec] = []
    """What the pods use: the resource metrics API and the HPA read it (see ``load``)."""
    autoscaling: AutoscalingConfig = AutoscalingConfig()
    """The Cluster Autoscaler and its node groups (see ``autoscaling``)."""
    faults: list[FaultSpec] = []
    """Armed from the start of the run (see the table in ``faults``)."""
    steps: list[Step] = []
    expect: list[Expectation] = []


# --- what the runner creates, and in which order ------------------------------------------


def creation_order(objects: list[ApiObject]) -> list[ApiObject]:
    """``objects`` in the order the runner creates them: Namespaces and PriorityClasses
    first (what the others need), then the rest in file order, except that an object whose
    ``ownerReferences`` name the ``uid`` of another manifest of the list comes after that
    owner (a dumped cluster lists pods before their ReplicaSets; the runner gives the owner
    its new UID first, then rewrites the dependents' references to it)."""
    first = [o for o in objects if o.kind in ("Namespace", "PriorityClass")]
    rest = [o for o in objects if o.kind not in ("Namespace", "PriorityClass")]
    by_uid = {o.metadata.uid: i for i, o in enumerate(rest) if o.metadata.uid}
    placed: list[ApiObject] = []
    done: set[int] = set()
    visiting: set[int] = set()

    def place(i: int) -> None:
        if i in done or i in visiting:  # a cycle of owners: keep file order
            return
        visiting.add(i)
        for ref in rest[i].metadata.owner_references:
            j = by_uid.get(ref.uid)
            if j is not None and j != i:
                place(j)
        visiting.discard(i)
        done.add(i)
        placed.append(rest[i])

    for i in range(len(rest)):
        place(i)
    return first + placed


def auto_namespaces(scenario: Scenario) -> list[str]:
    """The namespaces the runner creates before ``objects``: the pre-created ones and every
    namespace a manifest or ``createPods`` step names, except those the scenario creates
    itself (a Namespace in ``objects`` or in any ``create`` step)."""
    manifests = list(scenario.objects)
    names = set(PRECREATED_NAMESPACES)
    for step in scenario.steps:
        if isinstance(step, Create):
            manifests.extend(step.objects)
        elif isinstance(step, CreatePods):
            names.add(step.namespace or step.template.metadata.namespace or "default")
        elif isinstance(step, Replay):
            names.update(p.pod.metadata.namespace for p in step.pods)
    names.update(o.metadata.namespace for o in manifests if o.kind != "Namespace" and o.metadata.namespace)
    return sorted(names - {o.metadata.name for o in manifests if o.kind == "Namespace"})
