"""``SchedulingGates`` (upstream ``plugins/schedulinggates/scheduling_gates.go``): PreEnqueue.

A pod with ``spec.schedulingGates`` is kept out of activeQ: ``UnschedulableAndUnresolvable``
"waiting for scheduling gates: [gate-a gate-b]" (the gate names in order, Go's ``%v`` of a string
slice). Registered events (v1.34, QueueingHints on): Pod/UpdatePodSchedulingGatesEliminated,
hint Queue only for the gated pod itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agents.scheduler.framework.interface import Handle
from agents.scheduler.framework.types import (
    SUCCESS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    QueueingHint,
    Status,
)
from emulator.base.api.core import Pod

__all__ = ["NAME", "SchedulingGates"]

NAME: Final = "SchedulingGates"


class SchedulingGates:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def pre_enqueue(self, pod: Pod) -> Status:
        gates = pod.spec.scheduling_gates
        if not gates:
            return SUCCESS
        names = " ".join(g.name for g in gates)
        return Status(Code.UnschedulableAndUnresolvable, f"waiting for scheduling gates: [{names}]")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        event = ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated)
        return [ClusterEventWithHint(event, self.is_schedulable_after_gates_eliminated)]

    @staticmethod
    def is_schedulable_after_gates_eliminated(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        if new is None or new.metadata.uid != pod.metadata.uid:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def __repr__(self) -> str:
        return "<SchedulingGates>"
