"""In-flight tracking: events arriving during an attempt are replayed when it fails."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.types import ActionType, ClusterEvent, EventResource, QueueingHint
from agents.scheduler.queue import InFlightTracker
from tests.scheduler.queue.queue_helpers import (
    NODE_ADD,
    NODE_LABEL,
    FakeClock,
    Registry,
    always,
    fail,
    make_pod,
    make_queue,
    pop,
)

Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip
POD_LABEL = ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel)


def test_tracker_replays_only_events_after_the_pod_and_prunes_on_done() -> None:
    t = InFlightTracker()
    a, b = make_pod("a"), make_pod("b")
    assert not t.add_event_if_any_in_flight(NODE_ADD, None, "before")
    t.add_pod("a", a)
    assert t.add_event_if_any_in_flight(NODE_ADD, None, "e1")
    t.add_pod("b", b)
    assert t.add_event_if_any_in_flight(NODE_LABEL, None, "e2")
    assert not t.add_events_if_pod_in_flight("zzz", None, None, [NODE_ADD])
    assert [e.new_obj for e in t.events_for_pod("a") or []] == ["e1", "e2"]
    assert [e.new_obj for e in t.events_for_pod("b") or []] == ["e2"]
    assert t.events_for_pod("zzz") is None
    assert (len(t), t.event_count, t.pods()) == (2, 2, [a, b])
    t.done("b")  # a is older: it may still need both events
    assert t.event_count == 2
    t.add_pod("b", b)
    t.done("a")  # now b is the oldest: e1 and e2 came before it
    assert t.event_count == 0
    assert t.events_for_pod("b") == []
    t.done("b")
    t.done("b")  # idempotent
    assert (len(t), t.event_count) == (0, 0)


def test_tracker_compacts_a_long_history() -> None:
    t = InFlightTracker()
    t.add_pod("old", make_pod("old"))
    for i in range(200):
        t.add_event_if_any_in_flight(NODE_ADD, None, i)
    t.add_pod("new", make_pod("new"))
    t.add_event_if_any_in_flight(NODE_ADD, None, "last")
    t.done("old")
    assert t.event_count == 1
    assert [e.new_obj for e in t.events_for_pod("new") or []] == ["last"]


@pytest.mark.parametrize(
    ("queueing_hints", "hint", "event_during_flight", "expected"),
    [
        pytest.param(True, Q, True, "Backoff", id="hints-on-event-queues"),
        pytest.param(True, SKIP, True, "Unschedulable", id="hints-on-event-skipped"),
        pytest.param(True, Q, False, "Unschedulable", id="hints-on-no-event"),
        pytest.param(False, SKIP, True, "Backoff", id="hints-off-move-request-cycle"),
        pytest.param(False, Q, False, "Unschedulable", id="hints-off-no-event"),
    ],
)
def test_event_between_pop_and_failure(
    queueing_hints: bool, hint: QueueingHint, event_during_flight: bool, expected: str
) -> None:
    clock = FakeClock()
    q = make_queue(clock, Registry().register("Fit", NODE_ADD, always(hint)), queueing_hints=queueing_hints)
    q.add(make_pod("p"))
    qpi = pop(q)
    cycle = q.scheduling_cycle
    if event_during_flight:
        q.move_all_to_active_or_backoff(NODE_ADD)
        assert q.statistics()["inflight_events"] == (1 if queueing_hints else 0)
    clock.advance(0.2)
    assert fail(q, qpi, "Fit", cycle=cycle)
    assert q.where("default/p") == expected
    assert q.statistics()["inflight"] == 0
    assert q.statistics()["inflight_events"] == 0


@pytest.mark.parametrize("queueing_hints", [True, False])
def test_event_before_the_pop_is_not_replayed(queueing_hints: bool) -> None:
    clock = FakeClock()
    q = make_queue(clock, Registry().register("Fit", NODE_ADD), queueing_hints=queueing_hints)
    q.add(make_pod("p"))
    q.move_all_to_active_or_backoff(NODE_ADD)  # cycle 0: nothing in flight
    qpi = pop(q)
    fail(q, qpi, "Fit", cycle=q.scheduling_cycle)
    assert q.where("default/p") == "Unschedulable"


def test_events_are_judged_per_pod_from_its_own_pop() -> None:
    clock = FakeClock()
    q = make_queue(clock, Registry().register("Fit", NODE_ADD))
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    a = pop(q)
    q.move_all_to_active_or_backoff(NODE_ADD)
    b = pop(q)
    fail(q, b, "Fit")
    fail(q, a, "Fit")
    assert q.where("default/a") == "Backoff"
    assert q.where("default/b") == "Unschedulable"


def test_pending_plugin_event_in_flight_goes_straight_to_active() -> None:
    q = make_queue(FakeClock(), Registry().register("Claims", NODE_ADD))
    q.add(make_pod("p"))
    qpi = pop(q)
    q.move_all_to_active_or_backoff(NODE_ADD)
    fail(q, qpi, pending=["Claims"])
    assert q.where("default/p") == "Active"


@pytest.mark.parametrize(
    ("queueing_hints", "expected_after_update", "requeued", "expected"),
    [
        pytest.param(True, None, True, "Backoff", id="hints-on-update-recorded"),
        pytest.param(False, "Active", False, "Active", id="hints-off-pod-added-again"),
    ],
)
def test_update_of_an_in_flight_pod(
    queueing_hints: bool, expected_after_update: str | None, requeued: bool, expected: str
) -> None:
    q = make_queue(FakeClock(), Registry().register("Labels", POD_LABEL), queueing_hints=queueing_hints)
    old = make_pod("p")
    q.add(old)
    qpi = pop(q)
    q.update(old, make_pod("p", labels={"new": "label"}, resource_version="2"))
    assert q.where("default/p") == expected_after_update
    assert fail(q, qpi, "Labels") is requeued
    assert q.where("default/p") == expected


def test_activate_an_in_flight_pod_targets_only_that_pod() -> None:
    q = make_queue(FakeClock(), Registry().register("Fit", NODE_ADD))
    pa, pb = make_pod("a"), make_pod("b")
    q.add(pa)
    q.add(pb)
    a, b = pop(q), pop(q)
    q.activate([pa])
    assert q.move_request_cycle == 2
    fail(q, b, "Fit")
    fail(q, a, "Fit")
    assert q.where("default/a") == "Backoff"  # ForceActivate is a wildcard: after backoff
    assert q.where("default/b") == "Unschedulable"


def test_a_pod_already_in_flight_is_not_popped_twice() -> None:
    q = make_queue(FakeClock(), Registry())
    p = make_pod("p")
    q.add(p)
    first = pop(q)
    q.add(p)  # e.g. a relist re-adds it while it is being scheduled
    assert q.pop_nowait() is None  # discarded, as upstream
    assert q.scheduling_cycle == 1
    assert q.is_in_flight(first.uid)


@pytest.mark.parametrize("queueing_hints", [True, False])
def test_error_without_rejectors_goes_to_the_error_backoff(queueing_hints: bool) -> None:
    q = make_queue(FakeClock(), Registry(), queueing_hints=queueing_hints)
    q.add(make_pod("p"))
    qpi = pop(q)
    fail(q, qpi)
    assert q.where("default/p") == "Backoff"
    assert q.statistics()["backoff_error"] == 1
    assert (qpi.consecutive_errors_count, qpi.unschedulable_count) == (1, 0)
