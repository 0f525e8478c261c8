"""The scheduling and binding cycles end to end on the virtual clock (no kubelets)."""

from __future__ import annotations

import random

import pytest
from msgspec.structs import replace

from agents.scheduler.scheduler import SchedulerOptions, num_feasible_nodes_to_find, select_host
from emulator.base.api.core import Toleration
from emulator.base.api.errors import Conflict
from tests.scheduler.world import node, pod, world


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        pytest.param(None, 50, 50, id="fewer-than-100-all"),
        pytest.param(None, 100, 100, id="100"),
        pytest.param(None, 500, 230, id="500-adaptive-46pct"),
        pytest.param(None, 1000, 420, id="1000-adaptive-42pct"),
        pytest.param(None, 5000, 500, id="5000-adaptive-10pct"),
        pytest.param(None, 6000, 300, id="6000-adaptive-floor-5pct"),
        pytest.param(None, 15000, 750, id="15000"),
        pytest.param(0, 5000, 500, id="zero-is-adaptive"),
        pytest.param(1, 5000, 100, id="at-least-100"),
        pytest.param(50, 5000, 2500, id="explicit-50pct"),
        pytest.param(100, 5000, 5000, id="explicit-100pct"),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int | None, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def test_select_host_takes_the_top_score_and_samples_ties_uniformly() -> None:
    assert select_host([("a", 1), ("b", 7), ("c", 3)], random.Random(0)) == "b"
    rng = random.Random(1)
    picks = [select_host([("a", 5), ("b", 9), ("c", 9), ("d", 9)], rng) for _ in range(3000)]
    counts = {n: picks.count(n) for n in "abcd"}
    assert counts["a"] == 0
    for n in "bcd":
        assert 850 < counts[n] < 1150, counts
    again = random.Random(1)
    assert picks == [select_host([("a", 5), ("b", 9), ("c", 9), ("d", 9)], again) for _ in range(3000)]


@pytest.mark.asyncio
async def test_pods_are_bound_spread_by_least_allocated() -> None:
    async with world() as w:
        for i in range(3):
            w.server.create(node(f"n{i}"))
        for i in range(6):
            w.server.create(pod(f"p{i}", cpu="1"))
        await w.until(lambda: all(p.spec.node_name for p in w.pods()))
        per_node = {f"n{i}": 0 for i in range(3)}
        for p in w.pods():
            per_node[p.spec.node_name] += 1
            cond = next(c for c in p.status.conditions if c.type == "PodScheduled")
            assert cond.status == "True"
        assert per_node == {"n0": 2, "n1": 2, "n2": 2}
        events = [e for e in w.server.list("Event")[0] if e.reason == "Scheduled"]
        assert len(events) == 6
        assert events[0].message.startswith("Successfully assigned default/")
        m = w.scheduler.metrics
        assert (m.scheduled, m.unschedulable, m.errors) == (6, 0, 0)


