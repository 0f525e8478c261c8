"""Kubelet pod admission: the pure re-check a kubelet runs before starting a pod.

This reproduces upstream ``pkg/kubelet/lifecycle/predicate.go`` (``predicateAdmitHandler``)
over ``scheduler.AdmissionCheck``, against the pods the kubelet itself has admitted (not
the scheduler's view), so two schedulers double-booking a node, or a stale scheduler
cache, end in a rejection here exactly as in a real cluster. It owns the checks and their
reasons and messages; the kubelet (``kubelet.py``) owns what a rejection does to the pod
(phase ``Failed``, ``"Pod was rejected: " + message``).

Checks, in upstream order (``admission_failures`` returns every failure of steps 3-4, as
``AdmissionCheck(includeAllFailures=true)`` does; ``admit`` reports the first):

====  ==========================================  ==========================================
step  check                                       reason / message
====  ==========================================  ==========================================
1     pod label ``kubernetes.io/os`` vs the       ``PodOSSelectorNodeLabelDoesNotMatch``
      node's OS (linux); returns at once
2     extended resources the node does not list   (dropped from the pod's requests)
3     ``NodeResourcesFit.Fits``: pod count, cpu,  ``OutOfpods``, ``OutOfcpu``, ``OutOfmemory``,
      memory, ephemeral-storage, then scalar      ``OutOfephemeral-storage``, ``OutOf<name>``;
      resources by name                           "Node didn't have enough resource: ..."
4a    required node affinity and nodeSelector     ``NodeAffinity``  ) "Predicate <reason>
4b    ``spec.nodeName`` is this node              ``NodeName``      )  failed: <upstream
4c    host ports free (hostIP, protocol, port)    ``NodePorts``     )  filter reason>"
4d    untolerated ``NoExecute`` taint (not for    ``TaintToleration``)
      static pods; ``NoSchedule`` is not checked)
====  ==========================================  ==========================================

An exception while evaluating (a bug, or data no check anticipated) becomes
``UnexpectedAdmissionError``, as upstream turns unexpected errors into that reason.
Pods in a terminal phase (Succeeded, Failed) do not count as admitted. Scalar resources
are checked in name order (upstream iterates a Go map, so its order is unspecified).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from emulator.base.api.core import Node, Pod
from emulator.base.api.nodeaffinity import pod_matches_node_selector_and_affinity
from emulator.base.api.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    is_extended_resource,
    is_scalar_resource,
    node_allocatable,
    pod_host_ports,
    pod_requests,
)
from emulator.base.api.taints import find_untolerated_taint

__all__ = [
    "NODE_AFFINITY",
    "NODE_NAME",
    "NODE_PORTS",
    "OS_LABEL_MISMATCH",
    "TAINT_TOLERATION",
    "UNEXPECTED_ADMISSION_ERROR",
    "AdmissionResult",
    "HostPort",
    "NodeUsage",
    "admission_failures",
    "admit",
    "host_ports",
    "is_scalar_resource",
]

NODE_AFFINITY: Final = "NodeAffinity"
NODE_NAME: Final = "NodeName"
NODE_PORTS: Final = "NodePorts"
TAINT_TOLERATION: Final = "TaintToleration"
OS_LABEL_MISMATCH: Final = "PodOSSelectorNodeLabelDoesNotMatch"
UNEXPECTED_ADMISSION_ERROR: Final = "UnexpectedAdmissionError"
INSUFFICIENT_RESOURCE_PREFIX: Final = "OutOf"

_ERR_NODE_AFFINITY: Final = "node(s) didn't match Pod's node affinity/selector"
_ERR_NODE_NAME: Final = "node(s) didn't match the requested node name"
_ERR_NODE_PORTS: Final = "node(s) didn't have free ports for the requested pod ports"
_ERR_TAINT: Final = "node(s) had taints that the pod didn't tolerate"
_OS_LABEL: Final = "kubernetes.io/os"
_NODE_OS: Final = "linux"
_CONFIG_SOURCE: Final = "kubernetes.io/config.source"
_TERMINAL: Final = ("Succeeded", "Failed")
_ANY_IP: Final = "0.0.0.0"
_NO_EXECUTE: Final = ("NoExecute",)
_OS_MESSAGE: Final = "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"

HostPort = tuple[str, str, int]
"""(hostIP, protocol, hostPort) as upstream's ``HostPortInfo`` keys them."""


@dataclass(frozen=True, slots=True)
class AdmissionResult:
    """Why a pod was not admitted: upstream ``PodAdmitResult`` with ``Admit == false``."""

    reason: str
    message: str


