"""What a Lease renewal costs when it falls at an instant of its own, against one that shares
its instant with the others (session 36, helper lease).

    python bench/lease_instants.py [NODES] [SECONDS] [SPREAD]

NODES kubelets (default 500) on the shared heartbeat ticker, each renewing its Lease every
10 s, the node lifecycle controller watching the Leases, and another task waking every
second. The kubelets start SPREAD seconds apart in all (default 10: every renewal at an
instant of its own, as in the autoscalers' days; 0: all in phase, as in
diurnal-1000nodes-24h). After a minute of warm-up, SECONDS of simulated time (default 1200)
are measured: CPU seconds of the process per renewal. Run it from each tree's own directory
(``cd TREE && PYTHONPATH=$PWD python bench/lease_instants.py``), alternated.
"""

from __future__ import annotations

import random
import sys
import time

from agents.controllers.nodelifecycle import NodeLifecycleController
from agents.kubelet import Kubelet, KubeletSettings
from agents.kubelet.ticker import Ticker
from emulator.base.runtime.loop import new_virtual_loop
from tests.builders import node
from tests.cluster import open_cluster


async def main(nodes: int, seconds: float, spread: float) -> str:
    async with open_cluster(seed=1) as c:
        ticker = Ticker(c.clock, "kubelet:heartbeats")
        c.spawn(ticker.run(), "heartbeats")
        await c.start(NodeLifecycleController(c.client("controller:nodelifecycle"), c.clock), "nodelifecycle")

        async def other() -> None:
            while True:
                await c.clock.sleep(1.0)

        c.spawn(other(), "other")
        settings = KubeletSettings(heartbeat_interval=10.0)
        for i in range(nodes):
            c.server.create(node(f"n{i}"))
        for i in range(nodes):
            await c.at(i * spread / nodes + 0.0001)
            name = f"n{i}"
            kubelet = Kubelet(c.client(f"kubelet:{name}"), name, c.clock, random.Random(i), settings, ticker=ticker)
            c.spawn(kubelet.run(), f"kubelet:{name}")
        await c.at(60.0)
        cpu, fired, stepped = time.process_time(), ticker.fired, getattr(ticker, "stepped", 0)
        await c.at(60.0 + seconds)
        cpu, fired = time.process_time() - cpu, ticker.fired - fired
        stepped = getattr(ticker, "stepped", 0) - stepped  # 0 before the ticker stepped
        return f"renewals {fired} cpu {cpu:.2f} s, {cpu / fired * 1e6:.1f} us a renewal; instants stepped {stepped}"


if __name__ == "__main__":
    args = [float(a) for a in sys.argv[1:]]
    nodes, seconds, spread = int(args[0]) if args else 500, args[1] if len(args) > 1 else 1200.0, 10.0
    if len(args) > 2:
        spread = args[2]
    loop = new_virtual_loop()
    try:
        print(loop.run_until_complete(main(nodes, seconds, spread)))
    finally:
        loop.close()
