"""The scheduler's own pod informer handed the bind in place: the binding cycle's
``client.bind`` returns with the pod already confirmed in the cache (the informer's Add of
an assumed pod), before ``finish_binding``, which then has nothing to do; upstream's cache
allows that order (the informer runs apart from the binding goroutine). The end state is
the one the woken informer (the oracle) reaches."""

from __future__ import annotations

from typing import Any

import pytest

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
