"""The client's token bucket (client-go's QPS/burst) on virtual time, and ``Client.patch_status``."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.client.client import Client
from emulator.base.client.ratelimit import TokenBucket
from emulator.base.runtime.clock import LoopClock, run
from tests.builders import pod
from tests.cluster import Cluster


class FakeClock:
    virtual = True

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += seconds


@pytest.mark.parametrize(
    ("qps", "burst", "requests", "want"),
    [
        pytest.param(10.0, 3, 5, [0, 0, 0, 0.1, 0.2], id="burst-then-one-every-1/qps"),
        pytest.param(100.0, 100, 3, [0, 0, 0], id="within-burst"),
        pytest.param(2.0, 1, 3, [0, 0.5, 1.0], id="burst-1"),
    ],
)
def test_requests_at_once_wait_in_order(qps: float, burst: int, requests: int, want: list[float]) -> None:
    bucket = TokenBucket(qps, burst, FakeClock())
    assert [pytest.approx(bucket.reserve()) for _ in range(requests)] == want


def test_the_bucket_refills_at_qps_up_to_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(10.0, 2, clock)
    assert [bucket.reserve(), bucket.reserve()] == [0, 0]
    clock.t = 100.0  # long idle: only ``burst`` tokens banked, not 1,000
    assert [bucket.reserve(), bucket.reserve()] == [0, 0]
    assert bucket.reserve() == pytest.approx(0.1)


@pytest.mark.parametrize(("qps", "burst"), [(0.0, 1), (-1.0, 1), (5.0, 0)])
def test_a_bucket_needs_a_rate_and_a_burst(qps: float, burst: int) -> None:
    with pytest.raises(ValueError, match="qps > 0 and burst >= 1"):
        TokenBucket(qps, burst, FakeClock())


@given(
    qps=st.floats(min_value=0.5, max_value=1000),
    burst=st.integers(min_value=1, max_value=50),
    n=st.integers(min_value=1, max_value=200),
)
def test_no_window_gets_more_than_burst_plus_rate(qps: float, burst: int, n: int) -> None:
    """Requests arriving together leave at times t_i with #{t_i <= T} <= burst + qps*T."""
    bucket = TokenBucket(qps, burst, FakeClock())
    times = [bucket.reserve() for _ in range(n)]
    assert times == sorted(times)
    for i, t in enumerate(times):
        assert i + 1 <= burst + qps * t + 1e-6


def test_a_limited_client_spaces_its_requests_on_the_clock() -> None:
    async def body() -> list[float]:
        c = Cluster(namespaces=("default",))
        client = Client(c.server, c.clock, random.Random(0), name="agent")
        client.rate_limiter = TokenBucket(4.0, 2, c.clock)
        client.event_rate_limiter = TokenBucket(4.0, 2, c.clock)
        done: list[float] = []

        async def create(i: int) -> None:
            await client.create(pod(f"p{i}"))
            done.append(c.clock.now())

        async with asyncio.TaskGroup() as tg:
            for i in range(5):
                tg.create_task(create(i), name=f"create-{i}")
        return done

    assert run(body) == pytest.approx([0, 0, 0.25, 0.5, 0.75])


@pytest.mark.asyncio
async def test_patch_status_applies_to_the_object_as_the_server_holds_it() -> None:
    c = Cluster(namespaces=("default",))
    client = Client(c.server, c.clock, random.Random(0), name="agent")
    created = await client.create(pod("a"))
    c.server.update(replace(created, metadata=replace(created.metadata, labels={"x": "1"})))  # client's copy stale
    seen = []

    def mutate(current):  # type: ignore[no-untyped-def]
        seen.append(current.metadata.labels)
        return replace(current, status=replace(current.status, nominated_node_name="n1"))

    got = await client.patch_status("Pod", "a", "default", mutate)  # no Conflict: no precondition
    assert seen == [{"x": "1"}]
    assert got.status.nominated_node_name == "n1"
    assert c.server.get("Pod", "a", "default").status.nominated_node_name == "n1"
    rv = c.server.get("Pod", "a", "default").metadata.resource_version
    assert (await client.patch_status("Pod", "a", "default", lambda cur: None)).metadata.resource_version == rv
    assert await client.patch_status("Pod", "gone", "default", mutate) is None
    assert client.stats.calls["patch"] == 3
    assert isinstance(c.clock, LoopClock)
