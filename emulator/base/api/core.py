"""core/v1 objects: Pod, Node, Binding, Event, Namespace (the fields the scheduler and
kubelet use; everything else in a manifest is ignored on decode).

Names follow the Kubernetes wire format through ``rename="camel"``; the few fields whose
upstream spelling is not plain camelCase (``hostIP``, ``podIP``, ``machineID`` ...) name
it explicitly.
"""

from __future__ import annotations

from typing import Any

import msgspec

from emulator.base.api.config import EnvFromSource, EnvVar
from emulator.base.api.meta import K8s, LabelSelector, LabelSelectorRequirement, ObjectMeta, ObjectReference
from emulator.base.api.probe import Probe
from emulator.base.api.quantity import Quantity
from emulator.base.api.volumes import Volume

__all__ = [
    "Affinity",
    "Binding",
    "Container",
    "ContainerExtendedResourceRequest",
    "ContainerImage",
    "ContainerPort",
    "ContainerResizePolicy",
    "ContainerResourceClaim",
    "ContainerState",
    "ContainerStateRunning",
    "ContainerStateTerminated",
    "ContainerStateWaiting",
    "ContainerStatus",
    "Event",
    "EventSeries",
    "EventSource",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Namespace",
    "NamespaceSpec",
    "NamespaceStatus",
    "Node",
    "NodeAddress",
    "NodeAffinity",
    "NodeCondition",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "NodeSystemInfo",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodCondition",
    "PodExtendedResourceClaimStatus",
    "PodIP",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSchedulingGate",
    "PodSpec",
    "PodStatus",
    "PreferredSchedulingTerm",
    "ResourceList",
    "ResourceRequirements",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
]

ResourceList = dict[str, Quantity]


# --- selectors --------------------------------------------------------------------------


class NodeSelectorRequirement(K8s, frozen=True):
    key: str
    operator: str
    values: list[str] = []


class NodeSelectorTerm(K8s, frozen=True):
    match_expressions: list[NodeSelectorRequirement] = []
    match_fields: list[NodeSelectorRequirement] = []


class NodeSelector(K8s, frozen=True):
    node_selector_terms: list[NodeSelectorTerm] = []


class PreferredSchedulingTerm(K8s, frozen=True):
    weight: int
    preference: NodeSelectorTerm


class NodeAffinity(K8s, frozen=True):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = []


class PodAffinityTerm(K8s, frozen=True):
    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: list[str] = []
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] = []
    mismatch_label_keys: list[str] = []


class WeightedPodAffinityTerm(K8s, frozen=True):
    weight: int
    pod_affinity_term: PodAffinityTerm


class PodAffinity(K8s, frozen=True):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class PodAntiAffinity(K8s, frozen=True):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class Affinity(K8s, frozen=True):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


# --- pod ----------------------------------------------------------------------------------


class ContainerResourceClaim(K8s, frozen=True):
    """Upstream core/v1 ``ResourceClaim``: a container's use of one of the pod's claims
    (``spec.resourceClaims[].name``), or of one request in it."""

    name: str = ""
    request: str = ""


class ResourceRequirements(K8s, frozen=True):
    requests: ResourceList = {}
    limits: ResourceList = {}
    claims: list[ContainerResourceClaim] = []


class ContainerPort(K8s, frozen=True):
    container_port: int
    name: str = ""
    host_port: int = 0
    host_ip: str = msgspec.field(default="", name="hostIP")
    protocol: str = "TCP"


class ContainerResizePolicy(K8s, frozen=True):
    """How a container takes an in-place resize of one resource (``NotRequired``, the
    default, or ``RestartContainer``)."""

    resource_name: str = ""
    restart_policy: str = ""


class Container(K8s, frozen=True):
    name: str
    image: str = ""
    resources: ResourceRequirements = ResourceRequirements()
    resize_policy: list[ContainerResizePolicy] = []
    ports: list[ContainerPort] = []
    env: list[EnvVar] = []
    env_from: list[EnvFromSource] = []
    restart_policy: str | None = None
    """``Always`` on an init container makes it a sidecar (restartable init container)."""
    readiness_probe: Probe | None = None
    liveness_probe: Probe | None = None
    startup_probe: Probe | None = None


class Toleration(K8s, frozen=True):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class TopologySpreadConstraint(K8s, frozen=True):
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = []


