"""``Ticker`` (coalesced timers) and ``run_inline``, and the kubelets' heartbeats on a shared
ticker: the same Lease and node writes, at the same instants and in the same order, as the
reference (a sleeping task per node), whether kubelets start in phase or not, calls have
latency, Lease writes fail and are retried, heartbeats are paused, or a kubelet stops."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.kubelet import Kubelet, KubeletSettings
from agents.kubelet.ticker import Ticker, run_inline
from emulator.base.api.core import Pod
from emulator.base.api.errors import InternalError
from emulator.base.client.client import Latency
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.loop import new_virtual_loop
from tests.builders import node
from tests.cluster import open_cluster
from tests.kubelet.test_quiet_heartbeats import ACTIONS
from tests.kubelet.test_quiet_heartbeats import NODE as QUIET_NODE
from tests.kubelet.test_quiet_heartbeats import _apply as apply_action

# --- Ticker ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        pytest.param([(1.0, "a")], [(1.0, "a")], id="one"),
        pytest.param([(2.0, "a"), (1.0, "b")], [(1.0, "b"), (2.0, "a")], id="earliest-first"),
        pytest.param([(1.0, "a"), (1.0, "b"), (1.0, "c")], [(1.0, "a"), (1.0, "b"), (1.0, "c")], id="ties-fifo"),
        pytest.param([(0.5, "a"), (1.25, "b"), (0.5, "c")], [(0.5, "a"), (0.5, "c"), (1.25, "b")], id="mixed"),
    ],
)
def test_ticker_fires_at_the_due_times_in_push_order(
    entries: list[tuple[float, str]], expected: list[tuple[float, str]]
) -> None:
    async def main() -> list[tuple[float, str]]:
        clock = LoopClock(virtual=True)
        ticker = Ticker(clock)
        fired: list[tuple[float, str]] = []
        for due, name in entries:
            ticker.push(due, lambda d, n=name: fired.append((clock.now(), n)) if d == clock.now() else None)
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(ticker.run(), name="ticker")
            await clock.sleep(10)
            task.cancel()
        return fired

    loop = new_virtual_loop()
    try:
        assert loop.run_until_complete(main()) == expected
    finally:
        loop.close()


def test_ticker_refuses_an_entry_before_its_target_and_refires_pushed_entries() -> None:
    async def main() -> list[float]:
        clock = LoopClock(virtual=True)
        ticker = Ticker(clock)
        fired: list[float] = []

        def again(due: float) -> None:
            fired.append(clock.now())
            if len(fired) < 3:
                ticker.push(due + 2.0, again)

        ticker.push(5.0, again)
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(ticker.run(), name="ticker")
            await clock.sleep(1)
            assert not ticker.accepts(4.0)
            with pytest.raises(ValueError, match="before its target"):
                ticker.push(4.0, again)
            assert ticker.accepts(5.0)
            await clock.sleep(20)
            assert ticker.statistics() == {"entries": 0, "fired": 3, "wakeups": 3, "leaseFlushes": 0}
            task.cancel()
        return fired

    loop = new_virtual_loop()
    try:
        assert loop.run_until_complete(main()) == [5.0, 7.0, 9.0]
    finally:
        loop.close()


@pytest.mark.parametrize(
    "entries",
    [
        pytest.param([(1.0, "g", "a"), (1.0, "g", "b"), (1.0, "g", "c")], id="one-run"),
        pytest.param([(1.0, "g", "a"), (1.0, "", "x"), (1.0, "g", "b")], id="split-by-a-plain-entry"),
        pytest.param([(1.0, "g", "a"), (1.0, "h", "b"), (1.0, "g", "c")], id="two-groups-interleaved"),
        pytest.param([(2.0, "g", "a"), (1.0, "g", "b"), (1.0, "", "x"), (2.0, "g", "c")], id="two-instants"),
    ],
)
def test_ticker_fires_group_members_in_push_order_in_runs(entries: list[tuple[float, str, str]]) -> None:
    """Members of a group (``push_member``) fire as they would alone: at their due time, in
    push order among the other entries; a run of consecutive members is one call."""

    async def main() -> tuple[list[tuple[float, str]], list[list[str]]]:
        clock = LoopClock(virtual=True)
        ticker = Ticker(clock)
        fired: list[tuple[float, str]] = []
        calls: list[list[str]] = []

        def group(due: float, members: list[str]) -> None:
            calls.append(members)
            fired.extend((due, m) for m in members)

        def other(due: float, members: list[str]) -> None:
            group(due, members)

        for due, name, member in entries:
            if name:
                ticker.push_member(due, group if name == "g" else other, member)
            else:
                ticker.push(due, lambda d, m=member: fired.append((d, m)))
        async with asyncio.TaskGroup() as tg:
            task = tg.create_task(ticker.run(), name="ticker")
            await clock.sleep(10)
            task.cancel()
        return fired, calls

    loop = new_virtual_loop()
    try:
        fired, calls = loop.run_until_complete(main())
    finally:
        loop.close()
    assert fired == sorted(((due, m) for due, _, m in entries), key=lambda e: e[0])
    runs: list[list[str]] = []
    last = None
    for due, name, member in sorted(entries, key=lambda e: e[0]):
        if name and runs and last == (due, name):
            runs[-1].append(member)
        elif name:
            runs.append([member])
        last = (due, name)
    assert calls == runs


# --- run_inline -----------------------------------------------------------------------------


async def _steps(log: list[str], clock: LoopClock, waits: int) -> None:
    log.append("start")
    for i in range(waits):
        await clock.sleep(1.0)
        log.append(f"woke {i} at {clock.now():g}")
    log.append("end")


@pytest.mark.parametrize(
    ("waits", "inline", "log"),
    [
        pytest.param(0, True, ["start", "end"], id="never-suspends"),
        pytest.param(1, False, ["start", "woke 0 at 1", "end"], id="one-wait"),
        pytest.param(3, False, ["start", "woke 0 at 1", "woke 1 at 2", "woke 2 at 3", "end"], id="three-waits"),
    ],
)
def test_run_inline_finishes_what_it_can_and_hands_back_the_rest(waits: int, inline: bool, log: list[str]) -> None:
    async def main() -> list[str]:
        clock = LoopClock(virtual=True)
        got: list[str] = []
        rest = run_inline(_steps(got, clock, waits))
        assert (rest is None) == inline
        assert got[0] == "start"
        if rest is not None:
            assert got == ["start"]  # stopped at its first suspension
            await rest
        return got

    loop = new_virtual_loop()
    try:
        assert loop.run_until_complete(main()) == log
    finally:
        loop.close()


def test_run_inline_rest_passes_cancellation_in_and_exceptions_out() -> None:
    async def failing(clock: LoopClock) -> None:
        await clock.sleep(1.0)
        raise KeyError("boom")

    async def main() -> None:
        clock = LoopClock(virtual=True)
        log: list[str] = []
        rest = run_inline(_steps(log, clock, 5))
        assert rest is not None
        task = asyncio.get_running_loop().create_task(rest, name="rest")
        await clock.sleep(2.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert log == ["start", "woke 0 at 1", "woke 1 at 2"]
        rest = run_inline(failing(clock))
        assert rest is not None
        with pytest.raises(KeyError, match="boom"):
            await rest

    loop = new_virtual_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


# --- heartbeats on a ticker vs the reference --------------------------------------------------


class _Pause:
    """``KubeletFaults`` pausing one node's heartbeats in a window."""

    def __init__(self, node: str, start: float, stop: float) -> None:
        self.node, self.start, self.stop = node, start, stop
        self.clock: LoopClock | None = None

    def heartbeat_enabled(self, node: str, now: float) -> bool:
        return not (node == self.node and self.start <= now < self.stop)

    def pull_seconds(self, node: str, image: str, size: int, seconds: float, now: float) -> float:
        return seconds

    def start_failure(self, node: str, pod: Pod, now: float) -> tuple[str, str] | None:
        return None


