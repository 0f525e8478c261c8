"""The watch channel against anyio's memory object streams, on the virtual-time loop.

``python bench/channel_vs_anyio.py [--items N] [--runs R]`` sends N items (default 100,000)
from one producer task through each kind of channel, R times (default 5), and prints the
median µs per item. The producer never awaits a send (the API server's writes are
synchronous: ``Channel.put`` / ``send_nowait``). Three shapes:

- ``1:1 per item``: one consumer; the producer lets the loop run after every item, so each
  delivery wakes the consumer.
- ``1:1 batched``: one consumer; the producer lets the loop run after every 1,000 items.
- ``fan-out``: 5,000 consumers, one channel each, item ``i`` routed to consumer
  ``i mod 5000`` and the loop run after every item: a watch event reaching the one kubelet of
  its node, the hot path the channel was written for.

The consumer takes what is queued: ``get_batch()`` for the channel; for anyio either
``receive()`` per item (the stream's own idiom) or, ``drained``, ``receive()`` then
``receive_nowait()`` until empty. Results are for the record in ``docs/architecture.md``;
nothing here is imported by the emulator.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import time
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from emulator.base.runtime.channel import Channel
from emulator.base.runtime.clock import run

Variant = Callable[[int, int, int], Coroutine[Any, Any, None]]
SHAPES = {"1:1 per item": (1, 1), "1:1 batched": (1, 1000), "fan-out": (5000, 1)}
"""Shape → (consumers, items between the producer's yields)."""


async def channel(items: int, consumers: int, every: int) -> None:
    channels: list[Channel[int]] = [Channel(maxsize=items + 1) for _ in range(consumers)]

    async def consume(ch: Channel[int], expected: int) -> None:
        got = 0
        while got < expected:
            got += len(await ch.get_batch())

    async with asyncio.TaskGroup() as tg:
        for c, ch in enumerate(channels):
            tg.create_task(consume(ch, _share(items, consumers, c)), name=f"consumer:{c}")
        for i in range(items):
            channels[i % consumers].put(i)
            if i % every == 0:
                await asyncio.sleep(0)


async def _anyio(items: int, consumers: int, every: int, *, drain: bool) -> None:
    streams = [anyio.create_memory_object_stream[int](max_buffer_size=math.inf) for _ in range(consumers)]

    async def consume(receive: MemoryObjectReceiveStream[int], expected: int) -> None:
        got = 0
        async with receive:
            while got < expected:
                await receive.receive()
                got += 1
                while drain and got < expected:
                    try:
                        receive.receive_nowait()
                    except anyio.WouldBlock:
                        break
                    got += 1

    async with asyncio.TaskGroup() as tg:
        for c, (_, receive) in enumerate(streams):
            tg.create_task(consume(receive, _share(items, consumers, c)), name=f"consumer:{c}")
        for i in range(items):
            streams[i % consumers][0].send_nowait(i)
            if i % every == 0:
                await asyncio.sleep(0)
        for send, _ in streams:
            send.close()


def _share(items: int, consumers: int, c: int) -> int:
    """How many of ``items`` routed round-robin reach consumer ``c``."""
    return items // consumers + (c < items % consumers)


async def anyio_receive(items: int, consumers: int, every: int) -> None:
    await _anyio(items, consumers, every, drain=False)


async def anyio_drained(items: int, consumers: int, every: int) -> None:
    await _anyio(items, consumers, every, drain=True)


VARIANTS: dict[str, Variant] = {
    "Channel.get_batch": channel,
    "anyio receive()": anyio_receive,
    "anyio receive() drained": anyio_drained,
}


def measure(variant: Variant, items: int, consumers: int, every: int) -> float:
    """µs per item of one run, on a fresh virtual-time loop."""
    t0 = time.perf_counter()
    run(lambda: variant(items, consumers, every), virtual=True)
    return (time.perf_counter() - t0) / items * 1e6


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{args.items} items, median of {args.runs} runs, µs per item (virtual-time loop)")
    print(f"{'variant':<26}" + "".join(f"{shape:>15}" for shape in SHAPES))
    table: dict[str, dict[str, float]] = {}
    for name, variant in VARIANTS.items():
        row = table[name] = {}
        for shape, (consumers, every) in SHAPES.items():
            row[shape] = statistics.median(measure(variant, args.items, consumers, every) for _ in range(args.runs))
        print(f"{name:<26}" + "".join(f"{row[shape]:>15.2f}" for shape in SHAPES))
    return table


if __name__ == "__main__":
    main()
