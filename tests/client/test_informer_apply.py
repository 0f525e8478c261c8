"""``Informer._apply`` (the per-event dispatch with ``_upsert`` inlined) and ``Informer._deliver``
(the same loop written out for delivery in place) equal ``apply_reference`` (the plain loop,
kept here as the oracle): the same handler calls in the same order, the same store, index and
revision, on random batches of watch events, any number of handlers, with and without an
index."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.apiserver.watcher import WatchEvent
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from emulator.base.runtime.channel import Channel
from tests.builders import pod

Log = list[tuple[Any, ...]]


def informer(handlers: int, log: Log, *, indexed: bool = False) -> Informer:
    # _apply never touches the client; _deliver reads its ``watch_direct`` and the stream's ``pending``
    inf = Informer(cast(Client, SimpleNamespace(watch_direct=True)), "Pod")
    if indexed:
        inf.add_indexers({"by-rv": lambda o: [o.metadata.resource_version[-1:]]})
    for i in range(handlers):
        inf.add_handlers(
            on_add=lambda o, i=i: log.append((i, "add", o.metadata.name, o.metadata.resource_version)),
            on_update=lambda old, new, i=i: log.append(
                (i, "update", new.metadata.name, old.metadata.resource_version, new.metadata.resource_version)
            ),
            on_delete=lambda o, i=i: log.append((i, "delete", o.metadata.name)),
        )
    return inf


def _direct_stream() -> Any:
    """What ``_deliver`` and ``revision`` read of a direct stream: nothing pending, no lazy bookmark."""
    return SimpleNamespace(pending=[], watcher=SimpleNamespace(channel=Channel()))


def apply_reference(inf: Informer, batch: list[WatchEvent]) -> None:
    """The plain version of ``Informer._apply``: ``_upsert`` or ``_deleted`` per event."""
    for ev in batch:
        if ev.type in ("ADDED", "MODIFIED"):
            inf._upsert(ev.object)
        elif ev.type == "DELETED":
            inf._deleted(ev.object)
        inf.revision = ev.revision


@st.composite
def batches(draw: st.DrawFn) -> list[list[WatchEvent]]:
    out: list[list[WatchEvent]] = []
    rev = 0
    for _ in range(draw(st.integers(1, 4))):
        batch: list[WatchEvent] = []
        for _ in range(draw(st.integers(0, 6))):
            rev += 1
            etype = draw(st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]))
            if etype == "BOOKMARK":
                batch.append(WatchEvent("BOOKMARK", None, rev))
                continue
            obj = pod(draw(st.sampled_from(["a", "b", "c"])), resource_version=str(rev))
            batch.append(WatchEvent(etype, obj, rev))
        out.append(batch)
    return out


@settings(max_examples=200, deadline=None)
@given(handlers=st.integers(0, 3), indexed=st.booleans(), stream=batches())
def test_apply_equals_the_reference(handlers: int, indexed: bool, stream: list[list[WatchEvent]]) -> None:
    fast_log: Log = []
    delivered_log: Log = []
    ref_log: Log = []
    fast = informer(handlers, fast_log, indexed=indexed)
    delivered = informer(handlers, delivered_log, indexed=indexed)
    delivered._stream = _direct_stream()
    ref = informer(handlers, ref_log, indexed=indexed)
    for batch in stream:
        fast._apply(batch)
        assert delivered._deliver(batch)
        apply_reference(ref, batch)
        assert fast_log == ref_log == delivered_log
        assert fast.store == ref.store == delivered.store
        assert fast.revision == ref.revision == delivered.revision
        if indexed:
            for value in "0123456789":
                assert fast.index_keys("by-rv", value) == ref.index_keys("by-rv", value)
                assert delivered.index_keys("by-rv", value) == ref.index_keys("by-rv", value)


def test_deliver_declines_where_the_stream_is_not_direct() -> None:
    """``_deliver`` applies nothing (False) with the client's watch delayed or events pending."""
    log: Log = []
    batch = [WatchEvent("ADDED", pod("a", resource_version="1"), 1)]
    inf = informer(1, log)
    inf._stream = _direct_stream()
    inf.client.watch_direct = False
    assert not inf._deliver(batch)
    inf.client.watch_direct = True
    inf._stream = cast(Any, SimpleNamespace(pending=[(1.0, batch[0])], watcher=SimpleNamespace(channel=Channel())))
    assert not inf._deliver(batch)
    inf._stream = None
    assert not inf._deliver(batch)
    assert (log, inf.store, inf.revision) == ([], {}, 0)


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        pytest.param([("ADDED", "a")], [(0, "add", "a", "1")], id="add"),
        pytest.param(
            [("ADDED", "a"), ("MODIFIED", "a")], [(0, "add", "a", "1"), (0, "update", "a", "1", "2")], id="update"
        ),
        pytest.param([("MODIFIED", "a")], [(0, "add", "a", "1")], id="modified-unknown-is-an-add"),
        pytest.param([("ADDED", "a"), ("DELETED", "a")], [(0, "add", "a", "1"), (0, "delete", "a")], id="delete"),
        pytest.param([("DELETED", "a")], [], id="delete-unknown"),
    ],
)
def test_apply_calls_handlers_in_event_order(events: list[tuple[str, str]], expected: Log) -> None:
    log: Log = []
    inf = informer(1, log)
    batch = []
    for rev, (etype, name) in enumerate(events, start=1):
        obj = pod(name, resource_version=str(rev))
        batch.append(WatchEvent(cast(Any, etype), obj, rev))
    inf._apply(batch)
    assert log == expected
    assert inf.revision == len(events)
