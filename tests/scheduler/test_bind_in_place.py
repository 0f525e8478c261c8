"""The scheduler's own pod informer handed the bind in place: the binding cycle's
``client.bind`` returns with the pod already confirmed in the cache (the informer's Add of
an assumed pod), before ``finish_binding``, which then has nothing to do; upstream's cache
allows that order (the informer runs apart from the binding goroutine). The end state is
the one the woken informer (the oracle) reaches."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.metrics import SchedulingMetrics
from agents.scheduler.options import SchedulerOptions
from emulator.base.client.informer import Informer
from tests.scheduler.world import node, pod, world


async def _bind_order() -> tuple[list[Any], Any, int]:
    async with world() as w:
        sched = w.scheduler
        cache, client = sched.cache, sched.client
        log: list[Any] = []
        add_pod, finish_binding, bind = cache.add_pod, cache.finish_binding, client.bind

        def logged_add(p: Any) -> None:
            log.append(("add_pod", p.metadata.name, cache.is_assumed_pod(p)))
            add_pod(p)

        def logged_finish(p: Any) -> None:
            log.append(("finish_binding", p.metadata.name, cache.is_assumed_pod(p)))
            finish_binding(p)

        async def logged_bind(*args: Any, **kwargs: Any) -> Any:
            got = await bind(*args, **kwargs)
            log.append(("bound", args[1]))
            return got

        cache.add_pod = logged_add  # type: ignore[method-assign]
        cache.finish_binding = logged_finish  # type: ignore[method-assign]
        client.bind = logged_bind  # type: ignore[method-assign]
        w.server.create(node("n0", cpu="2"))
        w.server.create(pod("p", cpu="1"))
        await w.until(lambda: bool(w.pod("p").spec.node_name) and sched.metrics.scheduled == 1)
        await w.cluster.clock.sleep(1.0)
        dump = cache.dump()
        return log, (dump.assumed_pods, dict(dump.nodes["n0"].requested)), sched.metrics.scheduled


@pytest.mark.asyncio
async def test_the_bind_is_confirmed_in_the_cache_before_finish_binding() -> None:
    log, state, scheduled = await _bind_order()
    # the cycle checks ``is_assumed_pod`` before ``finish_binding``: confirmed already, so skipped
    assert log == [("add_pod", "p", True), ("bound", "p")]
    assert state == ((), {"cpu": 1000, "memory": 100 * 2**20})
    assert scheduled == 1


@pytest.mark.asyncio
async def test_the_woken_informer_confirms_after_finish_binding_to_the_same_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Informer, "deliver_in_place", False)
    log, state, scheduled = await _bind_order()
    assert log == [("bound", "p"), ("finish_binding", "p", True), ("add_pod", "p", True)]
    assert state == ((), {"cpu": 1000, "memory": 100 * 2**20})
    assert scheduled == 1


_BOUND = SchedulingMetrics.bound


async def _e2e(assume_cache: bool, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The e2e latencies of two pods created 10 ms apart and bound with 5 ms API calls."""
    seen: list[float] = []

    def logged(self: SchedulingMetrics, now: float, e2e: float) -> None:
        seen.append(round(e2e, 6))
        _BOUND(self, now, e2e)

    monkeypatch.setattr(SchedulingMetrics, "bound", logged)
    async with world(options=SchedulerOptions(assume_cache=assume_cache), api_latency=0.005) as w:
        sched = w.scheduler
        w.server.create(node("n0", cpu="4"))
        w.server.create(pod("p0", cpu="1"))
        await w.cluster.clock.sleep(0.01)
        w.server.create(pod("p1", cpu="1"))
        await w.until(lambda: sched.metrics.scheduled == 2)
        return seen


@pytest.mark.asyncio
@pytest.mark.parametrize("assume_cache", [True, False], ids=["assume", "no-assume"])
async def test_the_e2e_latency_is_from_first_sight_to_the_bind_returning(
    assume_cache: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # without the assume cache, the bind's event handed in place reaches the pod handler before
    # ``bind`` returns and forgets the pod's first sight: the latency is read before the bind
    in_place = await _e2e(assume_cache, monkeypatch)
    monkeypatch.setattr(Informer, "deliver_in_place", False)
    assert in_place == await _e2e(assume_cache, monkeypatch)
    assert in_place == [0.005, 0.005]  # the bind's API latency: each is scheduled at once
