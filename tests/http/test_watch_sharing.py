"""Watch streams share each write's encoding: JSON by object, Tables by object and shape."""

from __future__ import annotations

import json

import pytest

from emulator.base.apiserver.watcher import WatchEvent
from emulator.base.http.resources import find
from emulator.base.http.watch import EncodedObjects, EventWriter
from tests.builders import pod

PODS = find("", "v1", "pods")
assert PODS is not None


def _writer(
    cache: EncodedObjects, *, as_table: bool, include_object: str = "Metadata", now: float = 10.0
) -> EventWriter:
    return EventWriter(PODS, as_table=as_table, include_object=include_object, now=lambda: now, cache=cache)


def _row(frame: bytes) -> dict[str, object]:
    event = json.loads(frame)
    return dict(event["object"])


@pytest.mark.parametrize(
    ("second", "shared"),
    [
        pytest.param({"as_table": True}, True, id="same-shape-shares"),
        pytest.param({"as_table": True, "include_object": "None"}, False, id="other-includeObject"),
        pytest.param({"as_table": True, "now": 75.0}, False, id="ages-counted-to-another-second"),
        pytest.param({"as_table": False}, False, id="json-is-not-a-table"),
    ],
)
def test_a_table_row_is_built_once_per_object_and_shape(second: dict[str, object], shared: bool) -> None:
    cache = EncodedObjects()
    obj = pod("web-1", node="n1")
    event = WatchEvent("ADDED", obj, 7)
    first = _writer(cache, as_table=True).frame([event])
    other = _writer(cache, **second).frame([event])  # type: ignore[arg-type]
    assert cache.hits == (1 if shared else 0)
    if shared:
        assert other == first
    # Either way, each stream got its own complete first event: headers included.
    if second.get("as_table"):
        assert _row(other)["columnDefinitions"]


def test_later_events_of_a_stream_omit_the_headers_and_share_with_each_other() -> None:
    cache = EncodedObjects()
    a, b = _writer(cache, as_table=True), _writer(cache, as_table=True)
    first, later = pod("web-1"), pod("web-2")
    a.frame([WatchEvent("ADDED", first, 7)])
    b.frame([WatchEvent("ADDED", first, 7)])
    hits = cache.hits
    row_a = a.frame([WatchEvent("ADDED", later, 8)])
    row_b = b.frame([WatchEvent("ADDED", later, 8)])
    assert cache.hits == hits + 1
    assert row_a == row_b
    assert "columnDefinitions" not in _row(row_a) or not _row(row_a)["columnDefinitions"]


def _held(cache: EncodedObjects) -> int:
    """The encoded bytes the cache keeps alive, counted from its tables."""
    return sum(len(e[1]) for e in cache._items.values()) + sum(len(e[1]) for e in cache._tables.values())


def test_the_cache_is_bounded_in_bytes_not_only_in_entries() -> None:
    # Issue 24 #15: 180 pod events with a 0.5 MB field grew the server by 107 MiB. A byte
    # bound, least recently used out; the most recent writes stay shared.
    cache = EncodedObjects(max_bytes=8 << 20)
    big = "x" * (512 << 10)
    pods = [pod(f"web-{i}", annotations={"blob": big}) for i in range(40)]
    for i, obj in enumerate(pods):
        cache.get(obj)
        # A table row too, so both tables count against the one bound.
        cache.table(obj, ("row", i), lambda: b"r" * 1024)
        assert _held(cache) <= 8 << 20
    assert cache.bytes == _held(cache)
    hits = cache.hits
    cache.get(pods[-1])
    assert cache.hits == hits + 1
    cache.get(pods[0])  # evicted long ago: encoded again
    assert cache.hits == hits + 1


def test_an_encoding_larger_than_a_quarter_of_the_bound_is_served_uncached() -> None:
    cache = EncodedObjects(max_bytes=1 << 20)
    obj = pod("huge", annotations={"blob": "x" * (300 << 10)})
    first = cache.get(obj)
    assert cache.get(obj) == first
    assert cache.hits == 0
    assert _held(cache) == 0
