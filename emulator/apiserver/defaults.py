"""Defaulting and admission on create, as upstream's apiserver and its default admission
plugins do it for the fields the emulator uses.

Pods: namespace ``default``, ``generateName``, ``schedulerName: default-scheduler``,
``restartPolicy: Always``, ``terminationGracePeriodSeconds: 30``, container requests
defaulted from limits, the ``Priority`` admission plugin (priority and preemptionPolicy
from the PriorityClass, the globalDefault class, or 0; an unknown class is rejected), the
``DefaultTolerationSeconds`` plugin (tolerate not-ready/unreachable NoExecute for 300 s),
and the status reset to ``phase: Pending`` with the QoS class (``PrepareForCreate``).
Nodes: allocatable defaults to capacity.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from msgspec.structs import replace

from emulator.api.core import Container, Node, Pod, PodStatus, ResourceRequirements, Toleration
from emulator.api.errors import Invalid
from emulator.api.scheduling import PriorityClass
from emulator.api.workloaddefaults import DEFAULT_SCHEDULER, default_pod_spec

__all__ = ["DEFAULT_SCHEDULER", "default_node", "default_pod", "qos_class"]

_DEFAULT_TOLERATIONS: Final = (
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute", toleration_seconds=300),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute", toleration_seconds=300),
)
_COMPUTE: Final = ("cpu", "memory")


def _container_defaults(c: Container) -> Container:
    res = c.resources
    if res.limits and any(k not in res.requests for k in res.limits):
        requests = dict(res.limits)
        requests.update(res.requests)
        return replace(c, resources=ResourceRequirements(requests=requests, limits=res.limits))
    return c


def qos_class(pod: Pod) -> str:
    """Upstream ``GetPodQOS``: Guaranteed, Burstable or BestEffort (only positive amounts
    count; Guaranteed needs cpu and memory limits in every container and summed requests
    equal to summed limits)."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for c in [*pod.spec.init_containers, *pod.spec.containers]:
        for name, q in c.resources.requests.items():
            if name in _COMPUTE and q.milli > 0:
                requests[name] = requests.get(name, 0) + q.milli
        found = set()
        for name, q in c.resources.limits.items():
            if name in _COMPUTE and q.milli > 0:
                found.add(name)
                limits[name] = limits.get(name, 0) + q.milli
        if not all(n in found for n in _COMPUTE):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and any(limits.get(name) != v for name, v in requests.items()):
        guaranteed = False
    return "Guaranteed" if guaranteed else "Burstable"


def _priority(pod: Pod, classes: Mapping[str, PriorityClass]) -> tuple[int, str | None, str]:
    name = pod.spec.priority_class_name
    if name:
        pc = classes.get(name)
        if pc is None:
            raise Invalid.at(
                "Pod",
                pod.metadata.name,
                "spec.priorityClassName",
                f'Invalid value: "{name}": no PriorityClass with name {name} was found',
            )
        return pc.value, pc.preemption_policy, name
    default = next((pc for pc in classes.values() if pc.global_default), None)
    if default is not None:
        return default.value, default.preemption_policy, default.metadata.name
    return 0, None, ""


def default_pod(pod: Pod, *, classes: Mapping[str, PriorityClass], name_suffix: Callable[[], str]) -> Pod:
    """The pod as the apiserver stores it on create (metadata stamped by the caller)."""
    meta = pod.metadata
    if not meta.name and meta.generate_name:
        meta = replace(meta, name=meta.generate_name + name_suffix())
    if not meta.namespace:
        meta = replace(meta, namespace="default")
    pod = replace(pod, metadata=meta)
    spec = pod.spec
    value, policy, class_name = _priority(pod, classes)
    if spec.priority is not None and spec.priority != value:
        raise Invalid.at(
            "Pod",
            meta.name,
            "spec.priority",
            f"Invalid value: {spec.priority}: the integer value of priority ({spec.priority}) must not be "
            f"provided in pod spec; priority admission controller computed {value} from the given "
            "PriorityClass name",
        )
    changes: dict[str, Any] = {"priority": value}
    if class_name and not spec.priority_class_name:
        changes["priority_class_name"] = class_name
    if spec.preemption_policy is None:
        changes["preemption_policy"] = policy or "PreemptLowerPriority"
    spec = default_pod_spec(spec)  # restartPolicy, terminationGracePeriodSeconds, schedulerName
    containers = [_container_defaults(c) for c in spec.containers]
    if any(a is not b for a, b in zip(containers, spec.containers, strict=True)):
        changes["containers"] = containers
    inits = [_container_defaults(c) for c in spec.init_containers]
    if any(a is not b for a, b in zip(inits, spec.init_containers, strict=True)):
        changes["init_containers"] = inits
    tolerations = list(spec.tolerations)
    for t in _DEFAULT_TOLERATIONS:
        if not any(x.key in (t.key, "") and x.effect in ("", "NoExecute") for x in tolerations):
            tolerations.append(t)
    changes["tolerations"] = tolerations
    pod = replace(pod, spec=replace(spec, **changes))
    # upstream PrepareForCreate: a new pod's status is Pending with its QoS class, whatever
    # the client sent.
    return replace(pod, status=PodStatus(phase="Pending", qos_class=qos_class(pod)))


def default_node(node: Node) -> Node:
    status = node.status
    if status.capacity and not status.allocatable:
        return replace(node, status=replace(status, allocatable=dict(status.capacity)))
    if status.allocatable and not status.capacity:
        return replace(node, status=replace(status, capacity=dict(status.allocatable)))
    return node
