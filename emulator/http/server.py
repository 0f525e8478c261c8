"""The aiohttp application in front of the API server: placeholder until core lands.

This file only lets the ``serve`` command run end to end before the "core" part is merged:
``HttpSettings`` and ``HttpApi`` have the design's signatures (plus core's ``HttpSettings.ssl_context``,
which serve needs: see ``emulator/commands/certs.py``), and ``serve()`` binds an
aiohttp application that answers ``GET /version`` (with the bearer token check) and nothing
else. The lead takes core's real ``server.py`` at merge; nothing here is meant to survive.
"""

from __future__ import annotations

import asyncio
import hmac
import ssl
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from emulator.apiserver.server import ApiServer

__all__ = ["HttpApi", "HttpSettings"]

_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-emu",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.23.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


@dataclass(frozen=True, slots=True)
class HttpSettings:
    host: str = "127.0.0.1"
    port: int = 6443
    token: str | None = None  # None: no auth
    max_body: int = 3 * 1024 * 1024
    watch_buffer: int = 10_000
    ssl_context: ssl.SSLContext | None = None  # HTTPS (kubectl sends a token only over TLS), as core's


class HttpApi:
    def __init__(self, api: ApiServer, settings: HttpSettings) -> None:
        self.api = api
        self.settings = settings

    async def serve(self, on_ready: Callable[[str], None]) -> None:
        """Bind, call on_ready(url) once listening (the real port when port=0), serve until
        cancelled; on cancellation close the listener, then re-raise."""
        app = web.Application(client_max_size=self.settings.max_body)
        app.router.add_get("/version", self._version)
        app.router.add_get("/version/", self._version)  # the Python client's VersionApi
        runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.settings.host, self.settings.port, ssl_context=self.settings.ssl_context)
            await site.start()
            port = runner.addresses[0][1]
            scheme = "http" if self.settings.ssl_context is None else "https"
            on_ready(f"{scheme}://{self.settings.host}:{port}")
            await asyncio.Event().wait()  # until cancelled
        finally:
            await runner.cleanup()

    async def _version(self, request: web.Request) -> web.Response:
        token = self.settings.token
        if token is not None:
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                return web.json_response(
                    {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "metadata": {},
                        "status": "Failure",
                        "message": "Unauthorized",
                        "reason": "Unauthorized",
                        "code": 401,
                    },
                    status=401,
                )
        return web.json_response(_VERSION)
