"""The scheduler framework's shared types, named as upstream's (``framework/types.go``,
``framework/interface.go``, ``framework/events.go``, ``framework/cycle_state.go``).

* ``Code`` / ``Status``: a plugin's verdict. An expected "no" is a Status, never a raise.
* ``Resource``, ``PodInfo``, ``NodeInfo``: the cache's per-pod and per-node aggregates
  (requested and non-zero requested resources, host ports, image states, pods with
  affinity terms) and their ``generation`` for incremental snapshots; ``reuse_pod_info``
  copies a PodInfo's derived data to another version of its pod (or a pod of the same spec
  object) when it holds for it (``pod_info_alike``).
* ``CycleState``: per-attempt scratch space shared by a profile's plugins.
* ``ActionType`` / ``EventResource`` / ``ClusterEvent`` / ``QueueingHint``: what plugins
  register to be told about, and their verdict on whether a rejected pod may now fit.

Units: CPU in millicores, everything else in base units (ints, never floats).

Split as upstream's files are: ``CycleState`` and ``PodsToActivate`` live in ``cycle_state.py``,
the cluster events and queueing hints in ``events.py``; this module re-exports them, so that
the vocabulary every plugin, the cache, the queue and the runtime share stays one import.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from msgspec import structs

from emulator.base.api.core import Node, Pod, PodAffinityTerm, WeightedPodAffinityTerm
from emulator.base.api.resources import pod_host_ports, pod_requests, same_requests

from .cycle_state import PODS_TO_ACTIVATE_KEY, CycleState, PodsToActivate
from .events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint, QueueingHintFn

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "PODS_TO_ACTIVATE_KEY",
    "SKIP",
    "SUCCESS",
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "EventResource",
    "HostPortInfo",
    "ImageStateSummary",
    "NodeInfo",
    "NodeScore",
    "PodInfo",
    "PodsToActivate",
    "QueueingHint",
    "QueueingHintFn",
    "Resource",
    "Status",
    "next_generation",
    "pod_info_alike",
    "pod_info_of",
    "reuse_pod_info",
]

MAX_NODE_SCORE: Final = 100
MIN_NODE_SCORE: Final = 0
DEFAULT_MILLI_CPU_REQUEST: Final = 100
"""Non-zero CPU for scoring a container that does not specify one (0.1 core)."""
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024
"""Non-zero memory for scoring a container that does not specify one (200 MiB)."""


# --- Status ---------------------------------------------------------------------------


class Code(enum.IntEnum):
    """Upstream status codes, in upstream's iota order."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


class Status:
    """A plugin's result: code, reasons, and the plugin that produced it."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: Code = Code.Success, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin

    @classmethod
    def success(cls) -> Status:
        return SUCCESS

    def is_success(self) -> bool:
        return self.code is Code.Success

    def is_skip(self) -> bool:
        return self.code is Code.Skip

    def is_wait(self) -> bool:
        return self.code is Code.Wait

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)

    def with_plugin(self, plugin: str) -> Status:
        if self.plugin == plugin:
            return self
        return Status(self.code, *self.reasons, plugin=plugin)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        plugin = f" plugin={self.plugin}" if self.plugin else ""
        reasons = f" {list(self.reasons)!r}" if self.reasons else ""
        return f"<Status {self.code.name}{reasons}{plugin}>"


SUCCESS: Final = Status()
SKIP: Final = Status(Code.Skip)
"""A plugin's Skip, shared (statuses are never changed in place: ``with_plugin`` copies)."""


def as_status(err: Exception) -> Status:
    """Upstream ``AsStatus(err)``: an exception a plugin raised, as an ``Error`` status whose
    message is the exception's type and text (the runners add the plugin and the point)."""
    text = str(err)
    return Status(Code.Error, f"{type(err).__name__}: {text}" if text else type(err).__name__)


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


# --- resources, pods, nodes ----------------------------------------------------------------


