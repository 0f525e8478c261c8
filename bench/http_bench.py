"""The HTTP API's figures (issue 12), measured against `python -m emulator serve` as a user runs it.

    python bench/http_bench.py list  [--repeat 5]
        serve bench/scenarios/serve-10k-pods.yaml, wait until its 10,000 pods run, then time
        `kubectl get pods -A` (Table), `kubectl get pods -A -o json` and the same two requests
        sent directly (urllib), each --repeat times after one warm-up; medians in seconds.
    python bench/http_bench.py watch [--watchers 20] [--seconds 120] [--speed 1]
        serve bench/scenarios/churn-1000nodes-1h.yaml paced at --speed, open --watchers watches
        of every pod (half as kubectl's Table stream, half as plain JSON, from a list's
        resourceVersion as `kubectl get pods -A -w` does), and report for each what it received
        and how late: the server's trace gives each revision's simulated write time t; a
        watcher that received revision r at monotonic time m has lag m - (origin + t / speed),
        where origin is estimated as the smallest m - t / speed over all deliveries (so the
        fastest delivery counts as zero lag: the figures are an upper bound on the extra lag).

Both print one JSON object. The server runs in its own process, as kubectl's server would.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
KUBECTL = "/usr/bin/kubectl"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


class Served:
    """`python -m emulator serve FILE` in a subprocess, ready once its kubeconfig exists."""

    def __init__(self, scenario: Path, *, speed: float, tmp: Path, trace: Path | None = None) -> None:
        self.kubeconfig = tmp / "kubeconfig"
        cmd = [sys.executable, "-m", "emulator", "serve", str(scenario), "--port", "0"]
        cmd += ["--kubeconfig", str(self.kubeconfig), "--speed", str(speed), "--output", "json"]
        if trace is not None:
            cmd += ["--trace", str(trace)]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not self.kubeconfig.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise SystemExit(f"serve did not start: {self.proc.stderr.read() if self.proc.stderr else ''}")
            time.sleep(0.05)
        self.ready = time.monotonic()
        config = yaml.safe_load(self.kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        self.url: str = cluster["server"]
        ca = cluster.get("certificate-authority-data")
        self.tls = ssl.create_default_context(cadata=base64.b64decode(ca).decode()) if ca else None
        self.token: str = config["users"][0]["user"].get("token", "")
        self.env = {**os.environ, "HOME": str(tmp), "KUBECACHEDIR": str(tmp / "cache")}
        self.env["KUBECONFIG"] = str(self.kubeconfig)

    def get(self, path: str, accept: str = "application/json") -> bytes:
        req = urllib.request.Request(self.url + path, headers={"Accept": accept})
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, timeout=60, context=self.tls) as resp:
            data: bytes = resp.read()
            return data

    def cpu_seconds(self) -> float:
        """The server process's CPU time so far (user + system), from /proc."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=120)
        if self.proc.returncode not in (0, 1):
            raise SystemExit(f"serve exited {self.proc.returncode}: {err[-2000:]}")
        try:
            report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            report = {"stdout": out[-500:]}
        return report


def _median_seconds(fn: Any, repeat: int) -> float:
    fn()  # warm-up: discovery cache, connection, the server's first encode
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 4)


def bench_list(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        served = Served(ROOT / "bench/scenarios/serve-10k-pods.yaml", speed=args.speed, tmp=tmp)
        try:
            deadline = time.monotonic() + 600
            while True:
                pods = json.loads(served.get("/api/v1/pods"))["items"]
                running = sum(1 for p in pods if p.get("status", {}).get("phase") == "Running")
                if running >= 10_000:
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"only {running} pods running after 10 minutes")
                time.sleep(1)

            def kubectl(*extra: str) -> None:
                subprocess.run([KUBECTL, "get", "pods", "-A", *extra], env=served.env, check=True, capture_output=True)

            size_table = len(served.get("/api/v1/pods?limit=500", TABLE))
            result = {
                "pods": running,
                "kubectl get pods -A": _median_seconds(lambda: kubectl(), args.repeat),
                "kubectl get pods -A --chunk-size=0": _median_seconds(lambda: kubectl("--chunk-size=0"), args.repeat),
                "kubectl get pods -A -o json": _median_seconds(lambda: kubectl("-o", "json"), args.repeat),
                "kubectl version (process start-up, for scale)": _median_seconds(
                    lambda: subprocess.run([KUBECTL, "version"], env=served.env, check=True, capture_output=True),
                    args.repeat,
                ),
                "GET /api/v1/pods Table": _median_seconds(lambda: served.get("/api/v1/pods", TABLE), args.repeat),
                "GET /api/v1/pods JSON": _median_seconds(lambda: served.get("/api/v1/pods"), args.repeat),
                "first page (limit=500) Table bytes": size_table,
                "repeat": args.repeat,
            }
            result.update(_kubectl_floor(served, tmp, args.repeat))
        finally:
            served.stop()
    return result


