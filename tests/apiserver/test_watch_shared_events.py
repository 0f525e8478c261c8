"""``WatchHub.publish`` (its own routing through the hub's indexes and pins, one shared event
for the unfiltered watchers) delivers exactly what ``publish_reference`` (every watcher
filtered, ``transition`` per watcher) does: the same events to the same watchers, handed to
them in the same order across watchers, on random watchers (with and without selectors) and
random writes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.base.apiserver.watch import WatchHub
from emulator.base.apiserver.watcher import Watcher, WatchEvent
from emulator.base.runtime.channel import Channel
from tests.apiserver.test_watch_fastpath import app_is, watchers, writes
from tests.references import publish_reference

unfiltered = st.builds(
    lambda kind: Watcher(
        kind, name="w", namespace=None, fields={}, label_match=None, maxsize=1_000, allow_bookmarks=False
    ),
    st.sampled_from(["Pod", "Node"]),
)


def _clone(w: Watcher, maxsize: int) -> Watcher:
    return Watcher(
        w.kind,
        name=w.name,
        namespace=w.namespace,
        fields=w.fields,
        label_match=w.label_match,
        maxsize=maxsize,
        allow_bookmarks=w.allow_bookmarks,
    )


class _Recording(Channel[WatchEvent]):
    """A channel that logs each ``put`` (which watcher, which event) in one shared list."""

    def __init__(self, maxsize: int, log: list[tuple[int, str, int]], position: int) -> None:
        super().__init__(maxsize=maxsize)
        self.log, self.position = log, position

    def put(self, item: WatchEvent) -> bool:
        self.log.append((self.position, item.type, item.revision))
        return super().put(item)


def _deliver(ws: list[Watcher], batch: list[Any], maxsize: int, *, reference: bool) -> list[Any]:
    hub = WatchHub()
    mine = [_clone(w, maxsize) for w in ws]
    order: list[tuple[int, str, int]] = []  # the puts across watchers, in the order made
    for position, w in enumerate(mine):
        w.channel = _Recording(maxsize, order, position)
        hub.add(w)
    for rev, (kind, old, new) in enumerate(batch, start=1):
        if reference:
            publish_reference(hub, kind, old, new, rev, rev / 10)
        else:
            hub.publish(kind, old, new, rev, rev / 10)
    out = []
    for w in mine:
        items = w.channel._items
        out.append((w.channel.closed, [(e.type, e.object, e.revision, e.time) for e in items]))
    out.append(order)
    return out


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ws=st.lists(st.one_of(watchers(), unfiltered), max_size=8),
    batch=st.lists(writes(), min_size=1, max_size=8),
    maxsize=st.sampled_from([2, 1_000]),
)
def test_shared_events_equal_the_reference(ws: list[Watcher], batch: list[Any], maxsize: int) -> None:
    assert _deliver(ws, batch, maxsize, reference=False) == _deliver(ws, batch, maxsize, reference=True)


@pytest.mark.parametrize(
    ("namespace", "fields", "label", "unfiltered_"),
    [
        pytest.param(None, {}, None, True, id="no-selector"),
        pytest.param("default", {}, None, False, id="namespace"),
        pytest.param(None, {"spec.nodeName": "n1"}, None, False, id="field"),
        pytest.param(None, {}, "web", False, id="label"),
    ],
)
def test_unfiltered_means_no_selector(
    namespace: str | None, fields: dict[str, str], label: str | None, unfiltered_: bool
) -> None:
    w = Watcher(
        "Pod",
        name="w",
        namespace=namespace,
        fields=fields,
        label_match=None if label is None else app_is(label),
        maxsize=10,
        allow_bookmarks=False,
    )
    assert w.unfiltered is unfiltered_