@dataclass(slots=True)
class Resource:
    """Upstream ``framework.Resource``: the standard resources plus scalar ones."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_amounts(cls, amounts: dict[str, int]) -> Resource:
        r = cls()
        for name, v in amounts.items():  # ``r.add(name, v)`` inline (every queued pod's PodInfo)
            if name == "cpu":
                r.milli_cpu += v
            elif name == "memory":
                r.memory += v
            elif name == "ephemeral-storage":
                r.ephemeral_storage += v
            elif name == "pods":
                r.allowed_pod_number += v
            else:
                r.scalar_resources[name] = r.scalar_resources.get(name, 0) + v
        return r

    def add(self, name: str, v: int) -> None:
        if name == "cpu":
            self.milli_cpu += v
        elif name == "memory":
            self.memory += v
        elif name == "ephemeral-storage":
            self.ephemeral_storage += v
        elif name == "pods":
            self.allowed_pod_number += v
        else:
            self.scalar_resources[name] = self.scalar_resources.get(name, 0) + v

    def get(self, name: str) -> int:
        if name == "cpu":
            return self.milli_cpu
        if name == "memory":
            return self.memory
        if name == "ephemeral-storage":
            return self.ephemeral_storage
        if name == "pods":
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)

    def add_resource(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        for name, v in other.scalar_resources.items():
            self.scalar_resources[name] = self.scalar_resources.get(name, 0) + sign * v

    def clone(self) -> Resource:
        # the fields set here rather than through ``__init__`` (a snapshot clone takes three)
        r = _new_resource(Resource)
        r.milli_cpu = self.milli_cpu
        r.memory = self.memory
        r.ephemeral_storage = self.ephemeral_storage
        r.allowed_pod_number = self.allowed_pod_number
        scalars = self.scalar_resources
        r.scalar_resources = dict(scalars) if scalars else {}
        return r


_new_resource: Final = object.__new__


def _container_non_zero(c: Any) -> tuple[int, int]:
    """A container's non-zero cpu and memory requests (100m / 200Mi where unset)."""
    req = c.resources.requests
    cpu = req["cpu"].milli if "cpu" in req else DEFAULT_MILLI_CPU_REQUEST
    mem = req["memory"].value if "memory" in req else DEFAULT_MEMORY_REQUEST
    return cpu, mem


def _non_zero(pod: Pod) -> tuple[int, int]:
    """Upstream non-zero requests for scoring: per container, 100m / 200Mi where unset."""
    cpu = mem = 0
    for c in pod.spec.containers:  # ``_container_non_zero(c)`` inline (every pod's PodInfo)
        req = c.resources.requests
        cpu += req["cpu"].milli if "cpu" in req else DEFAULT_MILLI_CPU_REQUEST
        mem += req["memory"].value if "memory" in req else DEFAULT_MEMORY_REQUEST
    init_cpu = init_mem = 0
    side_cpu = side_mem = 0
    for c in pod.spec.init_containers:
        a, b = _container_non_zero(c)
        if c.restart_policy == "Always":
            cpu += a
            mem += b
            side_cpu += a
            side_mem += b
            eff = (side_cpu, side_mem)
        else:
            eff = (side_cpu + a, side_mem + b)
        init_cpu = max(init_cpu, eff[0])
        init_mem = max(init_mem, eff[1])
    cpu, mem = max(cpu, init_cpu), max(mem, init_mem)
    overhead = pod.spec.overhead
    if overhead:
        if "cpu" in overhead:
            cpu += overhead["cpu"].milli
        if "memory" in overhead:
            mem += overhead["memory"].value
    return cpu, mem


class PodInfo:
    """A pod with the derived data the plugins need, computed once."""

    __slots__ = (
        "host_ports",
        "non_zero_cpu",
        "non_zero_memory",
        "pod",
        "preferred_affinity_terms",
        "preferred_anti_affinity_terms",
        "requests",
        "required_affinity_terms",
        "required_anti_affinity_terms",
        "resource",
    )

    def __init__(self, pod: Pod) -> None:
        self.update(pod)

    def update(self, pod: Pod) -> None:
        self.pod = pod
        self.requests = pod_requests(pod)
        self.resource = Resource.from_amounts(self.requests)
        self.non_zero_cpu, self.non_zero_memory = _non_zero(pod)
        self.host_ports = pod_host_ports(pod)
        aff = pod.spec.affinity
        pa = aff.pod_affinity if aff else None
        paa = aff.pod_anti_affinity if aff else None
        self.required_affinity_terms: list[PodAffinityTerm] = (
            list(pa.required_during_scheduling_ignored_during_execution) if pa else []
        )
        self.required_anti_affinity_terms: list[PodAffinityTerm] = (
            list(paa.required_during_scheduling_ignored_during_execution) if paa else []
        )
        self.preferred_affinity_terms: list[WeightedPodAffinityTerm] = (
            list(pa.preferred_during_scheduling_ignored_during_execution) if pa else []
        )
        self.preferred_anti_affinity_terms: list[WeightedPodAffinityTerm] = (
            list(paa.preferred_during_scheduling_ignored_during_execution) if paa else []
        )

    @property
    def uid(self) -> str:
        return self.pod.metadata.uid

    @property
    def key(self) -> str:
        return f"{self.pod.metadata.namespace}/{self.pod.metadata.name}"

    def has_affinity(self) -> bool:
        return bool(
            self.required_affinity_terms
            or self.required_anti_affinity_terms
            or self.preferred_affinity_terms
            or self.preferred_anti_affinity_terms
        )

    def __repr__(self) -> str:
        return f"<PodInfo {self.key} cpu={self.requests.get('cpu', 0)}m>"


