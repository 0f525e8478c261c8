"""``NodeName`` (upstream ``plugins/nodename/node_name.go``): Filter.

A pod with ``spec.nodeName`` set only fits the node of that name; any other node is rejected
``UnschedulableAndUnresolvable`` "node(s) didn't match the requested node name". Registered
events (v1.34, QueueingHints on): Node/Add, without a hint (always Queue). ``filter_all``
(vectorised) compares table rows with the row of the requested node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from agents.scheduler.framework.interface import ALL_PASS, FilterCodes, Handle
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    Status,
)
from emulator.base.api.core import Pod

__all__ = ["ERR_REASON", "NAME", "NodeName", "fits"]

NAME: Final = "NodeName"
ERR_REASON: Final = "node(s) didn't match the requested node name"
_STATUSES: Final = (SUCCESS, Status(Code.UnschedulableAndUnresolvable, ERR_REASON))


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Upstream ``nodename.Fits``."""
    return not pod.spec.node_name or pod.spec.node_name == node_info.name


class NodeName:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not fits(pod, node_info):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON)
        return SUCCESS

    def filter_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> FilterCodes | None:
        name = pod.spec.node_name
        if not name:
            return ALL_PASS
        return FilterCodes((rows != table.index.get(name, -1)).astype(np.int64), _STATUSES)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add))]

    def __repr__(self) -> str:
        return "<NodeName>"
