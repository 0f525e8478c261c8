"""A minimal Chrome DevTools Protocol client for the browser tests: start headless
``chromium`` on a free port, open a page from a ``file://`` URL, collect console errors and
exceptions, evaluate JavaScript, take a screenshot. aiohttp's websocket client is the whole
transport (one browser-level socket, a flattened session for the page).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

__all__ = ["CHROMIUM", "Page", "open_page"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
"""The browser to drive, or None (the browser tests then skip)."""

_LISTENING = re.compile(rb"DevTools listening on (ws://\S+)")
STARTUP = 60.0
"""Wall seconds the browser gets to start: a guard against a hang, not a timing assertion."""


class Connection:
    """The browser's websocket: numbered calls answered by id, events routed to the page
    whose session they carry."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.pages: dict[str, Page] = {}

    async def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        msg_id = next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = fut
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params}
        if session is not None:
            msg["sessionId"] = session
        await self.ws.send_json(msg)
        return await fut

    async def read(self) -> None:
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            data = msg.json()
            if "id" in data:
                fut = self.pending.pop(data["id"], None)
                if fut is not None and not fut.done():
                    if "error" in data:
                        fut.set_exception(RuntimeError(f"CDP error: {data['error']}"))
                    else:
                        fut.set_result(data.get("result", {}))
            elif (page := self.pages.get(data.get("sessionId", ""))) is not None:
                page.on_event(data.get("method", ""), data.get("params", {}))


class Page:
    """One tab of the browser, through a flattened CDP session."""

    def __init__(self, conn: Connection, session: str) -> None:
        self.conn = conn
        self.session = session
        self.errors: list[str] = []
        self.events: dict[str, asyncio.Event] = {}

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        return await self.conn.call(method, self.session, **params)

    def on_event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(f"exception: {details.get('exception', {}).get('description') or details.get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(f"console.{params['type']}: {[a.get('value') for a in params.get('args', [])]}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
        if method in self.events:
            self.events[method].set()

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluate failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def goto(self, url: str) -> None:
        loaded = self.events.setdefault("Page.loadEventFired", asyncio.Event())
        loaded.clear()
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(loaded.wait(), STARTUP)

    async def screenshot(self, path: Path, width: int = 1060) -> None:
        await self.send("Emulation.setScrollbarsHidden", hidden=True)
        await self.send(
            "Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1, mobile=False
        )
        height = int(await self.evaluate("Math.ceil(document.documentElement.scrollHeight)"))
        await self.send(
            "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False
        )
        shot = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        await asyncio.to_thread(path.write_bytes, base64.b64decode(shot["data"]))


@contextlib.asynccontextmanager
async def open_page(profile: Path) -> AsyncIterator[Page]:
    """A fresh headless browser (its profile in ``profile``) and one blank page in it."""
    assert CHROMIUM is not None
    proc = await asyncio.create_subprocess_exec(
        CHROMIUM,
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        url = await asyncio.wait_for(_devtools_url(proc), STARTUP)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(_drain(proc), name="chromium-stderr")
            async with aiohttp.ClientSession() as http, http.ws_connect(url, max_msg_size=0) as ws:
                conn = Connection(ws)
                reader = tg.create_task(conn.read(), name="cdp-reader")
                created = await conn.call("Target.createTarget", url="about:blank")
                attached = await conn.call("Target.attachToTarget", targetId=created["targetId"], flatten=True)
                page = Page(conn, attached["sessionId"])
                conn.pages[page.session] = page
                for domain in ("Page", "Runtime", "Log"):
                    await page.send(f"{domain}.enable")
                try:
                    yield page
                finally:
                    reader.cancel()
            proc.kill()
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def _drain(proc: asyncio.subprocess.Process) -> None:
    """Read the browser's stderr to its end so a full pipe never blocks it."""
    assert proc.stderr is not None
    while await proc.stderr.readline():
        pass


async def _devtools_url(proc: asyncio.subprocess.Process) -> str:
    assert proc.stderr is not None
    while line := await proc.stderr.readline():
        m = _LISTENING.search(line)
        if m:
            return m.group(1).decode()
    raise RuntimeError(f"chromium exited ({await proc.wait()}) before announcing its DevTools port")
