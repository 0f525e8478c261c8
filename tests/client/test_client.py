"""The Client: seeded per-call latency in virtual time, watch delivery delay that never
reorders events, stats and the fault-injection interceptor."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest
from msgspec.structs import replace

from emulator.base.api.errors import InternalError, NotFound
from emulator.base.apiserver import ApiServer, ServerSettings
from emulator.base.client.client import Client, Latency
from emulator.base.runtime.channel import ChannelClosed, Overflow
from emulator.base.runtime.clock import LoopClock, run
from tests.builders import pod
from tests.cluster import Cluster


def setup(settings: ServerSettings | None = None) -> tuple[ApiServer, LoopClock]:
    """The shared cluster's server (seed 0, namespace ``default``) and clock; no agents."""
    c = Cluster(settings=settings, namespaces=("default",))
    return c.server, c.clock


# --- Latency (pure) ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("latency", "expected"),
    [
        pytest.param(Latency(), 0.0, id="zero"),
        pytest.param(Latency(0.25), 0.25, id="fixed"),
        pytest.param(Latency(0.25, 0.0), 0.25, id="no-jitter"),
        pytest.param(Latency(0.25, -1.0), 0.25, id="negative-jitter-ignored"),
    ],
)
def test_latency_without_jitter_draws_nothing(latency: Latency, expected: float) -> None:
    rng = random.Random(1)
    state = rng.getstate()
    assert latency.sample(rng) == expected
    assert rng.getstate() == state


def test_latency_with_jitter_is_mean_plus_uniform() -> None:
    rng, twin = random.Random(9), random.Random(9)
    lat = Latency(0.2, 0.05)
    for _ in range(100):
        got = lat.sample(rng)
        assert got == 0.2 + twin.uniform(-0.05, 0.05)
        assert 0.15 <= got <= 0.25


def test_latency_never_negative() -> None:
    rng = random.Random(0)
    samples = [Latency(0.01, 1.0).sample(rng) for _ in range(200)]
    assert min(samples) == 0.0
    assert max(samples) > 0.5


# --- call latency in virtual time ------------------------------------------------------------------


async def _call_durations(seed: int, n: int = 6) -> list[float]:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(seed), name="agent", api_latency=Latency(0.2, 0.1))
    out = []
    for i in range(n):
        t0 = clock.now()
        await client.create(pod(f"p{i}"))
        out.append(clock.now() - t0)
    return out


@pytest.mark.asyncio
async def test_call_completes_after_exactly_the_sampled_latency() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(5), name="agent", api_latency=Latency(0.2, 0.1))
    twin = random.Random(5)
    for i in range(5):
        t0 = clock.now()
        expected = max(0.0, 0.2 + twin.uniform(-0.1, 0.1))
        created = await client.create(pod(f"p{i}"))
        assert clock.now() == t0 + expected
        assert 0.1 <= clock.now() - t0 <= 0.3
        assert created.metadata.resource_version == str(srv.revision)


@pytest.mark.asyncio
async def test_fixed_latency_and_the_write_happens_after_it() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="agent", api_latency=Latency(1.5))
    records = []
    srv.add_write_listener(records.append)
    created = await client.create(pod("a"))
    assert clock.now() == 1.5
    assert records[0].time == 1.5
    assert created.metadata.creation_timestamp == "2026-01-01T00:00:01Z"
    await client.get("Pod", "a")
    assert clock.now() == 3.0


def test_same_seed_same_delays_other_seed_other_delays() -> None:
    first = run(lambda: _call_durations(11))  # each run on a fresh virtual loop from t=0
    assert run(lambda: _call_durations(11)) == first
    assert run(lambda: _call_durations(12)) != first
    assert len(set(first)) == len(first)


@pytest.mark.asyncio
async def test_no_latency_takes_no_time() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="agent")
    await client.create(pod("a"))
    await client.get("Pod", "a")
    assert clock.now() == 0.0


# --- every verb through the client -------------------------------------------------------------------


@pytest.mark.asyncio
async def test_every_verb_reaches_the_server() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="agent", api_latency=Latency(0.1))
    created = await client.create(pod("a"))
    assert await client.get("Pod", "a") == created
    items, rev = await client.list("Pod")
    assert (items, rev) == ([created], srv.revision)
    assert await client.list("Pod", fields={"spec.nodeName": "x"}) == ([], srv.revision)
    assert await client.list("Pod", label_match=lambda labels: "x" in labels) == ([], srv.revision)
    assert await client.list("Pod", namespace="other") == ([], srv.revision)
    updated = await client.update(replace(created, metadata=replace(created.metadata, labels={"x": "1"})))
    assert updated.metadata.labels == {"x": "1"}
    status = await client.update_status(replace(updated, status=replace(updated.status, message="hi")))
    assert status.status.message == "hi"
    bound = await client.bind("default", "a", "node-1", uid=created.metadata.uid)
    assert bound.spec.node_name == "node-1"
    marked = await client.delete("Pod", "a")
    assert marked.metadata.deletion_timestamp is not None
    await client.delete("Pod", "a", grace_period_seconds=0, uid=created.metadata.uid)
    assert srv.list("Pod")[0] == []
    assert client.stats.calls == {
        "create": 1,
        "get": 1,
        "list": 4,
        "update": 1,
        "updateStatus": 1,
        "bind": 1,
        "delete": 2,
    }
    assert client.stats.errors == {}
    assert clock.now() == pytest.approx(1.1)
    assert repr(client) == "<Client 'agent' calls=11>"


