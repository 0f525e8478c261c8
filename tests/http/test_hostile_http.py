"""Hostile HTTP through the door (issue 24): malformed or abusive raw requests on a real
socket. Each gets a 4xx answer or a closed connection, never a 5xx nor a hang, and while
its connection is still open a concurrent ``GET /version`` is answered promptly."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from emulator.base.http.server import HttpApi, HttpSettings
from tests.http.server_support import new_api

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

_H = b"Host: x\r\n"
_STATUS = re.compile(rb"^HTTP/1\.[01] (\d{3}) ")

CASES = [
    ("bad-request-line", b"GARBAGE\r\n\r\n"),
    ("bad-version", b"GET /version HTTP/9.9\r\n" + _H + b"\r\n"),
    ("unknown-method", b"FROB /api/v1/pods HTTP/1.1\r\n" + _H + b"\r\n"),
    ("huge-header", b"GET /version HTTP/1.1\r\n" + _H + b"X-Big: " + b"a" * 200_000 + b"\r\n\r\n"),
    ("many-headers", b"GET /version HTTP/1.1\r\n" + _H + b"".join(b"X-%d: v\r\n" % i for i in range(5000)) + b"\r\n"),
    ("header-without-colon", b"GET /version HTTP/1.1\r\n" + _H + b"NoColonHere\r\n\r\n"),
    ("header-name-with-space", b"GET /version HTTP/1.1\r\n" + _H + b"Bad Name: v\r\n\r\n"),
    ("nul-in-path", b"GET /api/v1/po\x00ds HTTP/1.1\r\n" + _H + b"\r\n"),
    ("nul-in-header", b"GET /version HTTP/1.1\r\n" + _H + b"X-A: a\x00b\r\n\r\n"),
    ("path-traversal", b"GET /api/v1/../../../etc/passwd HTTP/1.1\r\n" + _H + b"\r\n"),
    ("overlong-url", b"GET /api/v1/pods?x=" + b"a" * 100_000 + b" HTTP/1.1\r\n" + _H + b"\r\n"),
    (
        "bad-chunk-size",
        b"POST /api/v1/namespaces HTTP/1.1\r\n" + _H + b"Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n",
    ),
    (
        "chunk-longer-than-said",
        b"POST /api/v1/namespaces HTTP/1.1\r\n" + _H + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}xx\r\n0\r\n\r\n",
    ),
    (
        "content-length-and-chunked",
        b"POST /api/v1/namespaces HTTP/1.1\r\n"
        + _H
        + b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    ),
    (
        "two-content-lengths",
        b"POST /api/v1/namespaces HTTP/1.1\r\n" + _H + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    ),
    ("negative-content-length", b"POST /api/v1/namespaces HTTP/1.1\r\n" + _H + b"Content-Length: -1\r\n\r\n{}"),
    (
        "huge-content-length",
        b"POST /api/v1/namespaces HTTP/1.1\r\n" + _H + b"Content-Length: 99999999999999999999\r\n\r\n",
    ),
    (
        "half-body-then-close",
        b"POST /api/v1/namespaces HTTP/1.1\r\n" + _H + b'Content-Length: 1000\r\n\r\n{"metadata":',
    ),
    (
        "body-not-json",
        b"POST /api/v1/namespaces HTTP/1.1\r\n"
        + _H
        + b"Content-Type: application/json\r\nContent-Length: 3\r\n\r\n{{{",
    ),
    ("binary-garbage", bytes(range(256)) * 4),
    ("bare-lf-line-endings", b"GET /version HTTP/1.1\nHost: x\n\n"),
]


LENIENT = [
    # aiohttp's parser is more forgiving than Go's (which answers these 400): harmless, as
    # the request that is served is the one a reader would take it for
    ("request-line-with-two-spaces", b"GET  /version HTTP/1.1\r\n" + _H + b"\r\n"),
    ("http-0.9", b"GET /version\r\n\r\n"),
    # the dot segments are resolved before routing: the same all-namespace pod list the
    # token may read anyway, nothing outside the API
    ("encoded-traversal", b"GET /api/v1/namespaces/%2e%2e/pods HTTP/1.1\r\n" + _H + b"\r\n"),
]


@asynccontextmanager
async def served() -> AsyncIterator[tuple[str, int]]:
    http = HttpApi(new_api(), HttpSettings(port=0, read_header_timeout=1.0, idle_timeout=1.0))
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(http.serve(ready.set_result), name="http:serve")
        host, port = (await ready).removeprefix("http://").rsplit(":", 1)
        try:
            yield host, int(port)
        finally:
            task.cancel()


async def _version(host: str, port: int) -> bytes:
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    try:
        return await reader.read()
    finally:
        writer.close()


async def _answer(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.read(65536)
    except ConnectionResetError:
        return b""


@pytest.mark.parametrize(
    ("sent", "answers"),
    [pytest.param(raw, b"4", id=name) for name, raw in CASES]
    + [pytest.param(raw, b"2", id=name) for name, raw in LENIENT],
)
async def test_a_malformed_request_gets_4xx_or_a_close_and_others_are_served(sent: bytes, answers: bytes) -> None:
    async with served() as (host, port), asyncio.timeout(2):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(sent)
        if sent.endswith(b'"metadata":'):  # half a body, then the client leaves
            writer.write_eof()
        version = await asyncio.wait_for(_version(host, port), 0.5)  # while the hostile one is open
        assert version.startswith(b"HTTP/1.1 200 "), version[:200]
        answer = await _answer(reader)
        writer.close()
        if answer:
            m = _STATUS.match(answer) or re.match(rb"^HTTP/0\.9 (\d{3}) ", answer)
            assert m is not None, answer[:200]
            assert m[1].startswith(answers), answer[:300]


async def test_pipelined_requests_are_answered_in_order() -> None:
    async with served() as (host, port), asyncio.timeout(2):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /api/v1/namespaces/default/pods/nope HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        answer = await reader.read()
        writer.close()
        codes = re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)
        assert codes == [b"200", b"404", b"200"], answer[:500]
        assert answer.index(b'"gitVersion"') < answer.index(b'"NotFound"') < answer.index(b'"NodeList"')
