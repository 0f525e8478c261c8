"""Idle connections against `python -m emulator serve` (issue 24 #4): how long they stay open,
and whether a normal request is served while they are.

    python bench/idle_conns.py [--conns 150] [--mode header|keepalive] [--wait 120]

serves bench/scenarios/soak.yaml with its default TLS and token, opens --conns connections
that then sit idle: ``header`` finishes the TLS handshake and sends nothing (upstream's
``ReadHeaderTimeout``, 32 s, applies); ``keepalive`` sends one request and then nothing
(``IdleTimeout``, 90 s). Then it times ``GET /api/v1/nodes`` on a fresh connection (median
of 5, with the idle ones open, and once more after they closed), and waits up to --wait
seconds for the server to close them. Prints one JSON object: the request's latency, when
the first and the last idle connection were closed (seconds after they were opened), and how
many were still open at the end of the wait.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_bench import Served

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "soak.yaml"


async def _request(served: Served) -> float:
    host, port = served.url.removeprefix("https://").rsplit(":", 1)
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, int(port), ssl=served.tls)
    writer.write(
        f"GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {served.token}\r\n"
        "Connection: close\r\n\r\n".encode()
    )
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    if not answer.startswith(b"HTTP/1.1 200 "):
        raise SystemExit(f"the request failed: {answer[:200]!r}")
    return time.perf_counter() - start


async def _idle(served: Served, mode: str, opened: float, closed: list[float]) -> None:
    host, port = served.url.removeprefix("https://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port), ssl=served.tls)
    if mode == "keepalive":
        writer.write(f"GET /version HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {served.token}\r\n\r\n".encode())
        await reader.readuntil(b'"platform"')
    try:
        while await reader.read(65536):
            pass
    except (ConnectionError, OSError):
        pass
    closed.append(time.monotonic() - opened)
    writer.close()


async def measure(served: Served, conns: int, mode: str, wait: float) -> dict[str, Any]:
    closed: list[float] = []
    opened = time.monotonic()
    idle = [asyncio.create_task(_idle(served, mode, opened, closed)) for _ in range(conns)]
    await asyncio.sleep(1.0)
    with_idle = statistics.median([await _request(served) for _ in range(5)])
    if idle:
        await asyncio.wait(idle, timeout=max(0.0, opened + wait - time.monotonic()))
    after = await _request(served)
    for t in idle:
        t.cancel()
    await asyncio.gather(*idle, return_exceptions=True)
    return {
        "mode": mode,
        "idle_connections": conns,
        "request_ms_with_idle_open": round(1000 * with_idle, 1),
        "request_ms_after": round(1000 * after, 1),
        "first_closed_s": round(min(closed), 1) if closed else None,
        "last_closed_s": round(max(closed), 1) if closed else None,
        "still_open_after_wait": conns - len(closed),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conns", type=int, default=150)
    p.add_argument("--mode", choices=("header", "keepalive"), default="header")
    p.add_argument("--wait", type=float, default=120.0)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        served = Served(SCENARIO, speed=1.0, tmp=Path(tmp))
        try:
            print(json.dumps(asyncio.run(measure(served, args.conns, args.mode, args.wait))))
        finally:
            served.stop()


if __name__ == "__main__":
    main()
