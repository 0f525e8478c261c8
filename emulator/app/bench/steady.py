"""Upstream scheduler_perf's steady state (``createPodsOp`` with ``steadyState``,
``createPodsSteadily``): ``count`` pods are created in the namespace; once all of them are
scheduled they are deleted (grace period 0) and the next ``count`` created, until ``duration``
is over. Throughput, when the op collects metrics, counts every pod bound in that time. As
upstream, a steady state in which no pod at all got scheduled fails the workload; the pods of
the last batch are left as they are (no wait for them).

The pods already there count: upstream deletes every pod of the namespace with a batch, so the
namespace should hold only this op's pods.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Final

from emulator.app.bench.stages import SCHEDULED
from emulator.app.bench.steps import PodsStep
from emulator.base.api.errors import ApiError

if TYPE_CHECKING:
    from emulator.app.bench.harness import _Play

__all__ = ["NOTHING_SCHEDULED", "create_steadily"]

NOTHING_SCHEDULED: Final = (
    "no pod at all got scheduled, either because of a problem or because the test interval was too small"
)


async def create_steadily(play: _Play, i: int, step: PodsStep) -> None:
    """Run the steady state of op ``i`` (``step.steady`` seconds), the measured phase closed at
    its end; upstream's error stops the workload."""
    play.ensure_namespace(step.namespace)
    play.expected.setdefault(step.namespace, 0)
    if step.collect_metrics:
        play.begin_measuring(f"createPods[{i}]", (step.namespace,), ())
    if error := await _steady(play, step):
        play.stopped_by, play.error = "error", f"createPods[{i}]: {error}"
    play.end_measuring()


async def _steady(play: _Play, step: PodsStep) -> str:
    assert step.steady is not None
    ns, clock, tracker = step.namespace, play.clock, play.tracker
    end = clock.now() + step.steady
    made = done = 0

    def batch() -> None:
        nonlocal made
        for _ in range(step.count):
            play.create_object(play.pod(step, made), ns)
            made += 1

    batch()
    while (left := end - clock.now()) > 0 and not play.out_of_time():
        if step.count and tracker.stages.count(ns, (), SCHEDULED) >= step.count:
            done += step.count
            for pod in play.server.list("Pod", namespace=ns)[0]:
                with contextlib.suppress(ApiError):  # already gone
                    play.server.delete("Pod", pod.metadata.name, ns, grace_period_seconds=0)
            batch()
            await asyncio.sleep(0)
            continue
        tracker.changed.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(left):
                await tracker.changed.wait()
    play.created[ns] = play.created.get(ns, 0) + made
    return "" if done + tracker.stages.count(ns, (), SCHEDULED) else NOTHING_SCHEDULED