def reuse_pod_info(prev: PodInfo | None, pod: Pod, alike: Pod | None = None) -> PodInfo | None:
    """A PodInfo for ``pod`` copied from ``prev`` (the PodInfo of an earlier version of the
    same pod), or None when the spec differs other than in ``nodeName``. Everything a PodInfo
    derives (requests, non-zero requests, host ports, affinity terms) is a function of
    ``pod.spec`` without ``nodeName``, so such specs give equal PodInfos (the queue's PodInfo
    serves the assumed copy of its pod); the derived lists and dicts are shared (nobody mutates
    them). A slot added to PodInfo must be copied here too (the property test compares every
    slot).

    ``alike``: a version of the pod the caller found to have ``pod``'s very spec object and
    requests (``same_requests``); when ``prev`` is that version's, both checks are known to pass."""
    if prev is None or (prev.pod is not alike and not pod_info_alike(prev, pod)):
        return None
    info = PodInfo.__new__(PodInfo)
    info.pod = pod
    info.requests = prev.requests
    info.resource = prev.resource
    info.non_zero_cpu = prev.non_zero_cpu
    info.non_zero_memory = prev.non_zero_memory
    info.host_ports = prev.host_ports
    info.required_affinity_terms = prev.required_affinity_terms
    info.required_anti_affinity_terms = prev.required_anti_affinity_terms
    info.preferred_affinity_terms = prev.preferred_affinity_terms
    info.preferred_anti_affinity_terms = prev.preferred_anti_affinity_terms
    return info


def pod_info_alike(prev: PodInfo, pod: Pod) -> bool:
    """Whether ``prev``'s derived data holds for ``pod`` too: equal specs but for ``nodeName``,
    and the same requests by their statuses (an in-place resize moves them: ``resize_state``)."""
    spec, new = prev.pod.spec, pod.spec
    if (
        spec is not new
        and spec != new
        and (spec.node_name == new.node_name or structs.replace(spec, node_name=new.node_name) != new)
    ):
        return False
    return same_requests(prev.pod, pod)


