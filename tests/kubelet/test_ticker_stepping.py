"""The ticker stepping the virtual clock itself (``Ticker.run``, ``LoopClock.advance_to``):
the same instants, in the same order against every other timer, as when it sleeps on a
timer for each instant; and the race it could create with the node lifecycle controller,
whose Lease informer is woken, not handed renewals in place: a renewal committed at the same
instant as the monitor's pass is seen by the next pass in both orders of their timers (as a
held one is), one at an earlier stepped instant always; handed in place, it would be seen by
that pass when the ticker's timer comes first."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from msgspec.structs import replace

from agents.controllers import NodeLifecycleController
from agents.kubelet.ticker import Ticker
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.loop import new_virtual_loop
from tests.builders import node
from tests.cluster import open_cluster

NS = "kube-node-lease"


class _NoStepping(LoopClock):
    """The reference: the ticker sleeps on a timer for every instant."""

    def advance_to(self, t: float) -> bool:
        return False


def _run(main: Any) -> Any:
    loop = new_virtual_loop()
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()


DUES = [0.5, 1.0, 1.0 + 1e-12, 1.75, 2.0, 2.0 + 1e-12, 2.5, 3.0, 3.25, 4.0, 4.5, 6.0]
OTHERS = [1.0, 2.0 + 5e-13, 3.0, 3.0 + 1e-3, 5.0]
"""Timers of another task: at an entry's instant, within the clock resolution after one,
just after one, between two; the deadline cancels the ticker at 6.0 (``--until``)."""


def _fire_log(stepping: bool) -> tuple[list[tuple[float, str]], int]:
    async def main() -> tuple[list[tuple[float, str]], int]:
        loop = asyncio.get_running_loop()
        clock = LoopClock(virtual=True) if stepping else _NoStepping(virtual=True)
        ticker = Ticker(clock)
        log: list[tuple[float, str]] = []
        for i, due in enumerate(DUES):
            ticker.push(due, lambda d, i=i: log.append((loop.time(), f"entry{i}@{d!r}")))

        async def other() -> None:
            for t in OTHERS:
                await clock.sleep_until(t)
                log.append((loop.time(), f"other@{t!r}"))

        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(ticker.run(), name="ticker")
            tg.create_task(other(), name="other")
            await clock.sleep_until(6.0)
            log.append((loop.time(), "deadline"))
            task.cancel()
        return log, ticker.stepped

    return _run(main)  # type: ignore[no-any-return]


def test_stepping_fires_at_the_same_instants_in_the_same_order_as_sleeping() -> None:
    stepped_log, stepped = _fire_log(stepping=True)
    reference, none = _fire_log(stepping=False)
    assert stepped_log == reference
    assert none == 0
    assert stepped > 0
    assert reference[-1] == (6.0, "deadline")  # the entry due at 6.0 is not fired
    assert not any("@6.0" in name for _, name in reference)


# --- the node lifecycle controller's Lease informer ----------------------------------------


def _probes(*, in_place: bool | None, ticker_first: bool) -> list[Any]:
    """Lease a renewed by one ticker at 0.25, 1.5 and 4.5 (a stepped instant), Lease b by
    another at 5.0, the monitor's instant (that ticker's timer made before or after the
    monitor's): the probes after each monitor pass (pending renewals, stamps). ``in_place``:
    the Lease informer's delivery forced on or off; None, the controller's own."""

    async def main() -> list[Any]:
        async with open_cluster(seed=1) as c:
            for name in ("a", "b"):
                c.server.create(node(name))
                meta = ObjectMeta(name=name, namespace=NS)
                c.server.create(Lease(metadata=meta, spec=LeaseSpec(holder_identity=name)))
            client = c.client("kubelet")
            ticker, other = Ticker(c.clock, "kubelet:heartbeats"), Ticker(c.clock, "b")

            def renew(ticker: Ticker, name: str) -> Any:
                def fire(due: float) -> None:
                    lease = c.server.get("Lease", name, NS)
                    spec = replace(lease.spec, renew_time=f"t{due:g}")
                    assert ticker.leases.add(client, lease, spec, lambda _new: None)

                return fire

            for due in (0.25, 1.5, 4.5):
                ticker.push(due, renew(ticker, "a"), batched=True)
            other.push(5.0, renew(other, "b"), batched=True)
            nlc = NodeLifecycleController(c.client("controller:nodelifecycle"), c.clock)
            if in_place is not None:
                nlc.leases.deliver_in_place = in_place  # type: ignore[misc]
            passes: list[Any] = []
            monitor = nlc.monitor

            async def logged() -> None:
                await monitor()
                probes = nlc.probes
                passes.append((c.clock.now(), sorted(probes._renewed), dict(probes._stamps)))

            nlc.monitor = logged  # type: ignore[method-assign]
            c.spawn(ticker.run(), "heartbeats")
            if ticker_first:
                c.spawn(other.run(), "b")
                await asyncio.sleep(0)  # its timer for 5.0 before the monitor's
                await c.start(nlc, "nodelifecycle")
            else:
                await c.start(nlc, "nodelifecycle")  # the monitor's timer for 5.0 first
                c.spawn(other.run(), "b")
            await c.at(12.0)
            return [passes, ticker.stepped]

    return _run(main)  # type: ignore[no-any-return]


@pytest.mark.parametrize("ticker_first", [True, False], ids=["ticker-timer-first", "monitor-timer-first"])
def test_a_renewal_at_the_monitors_instant_is_seen_by_the_next_pass(ticker_first: bool) -> None:
    eager, _ = _probes(in_place=False, ticker_first=ticker_first)
    own, _ = _probes(in_place=None, ticker_first=ticker_first)
    in_place, stepped = _probes(in_place=True, ticker_first=ticker_first)
    assert own == eager  # the controller's Lease informer is woken
    assert stepped > 0  # in place, 1.5 → 4.5 at least is stepped (no other timer between)
    # a's renewal of 4.5 (a stepped instant) is seen by the pass at 5.0; b's of 5.0 is not,
    # in either order (the informer's wake-up comes after the monitor's), but at 10.0, as
    # ``LeaseRenewals.mark`` (nodelifecycle) marks a held renewal
    assert [(t, stamps) for t, _, stamps in eager] == [
        (0.0, {"a": 0.0, "b": 0.0}),
        (5.0, {"b": 0.0, "a": 5.0}),
        (10.0, {"a": 5.0, "b": 10.0}),
    ]
    # why it is off: handed in place, b's renewal would be seen by the pass at 5.0 when the
    # ticker's timer comes first, where a held one is not (held and written runs would differ)
    b_seen = 5.0 if ticker_first else 10.0
    assert [(t, stamps) for t, _, stamps in in_place] == [
        (0.0, {"a": 0.0, "b": 0.0}),
        (5.0, {"a": 5.0, "b": 5.0} if ticker_first else {"b": 0.0, "a": 5.0}),
        (10.0, {"a": 5.0, "b": b_seen}),
    ]


# --- cancellation during a step ------------------------------------------------------------


def _cancelled_from_a_callback(stepping: bool) -> tuple[list[float], float]:
    """The ticker's own task cancelled by the entry at 1.0 (a flag only: nothing is made
    ready), later entries at 2, 3 and 4, another timer far away at 100."""

    async def main() -> tuple[list[float], float]:
        clock = LoopClock(virtual=True) if stepping else _NoStepping(virtual=True)
        ticker = Ticker(clock)
        log: list[float] = []
        task: asyncio.Task[None] | None = None

        def first(due: float) -> None:
            log.append(due)
            assert task is not None
            task.cancel()

        ticker.push(1.0, first)
        for due in (2.0, 3.0, 4.0):
            ticker.push(due, log.append)
        asyncio.get_running_loop().call_at(100.0, lambda: None)
        task = asyncio.create_task(ticker.run(), name="ticker")
        with pytest.raises(asyncio.CancelledError):
            await task
        return log, clock.now()

    return _run(main)  # type: ignore[no-any-return]


def test_a_cancel_requested_while_firing_stops_the_stepping() -> None:
    """Task.cancel() on the running ticker only sets a flag: stepping must not fire on."""
    assert _cancelled_from_a_callback(stepping=True) == ([1.0], 1.0)
    assert _cancelled_from_a_callback(stepping=False) == ([1.0], 1.0)


# --- a whole scenario, stepping and in-place drains against the timer-driven loop ----------

_NODES = "\n".join(
    f"""  - at: {0.37 + 1.3 * i:.2f}s
    create:
      - apiVersion: v1
        kind: Node
        metadata: {{name: n-{i}, labels: {{kubernetes.io/hostname: n-{i}}}}}
        status: {{capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}}}"""
    for i in range(12)
)
STAGGERED = f"""
name: staggered-partition
seed: 3
until: 4m
settle: 4m
kubelet: {{heartbeatInterval: 10s, nodeStatusReportFrequency: 5m, containerEvents: false}}
nodes:
  - count: 1
    namePrefix: base
    template:
      status: {{capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}}}
