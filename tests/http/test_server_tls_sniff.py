"""The TLS port's first bytes: plain HTTP gets Go's ``400`` text, anything else goes to the
TLS handshake, which must end within the header deadline from the TCP accept (then the headers
get the deadline afresh, as Go's ``conn.serve`` gives it)."""

from __future__ import annotations

import asyncio
import shutil
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from emulator.base.http.server import HttpApi, HttpSettings
from emulator.base.http.sniff import PLAIN_HTTP_ANSWER
from tests.http.server_support import new_api
from tests.http.test_server_tls import _self_signed

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

DEADLINE = 0.4


@asynccontextmanager
async def served_tls(tmp: Path) -> AsyncIterator[tuple[str, int, ssl.SSLContext]]:
    settings = HttpSettings(
        port=0, token="t0k", ssl_context=_self_signed(tmp), read_header_timeout=DEADLINE, idle_timeout=DEADLINE
    )
    http = HttpApi(new_api(), settings)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(http.serve(ready.set_result), name="http:serve")
        host, port = (await ready).removeprefix("https://").rsplit(":", 1)
        try:
            yield host, int(port), ssl.create_default_context(cafile=str(tmp / "cert.pem"))
        finally:
            task.cancel()


async def _read_all(reader: asyncio.StreamReader, seconds: float = 5) -> bytes:
    async with asyncio.timeout(seconds):
        try:
            return await reader.read()
        except (ConnectionResetError, ssl.SSLError):
            return b""


@pytest.mark.parametrize(
    "request_line",
    [b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n", b"POST /api/v1/namespaces HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"],
)
async def test_plain_http_gets_gos_400_text(tmp_path: Path, request_line: bytes) -> None:
    async with served_tls(tmp_path) as (host, port, _):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(request_line)
        assert await _read_all(reader) == PLAIN_HTTP_ANSWER
        writer.close()


async def test_plain_http_in_small_pieces_is_answered_too(tmp_path: Path) -> None:
    async with served_tls(tmp_path) as (host, port, _):
        reader, writer = await asyncio.open_connection(host, port)
        for piece in (b"HE", b"AD", b" /version HTTP/1.1\r\n\r\n"):
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0.02)
        assert await _read_all(reader) == PLAIN_HTTP_ANSWER
        writer.close()


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(b"", id="nothing"),
        pytest.param(b"GE", id="two-bytes-of-http"),
        pytest.param(b"\x16\x03\x01", id="a-third-of-a-tls-record-header"),
        pytest.param(b"junk!junk!\r\n", id="neither"),
    ],
)
async def test_a_connection_that_stalls_before_tls_is_closed_by_the_header_deadline(
    tmp_path: Path, sent: bytes
) -> None:
    async with served_tls(tmp_path) as (host, port, _):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(sent)
        start = asyncio.get_running_loop().time()
        assert await _read_all(reader) == b""
        assert asyncio.get_running_loop().time() - start < DEADLINE + 1.5
        writer.close()


async def test_tls_then_silence_is_closed_and_tls_requests_are_served(tmp_path: Path) -> None:
    async with served_tls(tmp_path) as (host, port, ctx):
        reader, writer = await asyncio.open_connection(host, port, ssl=ctx)
        assert await _read_all(reader) == b""  # handshake done, no header: the deadline
        writer.close()
        reader, writer = await asyncio.open_connection(host, port, ssl=ctx)
        writer.write(b"GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t0k\r\nConnection: close\r\n\r\n")
        answer = await _read_all(reader)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
        assert b'"NodeList"' in answer
        writer.close()


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
async def test_curl_with_http_to_the_tls_port_shows_the_hint(tmp_path: Path) -> None:
    async with served_tls(tmp_path) as (host, port, _):
        curl = await asyncio.create_subprocess_exec(
            "curl", "-sS", "-i", f"http://{host}:{port}/api", stdout=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(curl.communicate(), 10)
        assert curl.returncode == 0
        assert out == b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
