"""``handover.Resumed``: a coroutine under way handed to a task goes on as the task's own."""

from __future__ import annotations

import asyncio

from agents.kubelet.handover import Resumed
from emulator.base.runtime.loop import VirtualTimeEventLoop


def test_a_coroutine_handed_over_is_cancelled_as_its_own_task_would_be() -> None:
    """``Resumed``: the coroutine left in a wait goes on in its task; a cancel before the
    task's first step is thrown into it there (its ``finally`` runs), as after."""

    async def play(cancel_before: bool) -> list[str]:
        loop = asyncio.get_running_loop()
        seen: list[str] = []

        async def rest() -> None:
            try:
                await asyncio.sleep(5)
                seen.append("woke")
            finally:
                seen.append(f"finally at {loop.time()}")

        coro = rest()
        waiting = coro.send(None)
        task = loop.create_task(Resumed(coro, waiting, False), name="test:resumed")
        if cancel_before:
            task.cancel()
        else:
            await asyncio.sleep(1)
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()
        return seen

    for before, at in ((True, 0.0), (False, 1.0)):
        loop = VirtualTimeEventLoop()
        try:
            assert loop.run_until_complete(play(before)) == [f"finally at {at}"]
        finally:
            loop.close()