def _predicate(name: str, desc: str) -> AdmissionResult:
    return AdmissionResult(name, f"Predicate {name} failed: {desc}")


def _insufficient(name: str, requested: int, used: int, capacity: int) -> AdmissionResult:
    return AdmissionResult(
        INSUFFICIENT_RESOURCE_PREFIX + name,
        f"Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}",
    )


# --- resource names (pkg/apis/core/v1/helper) -------------------------------------------


# --- the checks ---------------------------------------------------------------------------


class NodeUsage:
    """What the admitted pods take on a node: pod count, summed requests, host ports.

    Upstream builds a ``NodeInfo`` from the admitted pods on every admission; the kubelet
    keeps one of these up to date instead (``add`` on admission, ``remove`` on release),
    so admitting a pod costs O(its containers), not O(pods on the node). Keyed by pod UID.
    """

    __slots__ = ("_pods", "_ports", "requested")

    def __init__(self) -> None:
        self._pods: dict[str, tuple[dict[str, int], list[HostPort]]] = {}
        self._ports: dict[HostPort, int] = {}
        self.requested: dict[str, int] = {}

    @classmethod
    def of(cls, pods: Sequence[Pod]) -> NodeUsage:
        """The usage of ``pods``, leaving out terminal ones."""
        usage = cls()
        for i, pod in enumerate(pods):
            if pod.status.phase not in _TERMINAL:
                usage.add(pod.metadata.uid or f"#{i}", pod)
        return usage

    @property
    def pods(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def add(self, uid: str, pod: Pod) -> None:
        if uid in self._pods:
            raise ValueError(f"pod {uid} is already counted")
        requests: dict[str, int] = {}
        for name, v in pod_requests(pod).items():
            if v:
                requests[name] = v
        ports = pod_host_ports(pod)  # ``host_ports``
        self._pods[uid] = (requests, ports)
        for name, v in requests.items():
            self.requested[name] = self.requested.get(name, 0) + v
        for hp in ports:
            self._ports[hp] = self._ports.get(hp, 0) + 1

    def remove(self, uid: str) -> bool:
        """Stop counting pod ``uid``; False if it was not counted."""
        entry = self._pods.pop(uid, None)
        if entry is None:
            return False
        requests, ports = entry
        for name, v in requests.items():
            left = self.requested[name] - v
            if left:
                self.requested[name] = left
            else:
                del self.requested[name]
        for hp in ports:
            left = self._ports[hp] - 1
            if left:
                self._ports[hp] = left
            else:
                del self._ports[hp]
        return True

    def ports_conflict(self, wanted: Sequence[HostPort]) -> bool:
        """``HostPortInfo.CheckConflict``: 0.0.0.0 conflicts with the same protocol and
        port on any IP; a specific IP conflicts with itself and with 0.0.0.0."""
        used = self._ports
        if not wanted or not used:
            return False
        for ip, proto, port in wanted:
            if ip == _ANY_IP:
                if any(p == port and pr == proto for _, pr, p in used):
                    return True
            elif (ip, proto, port) in used or (_ANY_IP, proto, port) in used:
                return True
        return False

    def __repr__(self) -> str:
        return f"<NodeUsage pods={self.pods} requested={self.requested} ports={len(self._ports)}>"


def host_ports(pod: Pod) -> list[HostPort]:
    """(hostIP, protocol, hostPort) of the pod, as the scheduler's NodePorts counts them
    (upstream v1.34 ``GetHostPorts``: the restartable (sidecar) init containers' ports, then the
    regular containers'; no IP: 0.0.0.0, no protocol: TCP; a port <= 0 is not a host port)."""
    return pod_host_ports(pod)


_BASIC: Final = (CPU, MEMORY, EPHEMERAL_STORAGE)
"""The resources ``Fits`` checks first, in its order; neither extended nor scalar."""
_BASIC_NAMES: Final = frozenset(_BASIC)


def _fits_resources(pod: Pod, allocatable: Mapping[str, int], usage: NodeUsage) -> list[AdmissionResult]:
    """``_fits_resources_reference``, short-cut for a pod that requests only ``_BASIC``
    resources (nothing to drop, no scalar to sort): every admission of a churn run."""
    requests = pod_requests(pod)
    if not requests.keys() <= _BASIC_NAMES:
        return _fits_resources_reference(pod, allocatable, usage)
    out: list[AdmissionResult] = []
    allowed_pods = allocatable.get(PODS, 0)
    if usage.pods + 1 > allowed_pods:
        out.append(_insufficient(PODS, 1, usage.pods, allowed_pods))
    used = usage.requested
    for name in _BASIC:
        want = requests.get(name, 0)
        if want > 0:
            have, taken = allocatable.get(name, 0), used.get(name, 0)
            if want > have - taken:
                out.append(_insufficient(name, want, taken, have))
    return out


def _fits_resources_reference(pod: Pod, allocatable: Mapping[str, int], usage: NodeUsage) -> list[AdmissionResult]:
    """``noderesources.Fits`` with the kubelet's admitted pods as the node's pods."""
    out: list[AdmissionResult] = []
    allowed_pods = allocatable.get(PODS, 0)
    if usage.pods + 1 > allowed_pods:
        out.append(_insufficient(PODS, 1, usage.pods, allowed_pods))
    requests = {
        name: v
        for name, v in pod_requests(pod).items()
        if not (is_extended_resource(name) and name not in allocatable)  # removeMissingExtendedResources
    }
    scalars = sorted(name for name in requests if is_scalar_resource(name))
    if not scalars and all(requests.get(r, 0) == 0 for r in (CPU, MEMORY, EPHEMERAL_STORAGE)):
        return out
    used = usage.requested
    for name in (CPU, MEMORY, EPHEMERAL_STORAGE, *scalars):
        want = requests.get(name, 0)
        have, taken = allocatable.get(name, 0), used.get(name, 0)
        if want > 0 and want > have - taken:
            out.append(_insufficient(name, want, taken, have))
    return out


def _is_static(pod: Pod) -> bool:
    source = pod.metadata.annotations.get(_CONFIG_SOURCE)
    return source is not None and source != "api"


_ALLOCATABLE: dict[str, tuple[Node, dict[str, int]]] = {}
_ALLOCATABLE_SIZE: Final = 4096


def _allocatable(node: Node) -> dict[str, int]:
    """``node_allocatable(node)``, kept for the newest node object seen under its name (a
    kubelet admits every pod against the same version of its node, which changes only when
    its status is written; a new version takes the old one's place, so none is kept alive).
    Read only: ``_fits_resources`` does not write it. ``tests/kubelet/test_admission.py``
    checks it against ``node_allocatable``."""
    name = node.metadata.name
    hit = _ALLOCATABLE.get(name)
    if hit is not None and hit[0] is node:
        return hit[1]
    value = node_allocatable(node)
    if hit is None and len(_ALLOCATABLE) >= _ALLOCATABLE_SIZE:
        _ALLOCATABLE.clear()
    _ALLOCATABLE[name] = (node, value)
    return value


def _general_filter(pod: Pod, node: Node, usage: NodeUsage) -> list[AdmissionResult]:
    out = _fits_resources(pod, _allocatable(node), usage)
    if not pod_matches_node_selector_and_affinity(pod, node):
        out.append(_predicate(NODE_AFFINITY, _ERR_NODE_AFFINITY))
    if pod.spec.node_name and pod.spec.node_name != node.metadata.name:
        out.append(_predicate(NODE_NAME, _ERR_NODE_NAME))
    if usage.ports_conflict(pod_host_ports(pod)):  # ``host_ports``
        out.append(_predicate(NODE_PORTS, _ERR_NODE_PORTS))
    if not _is_static(pod) and find_untolerated_taint(node.spec.taints, pod.spec.tolerations, _NO_EXECUTE):
        out.append(_predicate(TAINT_TOLERATION, _ERR_TAINT))
    return out


def _unexpected(err: Exception) -> AdmissionResult:
    return AdmissionResult(
        UNEXPECTED_ADMISSION_ERROR, f"Update plugin resources failed due to {err}, which is unexpected."
    )


def admission_failures(pod: Pod, node: Node, usage: NodeUsage) -> list[AdmissionResult]:
    """Every reason ``pod`` cannot be admitted to ``node`` next to the pods counted in
    ``usage``, in upstream order; empty when it is admitted."""
    try:
        wanted_os = pod.metadata.labels.get(_OS_LABEL)
        if wanted_os is not None and wanted_os != _NODE_OS:
            return [AdmissionResult(OS_LABEL_MISMATCH, _OS_MESSAGE)]
        return _general_filter(pod, node, usage)
    except Exception as err:  # upstream: an unexpected error is a rejection, not a crash
        return [_unexpected(err)]


def admit(pod: Pod, node: Node, admitted_pods: Sequence[Pod]) -> AdmissionResult | None:
    """The first reason ``pod`` cannot be admitted to ``node`` next to ``admitted_pods``
    (terminal ones do not count), or ``None`` when it is admitted."""
    try:
        usage = NodeUsage.of(admitted_pods)
    except Exception as err:
        return _unexpected(err)
    failures = admission_failures(pod, node, usage)
    return failures[0] if failures else None
