"""Shared builders for the scheduling-queue tests: pods, a settable clock, a hint registry."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    QueueingHint,
    Status,
)
from agents.scheduler.queue import QueuedPodInfo, SchedulingQueue
from emulator.base.api.core import Node, Pod
from tests.builders import affinity, label_selector, node, pod, pod_term, toleration

NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
NODE_DELETE = ClusterEvent(EventResource.Node, ActionType.Delete)
NODE_LABEL = ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel)
NODE_TAINT = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)
NODE_ALLOCATABLE = ClusterEvent(EventResource.Node, ActionType.UpdateNodeAllocatable)
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
GATES_ELIMINATED = ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated)
SCHEDULING_GATES = "SchedulingGates"


class FakeClock:
    """A hand-moved ``Clock`` for synchronous tests (``run`` needs the real ``LoopClock``)."""

    virtual = True

    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt

    async def sleep(self, seconds: float) -> None:  # pragma: no cover - not used synchronously
        raise NotImplementedError

    async def sleep_until(self, t: float) -> None:  # pragma: no cover
        raise NotImplementedError

    def timestamp(self, t: float | None = None) -> str:  # pragma: no cover
        return str(self.now() if t is None else t)


def make_pod(
    name: str,
    *,
    uid: str | None = None,
    priority: int | None = None,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    gates: Sequence[str] = (),
    nominated: str = "",
    node_name: str = "",
    cpu: str | None = None,
    tolerations: int = 0,
    affinity_to: Mapping[str, str] | None = None,
    resource_version: str = "1",
) -> Pod:
    """A queued pod: uid ``uid-<namespace>-<name>``, one container ``c`` (image ``img``),
    ``tolerations`` Exists-tolerations ``k0``..., ``affinity_to`` a required pod affinity
    (topology ``zone``) to pods with those labels."""
    aff = None
    if affinity_to is not None:
        aff = affinity(required_pods=[pod_term("zone", label_selector(affinity_to))])
    return pod(
        name,
        namespace=namespace,
        uid=uid or f"uid-{namespace}-{name}",
        labels=labels,
        resource_version=resource_version,
        cpu=cpu,
        image="img",
        node=node_name,
        affinity=aff,
        tolerations=[toleration(f"k{i}") for i in range(tolerations)],
        priority=priority,
        gates=gates,
        nominated=nominated,
    )


def make_node(name: str, labels: Mapping[str, str] | None = None) -> Node:
    return node(name, cpu=None, memory=None, pods=None, labels=labels)


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """Upstream PrioritySort: higher priority first, then earlier timestamp."""
    pa = a.pod.spec.priority or 0
    pb = b.pod.spec.priority or 0
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


Hint = Callable[[Pod, Any, Any], QueueingHint]


def always(h: QueueingHint) -> Hint:
    return lambda pod, old, new: h


class Registry:
    """Plugin name -> registered events (with hints), in plugin order; callable as ``hints``."""

    def __init__(self) -> None:
        self.plugins: dict[str, list[ClusterEventWithHint]] = {}
        self.calls: list[tuple[str, str]] = []

    def register(self, plugin: str, event: ClusterEvent, hint: Hint | None = None) -> Registry:
        if hint is not None:
            inner = hint

            def recording(pod: Pod, old: Any, new: Any) -> QueueingHint:
                self.calls.append((plugin, pod.metadata.name))
                return inner(pod, old, new)

            hint = recording
        self.plugins.setdefault(plugin, []).append(ClusterEventWithHint(event, hint))
        return self

    def __call__(self, pod: Pod) -> Mapping[str, Sequence[ClusterEventWithHint]]:
        return self.plugins

    def events(self) -> list[ClusterEvent]:
        return [r.event for regs in self.plugins.values() for r in regs]


def scheduling_gates(pod: Pod) -> tuple[Status, str] | None:
    """The SchedulingGates PreEnqueue plugin."""
    if not pod.spec.scheduling_gates:
        return None
    names = " ".join(g.name for g in pod.spec.scheduling_gates)
    return Status(Code.UnschedulableAndUnresolvable, f"waiting for scheduling gates: [{names}]"), SCHEDULING_GATES


def make_queue(
    clock: FakeClock | Any,
    registry: Registry | None = None,
    *,
    with_registered_events: bool = True,
    **kwargs: Any,
) -> SchedulingQueue:
    reg = registry if registry is not None else Registry()
    kwargs.setdefault("pre_enqueue", scheduling_gates)
    if with_registered_events:
        kwargs.setdefault("registered_events", reg.events())
    return SchedulingQueue(clock=clock, less=priority_less, hints=reg, **kwargs)


def fail(
    q: SchedulingQueue,
    qpi: QueuedPodInfo,
    *unschedulable: str,
    pending: Sequence[str] = (),
    cycle: int | None = None,
) -> bool:
    """What the scheduler's failure handler does: record the rejectors, requeue."""
    qpi.unschedulable_plugins = set(unschedulable)
    qpi.pending_plugins = set(pending)
    return q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle if cycle is None else cycle)


def pop(q: SchedulingQueue) -> QueuedPodInfo:
    qpi = q.pop_nowait()
    assert qpi is not None, f"nothing to pop from {q!r}"
    return qpi


def names(pods: Sequence[Pod]) -> list[str]:
    return [p.metadata.name for p in pods]