class PodSchedulingGate(K8s, frozen=True):
    name: str


class PodResourceClaim(K8s, frozen=True):
    """One entry of ``spec.resourceClaims``: exactly one of the two sources is set."""

    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodSpec(K8s, frozen=True):
    containers: list[Container] = []
    init_containers: list[Container] = []
    node_name: str = ""
    node_selector: dict[str, str] = {}
    affinity: Affinity | None = None
    tolerations: list[Toleration] = []
    topology_spread_constraints: list[TopologySpreadConstraint] = []
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    scheduler_name: str = ""
    scheduling_gates: list[PodSchedulingGate] = []
    overhead: ResourceList = {}
    termination_grace_period_seconds: int | None = None
    restart_policy: str = ""
    host_network: bool = False
    hostname: str = ""
    subdomain: str = ""
    volumes: list[Volume] = []
    resource_claims: list[PodResourceClaim] = []
    unmodelled: dict[str, Any] = msgspec.field(default_factory=dict, name="$unmodelled")
    """What the written spec had and the struct does not model (``command``, probes, volume
    sources other than ConfigMaps and Secrets...), as ``emulator.base.api.unmodelled``'s overlay:
    part of the spec's value (hashes, equality, the copy in a pod made from a template), never
    served under this name."""


class PodCondition(K8s, frozen=True):
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    observed_generation: int = 0
    """The pod's ``metadata.generation`` the condition was set for (1.34's
    PodObservedGenerationTracking, beta and on: the kubelet's conditions)."""


class ContainerStateRunning(K8s, frozen=True):
    started_at: str | None = None


class ContainerStateTerminated(K8s, frozen=True, omit_defaults=False):
    """Every field is written: upstream's ``exitCode`` has no ``omitempty`` (0 is a real exit
    code) and the official clients require it."""

    exit_code: int = 0
    reason: str = ""
    message: str = ""
    started_at: str | None = None
    finished_at: str | None = None


class ContainerStateWaiting(K8s, frozen=True):
    reason: str = ""
    message: str = ""


class ContainerState(K8s, frozen=True):
    waiting: ContainerStateWaiting | None = None
    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None


class ContainerStatus(K8s, frozen=True, omit_defaults=False):
    """Every field is written, zeros included, as upstream's (``ready``, ``restartCount``,
    ``image``, ``imageID`` have no ``omitempty``); the official clients require them."""

    name: str
    image: str = ""
    image_id: str = msgspec.field(default="", name="imageID")
    ready: bool = False
    started: bool | None = None
    restart_count: int = 0
    state: ContainerState = ContainerState()
    last_state: ContainerState = ContainerState()
    allocated_resources: ResourceList | msgspec.UnsetType = msgspec.UNSET
    """The requests the kubelet allocated to the container (in-place resize; upstream's
    ``omitempty``: UNSET is not written)."""
    resources: ResourceRequirements | msgspec.UnsetType = msgspec.UNSET
    """The requests and limits the container runs with (as actuated; UNSET: not written)."""


class PodResourceClaimStatus(K8s, frozen=True):
    """The claim the resourceclaim controller made for a template entry of ``spec.resourceClaims``
    (``resourceClaimName`` unset: no claim is needed)."""

    name: str = ""
    resource_claim_name: str | None = None


class ContainerExtendedResourceRequest(K8s, frozen=True, omit_defaults=False):
    container_name: str = ""
    resource_name: str = ""
    request_name: str = ""


class PodExtendedResourceClaimStatus(K8s, frozen=True, omit_defaults=False):
    """The claim the scheduler made for a pod's extended resources backed by a DeviceClass
    (``DRAExtendedResource``, alpha and off in 1.34: modelled so a written one round-trips)."""

    request_mappings: list[ContainerExtendedResourceRequest] = []
    resource_claim_name: str = ""


class PodIP(K8s, frozen=True):
    """One entry of ``status.podIPs`` (and, as upstream's ``HostIP``, of ``status.hostIPs``)."""

    ip: str = ""


