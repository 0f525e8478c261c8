"""The legacy recorder's aggregation cache is an LRU of ``LRU_CACHE_ENTRIES`` keys, as
upstream's ``EventCorrelator``: a long run with many distinct Events keeps 4,096 keys, and an
Event whose key was forgotten is written as a new object."""

from __future__ import annotations

import asyncio
import random

import pytest

from emulator.base.api.core import Event, Namespace
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client
from emulator.base.client.events import LRU_CACHE_ENTRIES, EventRecorder
from emulator.base.runtime.clock import LoopClock

POD = ObjectReference(api_version="v1", kind="Pod", namespace="default", name="web-0", uid="uid-1")


@pytest.mark.parametrize(
    ("script", "a_events", "a_count"),
    [
        # "a" then N others: "a" is the least recently used and forgotten; its repeat is new.
        pytest.param(["a", ("others", LRU_CACHE_ENTRIES), "a"], 2, 1, id="forgotten-repeat-is-new"),
        # One other fewer: "a" is still remembered; its repeat bumps the count.
        pytest.param(["a", ("others", LRU_CACHE_ENTRIES - 1), "a"], 1, 2, id="remembered-repeat-counts"),
        # A repeat makes "a" the most recently used: the next new key evicts another one.
        pytest.param(
            ["a", ("others", LRU_CACHE_ENTRIES - 1), "a", ("others", 1), "a"], 1, 3, id="a-repeat-refreshes-a"
        ),
    ],
)
@pytest.mark.asyncio
async def test_aggregation_forgets_the_least_recently_used(
    script: list[str | tuple[str, int]], a_events: int, a_count: int
) -> None:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    srv = ApiServer(clock, random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    client = Client(srv, clock, random.Random(1), name="agent")
    recorder = EventRecorder(client, clock, "c", naming="random", rng=random.Random(0), aggregate=True)
    others = 0
    for step in script:
        if isinstance(step, tuple):
            for _ in range(step[1]):
                others += 1
                await recorder.event(POD, "Normal", "Other", f"other {others}")
        else:
            await recorder.event(POD, "Normal", "Tested", step)
    a: list[Event] = [e for e in srv.list("Event")[0] if e.message == "a"]
    assert len(a) == a_events
    assert max(e.count for e in a) == a_count
    assert len(recorder._seen) <= LRU_CACHE_ENTRIES
