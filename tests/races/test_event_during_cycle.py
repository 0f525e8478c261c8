"""Race 6, an event during the scheduling cycle (``scenarios/races/event-during-cycle.yaml``, seed 6).

Every cycle takes 1 s (``cycleCost``). `web-0` (2 CPUs) is popped at t≈1s; only `small-0`
(1 CPU) exists, so the cycle decides "unschedulable"; at t=1.4s, while the pod is in flight,
`big-0` is added. With in-flight tracking (``inFlightEvents: true``, the default) the NodeAdd
is recorded and replayed when the attempt fails: the pod goes to backoffQ and its next attempt
starts within its 1 s backoff and binds it to `big-0`. With ``inFlightEvents: false`` the event
is lost (with QueueingHints on or off: the pre-1.32 ``moveRequestCycle`` is off too): the pod
is parked in unschedulablePods although it fits. As shipped (``waitFor`` 30 s) the run then
fails twice over: the waitFor times out and the noMissedRequeue invariant names the pod.
Given time, the pod is stranded until the 5-minute leftover flush.
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.scheduler.framework.types import QueueingHint
from agents.scheduler.queue.scheduling_queue import DEFAULT_POD_MAX_IN_UNSCHEDULABLE
from emulator.app.scenario.invariants import NO_MISSED_REQUEUE
from emulator.app.scenario.schema import Scenario, WaitFor
from tests.races.racekit import Run, assert_passes, load, play, with_options
from tests.scheduler.queue.queue_helpers import NODE_ADD, FakeClock, Registry, always, fail, make_pod, make_queue, pop

pytestmark = pytest.mark.slow

NAME = "event-during-cycle"
SEED = 6
CYCLE_COST = 1.0
BACKOFF = 1.0
HINTS = [pytest.param(True, id="queueingHints"), pytest.param(False, id="noQueueingHints")]


def _attempts(run: Run) -> list[tuple[float, str | None]]:
    return [(start, selected) for start, pod, selected in run.attempts if pod == "default/web-0"]


def _patient(scenario: Scenario) -> Scenario:
    """The scenario with a waitFor long enough to see the 5-minute flush."""
    steps = [replace(s, timeout=600.0) if isinstance(s, WaitFor) else s for s in scenario.steps]
    return replace(scenario, steps=steps)


def test_the_scenario_ships_with_the_protection_on() -> None:
    opts = load(NAME).scheduler_options
    assert (opts.in_flight_events, opts.cycle_cost.fixed) == (True, CYCLE_COST)


@pytest.mark.parametrize("hints", HINTS)
def test_in_flight_event_requeues_the_pod_within_its_backoff(hints: bool) -> None:
    run = play(with_options(load(NAME), queueing_hints=hints), SEED, attempts=True)
    node_added = run.first(lambda w: w.kind == "Node" and w.verb == "create" and w.obj.metadata.name == "big-0")
    (first, none), (second, chosen) = _attempts(run)
    assert none is None
    assert chosen == "big-0"
    assert first < node_added.time < first + CYCLE_COST  # the node came while the pod was in flight
    assert second - (first + CYCLE_COST) <= BACKOFF
    assert [(pod, node) for _, pod, node in run.binds()] == [("web-0", "big-0")]
    assert_passes(run)


@pytest.mark.parametrize("hints", HINTS)
def test_without_the_protection_the_pod_is_stranded(hints: bool) -> None:
    run = play(with_options(load(NAME), queueing_hints=hints, in_flight_events=False), SEED, attempts=True)
    assert [start < 2 * CYCLE_COST + 0.1 for start, _ in _attempts(run)] == [True]  # never retried
    assert run.binds() == []
    assert run.result.waits_timed_out == ["waitFor podsRunning timed out after 30s"]
    assert run.violated() == [NO_MISSED_REQUEUE]
    detail = run.invariants[NO_MISSED_REQUEUE].first_detail
    assert "pod default/web-0 parked in unschedulablePods" in detail
    assert detail.endswith("(rejected by ['NodeResourcesFit']) fits node big-0 now")


@pytest.mark.parametrize("hints", HINTS)
def test_without_the_protection_only_the_five_minute_flush_frees_it(hints: bool) -> None:
    scenario = with_options(_patient(load(NAME)), queueing_hints=hints, in_flight_events=False)
    run = play(scenario, SEED, attempts=True)
    (first, _), (second, chosen) = _attempts(run)
    parked_at = first + CYCLE_COST
    assert chosen == "big-0"
    # The virtual-time gap: more than podMaxInUnschedulablePodsDuration, at most one flush
    # period (30 s) later.
    assert DEFAULT_POD_MAX_IN_UNSCHEDULABLE < second - parked_at <= DEFAULT_POD_MAX_IN_UNSCHEDULABLE + 30
    assert [(pod, node) for _, pod, node in run.binds()] == [("web-0", "big-0")]
    assert_passes(run)  # late, but nothing is left inconsistent


# --- the switch, at the queue ---------------------------------------------------------------


@pytest.mark.parametrize("hints", HINTS)
@pytest.mark.parametrize(
    ("in_flight_events", "where"),
    [pytest.param(True, "Backoff", id="protected"), pytest.param(False, "Unschedulable", id="unprotected")],
)
def test_queue_switch_decides_where_the_failed_pod_goes(hints: bool, in_flight_events: bool, where: str) -> None:
    clock = FakeClock()
    registry = Registry().register("NodeResourcesFit", NODE_ADD, always(QueueingHint.Queue))
    q = make_queue(clock, registry, queueing_hints=hints, in_flight_events=in_flight_events)
    q.add(make_pod("web-0"))
    qpi = pop(q)
    q.move_all_to_active_or_backoff(NODE_ADD, None, "big-0")  # arrives while web-0 is in flight
    assert q.statistics()["inflight_events"] == (1 if hints and in_flight_events else 0)
    assert fail(q, qpi, "NodeResourcesFit")
    assert q.where("default/web-0") == where
    assert not q.is_in_flight(qpi.uid)
