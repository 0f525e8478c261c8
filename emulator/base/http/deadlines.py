"""Connection deadlines as upstream's HTTP server sets them (``secure_serving.go``:
``ReadHeaderTimeout`` 32 s, ``IdleTimeout`` 90 s), on serve's real-time clock.

aiohttp closes a keep-alive connection idle between requests (``keepalive_timeout``, the
idle timeout) but has no header deadline: a client that connects (and finishes TLS) and
sends nothing, or half a header, would hold its connection forever, before any auth.
``HeaderDeadline`` sits between the transport and aiohttp's protocol and aborts the
connection when the first request's headers are not complete by its deadline (``timeout``
after the TCP connection was accepted). ``DeadlineSite`` is aiohttp's ``TCPSite`` serving
through it; on TLS through ``sniff.TlsSniffer`` first, which keeps the deadline through the
handshake and answers plain HTTP as Go does.
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
    (``\\r\\n\\r\\n``) arrived by ``deadline`` (the loop's time)."""

    def __init__(self, inner: Any, deadline: float) -> None:
        self.inner = inner
        self.deadline = deadline
        self._timer: asyncio.TimerHandle | None = None
        self._tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._timer = asyncio.get_running_loop().call_at(self.deadline, transport.abort)  # type: ignore[attr-defined]
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
        loop = asyncio.get_running_loop()
        tls = self._ssl_context

        def guarded(deadline: float) -> asyncio.Protocol:
            return HeaderDeadline(server(), deadline)

        def factory() -> asyncio.Protocol:
            if tls is None:
                return guarded(loop.time() + timeout)
            return TlsSniffer(guarded, tls, timeout)

        self._server = await loop.create_server(factory, self._host, self._port, backlog=self._backlog)
        sockets = self._server.sockets
        self._bound_port = sockets[0].getsockname()[1] if sockets else self._port
