"""Watch streams through the HTTP door: synthetic ADDED, resume, 410 in-band, overflow,
bookmarks, initial events, Tables, selectors, disconnect, timeout and shutdown."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from msgspec.structs import replace

from emulator.base.api.core import Binding
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver.server import ServerSettings
from emulator.base.http.server import HttpApi, HttpSettings
from tests.builders import pod
from tests.http.server_support import TABLE, Served, new_api, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]


class Stream:
    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self.resp = resp

    async def next(self) -> dict[str, Any] | None:
        line = await self.resp.content.readline()
        return json.loads(line) if line else None

    async def take(self, n: int) -> list[dict[str, Any]]:
        return [ev for ev in [await self.next() for _ in range(n)] if ev is not None]


@asynccontextmanager
async def watching(s: Served, path: str, accept: str = "application/json") -> AsyncIterator[Stream]:
    async with s.client.get(path, headers={"Accept": accept}) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("application/json")
        yield Stream(resp)


def brief(ev: dict[str, Any]) -> tuple[str, str]:
    return ev["type"], ev["object"]["metadata"].get("name", "")


def label(s: Served, name: str, **labels: str) -> None:
    cur = s.api.get("Pod", name, "default")
    s.api.update(replace(cur, metadata=replace(cur.metadata, labels={**cur.metadata.labels, **labels})))


async def test_synthetic_added_then_live_events() -> None:
    async with serving() as s, watching(s, "/api/v1/namespaces/default/pods?watch=true") as w:
        assert [brief(e) for e in await w.take(2)] == [("ADDED", "p0"), ("ADDED", "p1")]
        s.api.create(pod("p2"))
        label(s, "p0", x="1")
        s.api.delete("Pod", "p1", "default")
        events = await w.take(3)
        assert [brief(e) for e in events] == [("ADDED", "p2"), ("MODIFIED", "p0"), ("DELETED", "p1")]
        assert events[2]["object"]["metadata"]["resourceVersion"] == str(s.api.revision)
        assert events[2]["object"]["kind"] == "Pod"


async def test_resume_from_a_resource_version() -> None:
    async with serving() as s:
        rv = s.api.revision
        s.api.create(pod("p2"))
        async with watching(s, f"/api/v1/pods?watch=1&resourceVersion={rv}") as w:
            assert [brief(e) for e in await w.take(1)] == [("ADDED", "p2")]


async def test_legacy_watch_prefix() -> None:
    async with serving() as s, watching(s, "/api/v1/watch/namespaces/default/pods") as w:
        assert [brief(e) for e in await w.take(2)] == [("ADDED", "p0"), ("ADDED", "p1")]


async def test_too_old_resource_version_is_410_in_band() -> None:
    api = new_api(settings=ServerSettings(history_size=2, event_fresh_duration=0))
    for i in range(5):
        api.create(pod(f"x{i}"))
    async with serving(api) as s, watching(s, "/api/v1/pods?watch=true&resourceVersion=1") as w:
        ev = await w.next()
        assert ev is not None
        assert ev["type"] == "ERROR"
        status = ev["object"]
        assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
        assert status["message"].startswith("too old resource version: 1 (")
        assert await w.next() is None


async def test_overflowing_watcher_is_dropped_with_410() -> None:
    async with serving(watch_buffer=2) as s:
        rv = s.api.revision
        async with watching(s, f"/api/v1/pods?watch=true&resourceVersion={rv}") as w:
            for i in range(6):  # no await between writes: the stream cannot keep up
                s.api.create(pod(f"burst{i}"))
            events = [e async for e in _until_end(w)]
            assert [e["type"] for e in events] == ["ADDED", "ADDED", "ERROR"]
            assert (events[-1]["object"]["code"], events[-1]["object"]["reason"]) == (410, "Expired")
        assert s.api.watchers() == []
        s.api.create(pod("after"))  # writers never block on the dropped stream


async def _until_end(w: Stream) -> AsyncIterator[dict[str, Any]]:
    while (ev := await w.next()) is not None:
        yield ev


async def test_bookmarks_only_when_allowed() -> None:
    async with serving() as s:
        rv = s.api.revision
        async with (
            watching(s, f"/api/v1/pods?watch=true&resourceVersion={rv}&allowWatchBookmarks=true") as with_bm,
            watching(s, f"/api/v1/pods?watch=true&resourceVersion={rv}") as without,
        ):
            s.api.bookmark()
            s.api.create(pod("p2"))
            got = await with_bm.take(2)
            assert [e["type"] for e in got] == ["BOOKMARK", "ADDED"]
            assert got[0]["object"] == {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": str(rv)}}
            assert [brief(e) for e in await without.take(1)] == [("ADDED", "p2")]


async def test_send_initial_events_ends_with_the_annotated_bookmark() -> None:
    async with serving() as s:
        path = (
            "/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=true"
            "&resourceVersionMatch=NotOlderThan&resourceVersion=&allowWatchBookmarks=true"
        )
        async with watching(s, path) as w:
            events = await w.take(3)
            assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
            meta = events[2]["object"]["metadata"]
            assert meta == {
                "resourceVersion": str(s.api.revision),
                "annotations": {"k8s.io/initial-events-end": "true"},
            }


async def test_table_events_carry_headers_only_first() -> None:
    async with serving() as s, watching(s, "/api/v1/namespaces/default/pods?watch=true", accept=TABLE) as w:
        first, second = await w.take(2)
        assert first["object"]["kind"] == "Table"
        assert "columnDefinitions" in first["object"]
        assert "columnDefinitions" not in second["object"]
        assert [len(e["object"]["rows"]) for e in (first, second)] == [1, 1]


async def test_field_selector_transitions() -> None:
    async with serving() as s:
        rv = s.api.revision
        path = f"/api/v1/pods?watch=true&resourceVersion={rv}&fieldSelector=spec.nodeName%3Dn1"
        async with watching(s, path) as w:
            s.api.bind(Binding(metadata=ObjectMeta(name="p0", namespace="default"), target=ObjectReference(name="n1")))
            s.api.delete("Pod", "p0", "default", grace_period_seconds=0)
            assert [brief(e) for e in await w.take(2)] == [("ADDED", "p0"), ("DELETED", "p0")]


async def test_not_equal_selector_leaves_the_view() -> None:
    async with serving() as s:
        rv = s.api.revision
        path = f"/api/v1/pods?watch=true&resourceVersion={rv}&labelSelector=x%21%3D1"
        async with watching(s, path) as w:
            label(s, "p0", x="1")
            assert [brief(e) for e in await w.take(1)] == [("DELETED", "p0")]


async def test_timeout_seconds_ends_the_stream() -> None:
    async with serving() as s, watching(s, "/api/v1/pods?watch=true&timeoutSeconds=1") as w:
        events = [e async for e in _until_end(w)]
        assert [brief(e) for e in events] == [("ADDED", "p0"), ("ADDED", "p1")]
    assert s.api.watchers() == []


async def test_client_disconnect_stops_the_watch() -> None:
    async with serving() as s:
        async with watching(s, "/api/v1/pods?watch=true") as w:
            await w.take(2)
            assert len(s.api.watchers()) == 1
        for _ in range(200):  # the server notices the closed connection
            if not s.api.watchers():
                break
            await asyncio.sleep(0.01)
        assert s.api.watchers() == []


async def test_shutdown_closes_every_stream() -> None:
    async with (
        serving() as s,
        watching(s, "/api/v1/pods?watch=true") as a,
        watching(s, "/api/v1/nodes?watch=true") as b,
    ):
        await a.take(2)
        await b.take(2)
        s.http.close_watches()
        assert [e async for e in _until_end(a)] == []
        assert [e async for e in _until_end(b)] == []


async def test_serve_binds_reports_and_closes_on_cancel() -> None:
    api = new_api()
    http = HttpApi(api, HttpSettings(port=0))
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(http.serve(ready.set_result), name="http:serve")
        url = await ready
        assert url.startswith("http://127.0.0.1:")
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{url}/api/v1/pods?watch=true") as resp,
        ):
            assert resp.status == 200
            await resp.content.readline()
            task.cancel()
            rest = await resp.content.read()  # the stream ends at shutdown
            assert b"ERROR" not in rest
    assert task.cancelled()
    assert api.watchers() == []


async def test_watchers_share_each_write_encoding() -> None:
    async with serving() as s:
        rv = s.api.revision
        path = f"/api/v1/pods?watch=true&resourceVersion={rv}"
        async with watching(s, path) as a, watching(s, path) as b, watching(s, path) as c:
            s.api.create(pod("p2"))
            got = [await w.take(1) for w in (a, b, c)]
            assert got[0] == got[1] == got[2]
            assert s.http.encoded.hits == 2


@pytest.mark.parametrize(
    ("query", "code", "reason", "message"),
    [
        pytest.param("resourceVersion=999", 504, "Timeout", "Too large resource version: 999, current: 6", id="future"),
        pytest.param(
            "fieldSelector=spec.foo%3Dx", 400, "BadRequest", "field label not supported: spec.foo", id="field"
        ),
        pytest.param("labelSelector=a%20in", 400, "BadRequest", "couldn't parse the selector string", id="label"),
    ],
)
async def test_watch_refused_before_the_stream(query: str, code: int, reason: str, message: str) -> None:
    async with serving() as s:
        got, out = await s.call("GET", f"/api/v1/pods?watch=true&{query}")
        assert (got, out["reason"]) == (code, reason)
        assert out["message"].startswith(message)
        assert s.api.watchers() == []


async def test_a_failing_event_ends_the_stream_with_an_in_band_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception after the chunked stream started is an ``ERROR`` event with a 500 Status,
    then the end (never a second ``HTTP/1.1 500`` written inside the stream)."""
    from emulator.base.http import watch

    real = watch.encode_object

    def failing(obj: Any, *args: Any, **kwargs: Any) -> bytes:
        if obj.metadata.name == "bad":
            raise RecursionError("maximum recursion depth exceeded")
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(watch, "encode_object", failing)
    async with asyncio.timeout(10), serving() as s:
        s.http.encoded = watch.EncodedObjects()
        async with watching(s, "/api/v1/pods?watch=true") as w:
            assert [brief(e) for e in await w.take(2)] == [("ADDED", "p0"), ("ADDED", "p1")]
            s.api.create(pod("bad"))
            events = [e async for e in _until_end(w)]
        assert [e["type"] for e in events] == ["ERROR"]
        status = events[0]["object"]
        assert (status["kind"], status["code"], status["reason"]) == ("Status", 500, "InternalError")
        assert s.api.watchers() == []
        assert (await s.call("GET", "/api/v1/namespaces/default/pods/p0"))[0] == 200
