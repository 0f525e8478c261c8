"""The handler's dismissal of shared pod-update events (``SchedulingQueue.dismissed_event_ids``)
must only drop what no plugin registered for: a bound pod relabelled (``AssignedPod/
UpdatePodLabel``, registered by InterPodAffinity) still wakes a pod whose required pod
affinity it now satisfies, at once rather than at the unschedulable pods' flush."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from tests import builders
from tests.scheduler.world import node, pod, world


@pytest.mark.asyncio
async def test_a_relabelled_bound_pod_wakes_the_pod_whose_affinity_it_now_meets() -> None:
    async with world() as w:
        w.server.create(node("n1", labels={"kubernetes.io/hostname": "n1"}))
        w.server.create(pod("target", node="n1"))
        await w.until(lambda: w.pod("target").spec.node_name == "n1")
        term = builders.pod_term("kubernetes.io/hostname", builders.label_selector({"app": "x"}))
        w.server.create(pod("aff", affinity=builders.affinity(required_pods=[term])))
        await w.until(lambda: any(c.type == "PodScheduled" for c in w.pod("aff").status.conditions))
        assert not w.pod("aff").spec.node_name
        t0 = w.scheduler.clock.now()
        cur = w.pod("target")
        w.server.update(replace(cur, metadata=replace(cur.metadata, labels={"app": "x"})))
        await w.until(lambda: bool(w.pod("aff").spec.node_name), within=120.0)
        assert w.pod("aff").spec.node_name == "n1"
        # the unschedulable flush would move it only after 30 s (podMaxInUnschedulablePodsDuration 5 m,
        # flushed every 30 s): the relabel event itself must have moved it
        assert w.scheduler.clock.now() - t0 < 30, "woken only by the unschedulable flush"
