"""The emulator's runtime: virtual time, the injected clock, seeded randomness and channels.

The bottom layer: it depends on nothing else of ours (checked by import-linter).

- ``loop``: ``VirtualTimeEventLoop``, the asyncio loop whose clock jumps to the next timer.
- ``timers``: where the loop's pending timers wait (a small heap beside per-delay lanes).
- ``clock``: the ``Clock`` seam handed to every component, ``run()``, timestamp and duration text.
- ``rng``: per-component random streams derived from one seed, and UIDs drawn from them.
- ``channel``: the bounded, batching, single-consumer ``Channel`` under watch streams.
"""

from .channel import Channel, ChannelClosed, Overflow
from .clock import (
    EPOCH,
    Clock,
    LoopClock,
    PacedClock,
    format_duration,
    format_timestamp,
    parse_duration,
    parse_timestamp,
    run,
)
from .loop import DeadlockError, VirtualTimeEventLoop, new_virtual_loop
from .rng import Seeds, derive_seed, stream

__all__ = [
    "EPOCH",
    "Channel",
    "ChannelClosed",
    "Clock",
    "DeadlockError",
    "LoopClock",
    "Overflow",
    "PacedClock",
    "Seeds",
    "VirtualTimeEventLoop",
    "derive_seed",
    "format_duration",
    "format_timestamp",
    "new_virtual_loop",
    "parse_duration",
    "parse_timestamp",
    "run",
    "stream",
]