def _lease_errors(start: float, stop: float) -> Callable[[LoopClock], Callable[[str, str, str], Awaitable[None]]]:
    def make(clock: LoopClock) -> Callable[[str, str, str], Awaitable[None]]:
        async def intercept(agent: str, verb: str, kind: str) -> None:
            if kind == "Lease" and verb == "update" and start <= clock.now() < stop:
                raise InternalError("injected")

        return intercept

    return make


NODES = ("node-a", "node-b", "node-c")


async def _heartbeats(shared: bool, case: dict[str, Any]) -> list[Any]:
    faults = case.get("pause")
    settings = KubeletSettings(heartbeat_interval=10.0, node_status_report_frequency=30.0, faults=faults)
    async with open_cluster(namespaces=("default", "kube-node-lease")) as c:
        ticker = Ticker(c.clock, "kubelet:heartbeats") if shared else None
        if ticker is not None:
            c.spawn(ticker.run(), "heartbeats")
        for name in NODES:
            c.server.create(node(name, cpu=None, memory=None, pods=None))
        c.writes.clear()
        for i, name in enumerate(NODES):
            await c.at(case["starts"][i])
            client = c.client(f"kubelet:{name}", api_latency=case.get("latency", 0.0), rng_seed=i)
            if "errors" in case:
                client.interceptor = case["errors"](c.clock)
            kubelet = Kubelet(client, name, c.clock, c.rng(i), settings, ticker=ticker)
            await c.start(kubelet, f"kubelet:{name}")
        if "stop" in case:
            at, name = case["stop"]
            await c.at(at)
            c.task(f"kubelet:{name}").cancel()
        await c.at(95.0)
    return [
        (w.time, w.verb, w.kind, w.obj.metadata.name, w.obj.metadata.resource_version)
        for w in c.writes
        if w.kind in ("Node", "Lease")
    ]