class HostPortInfo:
    """Used host ports of a node: ip → set of (protocol, port)."""

    __slots__ = ("_ports",)

    def __init__(self) -> None:
        self._ports: dict[str, dict[tuple[str, int], int]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        bucket = self._ports.setdefault(ip or "0.0.0.0", {})
        key = (protocol or "TCP", port)
        bucket[key] = bucket.get(key, 0) + 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        ip = ip or "0.0.0.0"
        bucket = self._ports.get(ip)
        if not bucket:
            return
        key = (protocol or "TCP", port)
        n = bucket.get(key, 0) - 1
        if n > 0:
            bucket[key] = n
        else:
            bucket.pop(key, None)
            if not bucket:
                del self._ports[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """Upstream ``CheckConflict``: 0.0.0.0 conflicts with the same (protocol, port) on any IP."""
        ip = ip or "0.0.0.0"
        key = (protocol or "TCP", port)
        if ip == "0.0.0.0":
            return any(key in b for b in self._ports.values())
        return key in self._ports.get(ip, {}) or key in self._ports.get("0.0.0.0", {})

    def __len__(self) -> int:
        return sum(sum(b.values()) for b in self._ports.values())

    def __bool__(self) -> bool:
        """``len(self) > 0``: no bucket is kept empty and no count at 0 (``add``, ``remove``)."""
        return bool(self._ports)

    def clone(self) -> HostPortInfo:
        c = _new_host_ports(HostPortInfo)  # without ``__init__`` (every snapshot clone takes one)
        ports = self._ports
        c._ports = {ip: dict(b) for ip, b in ports.items()} if ports else {}
        return c


_new_host_ports: Final = object.__new__


@dataclass(slots=True)
class ImageStateSummary:
    size: int
    num_nodes: int


_generation = itertools.count(1)

next_generation: Final[Callable[[], int]] = _generation.__next__
"""``next_generation()``: the global, monotonically increasing NodeInfo generation (upstream
``nextGeneration``); the counter's own ``__next__`` (a C call: five a pod in churn)."""


class NodeInfo:
    """Aggregated information about one node and the pods on it (assumed ones included).

    ``allocatable`` is shared between a NodeInfo and its clones (the snapshot's, the
    simulations'): read-only for plugins; ``set_node`` replaces it."""

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None) -> None:
        self.node: Node | None = None
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.generation = next_generation()
        if node is not None:
            self.set_node(node)

    @property
    def name(self) -> str:
        return self.node.metadata.name if self.node is not None else ""

    def set_node(self, node: Node) -> None:
        from emulator.base.api.resources import node_allocatable

        self.node = node
        self.allocatable = Resource.from_amounts(node_allocatable(node))
        self.generation = next_generation()

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity():
            self.pods_with_affinity.append(pi)
        if pi.required_anti_affinity_terms:
            self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, 1)

    def remove_pod(self, pod: Pod) -> bool:
        uid = pod.metadata.uid
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            if lst:  # (mostly empty: no loop set up)
                for i, p in enumerate(lst):
                    if p.pod.metadata.uid == uid:  # ``p.uid`` without the property's call
                        lst[i] = lst[-1]
                        lst.pop()
                        break
        pods = self.pods
        for i, p in enumerate(pods):
            if p.pod.metadata.uid == uid:
                pods[i] = pods[-1]
                pods.pop()
                self._update(p, -1)
                return True
        return False

    def replace_pod(self, pi: PodInfo) -> bool:
        """``remove_pod`` of the pod with ``pi``'s UID then ``add_pod(pi)``, for a ``pi`` whose
        derived data equals the filed one's (same spec: ``cache.reuse_pod_info``) and which has
        no host ports: the same lists in the same order (the removal swaps the last entry into
        the pod's place, the addition appends), the same amounts; one new generation. False
        (nothing changed) when the pod is not on this node."""
        uid = pi.pod.metadata.uid
        pods = self.pods
        # From the end: the pod an update confirms is usually among the last added. UIDs are
        # unique on a node, so the direction finds the same entry.
        for i in range(len(pods) - 1, -1, -1):
            if pods[i].pod.metadata.uid == uid:
                break
        else:
            return False
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for j, q in enumerate(lst):
                if q.pod.metadata.uid == uid:
                    lst[j] = lst[-1]
                    lst[-1] = pi
                    break
        pods[i] = pods[-1]
        pods[-1] = pi
        self.generation = next_generation()
        return True

    def _update(self, pi: PodInfo, sign: int) -> None:
        # ``self.requested.add_resource(pi.resource, sign)`` inline (every add and remove)
        r, o = self.requested, pi.resource
        r.milli_cpu += sign * o.milli_cpu
        r.memory += sign * o.memory
        r.ephemeral_storage += sign * o.ephemeral_storage
        r.allowed_pod_number += sign * o.allowed_pod_number
        if o.scalar_resources:
            scalars = r.scalar_resources
            for name, v in o.scalar_resources.items():
                scalars[name] = scalars.get(name, 0) + sign * v
        nz = self.non_zero_requested
        nz.milli_cpu += sign * pi.non_zero_cpu
        nz.memory += sign * pi.non_zero_memory
        if pi.host_ports:
            for ip, proto, port in pi.host_ports:
                if sign > 0:
                    self.used_ports.add(ip, proto, port)
                else:
                    self.used_ports.remove(ip, proto, port)
        self.generation = next_generation()

    def clone(self, image_states: dict[str, ImageStateSummary] | None = None) -> NodeInfo:
        """A copy whose lists and amounts are its own; ``image_states``: the clone's (shared,
        read-only: the cache's snapshot clones), else a copy of this NodeInfo's."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        # shared with the clone: replaced by ``set_node``, never changed in place. Plugins and
        # simulations (preemption, nominated pods) must treat ``allocatable`` as read-only.
        c.allocatable = self.allocatable
        c.image_states = dict(self.image_states) if image_states is None else image_states
        c.generation = self.generation
        return c

    def __repr__(self) -> str:
        return (
            f"<NodeInfo {self.name} pods={len(self.pods)} "
            f"cpu={self.requested.milli_cpu}/{self.allocatable.milli_cpu}m "
            f"mem={self.requested.memory}/{self.allocatable.memory} gen={self.generation}>"
        )


def pod_info_of(state: CycleState, pod: Pod) -> PodInfo:
    """``pod``'s PodInfo: the one the cycle carries when it is for this very Pod object (its
    requests and affinity terms were derived once, when the pod was queued), else a fresh one.

    Pods are immutable, so a PodInfo built from the same object holds the same values."""
    pi = state.pod_info
    if pi is not None and pi.pod is pod:
        return pi
    return PodInfo(pod)
