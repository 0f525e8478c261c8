"""A scheduler whose client is rate-limited (``clientConnection.qps``): v1.34's synchronous,
one-PATCH failure update holds the scheduling loop until its token comes, and the Events go
through a limiter of their own (upstream's separate events clientset)."""

from __future__ import annotations

import pytest

from agents.scheduler.scheduler import SchedulerOptions
from tests.scheduler.world import node, pod, world


def _scheduled_false(w, name: str) -> bool:  # type: ignore[no-untyped-def]
    return any(c.type == "PodScheduled" and c.status == "False" for c in w.pod(name).status.conditions)


@pytest.mark.asyncio
async def test_a_failure_patch_holds_the_loop_for_its_token() -> None:
    async with world(options=SchedulerOptions(client_qps=1.0, client_burst=1)) as w:
        w.server.create(node("small", cpu="1"))
        await w.until(lambda: w.scheduler.nodes.get("small") is not None)
        for name in ("big-1", "big-2"):
            w.server.create(pod(name, cpu="2"))
        w.server.create(pod("fits"))
        t1 = await w.until(lambda: _scheduled_false(w, "big-1"))
        t2 = await w.until(lambda: _scheduled_false(w, "big-2"))
        t3 = await w.until(lambda: w.pod("fits").spec.node_name == "small")
        # One token a second: big-2's patch waits a second after big-1's, and "fits" is not even
        # attempted until big-2's patch is sent (the loop awaits it); its bind takes the next token.
        assert t2 - t1 == pytest.approx(1.0, abs=0.02)
        assert t3 - t2 == pytest.approx(1.0, abs=0.02)
        calls = w.client.stats.calls
        assert calls["patch"] == 2  # one PATCH per failure ...
        assert calls.get("get", 0) == 0  # ... and no GET before it
        assert calls.get("updateStatus", 0) == 0
        failed = [e for e in w.server.list("Event")[0] if e.reason == "FailedScheduling"]
        assert sorted(e.involved_object.name for e in failed) == ["big-1", "big-2"]


@pytest.mark.asyncio
async def test_without_a_limit_the_loop_does_not_wait_for_the_status_update() -> None:
    async with world() as w:
        w.server.create(node("small", cpu="1"))
        await w.until(lambda: w.scheduler.nodes.get("small") is not None)
        for name in ("big-1", "big-2"):
            w.server.create(pod(name, cpu="2"))
        w.server.create(pod("fits"))
        t0 = w.clock.now()
        t3 = await w.until(lambda: w.pod("fits").spec.node_name == "small")
        assert t3 - t0 < 0.05
        assert w.client.rate_limiter is None