CASES = [
    pytest.param({"starts": (0.0, 0.0, 0.0)}, id="in-phase"),
    pytest.param({"starts": (0.0, 3.25, 7.5)}, id="out-of-phase"),
    pytest.param({"starts": (0.0, 15.0, 15.0)}, id="late-joiners"),
    pytest.param({"starts": (0.0, 0.0, 4.0), "latency": Latency(0.2, 0.1)}, id="api-latency"),
    pytest.param({"starts": (0.0, 0.0, 0.0), "errors": _lease_errors(18.0, 47.0)}, id="lease-errors-retried"),
    pytest.param({"starts": (0.0, 1.0, 2.0), "pause": _Pause("node-b", 25.0, 61.0)}, id="paused-heartbeats"),
    pytest.param({"starts": (0.0, 0.0, 0.0), "stop": (40.0, "node-b")}, id="kubelet-stopped-at-a-beat"),
    pytest.param({"starts": (0.0, 2.0, 0.0), "stop": (33.5, "node-a")}, id="kubelet-stopped-between-beats"),
]


@pytest.mark.parametrize("case", CASES)
def test_heartbeats_on_a_shared_ticker_write_what_the_reference_writes(case: dict[str, Any]) -> None:
    runs = []
    for shared in (False, True):
        loop = new_virtual_loop()
        try:
            runs.append(loop.run_until_complete(_heartbeats(shared, case)))
        finally:
            loop.close()
    reference, ticked = runs
    assert sum(1 for w in reference if w[2] == "Lease") >= 10
    assert ticked == reference


# --- quiet beats decided by the tick ----------------------------------------------------------


async def _other_writers(shared: bool, frequency: float, timeline: list[tuple[float, str]]) -> list[Any]:
    settings = KubeletSettings(
        heartbeat_interval=10.0, node_status_report_frequency=frequency, image_pull_bandwidth=10 * 2**20
    )
    async with open_cluster(namespaces=("default", "kube-node-lease")) as c:
        ticker = Ticker(c.clock) if shared else None
        if ticker is not None:
            c.spawn(ticker.run(), "heartbeats")
        c.server.create(node(QUIET_NODE, cpu=None, memory=None, pods=None))
        c.writes.clear()
        kubelet = Kubelet(c.client(f"kubelet:{QUIET_NODE}"), QUIET_NODE, c.clock, c.rng(0), settings, ticker=ticker)
        await c.start(kubelet, f"kubelet:{QUIET_NODE}")
        for i, (at, action) in enumerate(timeline):
            await c.at(at)
            apply_action(c.server, action, i)
        await c.at(timeline[-1][0] + 400.0 if timeline else 400.0)
    return [(w.time, w.verb, w.kind, w.new) for w in c.writes if w.kind in ("Node", "Lease")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    frequency=st.sampled_from([0.0, 10.0, 25.0, 300.0]),
    steps=st.lists(st.tuples(st.floats(0.01, 60.0, allow_nan=False), ACTIONS), max_size=6),
)
def test_quiet_ticked_beats_write_what_the_reference_writes(frequency: float, steps: list[tuple[float, str]]) -> None:
    """Other writers change the node between beats (not at a beat's instant: see heartbeat.py)."""
    timeline, at = [], 0.5
    for gap, action in steps:
        at += gap
        if at % 10.0:
            timeline.append((at, action))
    runs = []
    for shared in (False, True):
        loop = new_virtual_loop()
        try:
            runs.append(loop.run_until_complete(_other_writers(shared, frequency, timeline)))
        finally:
            loop.close()
    assert runs[1] == runs[0]
