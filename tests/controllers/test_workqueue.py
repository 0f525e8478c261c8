"""``WorkQueue``: client-go's guarantees (dedupe, one worker per key, re-add while
processing, earliest ``add_after`` wins, FIFO) and the per-item rate limiter."""

from __future__ import annotations

import asyncio

import pytest

from agents.controllers.workqueue import BASE_DELAY, MAX_DELAY, WorkQueue
from emulator.base.api.errors import ApiError
from emulator.base.runtime.clock import LoopClock, StoppedClock


def queue() -> WorkQueue[str]:
    return WorkQueue(LoopClock(asyncio.get_running_loop(), virtual=True), "test")


@pytest.mark.asyncio
async def test_a_key_is_queued_once_and_keys_come_out_in_order() -> None:
    q = queue()
    for k in ("a", "b", "a", "c", "b"):
        q.add(k)
    assert len(q) == 3
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]


@pytest.mark.asyncio
async def test_a_key_added_while_processing_comes_back_only_after_done() -> None:
    q = queue()
    q.add("a")
    assert await q.get() == "a"
    q.add("a")
    q.add("a")
    assert len(q) == 0  # not handed to a second worker meanwhile
    q.done("a")
    assert len(q) == 1
    assert await q.get() == "a"
    q.done("a")
    assert len(q) == 0


@pytest.mark.asyncio
async def test_add_after_keeps_the_earliest_time() -> None:
    q = queue()
    clock = q.clock
    q.add_after("a", 10.0)
    q.add_after("a", 5.0)
    q.add_after("a", 20.0)
    q.add_after("b", 0.0)  # no delay: at once
    assert await q.get() == "b"
    assert await q.get() == "a"
    assert clock.now() == pytest.approx(5.0)
    q.done("a")
    # the superseded 10 s entry does not bring the key back
    waiter = asyncio.get_running_loop().create_task(q.get(), name="test:get")
    await clock.sleep(30.0)
    assert not waiter.done()
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter


@pytest.mark.asyncio
async def test_rate_limit_doubles_per_failure_until_forget() -> None:
    q = queue()
    assert [q.when("a") for _ in range(4)] == [BASE_DELAY, 2 * BASE_DELAY, 4 * BASE_DELAY, 8 * BASE_DELAY]
    assert q.num_requeues("a") == 4
    assert q.when("b") == BASE_DELAY  # per item
    q.forget("a")
    assert q.when("a") == BASE_DELAY
    for _ in range(100):
        last = q.when("c")
    assert last == MAX_DELAY


@pytest.mark.asyncio
async def test_add_rate_limited_waits_the_backoff() -> None:
    q = queue()
    clock = q.clock
    q.add_rate_limited("a")
    q.add_rate_limited("a")  # second failure: 10 ms, but the 5 ms entry is earlier
    assert await q.get() == "a"
    assert clock.now() == pytest.approx(BASE_DELAY)
    assert q.retries == 2


@pytest.mark.asyncio
async def test_workers_sync_each_key() -> None:
    q = queue()
    seen: list[str] = []

    async def sync(key: str) -> None:
        seen.append(key)
        await q.clock.sleep(1.0)

    async with asyncio.TaskGroup() as tg:
        q.run_workers(tg, 2, sync)
        for k in ("a", "b", "c"):
            q.add(k)
        await q.clock.sleep(0.5)
        assert seen == ["a", "b"]  # two workers, one key each
        await q.clock.sleep(1.0)
        assert seen == ["a", "b", "c"]
        for t in asyncio.all_tasks():
            if t.get_name().startswith("test:worker:"):
                t.cancel()


@pytest.mark.asyncio
async def test_process_requeues_retried_errors_and_resets_on_success() -> None:
    clock = StoppedClock()
    q: WorkQueue[str] = WorkQueue(clock, "t")
    outcomes = iter([ApiError("boom"), ApiError("boom"), None])

    async def sync(key: str) -> None:
        err = next(outcomes)
        if err is not None:
            raise err

    assert await q.process("k", sync, (ApiError,)) is False
    assert q.num_requeues("k") == 1
    assert await q.process("k", sync, (ApiError,)) is False
    assert q.num_requeues("k") == 2
    assert await q.process("k", sync, (ApiError,)) is True
    assert q.num_requeues("k") == 0

    async def broken(key: str) -> None:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        await q.process("k", broken, (ApiError,))
