"""The Informer: list → watch, handlers in event order, relist on Overflow (reconciling
what was missed), resume after a cut stream without relisting, relist on Gone, ``synced``."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.core import Binding, Namespace, Pod
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer, ServerSettings
from emulator.base.client.client import Client, Latency
from emulator.base.client.informer import Informer
from emulator.base.runtime.clock import LoopClock
from tests.builders import pod
from tests.cluster import Cluster

Log = list[tuple[Any, ...]]


def setup(**settings: Any) -> tuple[ApiServer, LoopClock]:
    """The shared cluster's server (seed 0, namespace ``default``) and clock; no agents."""
    c = Cluster(settings=ServerSettings(**settings), namespaces=("default",))
    return c.server, c.clock


def relabel(srv: ApiServer, name: str, **labels: str) -> Pod:
    cur = srv.get("Pod", name)
    return srv.update(replace(cur, metadata=replace(cur.metadata, labels=labels)))


def bind(srv: ApiServer, name: str, node: str) -> Pod:
    return srv.bind(
        Binding(metadata=ObjectMeta(name=name, namespace="default"), target=ObjectReference(kind="Node", name=node))
    )


def logging_informer(client: Client, kind: str = "Pod", **kwargs: Any) -> tuple[Informer, Log]:
    inf = Informer(client, kind, **kwargs)
    log: Log = []
    inf.add_handlers(
        on_add=lambda o: log.append(("add", o.metadata.name, o.metadata.resource_version)),
        on_update=lambda old, new: log.append(
            ("update", new.metadata.name, old.metadata.resource_version, new.metadata.resource_version)
        ),
        on_delete=lambda o: log.append(("delete", o.metadata.name)),
    )
    return inf, log


@asynccontextmanager
async def running(inf: Informer) -> AsyncIterator[None]:
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(inf.run(), name=f"informer:{inf.kind}")
        await inf.synced.wait()
        try:
            yield
        finally:
            task.cancel()


async def settle(clock: LoopClock) -> None:
    """Let every task run until all wait (virtual time then jumps by one second)."""
    await clock.sleep(1.0)


def store_view(inf: Informer) -> dict[tuple[str, str], str]:
    return {k: o.metadata.resource_version for k, o in inf.store.items()}


def server_view(srv: ApiServer, **kwargs: Any) -> dict[tuple[str, str], str]:
    return {(o.metadata.namespace, o.metadata.name): o.metadata.resource_version for o in srv.list("Pod", **kwargs)[0]}


# --- list then watch ----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_lists_then_watches_from_the_listed_revision() -> None:
    srv, clock = setup()
    for n in "ba":
        srv.create(pod(n))  # revs 2, 3
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    assert not inf.synced.is_set()
    async with running(inf):
        assert inf.synced.is_set()
        assert log == [("add", "a", "3"), ("add", "b", "2")]  # list order: (namespace, name)
        assert inf.revision == 3
        (w,) = srv.watchers()
        assert (w.name, w.kind, w.allow_bookmarks) == ("sched", "Pod", True)
        assert store_view(inf) == server_view(srv)
        assert inf.get("a", "default") == srv.get("Pod", "a")
        assert [o.metadata.name for o in inf.objects()] == ["a", "b"]
    assert srv.watchers() == []  # cancellation closed the stream


@pytest.mark.asyncio
async def test_handlers_run_in_event_order() -> None:
    srv, clock = setup()
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    async with running(inf):
        srv.create(pod("a"))  # 2
        relabel(srv, "a", x="1")  # 3
        srv.create(pod("b"))  # 4
        srv.delete("Pod", "a")  # 5 (unbound: removed)
        relabel(srv, "b", x="2")  # 6
        await settle(clock)
        assert log == [
            ("add", "a", "2"),
            ("update", "a", "2", "3"),
            ("add", "b", "4"),
            ("delete", "a"),
            ("update", "b", "4", "6"),
        ]
        assert inf.revision == 6
        assert store_view(inf) == server_view(srv)
        assert inf.relists == 0


