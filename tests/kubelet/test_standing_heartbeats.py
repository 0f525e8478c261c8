"""Kubelets whose Lease renewals the API server holds (standing) beat only when their status
may have to be posted, and everything else happens as when every renewal is written: the
node status posts (the report frequency, after a foreign write to the node, after an image
pull), and the node lifecycle controller's verdict on a node whose kubelet stopped (Ready
Unknown at the same pass, with the same Events)."""

from __future__ import annotations

import random
from typing import Any

from msgspec.structs import replace

from agents.controllers.nodelifecycle import NodeLifecycleController
from agents.kubelet import Kubelet, KubeletSettings
from agents.kubelet.ticker import Ticker
from tests.builders import node, pod
from tests.clocks import run_virtual
from tests.cluster import open_cluster


async def _start(c: Any, standing: bool, count: int, spacing: float) -> tuple[Any, Ticker, dict[str, Any]]:
    """The lifecycle controller and ``count`` kubelets (10 s beats, 60 s reports) on one
    ticker, started ``spacing`` seconds apart: (the controller, the ticker, each kubelet's task)."""
    c.server.standing.allowed = standing
    ticker = Ticker(c.clock, "kubelet:heartbeats")
    c.spawn(ticker.run(), "heartbeats")
    controller = NodeLifecycleController(c.client("controller:nodelifecycle"), c.clock)
    await c.start(controller, "nodelifecycle")
    settings = KubeletSettings(heartbeat_interval=10.0, node_status_report_frequency=60.0)
    tasks = {}
    for i in range(count):
        c.server.create(node(f"n{i}"))
    for i in range(count):
        await c.at(i * spacing + 0.01)
        name = f"n{i}"
        kubelet = Kubelet(c.client(f"kubelet:{name}"), name, c.clock, random.Random(i), settings, ticker=ticker)
        tasks[name] = c.spawn(kubelet.run(), f"kubelet:{name}")
    return controller, ticker, tasks


def _run(*, standing: bool) -> tuple[list[tuple[Any, ...]], int, int]:
    """Three kubelets (10 s beats, 60 s reports) on one ticker, started 3.3 s apart, and the
    lifecycle controller; n1 relabelled at 95 s, a pod with an image bound to n2 at 130 s,
    n0's kubelet stopped at 200 s (its node stays). The writes but the Lease renewals as
    (time, verb, kind, name), and the renewals written and held."""

    async def main() -> tuple[list[tuple[Any, ...]], int, int]:
        async with open_cluster(seed=3) as c:
            _, ticker, tasks = await _start(c, standing, 3, 3.3)
            await c.at(95.0)
            n1 = c.server.get("Node", "n1")
            c.server.update(replace(n1, metadata=replace(n1.metadata, labels={**n1.metadata.labels, "x": "y"})))
            await c.at(130.0)
            p = pod("p", node="n2", image="registry/app:1")
            c.server.create(p)
            await c.at(200.0)
            tasks["n0"].cancel()
            await c.at(400.0)
            writes = [
                (round(w.time, 6), w.verb, w.kind, w.obj.metadata.name)
                for w in c.writes
                if not (w.kind == "Lease" and w.verb == "update")
            ]
            renewals = len([w for w in c.writes if w.kind == "Lease" and w.verb == "update"])
            return writes, renewals, ticker.fired

    return run_virtual(main())


def test_the_same_writes_as_when_every_renewal_is_written() -> None:
    reference, written, beats = _run(standing=False)
    standing, held_written, sparse_beats = _run(standing=True)
    assert standing == reference
    unknown = [w for w in reference if w[1] == "updateStatus" and w[3] == "n0" and w[0] > 200.0]
    assert unknown  # the lifecycle controller marked n0 Unknown after its kubelet stopped
    assert held_written < written / 3
    assert sparse_beats < 0.6 * beats  # a beat in 6 between reports, and two after each


def _probes(*, standing: bool) -> list[tuple[float, dict[str, float]]]:
    """Two kubelets (10 s beats) and the lifecycle controller; n0's Lease read at 57 s and 121 s
    (the read writes its last held renewal, whose watch event the controller then sees), n0's
    kubelet stopped at 150 s. The controller's probe stamps after each pass."""

    async def main() -> list[tuple[float, dict[str, float]]]:
        async with open_cluster(seed=5) as c:
            controller, _, tasks = await _start(c, standing, 2, 4.1)
            seen: list[tuple[float, dict[str, float]]] = []
            t = 10.5
            while t < 300.0:
                await c.at(t)
                if t in (55.5, 120.5):
                    await c.at(t + 1.5)
                    c.server.get("Lease", "n0", "kube-node-lease")
                if t == 145.5:
                    tasks["n0"].cancel()
                seen.append((t, dict(controller.probes._stamps)))
                t += 5.0
            return seen

    return run_virtual(main())


def test_a_held_renewal_seen_again_in_its_lease_event_is_not_a_new_renewal() -> None:
    """The controller keeps a held renewal's due as a number and compares it with the
    ``renewTime`` of the Lease event a read causes: the same renewal is not counted twice, so
    the probes (and n0's expiry after its kubelet stopped) are those of every renewal written."""
    reference = _probes(standing=False)
    assert _probes(standing=True) == reference
    assert "n0" not in reference[-1][1]  # expired after its kubelet stopped
    assert "n1" in reference[-1][1]
