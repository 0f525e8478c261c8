"""Backoff arithmetic (v1.34 counting), the two backoff heaps, and the 1 s ordering window."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.types import PodInfo
from agents.scheduler.queue import BackoffQueue, QueuedPodInfo, backoff_count, backoff_duration, truncate_to_window
from tests.scheduler.queue.queue_helpers import (
    NODE_ADD,
    FakeClock,
    Registry,
    fail,
    make_pod,
    make_queue,
    names,
    pop,
    priority_less,
)


@pytest.mark.parametrize(
    ("initial", "maximum", "expected"),
    [
        pytest.param(1.0, 10.0, [0, 1, 2, 4, 8, 10, 10], id="defaults-1s-10s"),
        pytest.param(0.5, 3.0, [0, 0.5, 1, 2, 3, 3, 3], id="0.5s-3s"),
        pytest.param(2.0, 60.0, [0, 2, 4, 8, 16, 32, 60], id="2s-60s"),
        pytest.param(1.0, 0.0, [0, 0, 0, 0, 0, 0, 0], id="max-0"),
        pytest.param(3.0, 3.0, [0, 3, 3, 3, 3, 3, 3], id="initial-equals-max"),
    ],
)
def test_backoff_duration_table(initial: float, maximum: float, expected: list[float]) -> None:
    assert [backoff_duration(n, initial, maximum) for n in range(7)] == expected


def test_backoff_duration_does_not_overflow() -> None:
    assert backoff_duration(5000, 1.0, 10.0) == 10.0
    assert backoff_duration(5000, 0.0, 10.0) == 0.0


def make_bq(clock: FakeClock, pop_from_backoff_q: bool) -> BackoffQueue:
    return BackoffQueue(
        clock, initial=1.0, maximum=10.0, active_less=priority_less, pop_from_backoff_q=pop_from_backoff_q
    )


def qpi_with(*, unschedulable: int = 0, errors: int = 0, ts: float = 100.0, rejected_by: str = "") -> QueuedPodInfo:
    qpi = QueuedPodInfo(PodInfo(make_pod(f"p-{unschedulable}-{errors}")), ts)
    qpi.unschedulable_count = unschedulable
    qpi.consecutive_errors_count = errors
    if rejected_by:
        qpi.unschedulable_plugins.add(rejected_by)
    return qpi


@pytest.mark.parametrize("counter", ["unschedulable", "errors"])
@pytest.mark.parametrize(
    ("n", "expiry_exact", "expiry_window"),
    [
        pytest.param(0, None, None, id="n0-never"),
        pytest.param(1, 101.3, 101.0, id="n1"),
        pytest.param(2, 102.3, 102.0, id="n2"),
        pytest.param(3, 104.3, 104.0, id="n3"),
        pytest.param(4, 108.3, 108.0, id="n4"),
        pytest.param(5, 110.3, 110.0, id="n5-capped"),
        pytest.param(6, 110.3, 110.0, id="n6-capped"),
    ],
)
def test_expiry_is_timestamp_plus_duration_for_both_counters(
    counter: str, n: int, expiry_exact: float | None, expiry_window: float | None
) -> None:
    clock = FakeClock(100.3)
    for pop_from_backoff_q, expected in ((False, expiry_exact), (True, expiry_window)):
        bq = BackoffQueue(
            clock, initial=1.0, maximum=10.0, active_less=priority_less, pop_from_backoff_q=pop_from_backoff_q
        )
        qpi = qpi_with(
            ts=100.3, unschedulable=n if counter == "unschedulable" else 0, errors=n if counter == "errors" else 0
        )
        if expected is None:
            assert bq.backoff_time(qpi) == float("-inf")
            assert qpi.backoff_expiration is None  # count 0 is not cached
            assert not bq.is_backing_off(qpi)
        else:
            assert bq.backoff_time(qpi) == pytest.approx(expected)
            assert qpi.backoff_expiration == bq.backoff_time(qpi)


@pytest.mark.parametrize(
    ("unschedulable", "errors", "expected_n"),
    [
        pytest.param(0, 0, 0, id="fresh"),
        pytest.param(4, 0, 4, id="rejections"),
        pytest.param(4, 1, 1, id="errors-win-when-positive"),
        pytest.param(0, 3, 3, id="errors-only"),
    ],
)
def test_backoff_count_prefers_consecutive_errors(unschedulable: int, errors: int, expected_n: int) -> None:
    assert backoff_count(qpi_with(unschedulable=unschedulable, errors=errors)) == expected_n


def test_counters_through_the_failure_paths() -> None:
    clock = FakeClock()
    q = make_queue(clock, Registry().register("P", NODE_ADD))
    q.add(make_pod("p"))
    history = []
    for rejectors in [(), (), ("P",), ("P",), ()]:
        qpi = pop(q)
        fail(q, qpi, *rejectors)
        history.append((qpi.unschedulable_count, qpi.consecutive_errors_count))
        # get it back out of whatever queue it is in
        clock.advance(301)
        q.flush_unschedulable_pods_leftover()
        clock.advance(60)
        q.flush_backoff_q_completed()
    assert history == [(0, 1), (0, 2), (1, 0), (2, 0), (2, 1)]


@pytest.mark.parametrize(
    ("now", "expiry", "backing_off_window", "backing_off_exact"),
    [
        pytest.param(100.0, 101.0, True, True, id="before"),
        pytest.param(101.0, 101.0, True, False, id="at-expiry-same-window"),
        pytest.param(101.9, 101.0, True, False, id="later-in-same-window"),
        pytest.param(102.0, 101.0, False, False, id="next-window"),
    ],
)
def test_is_backing_off_window_vs_exact(
    now: float, expiry: float, backing_off_window: bool, backing_off_exact: bool
) -> None:
    clock = FakeClock(now)
    for window, expected in ((True, backing_off_window), (False, backing_off_exact)):
        bq = make_bq(clock, window)
        qpi = qpi_with(unschedulable=1)
        qpi.backoff_expiration = expiry
        assert bq.is_backing_off(qpi) is expected


def test_truncate_to_window_ignores_float_noise() -> None:
    assert truncate_to_window(0.1 + 0.2 + 2.7) == 3.0  # 2.9999999999999996
    assert truncate_to_window(3.999) == 3.0


def test_rejected_and_error_pods_use_separate_heaps() -> None:
    clock = FakeClock(100.0)
    bq = make_bq(clock, True)
    rejected = qpi_with(unschedulable=1, rejected_by="P")
    errored = qpi_with(errors=1)
    bq.add(rejected)
    bq.add(errored)
    assert (bq.len_rejected(), bq.len_errors(), len(bq)) == (1, 1, 2)
    assert bq.pop_backoff() is rejected  # pop-from-backoffQ never takes an error pod
    assert bq.pop_backoff() is None
    clock.t = 102.0
    assert bq.pop_all_completed() == [errored]


def test_window_orders_by_priority_and_exact_orders_by_expiry() -> None:
    clock = FakeClock(100.0)
    early_low = QueuedPodInfo(PodInfo(make_pod("early-low", priority=1)), 100.1)
    late_high = QueuedPodInfo(PodInfo(make_pod("late-high", priority=9)), 100.7)
    for pod_info in (early_low, late_high):
        pod_info.unschedulable_count = 1
        pod_info.unschedulable_plugins.add("P")
    for window, expected in ((True, ["late-high", "early-low"]), (False, ["early-low", "late-high"])):
        bq = make_bq(clock, window)
        for x in (early_low, late_high):
            x.backoff_expiration = None
            bq.add(x)
        assert [x.pod.metadata.name for x in bq.ordered()] == expected


@pytest.mark.parametrize(
    ("pop_from_backoff_q", "expected"),
    [
        pytest.param(True, "p", id="pops-from-backoffQ-when-activeQ-empty"),
        pytest.param(False, None, id="waits-for-the-flush"),
    ],
)
def test_pop_from_backoff_q(pop_from_backoff_q: bool, expected: str | None) -> None:
    clock = FakeClock()
    q = make_queue(clock, Registry().register("P", NODE_ADD), pop_from_backoff_q=pop_from_backoff_q)
    q.add(make_pod("p"))
    fail(q, pop(q), "P")
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where("default/p") == "Backoff"
    got = q.pop_nowait()
    assert (got.pod.metadata.name if got else None) == expected
    if got is not None:
        assert got.attempts == 2
        assert q.incoming_pods()[("Active", "PopFromBackoffQ")] == 1
        # activeQ is preferred over backoffQ
        q.add(make_pod("fresh"))
        fail(q, got, "P")
        q.move_all_to_active_or_backoff(NODE_ADD)
        assert names(q.pods_in_backoff_q()) == ["p"]
        assert pop(q).pod.metadata.name == "fresh"