@pytest.mark.asyncio
async def test_errors_are_counted_and_raised() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="agent")
    with pytest.raises(NotFound, match=r'^pods "nope" not found$'):
        await client.get("Pod", "nope")
    with pytest.raises(NotFound):
        await client.bind("default", "nope", "node-1")
    assert client.stats.errors == {"get": 1, "bind": 1}
    assert client.stats.calls == {"get": 1, "bind": 1}


@pytest.mark.asyncio
async def test_interceptor_runs_after_latency_and_can_fail_the_call() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="kubelet:n1", api_latency=Latency(0.5))
    seen: list[tuple[float, str, str, str]] = []

    async def interceptor(agent: str, verb: str, kind: str) -> None:
        seen.append((clock.now(), agent, verb, kind))
        if verb == "create":
            await clock.sleep(1.0)
        if verb == "delete":
            raise InternalError("injected")

    client.interceptor = interceptor
    await client.create(pod("a"))
    assert clock.now() == 1.5
    rev = srv.revision
    with pytest.raises(InternalError, match=r"^injected$"):
        await client.delete("Pod", "a")
    assert srv.revision == rev
    assert srv.get("Pod", "a").metadata.deletion_timestamp is None
    assert seen == [(0.5, "kubelet:n1", "create", "Pod"), (2.0, "kubelet:n1", "delete", "Pod")]
    assert client.stats.errors == {"delete": 1}


# --- watch delivery delay ----------------------------------------------------------------------------


async def _run_watch(
    latency: Latency, write_times: list[float], seed: int = 0
) -> tuple[list[tuple[float, int, float]], LoopClock]:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(seed), name="watcher", watch_latency=latency)
    stream = client.watch("Pod")
    deliveries: list[tuple[float, int, float]] = []

    async def writer() -> None:
        for i, t in enumerate(write_times):
            await clock.sleep_until(t)
            srv.create(pod(f"p{i}"))

    async def reader() -> None:
        while len(deliveries) < len(write_times):
            for ev in await stream.next_batch():
                deliveries.append((clock.now(), ev.revision, ev.time))

    async with asyncio.TaskGroup() as tg:
        tg.create_task(writer(), name="writer")
        tg.create_task(reader(), name="reader")
    stream.close()
    assert srv.watchers() == []
    return deliveries, clock


@pytest.mark.asyncio
async def test_events_arrive_at_write_time_plus_delay() -> None:
    times = [1.0, 1.0, 2.5, 7.0]
    deliveries, _ = await _run_watch(Latency(0.25), times)
    assert [d[0] for d in deliveries] == [t + 0.25 for t in times]
    assert [d[2] for d in deliveries] == times
    assert [d[1] for d in deliveries] == [2, 3, 4, 5]


@pytest.mark.asyncio
async def test_without_delay_events_arrive_at_write_time() -> None:
    times = [0.5, 3.0, 3.0]
    deliveries, _ = await _run_watch(Latency(), times)
    assert [d[0] for d in deliveries] == times


@pytest.mark.asyncio
async def test_jitter_never_inverts_the_order() -> None:
    seed, mean, jitter = 4, 0.5, 0.4
    times = [0.05 * i for i in range(1, 41)]
    deliveries, _ = await _run_watch(Latency(mean, jitter), times, seed=seed)
    twin = random.Random(seed)
    raw = [t + max(0.0, mean + twin.uniform(-jitter, jitter)) for t in times]
    assert raw != sorted(raw)  # jitter alone would deliver some events before earlier ones
    assert [d[0] for d in deliveries] == list(itertools.accumulate(raw, max))
    assert [d[1] for d in deliveries] == list(range(2, 2 + len(times)))
    assert all(d[0] >= d[2] + mean - jitter for d in deliveries)


@pytest.mark.asyncio
async def test_delayed_stream_delivers_pending_events_before_overflow() -> None:
    srv, clock = setup(ServerSettings(watch_buffer=2))
    client = Client(srv, clock, random.Random(0), name="w", watch_latency=Latency(1.0))
    stream = client.watch("Pod")
    for name in "abc":
        srv.create(pod(name))
    assert [e.revision for e in await stream.next_batch()] == [2, 3]
    assert clock.now() == 1.0
    with pytest.raises(Overflow):
        await stream.next_batch()


@pytest.mark.asyncio
async def test_closed_stream_raises_channel_closed() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="w", watch_latency=Latency(0.5))
    stream = client.watch("Pod", fields={"spec.nodeName": "n1"}, allow_bookmarks=True)
    assert stream.watcher.name == "w"
    assert stream.watcher.fields == {"spec.nodeName": "n1"}
    stream.close()
    assert srv.watchers() == []
    with pytest.raises(ChannelClosed):
        await stream.next_batch()


@pytest.mark.asyncio
async def test_watch_from_revision_through_the_client() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="w")
    srv.create(pod("a"))
    stream = client.watch("Pod", resource_version=1)
    assert [(e.type, e.revision) for e in await stream.next_batch()] == [("ADDED", 2)]
