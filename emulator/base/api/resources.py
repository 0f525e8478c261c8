"""Resource arithmetic shared by the scheduler and the kubelet.

Amounts are plain ints: CPU in millicores, every other resource in base units (bytes,
count). ``pod_requests`` follows upstream ``k8s.io/component-helpers/resource.PodRequests``:
the sum of the regular containers, restartable (sidecar) init containers added to it,
the effective init-container request (each init container plus the sidecars started
before it) taking the max, then the pod overhead on top.

In-place resize (``InPlacePodVerticalScaling``, on in 1.34: upstream's scheduler passes
``UseStatusResources``): a container whose status reports ``resources`` (it runs) counts the
larger of its desired (spec), actuated (``resources.requests``) and allocated
(``allocatedResources``) requests, resource by resource; while the pod's resize is
``Infeasible`` the spec is left out (upstream ``determineContainerReqs``). Restartable init
containers likewise, from ``initContainerStatuses``. ``resize_state`` is what of a pod's status
these requests read (equal states, equal specs: equal requests).

``pod_requests`` and ``pod_host_ports`` run on every admission, scheduling and invariant check
of a pod: each short-cuts the common pod (no init containers, no overhead) and keeps the
general computation as its reference (``pod_requests_reference``,
``pod_host_ports_reference``); ``tests/api/test_resources_fastpath.py`` checks both against
their reference on random pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import UNSET

from emulator.base.api.core import Container, ContainerStatus, Node, Pod
from emulator.base.api.quantity import Quantity

__all__ = [
    "CPU",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "HostPort",
    "amount",
    "is_extended_resource",
    "is_native_resource",
    "is_scalar_resource",
    "node_allocatable",
    "pod_host_ports",
    "pod_host_ports_reference",
    "pod_requests",
    "pod_requests_reference",
    "pods_alike",
    "resize_state",
    "same_requests",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"


def is_native_resource(name: str) -> bool:
    """Upstream ``IsNativeResource``: no domain, or in the ``kubernetes.io`` domain."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """Upstream ``IsExtendedResourceName``: domain-prefixed outside ``kubernetes.io``, not ``requests.*``."""
    return not is_native_resource(name) and not name.startswith("requests.")


def is_scalar_resource(name: str) -> bool:
    """Upstream ``IsScalarResourceName``: extended, ``hugepages-*``, ``attachable-volumes-*`` or a
    ``kubernetes.io/``-prefixed name (checked after cpu, memory and ephemeral-storage)."""
    return (
        is_extended_resource(name) or name.startswith(("hugepages-", "attachable-volumes-")) or "kubernetes.io/" in name
    )


def amount(resource: str, q: Quantity) -> int:
    """The int amount of ``q`` for ``resource``: millicores for cpu, else base units."""
    return q.milli if resource == CPU else q.value


def _add(into: dict[str, int], rl: Mapping[str, Quantity] | Mapping[str, int]) -> None:
    for name, q in rl.items():
        into[name] = into.get(name, 0) + (q.milli if isinstance(q, Quantity) else q)


def _max(into: dict[str, int], other: Mapping[str, int]) -> None:
    for name, v in other.items():
        if v > into.get(name, 0):
            into[name] = v


def _status_differs(cs: ContainerStatus, c: Container) -> bool:
    """The status of ``c`` changes its requests from the spec's (or might: a different name)."""
    if cs.resources is UNSET:
        return False
    want = c.resources.requests
    if cs.name != c.name or cs.resources.requests != want:
        return True
    return cs.allocated_resources is not UNSET and cs.allocated_resources != want


def _uses_status(pod: Pod) -> bool:
    """Whether ``pod``'s status may change its requests from its spec's: any init container
    status, container statuses not one per container, or one that ``_status_differs`` (written
    out in the loop: ten calls a churn pod, from the scheduler's cache and queue; the plain
    version is ``_uses_status_reference``, which ``tests/api/test_resources_fastpath.py``
    compares it with)."""
    status = pod.status
    statuses = status.container_statuses
    if not statuses:
        return bool(status.init_container_statuses)
    containers = pod.spec.containers
    if len(statuses) != len(containers):
        return True
    for cs, c in zip(statuses, containers, strict=True):
        resources = cs.resources
        if resources is UNSET:
            continue
        want = c.resources.requests
        if cs.name != c.name or resources.requests != want:
            return True
        allocated = cs.allocated_resources
        if allocated is not UNSET and allocated != want:
            return True
    return False


