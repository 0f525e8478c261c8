"""A keyed work queue for the driver agent's loops: a key added while queued is queued
once, keys are taken in the order first added; ``add_after`` re-queues on the clock."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from emulator.base.runtime.clock import Clock

__all__ = ["KeyQueue"]

K = TypeVar("K", bound=Hashable)


class KeyQueue(Generic[K]):
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._keys: dict[K, None] = {}
        self._wake = asyncio.Event()

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, key: K) -> None:
        self._keys[key] = None
        self._wake.set()

    async def add_after(self, key: K, delay: float) -> None:
        await self.clock.sleep(delay)
        self.add(key)

    async def run(self, sync: Callable[[K], Awaitable[None]]) -> None:
        """Take keys forever, one at a time, calling ``sync`` on each."""
        while True:
            while not self._keys:
                self._wake.clear()
                await self._wake.wait()
            key = next(iter(self._keys))
            del self._keys[key]
            await sync(key)