def _kubectl_floor(served: Served, tmp: Path, repeat: int) -> dict[str, float]:
    """kubectl's own share: the same `kubectl get pods -A` through a local plain-HTTP proxy that
    first records the server's answers, then replays them from memory (an instant server)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    recorded: dict[str, tuple[int, str, bytes]] = {}
    replay = False

    class Proxy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            key = self.path + "|" + self.headers.get("Accept", "")
            hit = recorded.get(key) if replay else None
            if hit is None:
                req = urllib.request.Request(served.url + self.path, headers={"Accept": self.headers.get("Accept", "")})
                req.add_header("Authorization", f"Bearer {served.token}")
                try:
                    with urllib.request.urlopen(req, timeout=60, context=served.tls) as resp:
                        hit = (resp.status, resp.headers.get("Content-Type", ""), resp.read())
                except urllib.error.HTTPError as err:
                    hit = (err.code, err.headers.get("Content-Type", ""), err.read())
                recorded[key] = hit
            code, ctype, body = hit
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    Thread(target=proxy.serve_forever, name="bench:proxy", daemon=True).start()
    env = {**served.env, "KUBECONFIG": "/dev/null", "KUBECACHEDIR": str(tmp / "proxy-cache")}
    server = f"--server=http://127.0.0.1:{proxy.server_address[1]}"

    def kubectl() -> None:
        subprocess.run([KUBECTL, server, "get", "pods", "-A"], env=env, check=True, capture_output=True)

    try:
        through = _median_seconds(kubectl, repeat)
        replay = True
        instant = _median_seconds(kubectl, repeat)
    finally:
        proxy.shutdown()
    return {"kubectl get pods -A via a recording proxy": through, "kubectl get pods -A, answers replayed": instant}


async def _watch(served: Served, index: int, table: bool, stop: asyncio.Event, out: list[tuple[int, float]]) -> str:
    import aiohttp

    headers = {"Accept": TABLE if table else "application/json"}
    if served.token:
        headers["Authorization"] = f"Bearer {served.token}"
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    connector = aiohttp.TCPConnector(ssl=served.tls if served.tls is not None else False)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers, connector=connector) as session:
        async with session.get(served.url + "/api/v1/pods?limit=500") as resp:
            listed = await resp.json(content_type=None)
        rv = listed["metadata"]["resourceVersion"]
        url = f"{served.url}/api/v1/pods?watch=true&resourceVersion={rv}"
        async with session.get(url) as resp:
            while not stop.is_set():
                try:
                    line = await asyncio.wait_for(resp.content.readline(), 1.0)
                except TimeoutError:
                    continue
                if not line:
                    return "closed by the server"
                now = time.monotonic()
                event = json.loads(line)
                if event["type"] == "ERROR":
                    return f"ERROR {event['object'].get('code')} {event['object'].get('reason')}"
                obj = event["object"]
                if obj.get("kind") == "Table":
                    obj = obj["rows"][0]["object"]
                out.append((int(obj["metadata"]["resourceVersion"]), now))
    return "ok"


def bench_watch(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        trace = tmp / "trace.jsonl"
        served = Served(ROOT / "bench/scenarios/churn-1000nodes-1h.yaml", speed=args.speed, tmp=tmp, trace=trace)
        received: list[list[tuple[int, float]]] = [[] for _ in range(args.watchers)]

        async def main() -> list[str]:
            stop = asyncio.Event()
            async with asyncio.TaskGroup() as tg:
                tasks = [
                    tg.create_task(_watch(served, i, i % 2 == 0, stop, received[i]), name=f"watcher:{i}")
                    for i in range(args.watchers)
                ]
                await asyncio.sleep(args.seconds)
                stop.set()
            return [t.result() for t in tasks]

        cpu0, wall0 = served.cpu_seconds(), time.monotonic()
        try:
            endings = asyncio.run(main())
            server_cpu = (served.cpu_seconds() - cpu0) / (time.monotonic() - wall0)
        finally:
            report = served.stop()
        times: dict[int, float] = {}
        with trace.open() as f:
            for line in f:
                rec = json.loads(line)
                if rec["kind"] == "Pod":
                    times[rec["rv"]] = rec["t"] / args.speed
    deliveries = [(m, times[rv]) for got in received for rv, m in got if rv in times]
    origin = min(m - t for m, t in deliveries)
    lags = sorted(m - (origin + t) for m, t in deliveries)

    def q(p: float) -> float:
        return round(lags[min(len(lags) - 1, int(p * len(lags)))] * 1000, 1)

    by_time = sorted((m, m - (origin + t)) for m, t in deliveries)
    quarter = max(1, len(by_time) // 4)
    quarters = [sorted(lag for _, lag in by_time[i * quarter : (i + 1) * quarter]) for i in range(4)]
    counts = [len(r) for r in received]
    first = min((got[0][0] for got in received if got), default=0)
    return {
        "watchers": args.watchers,
        "seconds": args.seconds,
        "speed": args.speed,
        "endings": sorted(set(endings)),
        "eventsPerWatcher": {"min": min(counts), "max": max(counts)},
        "podWritesInWindow": sum(1 for rv in times if rv >= first),
        "lagMs": {"p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": q(1.0)},
        "lagMsByQuarter": [
            {"p50": round(qs[len(qs) // 2] * 1000, 1), "p99": round(qs[int(0.99 * (len(qs) - 1))] * 1000, 1)}
            for qs in quarters
            if qs
        ],
        "server": {
            **{k: report.get(k) for k in ("simulatedSeconds", "wallSeconds")},
            "cpuShareWhileWatched": round(server_cpu, 3),
        },
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    lst = sub.add_parser("list")
    lst.add_argument("--repeat", type=int, default=5)
    lst.add_argument("--speed", type=float, default=20)
    w = sub.add_parser("watch")
    w.add_argument("--watchers", type=int, default=20)
    w.add_argument("--seconds", type=float, default=120)
    w.add_argument("--speed", type=float, default=1)
    args = p.parse_args()
    result = bench_list(args) if args.what == "list" else bench_watch(args)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