def _uses_status_reference(pod: Pod) -> bool:
    """``_uses_status`` through ``_status_differs`` per container."""
    statuses = pod.status.container_statuses
    if not statuses:
        return bool(pod.status.init_container_statuses)
    containers = pod.spec.containers
    if len(statuses) == len(containers):
        return any(_status_differs(cs, c) for cs, c in zip(statuses, containers, strict=True))
    return True


def resize_state(pod: Pod) -> tuple[Any, ...]:
    """What of ``pod``'s status its requests read: its containers' actuated and allocated
    resources and whether its resize is Infeasible."""
    status = pod.status
    if not status.container_statuses and not status.init_container_statuses:
        return ()
    return (
        _infeasible(pod),
        [(cs.name, cs.resources, cs.allocated_resources) for cs in status.container_statuses],
        [(cs.name, cs.resources, cs.allocated_resources) for cs in status.init_container_statuses],
    )


def same_requests(a: Pod, b: Pod) -> bool:
    """Whether two versions of a pod with equal specs have equal requests by their statuses:
    equal ``resize_state``s, or neither status changes the spec's requests (no init
    containers; every container's reported resources, and allocated ones if set, equal to
    its spec's requests: what a kubelet reports for a pod it runs as specified, so a pod
    going from Pending, with no container statuses, to Running keeps its requests).

    ``same_requests_reference`` with ``_uses_status`` of both versions written out in one
    loop (four calls a churn pod from the scheduler's cache and its pod update handler, two
    ``_uses_status`` frames each); ``tests/api/test_resources_fastpath.py`` compares them."""
    status = a.status
    if status is b.status:
        return True
    if not a.spec.init_containers:
        pod = a
        while True:  # ``_uses_status`` of ``a``, then of ``b`` (their init statuses first)
            if status.init_container_statuses:
                break
            statuses = status.container_statuses
            if statuses:
                containers = pod.spec.containers
                if len(statuses) != len(containers):
                    break
                differs = False
                for cs, c in zip(statuses, containers, strict=True):
                    resources = cs.resources
                    if resources is UNSET:
                        continue
                    want = c.resources.requests
                    allocated = cs.allocated_resources
                    if (
                        cs.name != c.name
                        or resources.requests != want
                        or (allocated is not UNSET and allocated != want)
                    ):
                        differs = True
                        break
                if differs:
                    break
            if pod is b:
                return True  # the common pod: no tuples built
            pod = b
            status = b.status
    return resize_state(a) == resize_state(b)


def same_requests_reference(a: Pod, b: Pod) -> bool:
    """``same_requests`` through ``_uses_status``."""
    if a.status is b.status:
        return True
    if not (
        a.spec.init_containers
        or a.status.init_container_statuses
        or b.status.init_container_statuses
        or _uses_status(a)
        or _uses_status(b)
    ):
        return True  # the common pod, checked first: no tuples built
    return resize_state(a) == resize_state(b)


def pods_alike(a: Pod, b: Pod) -> bool:
    """Whether every Filter treats the two pods alike: the same namespace, labels, annotations
    and spec, and the same requests by their statuses (``same_requests``: an in-place resize
    makes a running pod's requests its status's). The shapes of the autoscalers' simulations
    (``simulator_rows``, Karpenter's ``fits`` and ``scheduling``) key on it."""
    return a is b or (
        a.spec == b.spec
        and a.metadata.namespace == b.metadata.namespace
        and a.metadata.labels == b.metadata.labels
        and a.metadata.annotations == b.metadata.annotations
        and same_requests(a, b)
    )


def _infeasible(pod: Pod) -> bool:
    """Upstream ``IsPodResizeInfeasible``."""
    return any(c.type == "PodResizePending" and c.reason == "Infeasible" for c in pod.status.conditions)


