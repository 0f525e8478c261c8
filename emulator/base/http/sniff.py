"""Plain HTTP on the TLS port, answered as Go's ``net/http`` answers it.

asyncio's TLS server layer takes a connection's first bytes straight into the handshake and
drops the connection when they are not TLS, so a client that forgot ``https://`` sees an
empty reply. Go's HTTPS server reads the first record header (five bytes) and, when it
looks like an HTTP request line (``GET /``, ``HEAD ``, ``POST ``, ``PUT /``, ``OPTIO``),
writes ``HTTP/1.0 400 Bad Request`` with the text "Client sent an HTTP request to an HTTPS
server." and closes. ``TlsSniffer`` is the plain TCP protocol in front of asyncio's
``SSLProtocol``: it reads up to those five bytes, then either answers so or hands the
transport, and the bytes it read, to an ``SSLProtocol`` around the application's protocol.

It owns the connection's deadline until the handshake is done, as Go's ``conn.serve`` sets
it (the handshake timeout, ``ReadHeaderTimeout``, from the accept): the connection is aborted
when ``timeout`` passes before it decided, and the TLS handshake gets what is left of it.
``make_inner()`` builds the protocol that takes over after the handshake
(``deadlines.HeaderDeadline``, whose header deadline then starts, as Go's does). Nothing here
blocks: it is all callbacks on the loop, and every connection is bounded in time.
"""

from __future__ import annotations

import asyncio
import ssl
from asyncio import sslproto
from collections.abc import Callable
from typing import Final, cast

__all__ = ["PLAIN_HTTP_ANSWER", "TlsSniffer"]

PLAIN_HTTP_ANSWER: Final = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
"""What Go's ``net/http`` server writes to a TLS connection whose first bytes are HTTP."""

_HTTP_STARTS: Final = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")
"""Go's ``tlsRecordHeaderLooksLikeHTTP``: the first five bytes it answers instead of closing."""

_TLS_HANDSHAKE: Final = 0x16


def _looks_like_http(head: bytes) -> bool | None:
    """True/False once decidable from ``head``; None while more bytes could still decide."""
    if head[0] == _TLS_HANDSHAKE:
        return False
    if len(head) >= 5:
        return head[:5] in _HTTP_STARTS
    return None if any(s.startswith(head) for s in _HTTP_STARTS) else False


class TlsSniffer(asyncio.Protocol):
    """One accepted TCP connection of a TLS listener until its first bytes are known."""

    def __init__(self, make_inner: Callable[[], asyncio.BaseProtocol], context: ssl.SSLContext, timeout: float) -> None:
        self.make_inner = make_inner
        self.context = context
        self.timeout = timeout
        self._loop = asyncio.get_running_loop()
        self._deadline = 0.0
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._head = b""
        self._answered = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is no asyncio.Transport subclass
        self._deadline = self._loop.time() + self.timeout
        self._timer = self._loop.call_at(self._deadline, self._transport.abort)

    def data_received(self, data: bytes) -> None:
        if self._answered:
            return  # the rest of the plain request, read and dropped until the client closes
        self._head += data
        verdict = _looks_like_http(self._head)
        if verdict is None:
            return
        transport = self._transport
        assert transport is not None
        if verdict:
            self._answered = True
            transport.write(PLAIN_HTTP_ANSWER)
            transport.write_eof()  # the answer flushed, then FIN; the deadline timer still closes it
        else:
            self._start_tls(transport)

    def _start_tls(self, transport: asyncio.Transport) -> None:
        self._cancel_timer()
        left = self._deadline - self._loop.time()
        if left <= 0:
            transport.abort()
            return
        waiter = self._loop.create_future()
        waiter.add_done_callback(_consume)
        tls = sslproto.SSLProtocol(
            self._loop,
            self.make_inner(),
            self.context,
            waiter,
            server_side=True,
            ssl_handshake_timeout=left,  # type: ignore[arg-type]  # typeshed says int; any seconds work
        )
        transport.set_protocol(tls)
        tls.connection_made(transport)
        head, self._head = self._head, b""
        while head:  # SSLProtocol is a BufferedProtocol: the bytes read so far go in its buffer
            buf = tls.get_buffer(len(head))
            n = min(len(buf), len(head))
            buf[:n] = head[:n]
            tls.buffer_updated(n)
            head = head[n:]

    def eof_received(self) -> bool | None:
        return False  # close: the client left before a request, or after our answer

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timer()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _consume(waiter: asyncio.Future[None]) -> None:
    """A failed handshake is the client's problem (asyncio's own server only logs it)."""
    if not waiter.cancelled():
        waiter.exception()
