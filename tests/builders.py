"""Pure builders of the API objects tests need: ``pod``, ``node``, ``container``,
``priority_class``, ``namespace``, ``taint``, ``toleration`` and the selector and affinity pieces.

Owns: turning a few keyword arguments into the same frozen Structs the codec would decode
from a manifest (quantities parsed with ``parse_quantity``, Kubernetes' defaults left to the
Struct), so a test says only what matters to it. Every argument after the name is
keyword-only and every default is the zero value of the field, except a node's room
(4 CPUs, 32Gi, 110 pods) and a pod's one container (``c``, image ``busybox``).

Does not own: an API server, a clock or agents (``tests/cluster.py``); hypothesis
strategies (each property test keeps its own, built on these functions); defaulting that
the API server does on create (namespace, priority from a class, default tolerations).

A node's resources go to both ``status.capacity`` and ``status.allocatable`` (what a kubelet
posts; the API server copies one to the other when only one is set, so a stored node is the
same either way); ``allocatable_only=True`` or ``capacity_only=True`` leaves the other empty,
for tests of that defaulting and for code handed a node the API server never saw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from emulator.base.api.core import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    NodeAddress,
    NodeAffinity,
    NodeCondition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodCondition,
    PodSchedulingGate,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    ResourceRequirements,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import Quantity, parse_quantity
from emulator.base.api.scheduling import PriorityClass

__all__ = [
    "affinity",
    "container",
    "label_selector",
    "namespace",
    "node",
    "node_term",
    "pod",
    "pod_term",
    "priority_class",
    "quantities",
    "spread",
    "taint",
    "toleration",
]

Amount = str | int


def quantities(values: Mapping[str, Amount | None] | None = None, /, **named: Amount | None) -> dict[str, Quantity]:
    """``{"cpu": "1"}`` or ``cpu="1"`` -> a ResourceList; ``None`` values are left out."""
    out = {**(values or {}), **named}
    return {k: parse_quantity(v) for k, v in out.items() if v is not None}


def container(
    name: str = "c",
    *,
    image: str = "busybox",
    cpu: Amount | None = None,
    memory: Amount | None = None,
    requests: Mapping[str, Amount] | None = None,
    limits: Mapping[str, Amount] | None = None,
    host_ports: Sequence[int] = (),
    ports: Sequence[ContainerPort] = (),
    restart_policy: str | None = None,
) -> Container:
    """One container; ``cpu``/``memory`` are requests, ``requests`` adds others (a GPU);
    ``restart_policy="Always"`` makes an init container a sidecar."""
    req = quantities(requests, **{k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None})
    resources = ResourceRequirements(requests=req, limits=quantities(limits))
    all_ports = [*ports, *(ContainerPort(container_port=p, host_port=p) for p in host_ports)]
    return Container(name=name, image=image, resources=resources, ports=all_ports, restart_policy=restart_policy)


def pod(
    name: str,
    *,
    namespace: str = "default",
    uid: str = "",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    resource_version: str = "",
    deletion_timestamp: str | None = None,
    cpu: Amount | None = None,
    memory: Amount | None = None,
    requests: Mapping[str, Amount] | None = None,
    image: str = "busybox",
    containers: Sequence[Container] | None = None,
    init_containers: Sequence[Container] = (),
    node: str = "",
    node_selector: Mapping[str, str] | None = None,
    affinity: Affinity | None = None,
    tolerations: Sequence[Toleration] = (),
    spread: Sequence[TopologySpreadConstraint] = (),
    priority: int | None = None,
    priority_class: str = "",
    preemption_policy: str | None = None,
    scheduler: str = "",
    gates: Sequence[str] = (),
    overhead: Mapping[str, Amount] | None = None,
    host_network: bool = False,
    grace_seconds: int | None = None,
    phase: str = "",
    reason: str = "",
    message: str = "",
    nominated: str = "",
    start_time: str | None = None,
    conditions: Sequence[PodCondition] = (),
) -> Pod:
    """A pod: one container ``c`` (``cpu``/``memory``/``requests``/``image``) unless
    ``containers`` is given; ``node`` is ``spec.nodeName``; ``nominated`` the status'
    ``nominatedNodeName``."""
    if containers is None:
        containers = [container(image=image, cpu=cpu, memory=memory, requests=requests)]
    elif cpu is not None or memory is not None or requests is not None:
        raise TypeError("pod(): give requests on the containers, or no containers")
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=uid,
            labels=dict(labels or {}),
            annotations=dict(annotations or {}),
            resource_version=resource_version,
            deletion_timestamp=deletion_timestamp,
        ),
        spec=PodSpec(
            containers=list(containers),
            init_containers=list(init_containers),
            node_name=node,
            node_selector=dict(node_selector or {}),
            affinity=affinity,
            tolerations=list(tolerations),
            topology_spread_constraints=list(spread),
            priority=priority,
            priority_class_name=priority_class,
            preemption_policy=preemption_policy,
            scheduler_name=scheduler,
            scheduling_gates=[PodSchedulingGate(name=g) for g in gates],
            overhead=quantities(overhead),
            host_network=host_network,
            termination_grace_period_seconds=grace_seconds,
        ),
        status=PodStatus(
            phase=phase,
            reason=reason,
            message=message,
            nominated_node_name=nominated,
            start_time=start_time,
            conditions=list(conditions),
        ),
    )


def node(
    name: str,
    *,
    cpu: Amount | None = "4",
    memory: Amount | None = "32Gi",
    pods: Amount | None = "110",
    extra: Mapping[str, Amount] | None = None,
    allocatable_only: bool = False,
    capacity_only: bool = False,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
    unschedulable: bool = False,
    ready: str | None = None,
    conditions: Sequence[NodeCondition] = (),
    images: Mapping[str, int] | Sequence[ContainerImage] = (),
    addresses: Sequence[NodeAddress] = (),
    pod_cidr: str = "",
    creation_timestamp: str | None = None,
) -> Node:
    """A node with room for ``cpu``, ``memory``, ``pods`` (and ``extra`` resources; ``None``
    leaves one out); ``ready`` adds a ``Ready`` condition with that status before
    ``conditions``; ``images`` maps an image name to its size in bytes (or lists
    ``ContainerImage``s, for images with several names)."""
    if ready is not None:
        conditions = [NodeCondition(type="Ready", status=ready), *conditions]
    room = quantities({"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})})
    return Node(
        metadata=ObjectMeta(name=name, labels=dict(labels or {}), creation_timestamp=creation_timestamp),
        spec=NodeSpec(taints=list(taints), unschedulable=unschedulable, pod_cidr=pod_cidr),
        status=NodeStatus(
            capacity={} if allocatable_only else dict(room),
            allocatable={} if capacity_only else room,
            conditions=list(conditions),
            addresses=list(addresses),
            images=(
                [ContainerImage(names=[n], size_bytes=s) for n, s in images.items()]
                if isinstance(images, Mapping)
                else list(images)
            ),
        ),
    )


def namespace(name: str, *, labels: Mapping[str, str] | None = None) -> Namespace:
    return Namespace(metadata=ObjectMeta(name=name, labels=dict(labels or {})))


def priority_class(
    name: str, value: int, *, global_default: bool = False, preemption_policy: str | None = None
) -> PriorityClass:
    return PriorityClass(
        metadata=ObjectMeta(name=name), value=value, global_default=global_default, preemption_policy=preemption_policy
    )


def taint(key: str, value: str = "", *, effect: str = "NoSchedule") -> Taint:
    return Taint(key=key, value=value, effect=effect)


def toleration(
    key: str = "",
    value: str | None = None,
    *,
    effect: str = "",
    seconds: int | None = None,
    operator: str | None = None,
) -> Toleration:
    """``Equal`` when a ``value`` is given, else ``Exists``, unless ``operator`` says (``""``
    is kept: upstream reads an empty operator as ``Equal``)."""
    op = operator if operator is not None else ("Exists" if value is None else "Equal")
    return Toleration(key=key, operator=op, value=value or "", effect=effect, toleration_seconds=seconds)


def label_selector(
    match_labels: Mapping[str, str] | None = None, *expressions: tuple[str, str, Sequence[str]]
) -> LabelSelector:
    """``label_selector({"app": "web"}, ("tier", "In", ["db"]))``."""
    return LabelSelector(
        match_labels=dict(match_labels or {}),
        match_expressions=[LabelSelectorRequirement(key=k, operator=op, values=list(v)) for k, op, v in expressions],
    )


def node_term(*expressions: tuple[str, str, Sequence[str]]) -> NodeSelectorTerm:
    """One nodeSelectorTerm: its matchExpressions, ANDed."""
    return NodeSelectorTerm(
        match_expressions=[NodeSelectorRequirement(key=k, operator=op, values=list(v)) for k, op, v in expressions]
    )


def pod_term(
    topology_key: str, selector: LabelSelector | None = None, *, namespaces: Sequence[str] = ()
) -> PodAffinityTerm:
    return PodAffinityTerm(topology_key=topology_key, label_selector=selector, namespaces=list(namespaces))


def affinity(
    *,
    required_nodes: Sequence[NodeSelectorTerm] = (),
    preferred_nodes: Sequence[tuple[int, NodeSelectorTerm]] = (),
    required_pods: Sequence[PodAffinityTerm] = (),
    preferred_pods: Sequence[tuple[int, PodAffinityTerm]] = (),
    required_anti: Sequence[PodAffinityTerm] = (),
    preferred_anti: Sequence[tuple[int, PodAffinityTerm]] = (),
) -> Affinity:
    """An Affinity with only the parts given (a part with no terms stays ``None``)."""
    node_aff = None
    if required_nodes or preferred_nodes:
        node_aff = NodeAffinity(
            required_during_scheduling_ignored_during_execution=(
                NodeSelector(node_selector_terms=list(required_nodes)) if required_nodes else None
            ),
            preferred_during_scheduling_ignored_during_execution=[
                PreferredSchedulingTerm(weight=w, preference=t) for w, t in preferred_nodes
            ],
        )
    pod_aff = None
    if required_pods or preferred_pods:
        pod_aff = PodAffinity(
            required_during_scheduling_ignored_during_execution=list(required_pods),
            preferred_during_scheduling_ignored_during_execution=[
                WeightedPodAffinityTerm(weight=w, pod_affinity_term=t) for w, t in preferred_pods
            ],
        )
    anti = None
    if required_anti or preferred_anti:
        anti = PodAntiAffinity(
            required_during_scheduling_ignored_during_execution=list(required_anti),
            preferred_during_scheduling_ignored_during_execution=[
                WeightedPodAffinityTerm(weight=w, pod_affinity_term=t) for w, t in preferred_anti
            ],
        )
    return Affinity(node_affinity=node_aff, pod_affinity=pod_aff, pod_anti_affinity=anti)


def spread(
    topology_key: str,
    selector: LabelSelector | None = None,
    *,
    max_skew: int = 1,
    when_unsatisfiable: str = "DoNotSchedule",
    min_domains: int | None = None,
) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable=when_unsatisfiable,
        label_selector=selector,
        min_domains=min_domains,
    )
