"""Connection deadlines (upstream's ``ReadHeaderTimeout`` / ``IdleTimeout``, and its request timeout
for a body): a connection that sends nothing, half a header or half a body is closed; a
complete request is served."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from emulator.base.http.server import HttpApi, HttpSettings
from tests.http.server_support import new_api

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]


@asynccontextmanager
async def served(**settings: float) -> AsyncIterator[tuple[str, int]]:
    http = HttpApi(new_api(), HttpSettings(port=0, read_header_timeout=0.3, idle_timeout=0.3, **settings))
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(http.serve(ready.set_result), name="http:serve")
        host, port = (await ready).removeprefix("http://").rsplit(":", 1)
        try:
            yield host, int(port)
        finally:
            task.cancel()


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    async with asyncio.timeout(seconds):
        return await reader.read()


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(b"", id="nothing"),
        pytest.param(b"GET /version HTTP/1.1\r\nHost: x\r\n", id="half-a-header"),
    ],
)
async def test_a_connection_without_headers_is_closed(sent: bytes) -> None:
    async with served() as (host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(sent)
        assert await _closed_within(reader, 5) == b""
        writer.close()


async def test_an_idle_keep_alive_connection_is_closed_and_requests_are_served() -> None:
    async with served() as (host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = await _closed_within(reader, 5)
        assert answer.startswith(b"HTTP/1.1 200 ")
        assert b'"gitVersion"' in answer
        writer.close()


async def test_half_a_body_gets_upstreams_504_then_the_connection_is_dropped() -> None:
    """Headers promise 100 bytes, 10 come, then nothing: past the request timeout the answer is
    504 ``Timeout`` (the Status the timeout filter writes) and the socket is closed, while
    other requests are served meanwhile."""
    async with served(request_timeout=0.5) as (host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
            b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"kind": 1'
        )
        other_reader, other_writer = await asyncio.open_connection(host, port)
        other_writer.write(b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert (await _closed_within(other_reader, 2)).startswith(b"HTTP/1.1 200 ")
        answer = await _closed_within(reader, 5)
        assert answer.startswith(b"HTTP/1.1 504 "), answer
        assert b'"reason":"Timeout"' in answer
        assert b"request did not complete within requested timeout" in answer
        writer.close()
        other_writer.close()
