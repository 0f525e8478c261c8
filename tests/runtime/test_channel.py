"""Channel: batching, close, overflow, cancelled waiters."""

from __future__ import annotations

import asyncio

import pytest

from emulator.base.runtime import Channel, ChannelClosed, Overflow, run


class Gone(Exception):
    """Stands in for an API error a watch is closed with."""


def test_put_never_waits_and_get_batch_takes_everything_in_order() -> None:
    async def main() -> tuple[list[int], int]:
        ch: Channel[int] = Channel(maxsize=1000)
        for i in range(5):
            ch.put(i)
        assert len(ch) == 5
        batch = await ch.get_batch()
        return batch, len(ch)

    assert run(main) == ([0, 1, 2, 3, 4], 0)


def test_a_waiting_consumer_gets_one_batch_per_wake_up() -> None:
    async def main() -> list[list[str]]:
        ch: Channel[str] = Channel()
        batches: list[list[str]] = []

        async def consumer() -> None:
            while True:
                batches.append(await ch.get_batch())

        task = asyncio.create_task(consumer())
        await asyncio.sleep(1)  # the consumer is waiting on an empty channel
        ch.put("a")
        ch.put("b")
        ch.put("c")
        await asyncio.sleep(1)
        ch.put("d")
        await asyncio.sleep(1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return batches

    assert run(main) == [["a", "b", "c"], ["d"]]


def test_get_nowait_batch() -> None:
    ch: Channel[int] = Channel()
    assert ch.get_nowait_batch() == []
    ch.put(1)
    ch.put(2)
    assert ch.get_nowait_batch() == [1, 2]
    assert ch.get_nowait_batch() == []
    ch.put(3)
    ch.close()
    assert ch.get_nowait_batch() == [3]
    with pytest.raises(ChannelClosed, match="channel closed"):
        ch.get_nowait_batch()


def test_close_delivers_what_was_queued_then_raises() -> None:
    async def main() -> list[int]:
        ch: Channel[int] = Channel()
        ch.put(1)
        ch.close()
        ch.put(2)  # dropped: the stream has ended
        assert ch.closed
        first = await ch.get_batch()
        with pytest.raises(ChannelClosed, match=r"^channel closed$"):
            await ch.get_batch()
        with pytest.raises(ChannelClosed):
            await ch.get_batch()  # and again
        return first

    assert run(main) == [1]


def test_close_wakes_a_waiting_consumer() -> None:
    async def main() -> float:
        ch: Channel[int] = Channel()
        loop = asyncio.get_running_loop()
        loop.call_later(5, ch.close, Gone("too old resource version"))
        with pytest.raises(Gone, match="too old resource version"):
            await ch.get_batch()
        return loop.time()

    assert run(main) == 5.0


def test_the_first_close_reason_wins() -> None:
    ch: Channel[int] = Channel()
    ch.close(Gone("first"))
    ch.close(Gone("second"))
    ch.close()
    with pytest.raises(Gone, match="first"):
        ch.get_nowait_batch()


def test_overflow_closes_but_keeps_what_was_queued() -> None:
    async def main() -> list[int]:
        ch: Channel[int] = Channel(maxsize=3)
        for i in range(3):
            ch.put(i)
        assert repr(ch) == "<Channel queued=3 maxsize=3 closed=False>"
        ch.put(3)  # one too many: dropped, and the channel is closed
        ch.put(4)
        assert repr(ch) == "<Channel queued=3 maxsize=3 closed=True>"
        batch = await ch.get_batch()
        with pytest.raises(Overflow, match=r"more than 3 items queued"):
            await ch.get_batch()
        return batch

    assert run(main) == [0, 1, 2]


def test_overflow_counts_only_what_is_still_queued() -> None:
    ch: Channel[int] = Channel(maxsize=2)
    for i in range(10):
        ch.put(i)
        assert ch.get_nowait_batch() == [i]
    assert not ch.closed


def test_overflow_is_a_channel_closed() -> None:
    assert issubclass(Overflow, ChannelClosed)


def test_repr_and_maxsize() -> None:
    ch: Channel[int] = Channel(maxsize=1000)
    for i in range(3):
        ch.put(i)
    assert repr(ch) == "<Channel queued=3 maxsize=1000 closed=False>"
    assert ch.maxsize == 1000
    assert repr(Channel()) == "<Channel queued=0 maxsize=None closed=False>"


@pytest.mark.parametrize("maxsize", [0, -1])
def test_maxsize_must_be_positive(maxsize: int) -> None:
    with pytest.raises(ValueError, match="maxsize must be at least 1"):
        Channel(maxsize=maxsize)


def test_a_cancelled_consumer_leaves_the_channel_usable() -> None:
    async def main() -> list[int]:
        ch: Channel[int] = Channel()
        task = asyncio.create_task(ch.get_batch())
        await asyncio.sleep(1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        task = asyncio.create_task(ch.get_batch())  # a new consumer may wait again
        await asyncio.sleep(1)
        ch.put(7)
        return await task

    assert run(main) == [7]


def test_a_put_after_the_waiter_was_cancelled_is_kept() -> None:
    # The consumer is cancelled, and an item arrives before it resumes: put must tolerate the
    # done waiter, the cancellation must propagate, and the item must stay queued.
    async def main() -> list[int]:
        ch: Channel[int] = Channel()
        task = asyncio.create_task(ch.get_batch())
        await asyncio.sleep(0)
        task.cancel()
        ch.put(1)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(ch) == 1
        return await ch.get_batch()

    assert run(main) == [1]


def test_a_cancel_after_the_wake_up_propagates_and_loses_nothing() -> None:
    async def main() -> list[int]:
        ch: Channel[int] = Channel()
        task = asyncio.create_task(ch.get_batch())
        await asyncio.sleep(0)
        ch.put(1)  # completes the waiter ...
        task.cancel()  # ... but the consumer is cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await task
        return await ch.get_batch()

    assert run(main) == [1]


def test_there_is_one_consumer() -> None:
    async def main() -> None:
        ch: Channel[int] = Channel()
        first = asyncio.create_task(ch.get_batch())
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match="one consumer"):
            await ch.get_batch()
        ch.close()
        with pytest.raises(ChannelClosed):
            await first

    run(main)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param(["put:1"], (["b0", 1], []), id="waits-then-comes-first"),
        pytest.param(["lazy:b1", "lazy:b2", "put:1"], (["b2", 1], []), id="the-latest-replaces"),
        pytest.param(["put:1", "lazy:b1", "put:2"], (["b0", 1, "b1", 2], []), id="behind-queued-items-a-put"),
        pytest.param(["lazy:b1", "close"], (["b1"], ["closed"]), id="before-the-close"),
        pytest.param(["lazy:b1", "put:1", "put:2", "put:3"], (["b1", 1, 2, 3], []), id="not-counted-in-maxsize"),
    ],
)
def test_a_lazy_item_waits_for_the_next_batch(steps: list[str], expected: tuple[list[object], list[str]]) -> None:
    """``put_lazy`` (an informer's BOOKMARK): no wake-up by itself, first in the next batch."""

    async def main() -> tuple[list[object], list[str]]:
        ch: Channel[object] = Channel(maxsize=3)
        waiter = asyncio.ensure_future(ch.get_batch())
        await asyncio.sleep(0)
        ch.put_lazy("b0")
        await asyncio.sleep(0)
        assert not waiter.done()
        assert ch.lazy == "b0"
        for step in steps:  # then at one instant, the consumer woken by the first put or close
            verb, _, arg = step.partition(":")
            if verb == "lazy":
                ch.put_lazy(arg)
            elif verb == "put":
                ch.put(int(arg))
            else:
                ch.close()
        got = await waiter
        ends: list[str] = []
        try:
            ch.get_nowait_batch()
        except ChannelClosed:
            ends.append("closed")
        return got, ends

    assert run(main) == expected