faults:
  - nodePartition: {{node: n-3, start: 70s, stop: 150s}}
  - nodePartition: {{node: n-6, start: 95s}}
objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: web, labels: {{app: web}}}}
    spec:
      replicas: 16
      selector: {{matchLabels: {{app: web}}}}
      template:
        metadata: {{labels: {{app: web}}}}
        spec:
          tolerations:
            - {{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 20}}
          containers:
            - name: web
              image: web:1
              resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}
steps:
{_NODES}
  - sleep: 3m
"""
"""Twelve kubelets registered 1.3 s apart (each renews alone; with fewer, the 10 s rounds leave
no instant the ticker could step to), no watch latency, two
partitioned nodes: the lifecycle controller marks them Unknown, taints and evicts."""


def test_a_staggered_partition_run_is_the_same_with_and_without_stepping(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from emulator.app.scenario.loader import load_scenario_text
    from emulator.app.scenario.runner import run_scenario
    from emulator.base.apiserver import store as store_module
    from emulator.base.apiserver import watch as watch_module
    from emulator.base.runtime.channel import Channel
    from emulator.base.runtime.loop import VirtualTimeEventLoop

    counts = {"steps": 0, "drains": 0}
    advance, settle_each = VirtualTimeEventLoop.advance, watch_module.settle_each

    def counted_advance(self: VirtualTimeEventLoop, when: float) -> bool:
        moved = advance(self, when)
        counts["steps"] += moved
        return moved

    def counted_settle(owed: list[Channel[Any]]) -> None:
        counts["drains"] += len(owed)  # the owed channels the hub (or the store, after a write) settles
        settle_each(owed)

    monkeypatch.setattr(VirtualTimeEventLoop, "advance", counted_advance)
    monkeypatch.setattr(watch_module, "settle_each", counted_settle)
    monkeypatch.setattr(store_module, "settle_each", counted_settle)
    stepped = run_scenario(load_scenario_text(STAGGERED, "staggered.yaml", Path(".")))
    assert counts["steps"] > 0, counts  # the new paths ran
    assert counts["drains"] > 0, counts
    monkeypatch.setattr(LoopClock, "advance_to", lambda self, t: False)
    reference = run_scenario(load_scenario_text(STAGGERED, "staggered.yaml", Path(".")))
    assert stepped.trace_hash == reference.trace_hash
    assert (stepped.pods, stepped.events) == (reference.pods, reference.events)