@pytest.mark.asyncio
async def test_every_handler_is_called() -> None:
    srv, clock = setup()
    inf = Informer(Client(srv, clock, random.Random(0), name="x"), "Pod")
    first: list[str] = []
    second: list[str] = []
    inf.add_handlers(on_add=lambda o: first.append(o.metadata.name))
    inf.add_handlers(on_add=lambda o: second.append(o.metadata.name), on_delete=lambda o: second.append("-"))
    async with running(inf):
        srv.create(pod("a"))
        srv.delete("Pod", "a")
        await settle(clock)
    assert first == ["a"]
    assert second == ["a", "-"]


@pytest.mark.asyncio
async def test_filtered_informer_sees_selector_transitions() -> None:
    srv, clock = setup()
    inf, log = logging_informer(
        Client(srv, clock, random.Random(0), name="kubelet:node-1"), fields={"spec.nodeName": "node-1"}
    )
    unassigned, ulog = logging_informer(
        Client(srv, clock, random.Random(0), name="sched"), fields={"spec.nodeName": ""}
    )
    async with running(inf), running(unassigned):
        srv.create(pod("a"))  # 2
        bind(srv, "a", "node-1")  # 3
        srv.delete("Pod", "a", grace_period_seconds=0)  # 4
        await settle(clock)
    assert log == [("add", "a", "3"), ("delete", "a")]
    assert ulog == [("add", "a", "2"), ("delete", "a")]


@pytest.mark.asyncio
async def test_bookmark_advances_the_revision() -> None:
    srv, clock = setup()
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    async with running(inf):
        srv.create(Namespace(metadata=ObjectMeta(name="other")))  # 2: not a pod
        await settle(clock)
        assert inf.revision == 1  # the namespace write is not a pod event
        srv.bookmark()
        await settle(clock)
        assert inf.revision == 2
        assert log == []


@pytest.mark.asyncio
async def test_watch_delay_applies_to_handlers() -> None:
    srv, clock = setup()
    client = Client(srv, clock, random.Random(0), name="sched", watch_latency=Latency(0.5))
    inf = Informer(client, "Pod")
    seen: list[tuple[float, str]] = []
    inf.add_handlers(on_add=lambda o: seen.append((clock.now(), o.metadata.name)))
    async with running(inf):
        await clock.sleep_until(2.0)
        srv.create(pod("a"))
        await clock.sleep_until(10.0)
    assert seen == [(2.5, "a")]


@pytest.mark.asyncio
async def test_list_latency_delays_synced() -> None:
    srv, clock = setup()
    srv.create(pod("a"))
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched", api_latency=Latency(0.75)))
    async with running(inf):
        assert clock.now() == 0.75
        assert log == [("add", "a", "2")]


# --- relist, resume -----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_overflow_relists_and_reconciles_what_was_missed(monkeypatch: pytest.MonkeyPatch) -> None:
    # a burst queued while the informer's task has not run: a wake-up per batch (delivered in
    # place, each write is applied at once and nothing queues; test_informer_in_place.py has
    # the overflow of writes queued while a drain runs)
    monkeypatch.setattr(Informer, "deliver_in_place", False)
    srv, clock = setup(watch_buffer=2)
    for n in "abcu":
        srv.create(pod(n))  # revs 2..5; "u" stays untouched
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    async with running(inf):
        log.clear()
        # Synchronous burst: more than the buffer before the informer can run.
        relabel(srv, "b", x="1")  # 6: queued
        relabel(srv, "a", x="1")  # 7: queued
        srv.delete("Pod", "c")  # 8: overflow, missed
        srv.create(pod("d"))  # 9: missed
        relabel(srv, "a", x="2")  # 10: missed
        await settle(clock)
        assert inf.relists == 1
        assert log == [
            ("update", "b", "3", "6"),  # the two queued events are still delivered
            ("update", "a", "2", "7"),
            ("delete", "c"),  # relist: deletes for vanished objects first
            ("update", "a", "7", "10"),  # then updates for changed ones and adds for new ones
            ("add", "d", "9"),
        ]
        assert store_view(inf) == server_view(srv)
        assert inf.revision == 10
        assert len(srv.watchers()) == 1
        # The informer keeps working after the relist.
        srv.create(pod("e"))
        await settle(clock)
        assert log[-1] == ("add", "e", "11")


