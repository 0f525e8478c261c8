"""``run_inline``: run a coroutine in the caller up to its first suspension."""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["run_inline"]


def run_inline(coro: Coroutine[Any, Any, None]) -> Coroutine[Any, Any, None] | None:
    """Run ``coro`` in the caller up to its first suspension: ``None`` if it finished, else
    a coroutine that finishes it (await it, from a task). An exception it raises before
    suspending propagates here."""
    try:
        pending = coro.send(None)
    except StopIteration:
        return None
    return _finish(coro, pending)


async def _finish(coro: Coroutine[Any, Any, None], pending: Any) -> None:
    await _Resume(coro, pending)


class _Resume:
    """Awaiting it hands ``pending`` (what ``coro`` yielded when it suspended, e.g. a
    future) to the awaiting task, then drives ``coro`` on as ``await coro`` would have:
    values and exceptions (cancellation included) go in, yields come out."""

    __slots__ = ("_coro", "_pending")

    def __init__(self, coro: Coroutine[Any, Any, None], pending: Any) -> None:
        self._coro = coro
        self._pending = pending

    def __await__(self) -> Generator[Any, Any, None]:
        coro, pending = self._coro, self._pending
        while True:
            try:
                value = yield pending
            except BaseException as exc:  # thrown in by the task (CancelledError): pass it on
                try:
                    pending = coro.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    pending = coro.send(value)
                except StopIteration:
                    return
