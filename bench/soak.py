"""The HTTP soak (issue 24): `python -m emulator serve` on a churning cluster, paced at speed 1,
under 20 watchers and a few hundred mixed requests per second.

    python bench/soak.py [--seconds 60] [--rate 300] [--watchers 20] [--json]

serves bench/scenarios/soak.yaml (8 workers, a Deployment the soak scales between 2 and 16
replicas every second, so pods are created and deleted all along), opens the watchers (pods
cluster-wide and in default, nodes, events, leases, replicasets, deployments, configmaps;
each from a list's resourceVersion), sends --rate requests per second for --seconds (get/list
of pods and nodes, create/patch/delete of ConfigMaps, the scaling patches), then checks and
prints:
- latency p50/p99/max and requests/s achieved, errors (non-2xx) by operation;
- the server's RSS (VmRSS of its process) after warm-up and at the end;
- events lost: each watcher's objects replayed from its list through its events must equal
  a final list (at that list's resourceVersion), its resourceVersions must increase, and
  watchers of the same collection must have seen the same events after the latest start;
- clock lag: for each Event the watchers receive, wall time of receipt minus its eventTime
  (the simulated clock, calendar time in serve); its drift is the least lag in the last
  tenth of the run minus the least in the first tenth (pace kept: about 0).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_bench import Served

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "soak.yaml"
WATCHED = [  # (collection path, watchers)
    ("/api/v1/pods", 5),
    ("/api/v1/namespaces/default/pods", 4),
    ("/api/v1/nodes", 3),
    ("/api/v1/events", 3),
    ("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", 2),
    ("/apis/apps/v1/namespaces/default/replicasets", 1),
    ("/apis/apps/v1/namespaces/default/deployments", 1),
    ("/api/v1/namespaces/default/configmaps", 1),
]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _p99(ordered: list[float]) -> float:
    return ordered[int(0.99 * (len(ordered) - 1))]


def _micro(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass
class Watcher:
    path: str
    start_rv: int = 0
    initial: dict[str, int] = field(default_factory=dict)
    events: list[tuple[str, str, int]] = field(default_factory=list)  # (type, uid, rv)
    ended: str = ""


class Soak:
    def __init__(self, served: Served, seconds: float, rate: float, watchers: int) -> None:
        self.served = served
        self.seconds = seconds
        self.rate = rate
        self.headers = {"Authorization": f"Bearer {served.token}"} if served.token else {}
        per = [(p, n) for p, n in WATCHED]
        scale = watchers / sum(n for _, n in per)
        self.watchers = [Watcher(p) for p, n in per for _ in range(max(1, round(n * scale)))]
        self.latencies: list[float] = []
        self.errors: dict[str, int] = defaultdict(int)
        self.by_op: dict[str, list[float]] = defaultdict(list)
        self.lags: list[tuple[float, float]] = []  # (wall received, received - eventTime)
        self.configmaps: deque[str] = deque()
        self.names = itertools.count()
        self.rng = random.Random(24)
        self.stop = asyncio.Event()

    async def call(self, s: aiohttp.ClientSession, op: str, method: str, path: str, body: Any = None) -> Any:
        headers = dict(self.headers)
        if method == "PATCH":
            headers["Content-Type"] = "application/merge-patch+json"
        start = time.perf_counter()
        async with s.request(method, self.served.url + path, json=body, headers=headers, ssl=self.served.tls) as r:
            data = await r.read()
        self.latencies.append(took := time.perf_counter() - start)
        self.by_op[op].append(took)
        if r.status >= 300:
            self.errors[f"{op} {r.status}"] += 1
            return None
        return json.loads(data)

    async def watch(self, s: aiohttp.ClientSession, w: Watcher) -> None:
        url = self.served.url + w.path
        async with s.get(url, headers=self.headers, ssl=self.served.tls) as r:
            listed = await r.json()
        w.start_rv = int(listed["metadata"]["resourceVersion"])
        w.initial = {o["metadata"]["uid"]: int(o["metadata"]["resourceVersion"]) for o in listed["items"]}
        query = f"?watch=1&resourceVersion={w.start_rv}&timeoutSeconds=3600"
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with s.get(url + query, headers=self.headers, ssl=self.served.tls, timeout=timeout) as r:
            async for line in r.content:
                got = time.time()
                ev = json.loads(line)
                obj = ev["object"]
                if ev["type"] not in ("ADDED", "MODIFIED", "DELETED"):
                    w.ended = f"{ev['type']}: {obj.get('message', '')}"
                    return
                meta = obj["metadata"]
                w.events.append((ev["type"], meta["uid"], int(meta["resourceVersion"])))
                if ev["type"] == "ADDED" and obj.get("kind") == "Event" and obj.get("eventTime"):
                    self.lags.append((got, got - _micro(obj["eventTime"])))
        w.ended = w.ended or "stream ended"

    async def one(self, s: aiohttp.ClientSession) -> None:
        ns = "/api/v1/namespaces/default"
        pick = self.rng.random()
        if pick < 0.25:
            await self.call(s, "get pod", "GET", f"{ns}/pods?limit=1")
        elif pick < 0.40:
            await self.call(s, "list pods", "GET", f"{ns}/pods")
        elif pick < 0.50:
            await self.call(s, "list nodes", "GET", "/api/v1/nodes")
        elif pick < 0.55:
            await self.call(s, "get deployment", "GET", "/apis/apps/v1/namespaces/default/deployments/churn")
        elif pick < 0.75:
            name = f"soak-{next(self.names)}"
            body = {"metadata": {"name": name}, "data": {"n": "0"}}
            if await self.call(s, "create configmap", "POST", f"{ns}/configmaps", body) is not None:
                self.configmaps.append(name)
        elif pick < 0.90 and len(self.configmaps) > 20:
            name = self.configmaps[-1 - self.rng.randrange(10)]  # not one a delete may have in flight
            await self.call(s, "patch configmap", "PATCH", f"{ns}/configmaps/{name}", {"data": {"n": str(pick)}})
        elif len(self.configmaps) > 20:
            name = self.configmaps.popleft()
            await self.call(s, "delete configmap", "DELETE", f"{ns}/configmaps/{name}")

    async def load(self, s: aiohttp.ClientSession, start: float, lanes: int, lane: int) -> None:
        for i in itertools.count(lane, lanes):
            due = start + i / self.rate
            if due >= start + self.seconds:
                return
            if (wait := due - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            await self.one(s)

    async def churn(self, s: aiohttp.ClientSession, start: float) -> None:
        path = "/apis/apps/v1/namespaces/default/deployments/churn"
        for i in itertools.count():
            if time.monotonic() >= start + self.seconds:
                return
            await self.call(s, "scale", "PATCH", path, {"spec": {"replicas": 16 if i % 2 == 0 else 2}})
            await asyncio.sleep(1.0)

    async def run(self) -> dict[str, Any]:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as s:
            watches = [asyncio.create_task(self.watch(s, w)) for w in self.watchers]
            await asyncio.sleep(1.0)  # watchers listed and watching
            rss_start = rss_kib(self.served.proc.pid)
            start = time.monotonic()
            lanes = 64
            await asyncio.gather(self.churn(s, start), *(self.load(s, start, lanes, k) for k in range(lanes)))
            elapsed = time.monotonic() - start
            requests = len(self.latencies)
            latencies = sorted(self.latencies)
            rss_end = rss_kib(self.served.proc.pid)
            await asyncio.sleep(2.0)  # the last writes reach the watchers
            finals = {}
            for path in {w.path for w in self.watchers}:
                async with s.get(self.served.url + path, headers=self.headers, ssl=self.served.tls) as r:
                    finals[path] = await r.json()
            await asyncio.sleep(1.0)  # events up to the final lists' revisions delivered
            for t in watches:
                t.cancel()
            await asyncio.gather(*watches, return_exceptions=True)
        lost = self.check(finals)
        return {
            "seconds": round(elapsed, 1),
            "requests": requests,
            "requests_per_s": round(requests / elapsed, 1),
            "latency_ms": {
                "p50": round(1000 * statistics.median(latencies), 2),
                "p99": round(1000 * _p99(latencies), 2),
                "max": round(1000 * latencies[-1], 2),
            },
            "p99_ms_by_op": {op: round(1000 * _p99(sorted(v)), 1) for op, v in sorted(self.by_op.items())},
            "errors": dict(self.errors),
            "rss_mib": {"start": round(rss_start / 1024, 1), "end": round(rss_end / 1024, 1)},
            "watchers": len(self.watchers),
            "watch_events": sum(len(w.events) for w in self.watchers),
            "events_lost": lost,
            "clock": self.clock(start),
        }

    def check(self, finals: dict[str, Any]) -> list[str]:
        """Everything a watcher missed or saw wrong, as sentences (empty: nothing lost)."""
        problems = []
        by_path: dict[str, list[Watcher]] = defaultdict(list)
        for w in self.watchers:
            by_path[w.path].append(w)
            if w.ended:
                problems.append(f"{w.path}: the watch ended early ({w.ended})")
            rvs = [rv for _, _, rv in w.events]
            if any(b <= a for a, b in itertools.pairwise(rvs)) or (rvs and rvs[0] <= w.start_rv):
                problems.append(f"{w.path}: resourceVersions out of order")
            final = finals[w.path]
            at = int(final["metadata"]["resourceVersion"])
            want = {o["metadata"]["uid"]: int(o["metadata"]["resourceVersion"]) for o in final["items"]}
            have = dict(w.initial)
            for kind, uid, rv in w.events:
                if rv > at:
                    break
                if kind == "DELETED":
                    have.pop(uid, None)
                else:
                    have[uid] = rv
            if have != want:
                diff = len(set(have.items()) ^ set(want.items()))
                problems.append(f"{w.path}: replayed state differs from the list at {at} ({diff} entries)")
        for path, group in by_path.items():
            since = max(w.start_rv for w in group)
            seen = {tuple(e for e in w.events if e[2] > since) for w in group}
            if len(seen) > 1:
                problems.append(f"{path}: {len(group)} watchers saw different events after {since}")
        return problems

    def clock(self, start: float) -> dict[str, Any]:
        if not self.lags:
            return {"samples": 0}
        wall0 = min(t for t, _ in self.lags)
        wall1 = max(t for t, _ in self.lags)
        tenth = max((wall1 - wall0) / 10, 1.0)
        first = min(lag for t, lag in self.lags if t <= wall0 + tenth)
        last = min(lag for t, lag in self.lags if t >= wall1 - tenth)
        return {
            "samples": len(self.lags),
            "lag_start_s": round(first, 3),
            "lag_end_s": round(last, 3),
            "drift_s": round(last - first, 3),
        }


def soak(seconds: float, rate: float, watchers: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        served = Served(SCENARIO, speed=1.0, tmp=Path(tmp))
        try:
            figures = asyncio.run(Soak(served, seconds, rate, watchers).run())
        finally:
            served.stop()  # raises when serve did not exit cleanly
        return figures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--rate", type=float, default=300.0, help="requests per second")
    p.add_argument("--watchers", type=int, default=20)
    p.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    args = p.parse_args()
    figures = soak(args.seconds, args.rate, args.watchers)
    if args.json:
        print(json.dumps(figures))
        return
    lat = figures["latency_ms"]
    print(f"requests     {figures['requests']} in {figures['seconds']} s = {figures['requests_per_s']}/s")
    print(f"latency ms   p50 {lat['p50']}  p99 {lat['p99']}  max {lat['max']}")
    print(f"p99 ms by op {figures['p99_ms_by_op']}")
    print(f"errors       {figures['errors'] or 'none'}")
    print(f"RSS MiB      start {figures['rss_mib']['start']}  end {figures['rss_mib']['end']}")
    lost = figures["events_lost"] or "none"
    print(f"watchers     {figures['watchers']}, {figures['watch_events']} events, lost: {lost}")
    print(f"clock        {figures['clock']}")


if __name__ == "__main__":
    main()