def _container_requests(
    c: Container, statuses: dict[str, ContainerStatus], infeasible: bool
) -> Mapping[str, Quantity] | dict[str, int]:
    """Upstream ``determineContainerReqs`` (in thousandths), or the spec's requests."""
    cs = statuses.get(c.name)
    if cs is None or cs.resources is UNSET:
        return c.resources.requests
    out: dict[str, int] = {}
    sources: list[Mapping[str, Quantity]] = [] if infeasible else [c.resources.requests]
    sources.append(cs.resources.requests)
    if cs.allocated_resources is not UNSET:
        sources.append(cs.allocated_resources)
    for rl in sources:
        for name, q in rl.items():
            if q.milli > out.get(name, -1):
                out[name] = q.milli
    return out


def pod_requests(pod: Pod) -> dict[str, int]:
    """Effective requests of a pod (``pod_requests_reference``, the common pod short-cut)."""
    spec = pod.spec
    if spec.init_containers or spec.overhead or (pod.status.container_statuses and _uses_status(pod)):
        return pod_requests_reference(pod)
    containers = spec.containers
    if len(containers) == 1:
        reqs: dict[str, int] = {name: q.milli for name, q in containers[0].resources.requests.items()}
    else:
        reqs = {}
        for c in containers:
            for name, q in c.resources.requests.items():
                reqs[name] = reqs.get(name, 0) + q.milli
    for name, m in reqs.items():
        if name != CPU:
            reqs[name] = -((-m) // 1000)
    return reqs


def pod_requests_reference(pod: Pod) -> dict[str, int]:
    """Effective requests of a pod (in thousandths until the end, so sums stay exact)."""
    spec, status = pod.spec, pod.status
    infeasible = _infeasible(pod)
    statuses = {cs.name: cs for cs in status.container_statuses}
    reqs: dict[str, int] = {}
    for c in spec.containers:
        _add(reqs, _container_requests(c, statuses, infeasible))
    if spec.init_containers:
        init_statuses = {cs.name: cs for cs in status.init_container_statuses}
        sidecars: dict[str, int] = {}
        init_max: dict[str, int] = {}
        for c in spec.init_containers:
            if c.restart_policy == "Always":
                got = _container_requests(c, init_statuses, infeasible)
                _add(reqs, got)
                _add(sidecars, got)
                effective = dict(sidecars)
            else:
                effective = dict(sidecars)
                _add(effective, c.resources.requests)
            _max(init_max, effective)
        _max(reqs, init_max)
    if spec.overhead:
        _add(reqs, spec.overhead)
    return {name: (m if name == CPU else -((-m) // 1000)) for name, m in reqs.items()}


HostPort = tuple[str, str, int]
"""(hostIP, protocol, hostPort), hostIP defaulted to 0.0.0.0 and protocol to TCP."""


def pod_host_ports(pod: Pod) -> list[HostPort]:
    """``pod_host_ports_reference``, a pod without init containers short-cut."""
    spec = pod.spec
    if spec.init_containers:
        return pod_host_ports_reference(pod)
    out: list[HostPort] = []
    for c in spec.containers:
        for p in c.ports:
            if p.host_port > 0:
                out.append((p.host_ip or "0.0.0.0", p.protocol or "TCP", p.host_port))
    return out


def pod_host_ports_reference(pod: Pod) -> list[HostPort]:
    """Upstream ``util.GetHostPorts`` (v1.34, PR #132040): the ports with a hostPort of the
    restartable (sidecar) init containers, then of the regular containers; a port <= 0 is
    not a host port."""
    sidecars = [c for c in pod.spec.init_containers if c.restart_policy == "Always"]
    return [
        (p.host_ip or "0.0.0.0", p.protocol or "TCP", p.host_port)
        for c in (*sidecars, *pod.spec.containers)
        for p in c.ports
        if p.host_port > 0
    ]


def node_allocatable(node: Node) -> dict[str, int]:
    """A node's allocatable resources as ints (capacity where allocatable is absent)."""
    src = node.status.allocatable or node.status.capacity
    return {name: amount(name, q) for name, q in src.items()}
