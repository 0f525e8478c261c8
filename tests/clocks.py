"""``ManualClock``: a clock tests move by hand (``clock.t = 10.0``), for the API server's
synchronous verbs outside any event loop; ``run_virtual``: a coroutine run to its end on a
fresh virtual-time loop."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from emulator.base.runtime import new_virtual_loop
from emulator.base.runtime.clock import format_timestamp

__all__ = ["ManualClock", "run_virtual"]

T = TypeVar("T")


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end on a new virtual-time loop, closed after."""
    loop = new_virtual_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        loop.close()


class ManualClock:
    """``now()`` is ``t``; ``timestamp()`` its RFC 3339 form."""

    virtual = True

    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t

    def timestamp(self, t: float | None = None) -> str:
        return format_timestamp(self.t if t is None else t)