@pytest.mark.asyncio
async def test_unschedulable_pod_gets_upstream_message_then_fits_after_node_add() -> None:
    async with world() as w:
        w.server.create(node("small-0", cpu="1"))
        w.server.create(node("small-1", cpu="1"))
        w.server.create(pod("big", cpu="2"))
        await w.until(lambda: any(c.type == "PodScheduled" for c in w.pod("big").status.conditions))
        cond = next(c for c in w.pod("big").status.conditions if c.type == "PodScheduled")
        assert (cond.status, cond.reason) == ("False", "Unschedulable")
        # DynamicResources (no claims) then DefaultPreemption (nothing to do) ran as PostFilter;
        # v1.34's FitError.Error appends their joined reasons after one space, no extra period.
        expected = (
            "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        )
        assert cond.message == expected
        failed = [e for e in w.server.list("Event")[0] if e.reason == "FailedScheduling"]
        assert [e.message for e in failed] == [expected]
        assert failed[0].type == "Warning"
        stats = w.scheduler.queue.statistics()
        assert stats["unschedulable"] == 1
        added_at = w.clock.now()
        w.server.create(node("big-0", cpu="4"))
        bound_at = await w.until(lambda: w.pod("big").spec.node_name == "big-0")
        # A NodeAdd event moves it at once (it is past its 1 s backoff): no 5-minute wait.
        assert bound_at - added_at < 1.5


@pytest.mark.asyncio
async def test_failure_message_counts_reasons_sorted_as_strings() -> None:
    async with world() as w:
        w.server.create(node("a", cpu="1"))
        w.server.create(node("b", cpu="4", pods="1"))
        w.server.create(pod("filler", node="b", cpu="100m"))
        w.server.create(node("c", cpu="1", memory="100Mi"))
        w.server.create(pod("p", cpu="2", memory="1Gi"))
        await w.until(lambda: any(c.type == "PodScheduled" for c in w.pod("p").status.conditions))
        cond = next(c for c in w.pod("p").status.conditions if c.type == "PodScheduled")
        # Upstream sorts the "<count> <reason>" strings themselves, so "2 ..." comes last.
        # Only b ("Too many pods", Unschedulable) is a preemption candidate, and its one pod has
        # no lower priority; a and c are too small outright (UnschedulableAndUnresolvable).
        assert cond.message == (
            "0/3 nodes are available: 1 Insufficient memory, 1 Too many pods, 2 Insufficient cpu. "
            "no new claims to deallocate, "
            "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling."
        )


@pytest.mark.asyncio
async def test_bind_conflict_is_forgotten_requeued_and_later_bound() -> None:
    injected: list[str] = []

    async def fail_first_bind(agent: str, verb: str, kind: str) -> None:
        if verb == "bind" and not injected:
            injected.append(agent)
            raise Conflict("injected conflict")

    async with world() as w:
        w.client.interceptor = fail_first_bind
        w.server.create(node("n0", cpu="2"))
        w.server.create(pod("p", cpu="1"))
        bound_at = await w.until(lambda: bool(w.pod("p").spec.node_name))
        assert injected == ["scheduler"]
        assert bound_at >= 1.0, "the retry waits for the pod's backoff"
        dump = w.scheduler.cache.dump()
        assert dump.assumed_pods == ()
        assert dump.nodes["n0"].requested.get("cpu") == 1000
        assert w.scheduler.metrics.errors == 1
        assert w.scheduler.metrics.scheduled == 1


@pytest.mark.asyncio
async def test_assumed_pods_count_in_the_next_cycle_before_the_watch_confirms() -> None:
    # A slow API (bind takes 1 s) means the second pod is scheduled while the first binding
    # is still in flight; the assume cache must already count the first pod.
    async with world(api_latency=1.0) as w:
        w.server.create(node("n0", cpu="1"))
        w.server.create(node("n1", cpu="1"))
        w.server.create(pod("a", cpu="1"))
        w.server.create(pod("b", cpu="1"))
        await w.until(lambda: all(p.spec.node_name for p in w.pods()))
        assert {w.pod("a").spec.node_name, w.pod("b").spec.node_name} == {"n0", "n1"}


@pytest.mark.asyncio
async def test_without_assume_two_pods_can_double_book_the_last_room() -> None:
    async with world(api_latency=1.0, options=SchedulerOptions(assume_cache=False)) as w:
        w.server.create(node("n0", cpu="1"))
        w.server.create(node("n1", cpu="1"))
        w.server.create(pod("a", cpu="1"))
        w.server.create(pod("b", cpu="1"))
        await w.until(lambda: all(p.spec.node_name for p in w.pods()))
        assert w.pod("a").spec.node_name == w.pod("b").spec.node_name


@pytest.mark.asyncio
async def test_multiple_profiles_pick_by_scheduler_name() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {
                "schedulerName": "bin-packer",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"scoringStrategy": {"type": "MostAllocated"}},
                    }
                ],
            },
        ],
    }
    async with world(config=config) as w:
        w.server.create(node("n0", cpu="4"))
        w.server.create(node("n1", cpu="4"))
        # Memory in proportion to CPU keeps BalancedAllocation at 100 everywhere, and n1 stays
        # the more allocated node once `spread` is on n0: no tie for either profile to break.
        w.server.create(pod("seed", cpu="2", memory="16Gi", node="n1"))
        w.server.create(pod("spread", cpu="1", memory="8Gi"))
        w.server.create(pod("packed", cpu="1", memory="8Gi", scheduler="bin-packer"))
        w.server.create(pod("nobody", cpu="1", scheduler="other-scheduler"))
        await w.until(lambda: bool(w.pod("spread").spec.node_name and w.pod("packed").spec.node_name))
        assert w.pod("spread").spec.node_name == "n0"
        assert w.pod("packed").spec.node_name == "n1"
        await w.clock.sleep(30)
        assert w.pod("nobody").spec.node_name == ""
        assert w.pod("nobody").status.conditions == []


