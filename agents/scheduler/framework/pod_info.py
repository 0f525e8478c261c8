"""Upstream ``framework.PodInfo`` (``framework/types.go``): a pod with the data the plugins
derive from it, computed once.

What this module owns: ``PodInfo`` (requests as amounts and as a ``Resource``, the non-zero
requests scoring uses — 100m / 200Mi per container that sets none, as upstream's
``GetNonzeroRequests`` — host ports, the four lists of pod (anti-)affinity terms);
``reuse_pod_info`` / ``pod_info_alike``, which carry a PodInfo's derived data over to another
version of its pod when it holds for it; ``pod_info_of``, a cycle's PodInfo for its pod.

What it does not own: the queue's wrapper around a PodInfo (``QueuedPodInfo``, in
``agents.scheduler.queue``), the per-node sums of PodInfos (``node_info.py``), the request
arithmetic (``emulator.base.api.resources``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from msgspec import structs

from emulator.base.api.core import Pod, PodAffinityTerm, WeightedPodAffinityTerm
from emulator.base.api.resources import pod_host_ports, pod_requests, same_requests

from .resource import Resource

if TYPE_CHECKING:
    from .cycle_state import CycleState

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "PodInfo",
    "pod_info_alike",
    "pod_info_of",
    "reuse_pod_info",
]

DEFAULT_MILLI_CPU_REQUEST: Final = 100
"""Non-zero CPU for scoring a container that does not specify one (0.1 core)."""
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024
"""Non-zero memory for scoring a container that does not specify one (200 MiB)."""


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


def pod_info_of(state: CycleState, pod: Pod) -> PodInfo:
    """``pod``'s PodInfo: the one the cycle carries when it is for this very Pod object (its
    requests and affinity terms were derived once, when the pod was queued), else a fresh one.

    Pods are immutable, so a PodInfo built from the same object holds the same values."""
    pi = state.pod_info
    if pi is not None and pi.pod is pod:
        return pi
    return PodInfo(pod)
