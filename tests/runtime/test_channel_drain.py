"""``Channel`` with a drain (``set_drain``/``settle``): a waiting consumer's wake-up is owed
once, and settled by calling the drain in the settler's code; puts while owed or draining
only queue; a declining drain, a close, or items left queued wake the consumer as without a
drain; a consumer that stopped waiting is not woken."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from emulator.base.runtime import Channel, ChannelClosed
from tests.clocks import run_virtual


class _Setup:
    """One channel, its consumer task logging what it takes, a drain logging what it
    applies (``hook`` runs on each item applied in place), and the owed list."""

    def __init__(self, *, declines: bool = False) -> None:
        self.channel = Channel[int](maxsize=4)
        self.owed: list[Channel[int]] = []
        self.log: list[Any] = []
        self.hook: Callable[[int], None] = lambda item: None
        self.declines = declines
        self.channel.set_drain(self._drain, self.owed)

    def _drain(self, batch: list[int]) -> bool:
        if self.declines:
            return False
        for item in batch:
            self.log.append(("drained", item))
            self.hook(item)
        return True

    async def consume(self) -> None:
        try:
            while True:
                self.log.append(("woken", await self.channel.get_batch()))
        except ChannelClosed as closed:
            self.log.append(("closed", type(closed).__name__))

    def settle(self) -> None:
        owed, self.owed[:] = list(self.owed), []
        for channel in owed:
            channel.settle()


def _play(setup: _Setup, act: Callable[[_Setup], None]) -> list[Any]:
    async def main() -> list[Any]:
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(setup.consume())
            await asyncio.sleep(0)  # it waits
            act(setup)
            setup.log.append("settled")
            await asyncio.sleep(1.0)
            task.cancel()
        return setup.log

    return run_virtual(main())  # type: ignore[no-any-return]


def _puts(s: _Setup) -> None:
    s.channel.put(1)
    s.channel.put(2)
    assert s.owed == [s.channel]  # owed once
    s.settle()


def _declined(s: _Setup) -> None:
    s.channel.put(1)
    s.settle()


def _reentrant(s: _Setup) -> None:
    def hook(item: int) -> None:
        if item == 1:
            s.channel.put(10)  # queued while draining: applied after, by the same drain
            assert s.owed == []

    s.hook = hook
    s.channel.put(1)
    s.channel.put(2)
    s.settle()


def _closed_while_owed(s: _Setup) -> None:
    s.channel.put(1)
    s.channel.close()
    s.settle()


def _cut_while_draining(s: _Setup) -> None:
    def hook(item: int) -> None:
        if item == 1:
            s.channel.close()

    s.hook = hook
    s.channel.put(1)
    s.channel.put(2)
    s.settle()


def _overflow_while_draining(s: _Setup) -> None:
    def hook(item: int) -> None:
        if item == 1:
            for extra in range(10, 16):  # the fifth queued overflows
                s.channel.put(extra)

    s.hook = hook
    s.channel.put(1)
    s.settle()


def _close_unowed(s: _Setup) -> None:
    s.channel.close()  # nothing owed: wakes at once, as without a drain
    assert s.owed == []


@pytest.mark.parametrize(
    ("act", "declines", "expected"),
    [
        pytest.param(_puts, False, [("drained", 1), ("drained", 2), "settled"], id="applied-in-place"),
        pytest.param(_declined, True, ["settled", ("woken", [1])], id="declined-wakes"),
        pytest.param(
            _reentrant,
            False,
            [("drained", 1), ("drained", 2), ("drained", 10), "settled"],
            id="reentrant-put-applied-after",
        ),
        pytest.param(
            _closed_while_owed, False, ["settled", ("woken", [1]), ("closed", "ChannelClosed")], id="closed-owed"
        ),
        pytest.param(
            _cut_while_draining,
            False,
            [("drained", 1), ("drained", 2), "settled", ("closed", "ChannelClosed")],
            id="cut-while-draining",
        ),
        pytest.param(
            _overflow_while_draining,
            False,
            [("drained", 1), "settled", ("woken", [10, 11, 12, 13]), ("closed", "Overflow")],
            id="overflow-while-draining",
        ),
        pytest.param(_close_unowed, False, ["settled", ("closed", "ChannelClosed")], id="close-not-owed"),
    ],
)
def test_settling_an_owed_wakeup(act: Callable[[_Setup], None], declines: bool, expected: list[Any]) -> None:
    assert _play(_Setup(declines=declines), act) == expected


def test_a_consumer_not_waiting_is_not_owed_and_one_that_stopped_is_not_woken() -> None:
    async def main() -> list[Any]:
        s = _Setup()
        s.channel.put(1)  # nobody waits: queued, nothing owed
        assert s.owed == []
        assert await s.channel.get_batch() == [1]
        task = asyncio.create_task(s.channel.get_batch())
        await asyncio.sleep(0)
        s.channel.put(2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        s.settle()  # the consumer left: nothing drained, nothing woken, the item kept
        assert s.log == []
        assert s.channel.get_nowait_batch() == [2]
        return s.log

    run_virtual(main())


def test_a_failing_drain_wakes_the_consumer_and_raises_to_the_settler() -> None:
    async def main() -> list[Any]:
        channel = Channel[int]()
        owed: list[Channel[int]] = []

        def boom(batch: list[int]) -> bool:
            raise ValueError("drain failed")

        channel.set_drain(boom, owed)
        got = asyncio.create_task(channel.get_batch())
        await asyncio.sleep(0)
        channel.put(1)
        with pytest.raises(ValueError, match="drain failed"):
            owed[0].settle()
        return await got

    assert run_virtual(main()) == [1]


def test_a_put_no_settle_follows_after_a_declined_drain_leaves_nothing_owed() -> None:
    # A write's settle finds the drain declining and wakes the consumer; before the consumer
    # runs, a bookmark is queued (a put that no settle follows). It owes nothing (the waiter
    # is already woken): a later close, with no settle after it either, still wakes the
    # consumer at once, and the channel is not left on the owed list to be settled out of
    # its hub's order at the next write.
    from emulator.base.runtime.channel import settle_each

    async def main() -> tuple[list[object], bool, int]:
        owed: list[Channel[str]] = []
        log: list[object] = []
        ch: Channel[str] = Channel(maxsize=100)
        ch.set_drain(lambda batch: False, owed)

        async def consumer() -> None:
            while True:
                try:
                    log.append(await ch.get_batch())
                except ChannelClosed:
                    log.append("closed")
                    return

        task = asyncio.get_running_loop().create_task(consumer(), name="consumer")
        await asyncio.sleep(0)
        ch.put("e1")
        settle_each(owed)
        ch.put_lazy("bookmark")
        owed_after = (ch._owed, len(owed))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        ch.close()
        for _ in range(3):
            await asyncio.sleep(0)
        done = task.done()
        if not done:
            task.cancel()
        return log, owed_after == (False, 0), done

    log, nothing_owed, done = asyncio.run(main())
    assert nothing_owed
    assert done
    assert log[-1] == "closed"