@pytest.mark.asyncio
async def test_cut_stream_resumes_from_the_last_revision_without_relisting() -> None:
    srv, clock = setup()
    srv.create(pod("a"))
    client = Client(srv, clock, random.Random(0), name="sched")
    inf, log = logging_informer(client)
    async with running(inf):
        srv.create(pod("b"))  # 3: delivered before the cut
        await settle(clock)
        old = srv.watchers()
        log.clear()
        inf.cut()
        relabel(srv, "a", x="1")  # 4: written while no stream is open
        srv.create(pod("c"))  # 5
        await settle(clock)
        assert inf.relists == 0
        assert client.stats.calls == {"list": 1}
        assert log == [("update", "a", "2", "4"), ("add", "c", "5")]  # replayed once, nothing twice
        assert inf.revision == 5
        (w,) = srv.watchers()
        assert w not in old
        srv.delete("Pod", "b")
        await settle(clock)
        assert log[-1] == ("delete", "b")


@pytest.mark.asyncio
async def test_gone_on_resume_relists() -> None:
    srv, clock = setup(history_size=3)
    for n in "ab":
        srv.create(pod(n))  # 2, 3
    client = Client(srv, clock, random.Random(0), name="sched")
    inf, log = logging_informer(client)
    async with running(inf):
        log.clear()
        inf.cut()
        srv.delete("Pod", "a")  # 4
        for n in "cdef":
            srv.create(pod(n))  # 5..8: the history now starts at 6
        await settle(clock)
        assert inf.relists == 1
        assert client.stats.calls == {"list": 2}
        assert log == [("delete", "a"), ("add", "c", "5"), ("add", "d", "6"), ("add", "e", "7"), ("add", "f", "8")]
        assert store_view(inf) == server_view(srv)
        assert inf.revision == 8
        assert len(srv.watchers()) == 1


@pytest.mark.asyncio
async def test_cut_before_run_is_harmless() -> None:
    srv, clock = setup()
    inf, _ = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    inf.cut()
    async with running(inf):
        assert len(srv.watchers()) == 1


@pytest.mark.asyncio
async def test_repr() -> None:
    srv, clock = setup()
    srv.create(pod("a"))
    inf, _ = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    async with running(inf):
        assert repr(inf) == "<Informer sched/Pod objects=1 rev=2 relists=0>"


@pytest.mark.asyncio
async def test_api_errors_on_list_are_retried_with_backoff_not_fatal() -> None:
    import random as _random

    from emulator.base.api.core import Namespace as _Namespace
    from emulator.base.api.errors import InternalError
    from emulator.base.api.meta import ObjectMeta as _ObjectMeta
    from emulator.base.apiserver import ApiServer as _ApiServer
    from emulator.base.client import Client as _Client
    from emulator.base.client import Informer as _Informer
    from emulator.base.runtime.clock import LoopClock

    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    srv = _ApiServer(clock, _random.Random(0))
    srv.create(_Namespace(metadata=_ObjectMeta(name="default")))
    client = _Client(srv, clock, _random.Random(1), name="t")
    failures = [0]

    async def flaky(agent: str, verb: str, kind: str) -> None:
        if verb == "list" and failures[0] < 3:
            failures[0] += 1
            raise InternalError("injected")

    client.interceptor = flaky
    inf = _Informer(client, "Namespace")
    task = asyncio.get_running_loop().create_task(inf.run(), name="test:informer")
    await inf.synced.wait()
    assert clock.now() == pytest.approx(0.8 + 1.6 + 3.2)
    assert inf.errors == 3
    assert list(inf.store) == [("", "default")]
    task.cancel()
    await asyncio.wait([task])


@pytest.mark.asyncio
async def test_a_bookmark_waits_lazily_and_a_cut_resumes_from_it() -> None:
    """An informer is not woken for a BOOKMARK alone (``Channel.put_lazy``), yet its revision
    counts it at once, and a stream cut hands it over first: the re-watch starts from it."""
    srv, clock = setup()
    inf, log = logging_informer(Client(srv, clock, random.Random(0), name="sched"))
    async with running(inf):
        srv.create(Namespace(metadata=ObjectMeta(name="other")))  # 2: not a pod
        await settle(clock)
        srv.bookmark()
        await settle(clock)
        assert inf._stream is not None
        assert inf._stream.watcher.channel.lazy is not None
        assert inf.revision == 2
        inf.cut()
        await settle(clock)
        assert inf._revision == 2
        assert inf.relists == 0
        assert log == []