class PodStatus(K8s, frozen=True):
    phase: str = ""
    conditions: list[PodCondition] = []
    message: str = ""
    reason: str = ""
    nominated_node_name: str = ""
    host_ip: str = msgspec.field(default="", name="hostIP")
    pod_ip: str = msgspec.field(default="", name="podIP")
    host_ips: list[PodIP] = msgspec.field(default_factory=list, name="hostIPs")
    pod_ips: list[PodIP] = msgspec.field(default_factory=list, name="podIPs")
    """The kubelet writes both with the single address of ``hostIP``/``podIP`` (IPv4 only)."""
    start_time: str | None = None
    container_statuses: list[ContainerStatus] = []
    init_container_statuses: list[ContainerStatus] = []
    qos_class: str = ""
    resource_claim_statuses: list[PodResourceClaimStatus] = []
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None
    observed_generation: int = 0
    """The pod's ``metadata.generation`` this status was written for (the kubelet; 1.34's
    PodObservedGenerationTracking, beta and on)."""


class Pod(K8s, frozen=True):
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()


# --- node ---------------------------------------------------------------------------------


class Taint(K8s, frozen=True):
    key: str
    effect: str
    value: str = ""
    time_added: str | None = None


class NodeSpec(K8s, frozen=True):
    taints: list[Taint] = []
    unschedulable: bool = False
    pod_cidr: str = msgspec.field(default="", name="podCIDR")
    provider_id: str = msgspec.field(default="", name="providerID")


class NodeCondition(K8s, frozen=True):
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_heartbeat_time: str | None = None
    last_transition_time: str | None = None


class ContainerImage(K8s, frozen=True):
    names: list[str] = []
    size_bytes: int = 0


class NodeSystemInfo(K8s, frozen=True, omit_defaults=False):
    """All ten fields are written, empty ones included, as upstream's (no ``omitempty``);
    the official clients require them."""

    machine_id: str = msgspec.field(default="", name="machineID")
    system_uuid: str = msgspec.field(default="", name="systemUUID")
    boot_id: str = msgspec.field(default="", name="bootID")
    kernel_version: str = ""
    os_image: str = ""
    container_runtime_version: str = ""
    kubelet_version: str = ""
    kube_proxy_version: str = ""
    operating_system: str = ""
    architecture: str = ""


class NodeAddress(K8s, frozen=True):
    type: str
    address: str


class NodeStatus(K8s, frozen=True):
    capacity: ResourceList = {}
    allocatable: ResourceList = {}
    conditions: list[NodeCondition] = []
    addresses: list[NodeAddress] = []
    images: list[ContainerImage] = []
    node_info: NodeSystemInfo | None = None


class Node(K8s, frozen=True):
    api_version: str = "v1"
    kind: str = "Node"
    metadata: ObjectMeta = ObjectMeta()
    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()


# --- binding, event, namespace -----------------------------------------------------------


class Binding(K8s, frozen=True):
    target: ObjectReference
    api_version: str = "v1"
    kind: str = "Binding"
    metadata: ObjectMeta = ObjectMeta()


class EventSource(K8s, frozen=True):
    component: str = ""
    host: str = ""


class EventSeries(K8s, frozen=True):
    """events/v1 ``series``: how often an isomorphic Event was seen, and when last."""

    count: int = 0
    last_observed_time: str | None = None
    """A MicroTime (``2026-01-01T00:00:07.000000Z``)."""


class Event(K8s, frozen=True):
    involved_object: ObjectReference
    api_version: str = "v1"
    kind: str = "Event"
    metadata: ObjectMeta = ObjectMeta()
    reason: str = ""
    message: str = ""
    type: str = "Normal"
    source: EventSource = EventSource()
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    count: int = 1
    reporting_component: str = ""
    reporting_instance: str = ""
    action: str = ""
    event_time: str | None = None
    """events/v1 ``eventTime`` (a MicroTime): set by the events/v1 recorder, not by legacy ones."""
    series: EventSeries | None = None
    """events/v1 ``series``: set from the second occurrence of an isomorphic Event."""


class NamespaceSpec(K8s, frozen=True):
    finalizers: list[str] = []
    """``kubernetes``: the namespace controller has yet to delete the namespace's content."""


class NamespaceStatus(K8s, frozen=True):
    phase: str = ""


class Namespace(K8s, frozen=True):
    api_version: str = "v1"
    kind: str = "Namespace"
    metadata: ObjectMeta = ObjectMeta()
    spec: NamespaceSpec = NamespaceSpec()
    status: NamespaceStatus = NamespaceStatus()
