"""``Informer._apply`` (the per-event dispatch with ``_upsert`` inlined) equals
``apply_reference`` (the plain loop, kept here as the oracle): the same handler calls in the
same order, the same store and revision, on random batches of watch events and any number of
handlers."""

from __future__ import annotations

from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.apiserver.watch import WatchEvent
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from tests.builders import pod

Log = list[tuple[Any, ...]]


def informer(handlers: int, log: Log) -> Informer:
    inf = Informer(cast(Client, None), "Pod")  # _apply never touches the client
    for i in range(handlers):
        inf.add_handlers(
            on_add=lambda o, i=i: log.append((i, "add", o.metadata.name, o.metadata.resource_version)),
            on_update=lambda old, new, i=i: log.append(
                (i, "update", new.metadata.name, old.metadata.resource_version, new.metadata.resource_version)
            ),
            on_delete=lambda o, i=i: log.append((i, "delete", o.metadata.name)),
        )
    return inf


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
@given(handlers=st.integers(0, 3), stream=batches())
def test_apply_equals_the_reference(handlers: int, stream: list[list[WatchEvent]]) -> None:
    fast_log: Log = []
    ref_log: Log = []
    fast, ref = informer(handlers, fast_log), informer(handlers, ref_log)
    for batch in stream:
        fast._apply(batch)
        apply_reference(ref, batch)
        assert fast_log == ref_log
        assert fast.store == ref.store
        assert fast.revision == ref.revision


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
