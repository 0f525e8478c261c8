"""``EventRecorder(mode="series")``: upstream's events/v1 recorder (``tools/events``) — one
Event, then a series written on the second occurrence only, refreshed every 30 minutes, finished
after 6 idle minutes; the isomorphic key leaves out the note."""

from __future__ import annotations

import asyncio
import random

import pytest

from emulator.base.api.core import Event, EventSeries, Namespace
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client
from emulator.base.client.events import FINISH_TIME, REFRESH_TIME, EventRecorder, micro_time
from emulator.base.runtime.clock import LoopClock

POD = ObjectReference(api_version="v1", kind="Pod", namespace="default", name="web-0", uid="uid-1")


def setup() -> tuple[ApiServer, EventRecorder, LoopClock, list[str]]:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    srv = ApiServer(clock, random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    writes: list[str] = []
    srv.add_write_listener(lambda rec: writes.append(rec.verb) if rec.kind == "Event" else None)
    client = Client(srv, clock, random.Random(1), name="default-scheduler")
    rec = EventRecorder(
        client, clock, "default-scheduler", legacy_source=False, naming="random", rng=random.Random(3), mode="series"
    )
    return srv, rec, clock, writes


def events(srv: ApiServer) -> list[Event]:
    items: list[Event] = srv.list("Event")[0]
    return sorted(items, key=lambda e: e.event_time or "")


async def fail(rec: EventRecorder, message: str = "0/3 nodes are available") -> None:
    await rec.event(POD, "Warning", "FailedScheduling", message, action="Scheduling")


@pytest.mark.parametrize(
    ("t", "want"),
    [
        pytest.param(0.0, "2026-01-01T00:00:00.000000Z", id="whole-second"),
        pytest.param(7.25, "2026-01-01T00:00:07.250000Z", id="fraction"),
        pytest.param(59.9999999, "2026-01-01T00:00:59.999999Z", id="rounding-stays-in-the-second"),
    ],
)
def test_micro_time(t: float, want: str) -> None:
    assert micro_time(t) == want


@pytest.mark.asyncio
async def test_one_event_then_a_series_written_once() -> None:
    srv, rec, clock, writes = setup()
    await fail(rec)
    [first] = events(srv)
    assert (first.series, first.event_time, first.action) == (None, "2026-01-01T00:00:00.000000Z", "Scheduling")
    assert (first.first_timestamp, first.last_timestamp) == (None, None)
    assert (first.reporting_component, first.source.component) == ("default-scheduler", "")
    await clock.sleep(10)
    await fail(rec, "0/4 nodes are available")  # same isomorphic key: the note is not part of it
    await clock.sleep(10)
    await fail(rec)
    await fail(rec)
    [ev] = events(srv)
    assert ev.series == EventSeries(count=2, last_observed_time="2026-01-01T00:00:10.000000Z")
    assert ev.message == "0/3 nodes are available", "a series keeps its first note"
    assert writes == ["create", "update"], "the third and fourth occurrences are only counted"
    assert (rec.recorded, rec.repeats) == (1, 3)


@pytest.mark.parametrize(
    ("other", "separate"),
    [
        pytest.param({"type_": "Normal"}, True, id="type"),
        pytest.param({"action": "Binding"}, True, id="action"),
        pytest.param({"reason": "Scheduled"}, True, id="reason"),
        pytest.param(
            {
                "involved": ObjectReference(
                    kind="Pod", namespace="default", name="web-0", uid="uid-1", resource_version="7"
                )
            },
            True,
            id="regarding-resource-version",
        ),
        pytest.param({"message": "other"}, False, id="note"),
    ],
)
@pytest.mark.asyncio
async def test_isomorphic_key(other: dict[str, object], separate: bool) -> None:
    srv, rec, _, _ = setup()
    await fail(rec)
    args: dict[str, object] = {
        "involved": POD,
        "type_": "Warning",
        "reason": "FailedScheduling",
        "message": "m",
        "action": "Scheduling",
    }
    args.update(other)
    await rec.event(args.pop("involved"), *(args.pop(k) for k in ("type_", "reason", "message")), **args)  # type: ignore[arg-type]
    assert len(events(srv)) == (2 if separate else 1)


@pytest.mark.asyncio
async def test_refresh_writes_the_count_every_30_minutes_and_finish_ends_idle_series() -> None:
    srv, rec, clock, writes = setup()
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(rec.run(), name="event-series")
        await fail(rec)
        # Busy until just past the first refresh (30 min): one occurrence every 5 minutes.
        while clock.now() < REFRESH_TIME + 60:
            await clock.sleep(300)
            await fail(rec)
        [ev] = events(srv)
        assert ev.series is not None
        refreshed = ev.series.count
        assert 2 < refreshed < rec.repeats + 1, "the refresh wrote the count as it was at 30 min"
        # Quiet now: the 6-minute finish pass writes the final count and forgets the series.
        await clock.sleep(2 * FINISH_TIME)
        [ev] = events(srv)
        assert ev.series is not None
        assert ev.series.count == rec.repeats + 1
        n = len(writes)
        await fail(rec)
        assert len(events(srv)) == 2, "after the series ended the next occurrence is a new Event"
        assert writes[n:] == ["create"]
        task.cancel()


@pytest.mark.asyncio
async def test_an_old_singleton_is_forgotten() -> None:
    srv, rec, clock, _ = setup()
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(rec.run(), name="event-series")
        await fail(rec)
        await clock.sleep(2 * FINISH_TIME + 1)
        await fail(rec)
        assert [e.series for e in events(srv)] == [None, None]
        task.cancel()


@pytest.mark.asyncio
async def test_a_series_whose_event_is_gone_is_created_again() -> None:
    srv, rec, clock, writes = setup()
    await fail(rec)
    [first] = events(srv)
    srv.delete("Event", first.metadata.name, "default")  # as the event TTL would
    await clock.sleep(5)
    await fail(rec)
    [ev] = events(srv)
    assert (ev.metadata.name, ev.series) == (
        first.metadata.name,
        EventSeries(count=2, last_observed_time="2026-01-01T00:00:05.000000Z"),
    )
    assert writes[-1] == "create"
