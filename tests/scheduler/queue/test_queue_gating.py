"""PreEnqueue gating: gated pods wait in unschedulablePods for their gating plugin's events."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.framework.types import Code, QueueingHint, Status
from emulator.base.api.core import Pod
from tests.scheduler.queue.queue_helpers import (
    GATES_ELIMINATED,
    NODE_ADD,
    SCHEDULING_GATES,
    FakeClock,
    Registry,
    always,
    fail,
    make_pod,
    make_queue,
    pop,
    scheduling_gates,
)


def gates_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """SchedulingGates' hint: Queue once the updated pod has no gates left."""
    return QueueingHint.Queue if isinstance(new, Pod) and not new.spec.scheduling_gates else QueueingHint.QueueSkip


def registry() -> Registry:
    return Registry().register(SCHEDULING_GATES, GATES_ELIMINATED, gates_hint).register("Fit", NODE_ADD)


class CountingPreEnqueue:
    def __init__(self, blocked: set[str] | None = None) -> None:
        self.calls: list[str] = []
        self.blocked = blocked if blocked is not None else set()

    def __call__(self, pod: Pod) -> tuple[Status, str] | None:
        self.calls.append(pod.metadata.name)
        if pod.metadata.name in self.blocked:
            return Status(Code.UnschedulableAndUnresolvable, "blocked"), "Blocker"
        return scheduling_gates(pod)


def test_gated_pod_waits_in_unschedulable() -> None:
    q = make_queue(FakeClock(), registry())
    q.add(make_pod("g", gates=["example.com/wait"]))
    assert q.where("default/g") == "Unschedulable"
    qpi = q.get("default/g")
    assert qpi is not None
    assert (qpi.gated, qpi.gating_plugin, qpi.unschedulable_plugins) == (True, SCHEDULING_GATES, {SCHEDULING_GATES})
    assert qpi.gating_plugin_events == (GATES_ELIMINATED,)
    assert qpi.initial_attempt_timestamp is None
    assert q.pop_nowait() is None
    assert (q.statistics()["gated"], q.statistics()["unschedulable"]) == (1, 1)
    assert q.incoming_pods() == {("Gated", "UnscheduledPodAdd"): 1}


@pytest.mark.parametrize(
    ("queueing_hints", "new_gates", "expected"),
    [
        pytest.param(True, [], "Active", id="hints-on-gates-eliminated"),
        pytest.param(True, ["b"], "Unschedulable", id="hints-on-one-gate-left"),
        pytest.param(False, [], "Active", id="hints-off-pod-updated"),
        pytest.param(False, ["b"], "Unschedulable", id="hints-off-still-gated"),
    ],
)
def test_update_lifting_the_gates(queueing_hints: bool, new_gates: list[str], expected: str) -> None:
    pre_enqueue = CountingPreEnqueue()
    q = make_queue(FakeClock(), registry(), queueing_hints=queueing_hints, pre_enqueue=pre_enqueue)
    old = make_pod("g", gates=["a", "b"])
    q.add(old)
    q.update(old, make_pod("g", gates=new_gates, resource_version="2"))
    assert q.where("default/g") == expected
    qpi = q.get("default/g")
    assert qpi is not None
    assert qpi.pod.spec.scheduling_gates == [] or [g.name for g in qpi.pod.spec.scheduling_gates] == new_gates
    assert qpi.gated is (expected != "Active")


def test_only_the_gating_plugins_events_move_a_gated_pod() -> None:
    clock = FakeClock()
    pre_enqueue = CountingPreEnqueue()
    q = make_queue(clock, registry(), pre_enqueue=pre_enqueue)
    q.add(make_pod("g", gates=["a"]))
    q.move_all_to_active_or_backoff(NODE_ADD)
    clock.advance(301)
    q.flush_unschedulable_pods_leftover()  # the UnschedulableTimeout wildcard is not the gate's event
    q.activate([make_pod("g", gates=["a"])])  # PreEnqueue runs again and still gates it
    assert q.where("default/g") == "Unschedulable"
    assert pre_enqueue.calls == ["g", "g"]


def test_gating_event_reruns_pre_enqueue() -> None:
    pre_enqueue = CountingPreEnqueue(blocked={"p"})
    reg = Registry().register("Blocker", NODE_ADD, always(QueueingHint.Queue))
    q = make_queue(FakeClock(), reg, pre_enqueue=pre_enqueue)
    q.add(make_pod("p"))
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where("default/p") == "Unschedulable"
    pre_enqueue.blocked.clear()
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where("default/p") == "Active"
    assert pre_enqueue.calls == ["p", "p", "p"]
    assert pop(q).gating_plugin == ""


@pytest.mark.parametrize(
    ("pop_from_backoff_q", "after_move", "pre_enqueue_calls_at_flush"),
    [
        pytest.param(True, "Unschedulable", 0, id="pre-enqueue-on-entering-backoffQ"),
        pytest.param(False, "Backoff", 1, id="pre-enqueue-on-leaving-backoffQ"),
    ],
)
def test_where_pre_enqueue_runs_around_backoff_q(
    pop_from_backoff_q: bool, after_move: str, pre_enqueue_calls_at_flush: int
) -> None:
    clock = FakeClock()
    pre_enqueue = CountingPreEnqueue()
    q = make_queue(clock, registry(), pre_enqueue=pre_enqueue, pop_from_backoff_q=pop_from_backoff_q)
    q.add(make_pod("p"))
    fail(q, pop(q), "Fit")
    pre_enqueue.blocked.add("p")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where("default/p") == after_move
    calls = len(pre_enqueue.calls)
    clock.advance(5)
    q.flush_backoff_q_completed()
    assert len(pre_enqueue.calls) - calls == pre_enqueue_calls_at_flush
    assert q.where("default/p") == "Unschedulable"
    qpi = q.get("default/p")
    assert qpi is not None
    assert qpi.gating_plugin == "Blocker"


def test_pods_leaving_backoff_q_skip_pre_enqueue_with_pop_from_backoff_q() -> None:
    clock = FakeClock()
    pre_enqueue = CountingPreEnqueue()
    q = make_queue(clock, registry(), pre_enqueue=pre_enqueue)
    q.add(make_pod("p"))
    fail(q, pop(q), "Fit")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where("default/p") == "Backoff"
    calls = list(pre_enqueue.calls)
    clock.advance(5)
    q.flush_backoff_q_completed()
    assert q.where("default/p") == "Active"
    assert pre_enqueue.calls == calls
