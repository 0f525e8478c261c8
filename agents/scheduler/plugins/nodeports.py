"""``NodePorts`` (upstream ``plugins/nodeports/node_ports.go``): PreFilter, Filter.

What this module owns: whether the host ports a pod wants are free on a node. The wanted ports
are upstream's ``util.GetHostPorts`` (``emulator.base.api.resources.pod_host_ports``): every container port
with ``hostPort > 0`` of the restartable (sidecar) init containers and of the regular containers,
hostIP defaulted to ``0.0.0.0`` and protocol to ``TCP``. The node's used ports are
``NodeInfo.used_ports`` (``HostPortInfo``), kept by the cache from the same function.

==========  ==============================================================================
point       behaviour
==========  ==============================================================================
PreFilter   the pod's wanted host ports into CycleState ``PreFilterNodePorts``; Skip if none
Filter      any wanted (ip, protocol, port) conflicting with a used one → ``Unschedulable``
            "node(s) didn't have free ports for the requested pod ports". Wanted ``0.0.0.0``
            conflicts with that (protocol, port) on any IP; a specific IP with the same IP or
            ``0.0.0.0``; protocols never conflict with each other
==========  ==============================================================================

Unschedulable (not ...AndUnresolvable): preempting the pod holding the port can free it.

Events (v1.34, QueueingHints on):

=============  =====================================================================
event          hint: Queue when …
=============  =====================================================================
Pod Delete     the deleted pod was bound or nominated and held a host port that
               conflicts with one the rejected pod wants
Node Add       always (no hint)
=============  =====================================================================

Pod updates are not registered: container ports are immutable.

``filter_all`` (vectorised): per wanted (ip, protocol, port), the node's conflict as a
``NodeTable`` derived column (re-evaluated whenever the node's NodeInfo changes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from agents.scheduler.framework.interface import ALL_PASS, FilterCodes, Handle
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import (
    SKIP,
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    HostPortInfo,
    NodeInfo,
    QueueingHint,
    Status,
)
from emulator.base.api.core import Pod
from emulator.base.api.resources import HostPort, pod_host_ports

__all__ = ["ERR_REASON", "NAME", "PRE_FILTER_STATE_KEY", "NodePorts", "fits", "fits_ports"]

NAME: Final = "NodePorts"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
_STATUSES: Final = (SUCCESS, Status(Code.Unschedulable, ERR_REASON))


def fits_ports(want: Iterable[HostPort], in_use: HostPortInfo) -> bool:
    """True if none of ``want`` conflicts with ``in_use`` (upstream ``fitsPorts``)."""
    return not any(in_use.check_conflict(ip, protocol, port) for ip, protocol, port in want)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Upstream ``Fits``: the pod's host ports are free on the node (kubelet-style admission)."""
    return fits_ports(pod_host_ports(pod), node_info.used_ports)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    ports: tuple[HostPort, ...]

    def clone(self) -> _PreFilterState:
        return self  # not affected by adding or removing other pods


def _conflicts(want: HostPort) -> Callable[[NodeInfo], int]:
    ip, protocol, port = want
    return lambda node_info: int(node_info.used_ports.check_conflict(ip, protocol, port))


class NodePorts:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        ports = pod_host_ports(pod)
        if not ports:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(tuple(ports)))
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        try:
            s: _PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return Status(Code.Error, f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not fits_ports(s.ports, node_info.used_ports):
            return Status(Code.Unschedulable, ERR_REASON)
        return SUCCESS

    def filter_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        try:
            s: _PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return None
        if not table.any_ports:
            return ALL_PASS
        conflict = np.zeros(len(rows), dtype=bool)
        for want in s.ports:
            conflict |= table.derived(("NodePorts", want), _conflicts(want), "info")[rows] != 0
        return FilterCodes(conflict.astype(np.int64), _STATUSES) if np.count_nonzero(conflict) else ALL_PASS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete), self.is_schedulable_after_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
        ]

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        deleted = old
        if deleted is None:
            return QueueingHint.Queue  # upstream: an unexpected object is an error, i.e. Queue
        if not deleted.spec.node_name and not deleted.status.nominated_node_name:
            return QueueingHint.QueueSkip  # an unscheduled pod held no port
        ports = pod_host_ports(deleted)
        if not ports:
            return QueueingHint.QueueSkip
        in_use = HostPortInfo()
        for ip, protocol, port in ports:
            in_use.add(ip, protocol, port)
        if fits_ports(pod_host_ports(pod), in_use):
            return QueueingHint.QueueSkip  # no port in common: the deletion frees nothing it needs
        return QueueingHint.Queue

    def __repr__(self) -> str:
        return "<NodePorts>"
