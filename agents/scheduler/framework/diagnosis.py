"""Why a pod fits no node: ``Diagnosis`` and ``FitError``, as upstream's ``framework/types.go``.

What this module owns: the record a failed scheduling cycle builds (per-node statuses, the
plugins that rejected the pod — which drive requeueing through queueing hints — and the
PreFilter/PostFilter messages), and the exact upstream text of the resulting error:

    "0/<N> nodes are available:" + (" <PreFilter msg>." | " <histogram>.") + (" <PostFilter msg>")

The histogram counts every reason of every explicitly rejected node, plus the absent-nodes
status' reasons once per node missing from the map (nodes cut by a PreFilterResult); each
entry reads "<count> <reason>"; entries are sorted as strings (so "10 x" sorts before "2 y")
and joined with ", ". With a PreFilter message the histogram is left out (every node carries the
same PreFilter status). The PostFilter message is appended after one space and no period of its
own (v1.34 ``FitError.Error``: ``" %v"``): DefaultPreemption's is itself a FitError text ending
in ".", so the whole message ends in exactly one period. With the default profile's
DynamicResources before DefaultPreemption, the PostFilter message of a claim-less pod reads
"no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful
for scheduling." (``RunPostFilterPlugins`` joins the rejecting plugins' reasons with ", ").

It does not own building the diagnosis during the cycle (the scheduling cycle does, with
``Diagnosis.add_plugin_status``) nor deciding about requeueing (the queue).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from emulator.base.api.core import Pod

from .interface import NodeToStatus
from .status import Code, Status

__all__ = [
    "NO_NODES_AVAILABLE_TO_SCHEDULE",
    "NO_NODE_AVAILABLE_MSG",
    "CountedStatuses",
    "Diagnosis",
    "FitError",
    "count_for_status_code",
    "status_counts",
]

NO_NODE_AVAILABLE_MSG: Final = "0/{} nodes are available"
"""Upstream ``NoNodeAvailableMsg``."""
NO_NODES_AVAILABLE_TO_SCHEDULE: Final = "no nodes available to schedule pods"
"""Upstream ``ErrNoNodesAvailable`` (an empty snapshot)."""


@dataclass(slots=True)
class Diagnosis:
    """What the scheduling cycle learnt while finding no feasible node."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    """Plugins that rejected the pod (Unschedulable / UnschedulableAndUnresolvable)."""
    pending_plugins: set[str] = field(default_factory=set)
    """Plugins that returned Pending (requeue without backoff on their events)."""
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        """Upstream ``AddPluginStatus``: remember the status' plugin as a rejector."""
        if not status.plugin:
            return
        if status.code is Code.Pending:
            self.pending_plugins.add(status.plugin)
        elif status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)


class CountedStatuses(NodeToStatus):
    """``count`` nodes explicitly set to ``status``, their names not kept, the others ``absent``:
    all a FitError message reads of a dry run that found the same status on every node."""

    __slots__ = ("_count", "_status")

    def __init__(self, status: Status, count: int, absent: Status) -> None:
        super().__init__(absent=absent)
        self._status, self._count = status, count

    def __len__(self) -> int:
        return self._count

    def explicit_statuses(self) -> Iterator[Status]:
        return iter([self._status] * self._count)

    def status_counts(self) -> list[tuple[Status, int]]:
        return [(self._status, self._count)] if self._count else []


def status_counts(nts: NodeToStatus) -> list[tuple[Status, int]]:
    """(status, number of nodes explicitly set to that very object), in the order of each
    object's first node: nodes share Status objects (one per plugin and code)."""
    return nts.status_counts()


def count_for_status_code(nts: NodeToStatus, node_map: Mapping[str, Any], code: Code) -> int | None:
    """``len(nts.nodes_for_status_code(nodes, code))`` for the nodes of ``node_map`` (by name),
    without listing them; None when an explicit status names a node outside it."""
    if not nts.names_within(node_map):
        return None
    count = sum(n for status, n in status_counts(nts) if status.code is code)
    if nts.absent_nodes_status.code is code:
        count += len(node_map) - len(nts)
    return count


class FitError(Exception):
    """No node fits the pod; ``str()`` is upstream's ``FitError.Error()``."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__(pod, num_all_nodes, diagnosis)
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def reasons_histogram(self) -> dict[str, int]:
        """reason → number of nodes rejected with it (absent nodes included), in first-seen order."""
        # Nodes share Status objects (one per plugin and code): count each object once, then
        # its reasons; a reason is first seen with the first node of the first status holding it,
        # so the order is the per-node walk's.
        nts = self.diagnosis.node_to_status
        counts: dict[str, int] = {}
        for status, n in status_counts(nts):
            for reason in status.reasons:
                counts[reason] = counts.get(reason, 0) + n
        absent = self.num_all_nodes - len(nts)
        if absent > 0:
            for reason in nts.absent_nodes_status.reasons:
                counts[reason] = counts.get(reason, 0) + absent
        return counts

    def message(self) -> str:
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            entries = sorted(f"{n} {reason}" for reason, n in self.reasons_histogram().items())
            if entries:
                msg += f" {', '.join(entries)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg

    def __str__(self) -> str:
        return self.message()

    def __repr__(self) -> str:
        meta = self.pod.metadata
        return f"<FitError {meta.namespace}/{meta.name}: {self.message()!r}>"
