"""``WatchHub.publish_many`` (a batch of writes of one kind, one ``put_many`` per watcher:
the Lease renewals of an instant) delivers exactly what ``publish`` one write at a time does:
the same events in the same order to the same watchers, the same overflows, and the
watchers get their first event in the same order (so their consumers wake in that order),
on random watchers (with and without selectors, indexed or not) and random writes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.apiserver.watch import WatchHub
from emulator.base.apiserver.watcher import Watcher, WatchEvent
from emulator.base.runtime.channel import Channel
from tests.apiserver.test_watch_fastpath import watchers, writes
from tests.apiserver.test_watch_shared_events import _clone, unfiltered


class _Recording(Channel[WatchEvent]):
    """A channel that notes, in a log shared by all, when it first gets an item."""

    def __init__(self, maxsize: int, log: list[int], ident: int) -> None:
        super().__init__(maxsize)
        self.log, self.ident = log, ident

    def put(self, item: WatchEvent) -> bool:
        self._note()
        return super().put(item)

    def put_many(self, items: list[WatchEvent]) -> None:
        if items:
            self._note()
        super().put_many(items)

    def _note(self) -> None:
        if self.ident not in self.log and not self.closed:
            self.log.append(self.ident)


def _deliver(ws: list[Watcher], batch: list[Any], maxsize: int, *, many: bool) -> tuple[list[Any], list[int]]:
    hub, log = WatchHub(), []
    mine = [_clone(w, maxsize) for w in ws]
    for i, w in enumerate(mine):
        w.channel = _Recording(maxsize, log, i)
        hub.add(w)
    kind = batch[0][0]
    same_kind = [(old, new, rev) for rev, (k, old, new) in enumerate(batch, start=1) if k == kind]
    if many:
        hub.publish_many(kind, same_kind, 1.0)
    else:
        for old, new, rev in same_kind:
            hub.publish(kind, old, new, rev, 1.0)
    out = [(w.channel.closed, [(e.type, e.object, e.revision) for e in w.channel._items]) for w in mine]
    return out, log


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ws=st.lists(st.one_of(watchers(), unfiltered), max_size=8),
    batch=st.lists(writes(), min_size=1, max_size=8),
    maxsize=st.sampled_from([2, 1_000]),
)
def test_publish_many_equals_publish_one_by_one(ws: list[Watcher], batch: list[Any], maxsize: int) -> None:
    assert _deliver(ws, batch, maxsize, many=True) == _deliver(ws, batch, maxsize, many=False)


namespace_only = st.builds(
    lambda ns: Watcher(
        "Pod", name="w", namespace=ns, fields={}, label_match=None, maxsize=1_000, allow_bookmarks=False
    ),
    st.sampled_from(["default", "team"]),
)


def _one_pod_write(write: tuple[str, Any, Any]) -> bool:
    """A pod's write that keeps its namespace, as every write does (namespaces are immutable)."""
    kind, old, new = write
    return kind == "Pod" and (old is None or new is None or old.metadata.namespace == new.metadata.namespace)


def _in_team(write: tuple[str, Any, Any]) -> tuple[str, Any, Any]:
    _, old, new = write
    moved = [None if o is None else replace(o, metadata=replace(o.metadata, namespace="team")) for o in (old, new)]
    return "Pod", moved[0], moved[1]


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ws=st.lists(st.one_of(namespace_only, watchers(), unfiltered), max_size=8),
    batch=st.lists(writes().filter(_one_pod_write), min_size=1, max_size=8),
    one=st.booleans(),
    maxsize=st.sampled_from([2, 1_000]),
)
def test_publish_many_equals_publish_for_watchers_of_one_namespace(
    ws: list[Watcher], batch: list[Any], one: bool, maxsize: int
) -> None:
    """A watcher of one namespace shares the batch's events when every write is in its
    namespace (the lifecycle controller's Lease informer), and none when all are elsewhere."""
    if one:
        batch = [_in_team(w) for w in batch]
    assert _deliver(ws, batch, maxsize, many=True) == _deliver(ws, batch, maxsize, many=False)


def test_put_many_overflows_as_the_puts_would() -> None:
    one, many = Channel[int](maxsize=3), Channel[int](maxsize=3)
    one.put(0)
    many.put(0)
    for i in (1, 2, 3, 4):
        one.put(i)
    many.put_many([1, 2, 3, 4])
    assert (one.closed, one.get_nowait_batch()) == (many.closed, many.get_nowait_batch()) == (True, [0, 1, 2])
