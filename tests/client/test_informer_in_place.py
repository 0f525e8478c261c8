"""Informers handed their events in place (``Informer.deliver_in_place``, ``WatchHub.settle``):
on a direct stream the writer's call returns with the handlers run, in revision order, never
re-entered; with watch latency or watch faults the informer's task is woken as before; a
handler's exception surfaces from the informer's task, not the writer; overflow and a cut
during an apply in place end the stream as a woken informer's would; every case ends with the
informer's store equal to the server's."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest

from emulator.base.client.client import Client, Latency
from emulator.base.client.informer import Informer
from tests.builders import pod
from tests.client.test_informer import logging_informer, relabel, running, server_view, settle, setup, store_view


class _Delay:
    """Watch faults: every event 0.25 s late (``WatchFaults``)."""

    def watch_delay(self, agent: str, kind: str, t: float) -> tuple[float, bool]:
        return 0.25, False


def _direct(client: Client) -> None:
    pass


def _latency(client: Client) -> None:
    client.watch_latency = Latency(0.25)


def _faults(client: Client) -> None:
    client.watch_faults = _Delay()


@pytest.mark.parametrize(
    ("configure", "in_place", "applied_at"),
    [
        pytest.param(_direct, True, 1.0, id="direct"),
        pytest.param(_latency, False, 1.25, id="watch-latency"),
        pytest.param(_faults, False, 1.25, id="watch-faults"),
    ],
)
@pytest.mark.asyncio
async def test_where_events_are_applied(configure: Callable[[Client], None], in_place: bool, applied_at: float) -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="sched")
    configure(client)
    inf, log = logging_informer(client)
    async with running(inf):
        await clock.sleep_until(1.0)
        srv.create(pod("a"))
        srv.create(pod("b"))
        # in place: applied before the writer's call returned; else only once woken
        assert (log == [("add", "a", "2"), ("add", "b", "3")]) is in_place
        assert (log == []) is not in_place
        seen = clock.now() if in_place else None
        await settle(clock)
        assert log == [("add", "a", "2"), ("add", "b", "3")]
        assert store_view(inf) == server_view(srv)
    if in_place:
        assert seen == applied_at
    assert inf.revision == 3


@pytest.mark.asyncio
async def test_the_oracle_wakes_for_every_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Informer, "deliver_in_place", False)
    srv, clock = setup()
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    async with running(inf):
        srv.create(pod("a"))
        assert log == []  # queued, the task woken
        await asyncio.sleep(0)
        assert log == [("add", "a", "2")]


@pytest.mark.asyncio
async def test_a_handler_that_writes_is_not_reentered_and_events_stay_in_revision_order() -> None:
    srv, clock = setup()
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    depth = [0]
    deepest = [0]

    def on_add(obj: Any) -> None:
        depth[0] += 1
        deepest[0] = max(deepest[0], depth[0])
        if obj.metadata.name == "a":
            srv.create(pod("b"))  # published while this informer applies: queued, applied after
            relabel(srv, "a", x="1")
            assert ("add", "b", "3") not in log
        depth[0] -= 1

    inf.add_handlers(on_add=on_add)
    async with running(inf):
        srv.create(pod("a"))
        # all three applied before the first write's call returned, in revision order
        assert log == [("add", "a", "2"), ("add", "b", "3"), ("update", "a", "2", "4")]
        assert deepest == [1]
        await settle(clock)
        assert store_view(inf) == server_view(srv)
        assert inf.revision == 4


@pytest.mark.asyncio
async def test_two_informers_each_get_the_other_ones_writes_in_order() -> None:
    srv, clock = setup()
    first, log1 = logging_informer(Client(srv, clock, random.Random(0), name="a"))
    second, log2 = logging_informer(Client(srv, clock, random.Random(0), name="b"))
    second.add_handlers(on_add=lambda o: o.metadata.name == "x" and srv.create(pod("y")) and None)
    async with running(first), running(second):
        srv.create(pod("x"))
        # the second informer's handler wrote y while the first still had x to apply
        assert log1 == [("add", "x", "2"), ("add", "y", "3")]
        assert log2 == [("add", "x", "2"), ("add", "y", "3")]


@pytest.mark.asyncio
async def test_a_raising_handler_does_not_raise_into_the_writer_but_from_the_informer() -> None:
    srv, clock = setup()
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))

    def on_add(obj: Any) -> None:
        if obj.metadata.name == "bad":
            raise ValueError("handler failed")

    inf.add_handlers(on_add=on_add)
    task = asyncio.create_task(inf.run(), name="informer:Pod")
    await inf.synced.wait()
    written = srv.create(pod("bad"))  # the writer is not disturbed
    assert written.metadata.name == "bad"
    srv.create(pod("after"))  # the stream is closed: not applied
    assert not task.done()
    with pytest.raises(ValueError, match="handler failed") as raised:
        await task
    assert any(frame.name == "on_add" for frame in raised.traceback)
    assert log == [("add", "bad", "2")]  # the logging handler ran first; nothing after
    assert srv.watchers() == []


@pytest.mark.asyncio
async def test_a_handler_raising_a_base_exception_is_raised_from_the_informer_once() -> None:
    # a CancelledError (a cancelled future's result read in a handler): not into the writer,
    # the batch not put back and applied again, raised from the informer's own task
    srv, clock = setup()
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    cancelled = asyncio.get_running_loop().create_future()
    cancelled.cancel()
    calls: list[str] = []

    def on_add(obj: Any) -> None:
        calls.append(obj.metadata.name)
        if obj.metadata.name == "bad":
            cancelled.result()

    inf.add_handlers(on_add=on_add)
    task = asyncio.create_task(inf.run(), name="informer:Pod")
    await inf.synced.wait()
    written = srv.create(pod("bad"))  # the writer is not disturbed
    assert written.metadata.name == "bad"
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert calls == ["bad"]  # applied once
    assert log == [("add", "bad", "2")]
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert calls == ["bad"]
    assert srv.watchers() == []


@pytest.mark.asyncio
async def test_overflow_of_writes_queued_while_applying_relists() -> None:
    srv, clock = setup(watch_buffer=2)
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))

    def on_add(obj: Any) -> None:
        if obj.metadata.name == "a":
            for name in "bcde":  # queued behind a, the third overflows the buffer of 2
                srv.create(pod(name))

    inf.add_handlers(on_add=on_add)
    async with running(inf):
        srv.create(pod("a"))
        await settle(clock)
        assert inf.relists == 1
        assert log == [
            ("add", "a", "2"),
            ("add", "b", "3"),  # the two queued before the overflow are applied
            ("add", "c", "4"),
            ("add", "d", "5"),  # then the relist adds what was missed
            ("add", "e", "6"),
        ]
        assert store_view(inf) == server_view(srv)


@pytest.mark.asyncio
async def test_a_cut_while_applying_resumes_from_the_last_revision() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="sched")
    inf, log = logging_informer(client)

    def on_add(obj: Any) -> None:
        if obj.metadata.name == "a":
            srv.create(pod("b"))  # queued behind a
            inf.cut()  # the stream ends: b is still applied, then the informer re-watches

    inf.add_handlers(on_add=on_add)
    async with running(inf):
        srv.create(pod("a"))
        srv.create(pod("c"))  # written while no stream is open: replayed by the new watch
        await settle(clock)
        assert inf.relists == 0
        assert client.stats.calls == {"list": 1}
        assert log == [("add", "a", "2"), ("add", "b", "3"), ("add", "c", "4")]
        assert store_view(inf) == server_view(srv)
        relabel(srv, "c", x="1")
        assert log[-1] == ("update", "c", "4", "5")  # the new stream is delivered in place


@pytest.mark.parametrize("name", ["preemption.yaml", "kubelet-basics.yaml"])
def test_a_scenario_delivered_in_place_is_the_same_twice(name: str) -> None:
    from pathlib import Path

    from emulator.app.scenario.loader import load_scenario
    from emulator.app.scenario.runner import run_scenario

    scenario = Path(__file__).resolve().parents[2] / "scenarios" / name
    first, second = (run_scenario(load_scenario(scenario)) for _ in range(2))
    assert first.trace_hash == second.trace_hash
    assert (first.pods, first.events) == (second.pods, second.events)


@pytest.mark.asyncio
async def test_handlers_run_once_the_write_is_complete_so_a_handlers_write_is_recorded_after_it() -> None:
    srv, clock = setup()
    recorded: list[int] = []
    srv.add_write_listener(lambda rec: recorded.append(rec.revision))
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    inf.add_handlers(on_add=lambda o: o.metadata.name == "a" and srv.create(pod("b")) and None)
    async with running(inf):
        recorded.clear()
        srv.create(pod("a"))
        assert recorded == [2, 3]  # the write's listeners (the trace) ran before the handler's write
        assert log == [("add", "a", "2"), ("add", "b", "3")]
