"""``Resumed``: a coroutine already under way, handed to a task at the wait it was left in.

This module owns that one hand-over (``podsteps.py``'s ``_carry``: a plain pod's steps run
a coroutine from the kubelet's handles and give it to a task only if it waits): the task's
first step takes up the future the coroutine yielded, or resumes it at once when there is
nothing to wait for, and throws in a cancel made before the hand-over, so the coroutine goes
on exactly as if it had been the task's from the start. It knows nothing of pods, and does
not start the task (the caller spawns it in the kubelet's group)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["Resumed"]


class Resumed(Coroutine[Any, None, None]):
    """A coroutine already under way, as the coroutine of the task that takes it from the wait
    it was left in (``PodSteps._carry``). The task's first step hands it ``waiting`` (the
    future it yielded) to wait on; a bare yield or a future already done is taken up at once,
    in that first step, which stands where the pod's own task would have had that step; a
    cancel made in the step that handed it over is thrown in then, as the task would have
    thrown it at its wait. From then on the task steps the coroutine itself (a cancel of the
    task before its first step is thrown into the coroutine in that step)."""

    __slots__ = ("cancelled", "coro", "waiting")

    def __init__(self, coro: Coroutine[Any, Any, None], waiting: Any, cancelled: bool) -> None:
        self.coro = coro
        self.waiting: Any = waiting
        self.cancelled = cancelled

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("a Resumed is a task's coroutine, not awaited")

    def send(self, value: None) -> Any:
        waiting, self.waiting = self.waiting, _TAKEN
        if waiting is _TAKEN:
            return self.coro.send(value)
        if self.cancelled:
            return self.coro.throw(asyncio.CancelledError())
        if waiting is None or waiting.done():
            return self.coro.send(None)
        return waiting  # the task waits on it, as the pod's task did

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        self.waiting = _TAKEN
        if val is None and tb is None:
            return self.coro.throw(typ)
        return self.coro.throw(typ, val, tb)

    def close(self) -> None:
        self.coro.close()


_TAKEN: Any = object()
