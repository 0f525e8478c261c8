"""The ticker's ``LeaseBatch``: renewals of one instant written in one pass are exactly the
writes made one by one. The races it could create, one test each: a watch opened between
two renewals of the instant (it must see the later ones only, after the earlier ones are
written), another write between two renewals (it keeps its revision between them), and a
renewal that cannot take the fast path (a Lease someone else edited: the batch is written
first, then its Conflict is resolved)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from msgspec.structs import replace

from agents.kubelet import Kubelet, KubeletSettings
from agents.kubelet.ticker import Ticker
from emulator.base.api.core import Namespace
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.apiserver import ApiServer, WriteRecord
from emulator.base.client.client import Client
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.loop import new_virtual_loop
from tests.builders import node
from tests.cluster import open_cluster

NS = "kube-node-lease"


def _run(main: Any) -> Any:
    loop = new_virtual_loop()
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()


def _world(clock: LoopClock) -> tuple[ApiServer, Client, list[WriteRecord]]:
    srv = ApiServer(clock, random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name=NS)))
    for name in ("a", "b", "c"):
        srv.create(Lease(metadata=ObjectMeta(name=name, namespace=NS), spec=LeaseSpec(holder_identity=name)))
    records: list[WriteRecord] = []
    srv.add_write_listener(records.append)
    return srv, Client(srv, clock, random.Random(1), name="kubelet"), records


def _renewal(ticker: Ticker, srv: ApiServer, client: Client, name: str, answers: list[str]) -> Any:
    def fire(due: float) -> None:
        lease = srv.get("Lease", name, NS)
        spec = replace(lease.spec, renew_time=f"t{due:g}")
        assert ticker.leases.add(client, lease, spec, lambda new: answers.append(new.metadata.resource_version))

    return fire


def test_a_watch_opened_between_two_renewals_of_an_instant_sees_only_the_later_ones() -> None:
    async def main() -> tuple[list[Any], list[str], list[str], int]:
        clock = LoopClock(virtual=True)
        srv, client, _ = _world(clock)
        ticker = Ticker(clock)
        answers: list[str] = []
        opened: list[Any] = []

        def open_watch(due: float) -> None:  # an ordinary entry: the batch is written before it
            opened.append((srv.revision, srv.watch("Lease", namespace=NS)))

        ticker.push(10.0, _renewal(ticker, srv, client, "a", answers), batched=True)
        ticker.push(10.0, open_watch)
        ticker.push(10.0, _renewal(ticker, srv, client, "b", answers), batched=True)
        ticker.push(10.0, _renewal(ticker, srv, client, "c", answers), batched=True)
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(ticker.run(), name="ticker")
            await clock.sleep(11.0)
            task.cancel()
        revision, watcher = opened[0]
        seen = [
            (e.object.metadata.name, e.object.metadata.resource_version) for e in watcher.channel.get_nowait_batch()
        ]
        return seen, answers, [srv.get("Lease", n, NS).metadata.resource_version for n in "abc"], revision

    seen, answers, stored, revision_at_open = _run(main)
    assert revision_at_open == 5  # a's renewal (rev 5) was written before the watch opened
    assert seen == [("b", "6"), ("c", "7")]
    assert answers == stored == ["5", "6", "7"]


def test_a_write_between_two_renewals_of_an_instant_keeps_its_place() -> None:
    async def main() -> list[tuple[int, str, str]]:
        clock = LoopClock(virtual=True)
        srv, client, records = _world(clock)
        ticker = Ticker(clock)
        answers: list[str] = []
        ticker.push(10.0, _renewal(ticker, srv, client, "a", answers), batched=True)
        ticker.push(10.0, lambda due: srv.create(Namespace(metadata=ObjectMeta(name="other"))))
        ticker.push(10.0, _renewal(ticker, srv, client, "b", answers), batched=True)
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(ticker.run(), name="ticker")
            await clock.sleep(11.0)
            task.cancel()
        return [(r.revision, r.kind, r.obj.metadata.name) for r in records]

    assert _run(main) == [(5, "Lease", "a"), (6, "Namespace", "other"), (7, "Lease", "b")]


def test_an_edited_lease_is_renewed_after_the_batch_before_it() -> None:
    async def main() -> tuple[list[tuple[float, str, str]], int, dict[str, str]]:
        async with open_cluster(namespaces=("default", NS)) as c:
            ticker = Ticker(c.clock, "kubelet:heartbeats")
            c.spawn(ticker.run(), "heartbeats")
            kubelets = {}
            for name in ("node-a", "node-b", "node-c"):
                c.server.create(node(name, cpu=None, memory=None, pods=None))
            for i, name in enumerate(("node-a", "node-b", "node-c")):
                settings = KubeletSettings(heartbeat_interval=10.0)
                kubelets[name] = Kubelet(c.client(f"kubelet:{name}"), name, c.clock, c.rng(i), settings, ticker=ticker)
                await c.start(kubelets[name], f"kubelet:{name}")
            await c.at(15.0)
            lease = c.server.get("Lease", "node-b", NS)
            c.server.update(replace(lease, metadata=replace(lease.metadata, labels={"edited": "yes"})))
            await c.at(25.0)
            at20 = [(w.time, w.verb, w.obj.metadata.name) for w in c.of("Lease") if w.time == 20.0]
            final = c.server.get("Lease", "node-b", NS)
            return at20, kubelets["node-b"]._reporter.conflicts, final.metadata.labels

    at20, conflicts, labels = _run(main)
    assert at20 == [(20.0, "update", "node-a"), (20.0, "update", "node-b"), (20.0, "update", "node-c")]
    assert conflicts == 1
    assert labels == {"edited": "yes"}