@pytest.mark.asyncio
async def test_scheduling_gates_hold_the_pod_until_removed() -> None:
    async with world() as w:
        w.server.create(node("n0"))
        w.server.create(pod("gated", gates=["example.com/wait"]))
        await w.clock.sleep(10)
        assert w.pod("gated").spec.node_name == ""
        assert w.scheduler.metrics.attempts == 0
        current = w.pod("gated")
        from msgspec.structs import replace

        w.server.update(replace(current, spec=replace(current.spec, scheduling_gates=[])))
        await w.until(lambda: bool(w.pod("gated").spec.node_name))


@pytest.mark.asyncio
@pytest.mark.parametrize("hints", [True, False], ids=["queueing-hints", "no-queueing-hints"])
async def test_node_added_during_the_cycle_is_not_missed(hints: bool) -> None:
    # Each cycle takes 2 s of simulated time; the node that fits arrives in the middle of the
    # pod's (failing) cycle, so the cache snapshot the decision is made on does not have it.
    # With hints the event is replayed when the pod fails; without, moveRequestCycle sends the
    # pod to backoffQ. Either way it must not wait for the 5-minute leftover flush.
    options = SchedulerOptions(queueing_hints=hints, cycle_cost_fixed=2.0)
    async with world(options=options) as w:
        w.server.create(node("small", cpu="1"))
        w.server.create(pod("p", cpu="2"))
        await w.clock.sleep(1.0)  # mid-cycle
        assert w.scheduler.queue.statistics()["inflight"] == 1
        w.server.create(node("big", cpu="4"))
        bound_at = await w.until(lambda: w.pod("p").spec.node_name == "big")
        assert bound_at < 10.0
        assert w.scheduler.metrics.unschedulable == 1


@pytest.mark.asyncio
async def test_without_in_flight_protection_the_pod_waits_for_the_leftover_flush() -> None:
    # The same race with an event that arrives after the pod left the queue but that no
    # in-flight bookkeeping saw: the pod stays in unschedulablePods until the 5-minute
    # flush (upstream podMaxInUnschedulablePodsDuration) moves it.
    async with world(options=SchedulerOptions(cycle_cost_fixed=2.0)) as w:
        w.server.create(node("small", cpu="1"))
        w.server.create(pod("p", cpu="2"))
        await w.until(lambda: w.scheduler.queue.statistics()["unschedulable"] == 1)
        failed_at = w.clock.now()
        # A change nobody registered for (an annotation) cannot move the pod.
        from msgspec.structs import replace

        small = w.server.get("Node", "small")
        w.server.update(replace(small, metadata=replace(small.metadata, annotations={"x": "y"})))
        await w.clock.sleep(60)
        assert w.pod("p").spec.node_name == ""
        assert w.scheduler.metrics.unschedulable == 1
        # The leftover flush retries it after 5 minutes in unschedulablePods.
        await w.until(lambda: w.scheduler.metrics.unschedulable == 2, within=400)
        assert w.clock.now() - failed_at >= 300


@pytest.mark.asyncio
async def test_empty_cluster_is_unschedulable_not_an_error() -> None:
    async with world() as w:
        w.server.create(pod("p"))
        await w.until(lambda: any(c.type == "PodScheduled" for c in w.pod("p").status.conditions))
        cond = next(c for c in w.pod("p").status.conditions if c.type == "PodScheduled")
        assert (cond.reason, cond.message) == ("Unschedulable", "no nodes available to schedule pods")
        assert (w.scheduler.metrics.unschedulable, w.scheduler.metrics.errors) == (1, 0)


@pytest.mark.asyncio
async def test_a_pod_bound_by_someone_else_mid_cycle_does_not_crash_the_scheduler() -> None:
    # The cycle takes 2 s; meanwhile another client binds the pod. Assuming it then fails
    # (the cache already holds the bound pod): an error attempt, not a dead scheduler.
    async with world(options=SchedulerOptions(cycle_cost_fixed=2.0)) as w:
        w.server.create(node("n0"))
        w.server.create(pod("p"))
        await w.clock.sleep(1.0)
        await w.client.bind("default", "p", "n0")
        w.server.create(pod("q"))
        await w.until(lambda: bool(w.pod("q").spec.node_name))
        assert w.pod("p").spec.node_name == "n0"
        assert w.scheduler.metrics.errors == 1
        assert w.scheduler.cache.dump().assumed_pods == ()


