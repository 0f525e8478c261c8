"""The runner's serve mode (``RunOptions.serve``), without HTTP: a stand-in ``serve``
callback records what it sees. Real-time loop at a high ``speed`` so that minutes of
simulated time take a fraction of a wall second; no assertion is about wall time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from emulator.app.commands.common import UsageError
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.schema import Scenario
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import Clock, PacedClock

pytestmark = pytest.mark.real_time

SCENARIO = """
name: served
seed: 5
settle: 10s
until: 20s
nodes:
- {count: 2, namePrefix: n, template: {status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}}}
steps:
- createPods: {count: 2, namePrefix: p, template: {spec: {containers: [{name: c, image: i}]}}}
"""


def _scenario() -> Scenario:
    return load_scenario_text(SCENARIO, source="<test>", base_dir=Path.cwd())


def test_serve_starts_after_the_nodes_before_the_steps_and_ends_the_run() -> None:
    seen: dict[str, object] = {}

    async def serve(api: ApiServer, clock: Clock, ready: Callable[[], None]) -> None:
        seen["nodes"] = sorted(n.metadata.name for n in api.list("Node")[0])
        await clock.sleep(5)  # binding takes a while: the steps wait for ready()
        seen["pods at start"] = len(api.list("Pod")[0])
        seen["clock"] = clock
        ready()
        await clock.sleep(120)  # past settle (10s) and the scenario's until (20s): neither ends it
        seen["pods at end"] = len(api.list("Pod")[0])

    result = run_scenario(_scenario(), RunOptions(serve=serve, speed=1000))
    assert seen["nodes"] == ["n-0", "n-1"]
    assert seen["pods at start"] == 0
    assert seen["pods at end"] == 2
    assert isinstance(seen["clock"], PacedClock)
    assert result.clock == "real"
    assert result.simulated_seconds >= 125
    assert result.pods["running"] == 2
    assert result.passed


def test_until_cancels_serve_through_the_task_group() -> None:
    cancelled: list[bool] = []

    async def serve(api: ApiServer, clock: Clock, ready: Callable[[], None]) -> None:
        ready()
        try:
            await asyncio.Event().wait()  # forever
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    result = run_scenario(_scenario(), RunOptions(serve=serve, speed=1000, until=50))
    assert cancelled == [True]
    assert result.simulated_seconds >= 50  # the set-up's wall time counts too: no upper bound


def test_a_serve_that_returns_before_listening_ends_the_run_without_the_steps() -> None:
    async def serve(api: ApiServer, clock: Clock, ready: Callable[[], None]) -> None:
        await clock.sleep(1)  # a signal before the server was bound

    result = run_scenario(_scenario(), RunOptions(serve=serve, speed=1000))
    assert result.pods["total"] == 0


def test_bad_input_from_serve_leaves_the_run_unwrapped() -> None:
    async def serve(api: ApiServer, clock: Clock, ready: Callable[[], None]) -> None:
        raise UsageError("--port 6443: cannot listen on 127.0.0.1:6443: Address already in use")

    with pytest.raises(UsageError, match=r"^--port 6443: cannot listen on 127\.0\.0\.1:6443: Address already in use$"):
        run_scenario(_scenario(), RunOptions(serve=serve, speed=1000))
