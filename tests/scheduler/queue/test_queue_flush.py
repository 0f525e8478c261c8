"""Periodic flushes on virtual time, the blocking ``pop``, and ``close``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agents.scheduler.queue import QueueClosed, SchedulingQueue
from emulator.base.runtime.clock import LoopClock
from tests.scheduler.queue.queue_helpers import (
    NODE_ADD,
    FakeClock,
    Registry,
    fail,
    make_pod,
    make_queue,
    pop,
    priority_less,
    scheduling_gates,
)


class RecordingQueue(SchedulingQueue):
    """Logs every flush with the clock time and where pod ``default/p`` is afterwards."""

    def __init__(self, **kw: Any) -> None:
        reg = Registry().register("Fit", NODE_ADD)
        kw.setdefault("pre_enqueue", scheduling_gates)
        super().__init__(less=priority_less, hints=reg, registered_events=reg.events(), **kw)
        self.log: list[tuple[str, float, str | None]] = []

    def flush_backoff_q_completed(self) -> None:
        super().flush_backoff_q_completed()
        self.log.append(("backoff", self._clock.now(), self.where("default/p")))

    def flush_unschedulable_pods_leftover(self) -> None:
        super().flush_unschedulable_pods_leftover()
        self.log.append(("leftover", self._clock.now(), self.where("default/p")))

    def first(self, kind: str, where: str) -> float:
        return next(t for k, t, w in self.log if k == kind and w == where)


@pytest.mark.parametrize(
    ("age", "moved"),
    [
        pytest.param(299.9, False, id="younger"),
        pytest.param(300.0, False, id="exactly-5min"),
        pytest.param(300.1, True, id="older"),
    ],
)
def test_leftover_flush_moves_pods_older_than_five_minutes(age: float, moved: bool) -> None:
    clock = FakeClock()
    q = make_queue(clock, Registry().register("Fit", NODE_ADD))
    q.add(make_pod("p"))
    fail(q, pop(q), "Fit")
    clock.advance(age)
    q.flush_unschedulable_pods_leftover()
    assert q.where("default/p") == ("Active" if moved else "Unschedulable")
    assert q.incoming_pods().get(("Active", "UnschedulableTimeout"), 0) == int(moved)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("start", "pop_from_backoff_q", "backoff_ticks", "leftover_ticks"),
    [
        pytest.param(0.0, True, [1.0, 2.0, 3.0], [0.0, 30.0, 60.0], id="aligned-from-0"),
        pytest.param(0.4, True, [1.0, 2.0, 3.0], [0.4, 30.4, 60.4], id="aligned-to-whole-seconds"),
        pytest.param(0.4, False, [1.4, 2.4, 3.4], [0.4, 30.4, 60.4], id="unaligned-without-pop-from-backoffQ"),
    ],
)
async def test_flush_timer_schedule(
    start: float, pop_from_backoff_q: bool, backoff_ticks: list[float], leftover_ticks: list[float]
) -> None:
    clock = LoopClock(virtual=True)
    q = RecordingQueue(clock=clock, pop_from_backoff_q=pop_from_backoff_q)
    await clock.sleep_until(start)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(q.run(), name="scheduling-queue")
        await clock.sleep_until(61.0)
        q.close()
    assert [t for k, t, _ in q.log if k == "backoff"][:3] == pytest.approx(backoff_ticks)
    assert [t for k, t, _ in q.log if k == "leftover"] == pytest.approx(leftover_ticks)
    assert clock.now() <= 62.0  # run() ended at its next tick after close()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("fail_at", "rejections", "pop_from_backoff_q", "active_at"),
    [
        pytest.param(0.3, 1, True, 2.0, id="1s-window-1.0-released-at-2"),
        pytest.param(0.3, 1, False, 2.0, id="1s-expiry-1.3-released-at-2"),
        pytest.param(0.0, 1, True, 2.0, id="expiry-1.0-window-still-current-at-1"),
        pytest.param(0.0, 1, False, 1.0, id="expiry-1.0-exact-released-at-1"),
        pytest.param(2.6, 2, True, 5.0, id="2s-window-4.0-released-at-5"),
        pytest.param(2.6, 2, False, 5.0, id="2s-expiry-4.6-released-at-5"),
    ],
)
async def test_backoff_completes_into_active_at_the_next_flush(
    fail_at: float, rejections: int, pop_from_backoff_q: bool, active_at: float
) -> None:
    clock = LoopClock(virtual=True)
    q = RecordingQueue(clock=clock, pop_from_backoff_q=pop_from_backoff_q)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(q.run(), name="scheduling-queue")
        q.add(make_pod("p"))
        qpi = pop(q)
        qpi.unschedulable_count = rejections - 1
        await clock.sleep_until(fail_at)
        q.move_all_to_active_or_backoff(NODE_ADD)  # arrives while in flight
        fail(q, qpi, "Fit")
        assert q.where("default/p") == "Backoff"
        await clock.sleep_until(10.0)
        q.close()
    assert q.first("backoff", "Active") == pytest.approx(active_at)
    assert all(w == "Backoff" for k, t, w in q.log if k == "backoff" and fail_at < t < active_at - 1e-9)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("fail_at", "moved_at"),
    [
        pytest.param(0.0, 330.0, id="at-0"),
        pytest.param(0.5, 330.0, id="at-0.5"),
        pytest.param(29.9, 330.0, id="at-29.9"),
        pytest.param(30.1, 360.0, id="at-30.1"),
    ],
)
async def test_leftover_moves_at_the_first_30s_flush_after_five_minutes(fail_at: float, moved_at: float) -> None:
    clock = LoopClock(virtual=True)
    q = RecordingQueue(clock=clock)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(q.run(), name="scheduling-queue")
        q.add(make_pod("p"))
        qpi = pop(q)
        await clock.sleep_until(fail_at)
        fail(q, qpi, "Fit")
        await clock.sleep_until(400.0)
        q.close()
    assert q.first("leftover", "Active") == pytest.approx(moved_at)


@pytest.mark.asyncio
async def test_pop_waits_for_a_pod() -> None:
    clock = LoopClock(virtual=True)
    q = make_queue(clock, Registry())

    async def producer() -> None:
        await clock.sleep(2.5)
        q.add(make_pod("late"))

    async with asyncio.TaskGroup() as tg:
        tg.create_task(producer(), name="producer")
        qpi = await q.pop()
    assert (qpi.pod.metadata.name, clock.now(), q.scheduling_cycle) == ("late", 2.5, 1)


@pytest.mark.asyncio
async def test_waiting_pop_takes_a_backing_off_pod_with_pop_from_backoff_q() -> None:
    clock = LoopClock(virtual=True)
    q = make_queue(clock, Registry().register("Fit", NODE_ADD))
    q.add(make_pod("p"))
    qpi = pop(q)

    async def fail_later() -> None:
        await clock.sleep(0.3)
        q.move_all_to_active_or_backoff(NODE_ADD)
        fail(q, qpi, "Fit")

    async with asyncio.TaskGroup() as tg:
        tg.create_task(fail_later(), name="fail")
        again = await q.pop()
    assert (again is qpi, clock.now()) == (True, 0.3)


@pytest.mark.asyncio
async def test_close_wakes_pop_and_pop_is_cancellable() -> None:
    clock = LoopClock(virtual=True)
    q = make_queue(clock, Registry())
    async with asyncio.TaskGroup() as tg:
        waiter = tg.create_task(q.pop(), name="cancelled-pop")
        await clock.sleep(1)
        waiter.cancel()
    assert waiter.cancelled()
    assert q._waiters == []
    q.add(make_pod("after-cancel"))  # nothing was lost: a later pop gets it
    assert pop(q).pod.metadata.name == "after-cancel"

    async def closer() -> None:
        await clock.sleep(1)
        q.close()

    async with asyncio.TaskGroup() as tg:
        tg.create_task(closer(), name="closer")
        with pytest.raises(QueueClosed, match="scheduling queue is closed"):
            await q.pop()
    assert q.closed
    # Pods queued before close are still handed out.
    q2 = make_queue(clock, Registry())
    q2.add(make_pod("left"))
    q2.close()
    assert (await q2.pop()).pod.metadata.name == "left"
    with pytest.raises(QueueClosed):
        await q2.pop()
