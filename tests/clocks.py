"""``ManualClock``: a clock tests move by hand (``clock.t = 10.0``), for the API server's
synchronous verbs outside any event loop."""

from __future__ import annotations

from emulator.base.runtime.clock import format_timestamp

__all__ = ["ManualClock"]


class ManualClock:
    """``now()`` is ``t``; ``timestamp()`` its RFC 3339 form."""

    virtual = True

    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t

    def timestamp(self, t: float | None = None) -> str:
        return format_timestamp(self.t if t is None else t)
