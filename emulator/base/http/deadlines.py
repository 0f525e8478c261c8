"""Connection deadlines as upstream's HTTP server sets them (``secure_serving.go``:
``ReadHeaderTimeout`` 32 s, ``IdleTimeout`` 90 s), on serve's real-time clock.

aiohttp closes a keep-alive connection idle between requests (``keepalive_timeout``, the
idle timeout) but has no header deadline: a client that connects (and finishes TLS) and
sends nothing, or half a header, would hold its connection forever, before any auth.
``HeaderDeadline`` sits between the transport and aiohttp's protocol and aborts the
connection when the first request's headers are not complete within ``timeout`` (from the
TCP accept, or on TLS from the end of the handshake, as Go's ``conn.serve`` counts).
``DeadlineSite`` is aiohttp's ``TCPSite`` serving through it; on TLS through
``sniff.TlsSniffer`` first, which gives the handshake the same deadline from the accept and
answers plain HTTP as Go does.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from aiohttp import web

from emulator.base.http.sniff import TlsSniffer

__all__ = ["DeadlineSite", "HeaderDeadline"]

_END: Final = b"\r\n\r\n"


class HeaderDeadline(asyncio.Protocol):
    """Forwards everything to ``inner``; aborts the transport if no complete header block
    (``\\r\\n\\r\\n``) arrived ``timeout`` seconds after the connection was made."""

    def __init__(self, inner: Any, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self._timer: asyncio.TimerHandle | None = None
        self._tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._timer = asyncio.get_running_loop().call_later(self.timeout, transport.abort)  # type: ignore[attr-defined]
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._timer is not None:
            seen = self._tail + data
            if _END in seen:
                self._disarm()
            else:
                self._tail = seen[-3:]
        self.inner.data_received(data)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def eof_received(self) -> bool | None:
        result: bool | None = self.inner.eof_received()
        return result

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class DeadlineSite(web.TCPSite):
    """``TCPSite`` whose connections get a ``HeaderDeadline`` of ``read_header_timeout``."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, *, read_header_timeout: float, **kw: Any) -> None:
        super().__init__(runner, host, port, **kw)
        self.read_header_timeout = read_header_timeout

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        timeout = self.read_header_timeout
        tls = self._ssl_context

        def guarded() -> asyncio.Protocol:
            return HeaderDeadline(server(), timeout)

        def factory() -> asyncio.Protocol:
            return guarded() if tls is None else TlsSniffer(guarded, tls, timeout)

        self._server = await asyncio.get_running_loop().create_server(
            factory, self._host, self._port, backlog=self._backlog
        )
        sockets = self._server.sockets
        self._bound_port = sockets[0].getsockname()[1] if sockets else self._port
