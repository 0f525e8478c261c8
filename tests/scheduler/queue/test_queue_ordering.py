"""activeQ ordering (PrioritySort) and what a pop does to a pod."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.types import QueueingHint
from tests.scheduler.queue.queue_helpers import NODE_ADD, FakeClock, Registry, fail, make_pod, make_queue, names, pop


@pytest.mark.parametrize(
    ("arrivals", "expected"),
    [
        pytest.param([("a", None), ("b", None), ("c", None)], ["a", "b", "c"], id="fifo-at-equal-priority"),
        pytest.param([("low", 1), ("high", 100), ("mid", 10)], ["high", "mid", "low"], id="priority-first"),
        pytest.param([("a", 5), ("b", 10), ("c", 5), ("d", 10)], ["b", "d", "a", "c"], id="priority-then-time"),
        pytest.param([("nil", None), ("neg", -5), ("zero", 0)], ["nil", "zero", "neg"], id="nil-priority-is-zero"),
    ],
)
def test_active_q_pops_by_priority_then_timestamp(arrivals: list[tuple[str, int | None]], expected: list[str]) -> None:
    clock = FakeClock()
    q = make_queue(clock)
    for name, prio in arrivals:
        q.add(make_pod(name, priority=prio))
        clock.advance(0.1)
    assert names(q.pods_in_active_q()) == expected
    assert [pop(q).pod.metadata.name for _ in expected] == expected
    assert q.pop_nowait() is None


def test_same_timestamp_same_priority_pops_in_arrival_order() -> None:
    q = make_queue(FakeClock())
    for n in ["z", "y", "x"]:
        q.add(make_pod(n))
    assert [pop(q).pod.metadata.name for _ in range(3)] == ["z", "y", "x"]


def test_retried_pod_goes_behind_equal_priority_pods_that_arrived_earlier() -> None:
    clock = FakeClock()
    reg = Registry().register("NodeAffinity", NODE_ADD, lambda p, o, n: QueueingHint.Queue)
    q = make_queue(clock, reg)
    q.add(make_pod("first"))
    clock.advance(1)
    q.add(make_pod("second"))
    qpi = pop(q)
    assert qpi.pod.metadata.name == "first"
    clock.advance(1)
    fail(q, qpi, "NodeAffinity")  # timestamp refreshed to t=2
    clock.advance(20)  # well past backoff
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where("default/first") == "Active"
    assert names(q.pods_in_active_q()) == ["second", "first"]
    # ... but a higher-priority retried pod still goes first.
    q2 = make_queue(clock, reg)
    q2.add(make_pod("early"))
    q2.add(make_pod("vip", priority=10))
    vip = pop(q2)
    fail(q2, vip, "NodeAffinity")
    clock.advance(20)
    q2.move_all_to_active_or_backoff(NODE_ADD)
    assert names(q2.pods_in_active_q()) == ["vip", "early"]


def test_pop_counts_attempts_cycles_and_clears_rejectors() -> None:
    clock = FakeClock(5.0)
    reg = Registry().register("NodeAffinity", NODE_ADD)
    q = make_queue(clock, reg)
    q.add(make_pod("p"))
    assert q.scheduling_cycle == 0
    qpi = pop(q)
    assert (qpi.attempts, q.scheduling_cycle, qpi.initial_attempt_timestamp) == (1, 1, 5.0)
    assert q.is_in_flight(qpi.uid)
    clock.advance(30)
    fail(q, qpi, "NodeAffinity", pending=["X"])
    assert not q.is_in_flight(qpi.uid)
    assert qpi.timestamp == 35.0
    q.move_all_to_active_or_backoff(NODE_ADD)
    clock.advance(30)
    q.flush_backoff_q_completed()
    again = pop(q)
    assert again is qpi
    assert (again.attempts, q.scheduling_cycle) == (2, 2)
    assert again.unschedulable_plugins == set()
    assert again.pending_plugins == set()
    assert again.initial_attempt_timestamp == 5.0  # only the first entry into activeQ sets it
