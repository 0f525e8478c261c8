"""The cluster a scenario runs: latencies, the kubelets', API server's, controllers' and
scheduler's settings, and the ``nodes`` entries (``NodeGroup``, ``NodeFile``).

``NodeGroup`` expands into its nodes (generated names, round-robin ``labelValues``; see the
package docstring); ``NodeFile`` holds a trace's node list, which the loader reads into
``items``. Pure declarations: the runner builds the cluster (``emulator/app/scenario/cluster.py``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec.structs import replace

from emulator.app.scenario.limits import MAX_GROUP_NODES
from emulator.app.scenario.schema.base import (
    ByteRate,
    Bytes,
    Delay,
    Duration,
    GpuSharing,
    ImportPath,
    PositiveInt,
    Spec,
    generated_name,
)
from emulator.app.scenario.schema.devices import GroupDevices
from emulator.base.api.core import Node

__all__ = [
    "ApiServerConfig",
    "ControllersConfig",
    "CycleCost",
    "Delay",
    "KubeletConfig",
    "Latency",
    "NodeFile",
    "NodeGroup",
    "PodGCConfig",
    "SchedulerConfig",
    "SchedulerOptions",
]


class Latency(Spec, frozen=True, kw_only=True):
    api: Delay = Delay()
    """Each API request: the delay before it reaches the server (the Client sleeps once,
    before the call; the answer comes back at once)."""
    watch: Delay = Delay()
    """Each watch event's delivery."""


class KubeletConfig(Spec, frozen=True, kw_only=True):
    image_pull_bandwidth: ByteRate = 0
    """Bytes per second per node; 0 pulls instantly."""
    container_start: Delay = Delay()
    termination: Delay = Delay()
    heartbeat_interval: Duration = 10.0
    """Node status / Lease renewal period (upstream ``nodeStatusUpdateFrequency`` and the
    Lease's renew interval); 0 turns heartbeats off."""
    node_status_report_frequency: Duration | None = None
    """Upstream ``nodeStatusReportFrequency``: on a heartbeat the node status is posted only
    if it changed (heartbeat times aside) or this long passed since the last post; 0 = every
    heartbeat. Unset: upstream's defaulting, 5m, or ``heartbeatInterval`` when that is set
    (``nodeStatusUpdateFrequency`` given explicitly); the loader fills it in."""
    default_image_size: Bytes = 100 * 2**20
    """Size of an image not listed in ``Scenario.images``."""
    container_events: bool = True
    """The kubelet's container Events (``Pulling``, ``Pulled``, ``Created``, ``Started``,
    ``Killing``), as upstream writes them; false saves about three writes per pod on large
    runs (``BackOff`` and probes' ``Unhealthy`` are written either way)."""


class ApiServerConfig(Spec, frozen=True, kw_only=True):
    """kube-apiserver flags the run honours."""

    event_ttl: Duration = msgspec.field(default=3600.0, name="eventTTL")
    """Upstream ``--event-ttl``: an Event is deleted this long after its last write (0: kept)."""


class PodGCConfig(Spec, frozen=True, kw_only=True):
    terminated_pod_gc_threshold: Annotated[int, msgspec.Meta(ge=0)] = msgspec.field(
        default=12_500, name="terminatedPodGCThreshold"
    )
    """Upstream ``--terminated-pod-gc-threshold``: terminated pods kept before PodGC deletes
    the oldest; 0 keeps them all."""


class ControllersConfig(Spec, frozen=True, kw_only=True):
    """kube-controller-manager settings the run honours."""

    pod_gc: PodGCConfig = msgspec.field(default_factory=PodGCConfig, name="podGC")


class SchedulerConfig(Spec, frozen=True, kw_only=True):
    """A KubeSchedulerConfiguration document, raw (the scheduler's config module validates it)."""

    document: dict[str, Any]
    file: str
    """The file the document was read from, to name in later errors."""
    path: str = ""
    """Where the document sits in ``file``: ``scheduler`` when inline, empty for its own file."""


class CycleCost(Spec, frozen=True, kw_only=True):
    """Simulated CPU time of one scheduling cycle: ``fixed + perNode * nodes evaluated``."""

    fixed: Duration = 0.0
    per_node: Duration = 0.0


class SchedulerOptions(Spec, frozen=True, kw_only=True):
    assume_cache: bool = True
    queueing_hints: bool = True
    in_flight_events: bool = True
    """False: events arriving during a pod's scheduling attempt are lost (no in-flight events,
    no ``moveRequestCycle``), for race experiments."""
    instances: PositiveInt = 1
    cycle_cost: CycleCost = CycleCost()
    plugins: dict[str, ImportPath] = {}
    """Out-of-tree plugins: plugin name -> ``package.module:Class``."""


class NodeGroup(Spec, frozen=True, kw_only=True):
    """``count`` nodes built from ``template`` (see the module docstring for names and labels)."""

    count: Annotated[int, msgspec.Meta(ge=1, le=MAX_GROUP_NODES)]
    name_prefix: str
    template: Node
    """The template with an empty ``metadata.name``."""
    label_values: dict[str, Annotated[list[str], msgspec.Meta(min_length=1)]] = {}
    devices: list[GroupDevices] = []
    """What simulated DRA drivers publish on each node (``devices``): one mapping or a list."""

    def name(self, i: int) -> str:
        return generated_name(self.name_prefix, i)

    def node(self, i: int) -> Node:
        """Node ``i`` of the group: its generated name and round-robin label values."""
        labels = dict(self.template.metadata.labels)
        for key, values in self.label_values.items():
            labels[key] = values[i % len(values)]
        meta = replace(self.template.metadata, name=self.name(i), labels=labels)
        return replace(self.template, metadata=meta)

    def nodes(self) -> list[Node]:
        return [self.node(i) for i in range(self.count)]


class NodeFile(Spec, frozen=True, kw_only=True):
    """A ``nodes`` entry read from a trace's node list."""

    from_file: str
    format: Literal["alibaba-gpu-2023"]
    gpu_sharing: GpuSharing = "device-plugin"
    """``dra``: the nodes' GPUs are DRA devices (``trace_gpus``), not ``nvidia.com/gpu``."""
    items: list[Node] = []
    """Filled in by the loader from ``fromFile`` (not written in YAML)."""
    gpus: dict[str, tuple[int, str]] = {}
    """With ``gpuSharing: dra``: node name → (GPUs, model) its DRA driver publishes (loader)."""

    @property
    def count(self) -> int:
        return len(self.items)

    def nodes(self) -> list[Node]:
        return list(self.items)