@pytest.mark.asyncio
async def test_scheduled_counts_only_bound_pods_and_events_aggregate() -> None:
    async with world() as w:
        w.server.create(node("n0", cpu="1"))
        w.server.create(pod("big", cpu="2"))
        await w.until(lambda: w.scheduler.metrics.unschedulable == 1)
        # The 5-minute leftover flush retries it: same failure, same message. The first
        # failure's status update gave the pod a new resourceVersion, so (events/v1, as
        # upstream) the second failure is a new Event and the third its series.
        await w.until(lambda: w.scheduler.metrics.unschedulable == 3, within=700)
        await w.clock.sleep(1)
        events = [e for e in w.server.list("Event")[0] if e.reason == "FailedScheduling"]
        events.sort(key=lambda e: e.event_time or "")
        assert [e.series.count if e.series else 1 for e in events] == [1, 2]
        assert w.scheduler.metrics.scheduled == 0


@pytest.mark.asyncio
@pytest.mark.parametrize("cost", [0.0, 2.0])
async def test_a_cycle_that_waits_keeps_its_snapshots_pods_as_it_started(cost: float) -> None:
    # A bound pod's status write that changes nothing of the node is swapped into the cached
    # PodInfo in place (``Cache._swap``), which every snapshot clone shares. A cycle that holds
    # its snapshot across the cycleCost wait must keep reading the versions it started with
    # (the explain hook recomputes preemption's victims from it, ordered by start time): no
    # swap from the wait until the next cycle's snapshot.
    from msgspec.structs import replace

    from emulator.base.api.core import PodStatus

    async with world(options=SchedulerOptions(cycle_cost_fixed=cost)) as w:
        w.server.create(node("n0", cpu="4"))
        w.server.create(pod("a", cpu="1"))
        await w.until(lambda: bool(w.pod("a").spec.node_name))
        await w.clock.sleep(5.0)  # past a's cycle and binding
        if cost:  # a cycle under way, waiting; without cost, no cycle holds the snapshot
            w.server.create(pod("p", cpu="1"))
            await w.clock.sleep(cost / 2)
        held = w.scheduler.snapshot.get("n0") if cost else w.scheduler.cache._nodes["n0"]
        snapshot_a = next(pi for pi in held.pods if pi.pod.metadata.name == "a")
        before = snapshot_a.pod
        a = w.pod("a")
        w.server.update_status(replace(a, status=PodStatus(phase="Running", start_time="2026-01-01T00:00:00Z")))
        await w.clock.sleep(0.0)
        assert w.scheduler.cache.hold_swaps is (cost > 0)
        if cost:
            assert snapshot_a.pod is before  # the cycle's snapshot kept a's version
        else:
            assert snapshot_a.pod.status.phase == "Running"  # the cached PodInfo, swapped in place
        if cost:
            await w.until(lambda: bool(w.pod("p").spec.node_name))
        w.server.create(pod("q", cpu="1"))
        await w.until(lambda: bool(w.pod("q").spec.node_name))
        listed = next(pi for pi in w.scheduler.snapshot.get("n0").pods if pi.pod.metadata.name == "a")
        assert listed.pod.status.phase == "Running"  # the next cycle's snapshot shows the write


@pytest.mark.asyncio
async def test_the_failure_condition_carries_the_pods_generation() -> None:
    """1.34 (PodObservedGenerationTracking, beta, on): ``handleSchedulingFailure``'s
    PodScheduled=False has ``observedGeneration`` = the pod's ``metadata.generation``."""
    async with world() as w:
        w.server.create(node("small", cpu="1"))
        created = w.server.create(pod("big", cpu="2"))
        extra = Toleration(key="example.com/extra", operator="Exists")
        spec = replace(created.spec, tolerations=[*created.spec.tolerations, extra])
        assert w.server.update(replace(created, spec=spec)).metadata.generation == 2
        await w.until(lambda: any(c.type == "PodScheduled" for c in w.pod("big").status.conditions))
        cond = next(c for c in w.pod("big").status.conditions if c.type == "PodScheduled")
        assert (cond.status, cond.reason, cond.observed_generation) == ("False", "Unschedulable", 2)
