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


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(SchedulerOptions(), id="no-limit"),
        pytest.param(SchedulerOptions(client_qps=100.0, client_burst=10), id="rate-limited"),
    ],
)
@pytest.mark.asyncio
async def test_a_failure_that_changes_nothing_sends_no_request(options: SchedulerOptions) -> None:
    """Upstream ``updatePod``: when the pod as popped already has this PodScheduled=False
    condition (and nomination), a failure with the same message sends no request at all; its
    Event is still recorded."""
    async with world(options=options) as w:
        w.server.create(node("small", cpu="1"))
        await w.until(lambda: w.scheduler.nodes.get("small") is not None)
        w.server.create(pod("big", cpu="2"))
        await w.until(lambda: _scheduled_false(w, "big"))
        queued = w.scheduler.queue.unschedulable_pods
        await w.until(lambda: any(p.status.conditions for p in queued() if p.metadata.name == "big"))
        calls = w.client.stats.calls
        assert calls.get("patch", 0) == 1
        w.scheduler.queue.activate([w.pod("big")])  # the same attempt again: the same message
        await w.until(lambda: w.scheduler.metrics.attempts == 2)
        # (the first PATCH changed the pod's resourceVersion, part of the Event series key)
        await w.until(lambda: sum(e.series.count if e.series else 1 for e in _failed(w)) == 2)
        assert calls.get("patch", 0) == 1
        assert calls.get("get", 0) == calls.get("updateStatus", 0) == 0


def _failed(w) -> list:  # type: ignore[no-untyped-def,type-arg]
    return [e for e in w.server.list("Event")[0] if e.reason == "FailedScheduling"]
