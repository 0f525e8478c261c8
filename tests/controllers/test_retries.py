"""The controllers' retry timing, as named ``Backoff``s: ``swap_node_taints`` (five tries; a
Conflict re-reads at once, another error waits 20 ms inside its try) and the taint
eviction's five tries 10 ms apart (with upstream's wait after the last one)."""

from __future__ import annotations

import asyncio
import random

import pytest

from agents.controllers.common import swap_node_taints
from agents.controllers.tainteviction import EVICTION_RETRY, TaintEvictionController
from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Node, Pod, Taint
from emulator.base.api.errors import ApiError, Conflict, InternalError, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client, Interceptor
from emulator.base.client.retry import Backoff
from emulator.base.runtime.clock import LoopClock

TAINT = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")


def _setup() -> tuple[ApiServer, Client, LoopClock]:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    srv = ApiServer(clock, random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    srv.create(convert({"metadata": {"name": "n1"}}, Node))
    return srv, Client(srv, clock, random.Random(1), name="controller:test"), clock


def _failing(clock: LoopClock, verb: str, kind: str, errors: list[ApiError], seen: list[float]) -> Interceptor:
    async def interceptor(agent: str, v: str, k: str) -> None:
        if v == verb and k == kind:
            seen.append(round(clock.now(), 9))
            if errors:
                raise errors.pop(0)

    return interceptor


@pytest.mark.parametrize(
    ("errors", "ok", "updates", "end"),
    [
        pytest.param([], True, [0.0], 0.0, id="first-try"),
        pytest.param([Conflict("c")] * 2, True, [0.0, 0.0, 0.0], 0.0, id="conflicts-back-to-back"),
        pytest.param([InternalError("e")] * 2, True, [0.0, 0.02, 0.04], 0.04, id="errors-wait-20ms"),
        pytest.param([InternalError("e")] * 5, False, [0.0, 0.02, 0.04, 0.06, 0.08], 0.1, id="five-tries-then-false"),
        pytest.param([NotFound("gone")], False, [0.0], 0.0, id="not-found-gives-up"),
    ],
)
@pytest.mark.asyncio
async def test_swap_node_taints_timing(errors: list[ApiError], ok: bool, updates: list[float], end: float) -> None:
    srv, client, clock = _setup()
    seen: list[float] = []
    client.interceptor = _failing(clock, "update", "Node", list(errors), seen)
    assert await swap_node_taints(client, clock, None, "n1", [TAINT], []) is ok
    assert seen == updates
    assert round(clock.now(), 9) == end
    tainted = [t.key for t in srv.get("Node", "n1").spec.taints]
    assert tainted == ([TAINT.key] if ok else [])


def test_eviction_retry_is_five_tries_10ms_apart() -> None:
    assert Backoff(steps=5, duration=0.01) == EVICTION_RETRY


@pytest.mark.parametrize(
    ("failures", "evicted", "gets", "end"),
    [
        pytest.param(2, 1, [0.0, 0.01, 0.02], 0.02, id="third-try"),
        pytest.param(5, 0, [0.0, 0.01, 0.02, 0.03, 0.04], 0.05, id="fails-after-five-and-a-last-wait"),
    ],
)
@pytest.mark.asyncio
async def test_taint_eviction_retry_timing(failures: int, evicted: int, gets: list[float], end: float) -> None:
    srv, client, clock = _setup()
    srv.create(
        convert(
            {
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
            },
            Pod,
        )
    )
    seen: list[float] = []
    client.interceptor = _failing(clock, "get", "Pod", [InternalError(str(i)) for i in range(failures)], seen)
    controller = TaintEvictionController(client, clock)
    await controller._evict(("default", "p"))
    assert seen == gets
    assert round(clock.now(), 9) == end
    assert (controller.counts["evicted"], controller.counts["failed"]) == (evicted, 1 - evicted)
