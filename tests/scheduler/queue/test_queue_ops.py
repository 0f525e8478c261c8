"""update / delete / activate in each sub-queue, requeue guards, pod-change events, observability."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.types import ActionType, ClusterEvent, EventResource, QueueingHint
from agents.scheduler.queue import SchedulingQueue, is_pod_updated, pod_scheduling_properties_change
from emulator.base.api.core import Pod
from tests.scheduler.queue.queue_helpers import (
    NODE_ADD,
    FakeClock,
    Registry,
    always,
    fail,
    make_pod,
    make_queue,
    names,
    pop,
)

POD_LABEL = ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel)


def queue_with_pod_in(where: str, clock: FakeClock, **kw: object) -> SchedulingQueue:
    """A queue holding pod ``p`` (nominated to n1) in ``where``, rejected by Fit or Labels."""
    reg = Registry().register("Fit", NODE_ADD).register("Labels", POD_LABEL, always(QueueingHint.Queue))
    q = make_queue(clock, reg, **kw)  # type: ignore[arg-type]
    if where == "Absent":
        return q
    q.add(make_pod("p", nominated="n1"))
    if where == "Active":
        return q
    qpi = pop(q)
    fail(q, qpi, "Labels" if where.endswith("labels") else "Fit")
    if where == "Backoff":
        q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.where("default/p") == where.split("-")[0]
    return q


@pytest.mark.parametrize(
    ("where", "queueing_hints", "elapsed", "labels_changed", "expected"),
    [
        pytest.param("Active", True, 0, True, "Active", id="active-updated-in-place"),
        pytest.param("Backoff", True, 0, True, "Backoff", id="backoff-updated-in-place"),
        pytest.param("Unschedulable", True, 5, True, "Unschedulable", id="unsched-hints-event-not-registered"),
        pytest.param("Unschedulable-labels", True, 0.1, True, "Backoff", id="unsched-hints-queue-backing-off"),
        pytest.param("Unschedulable-labels", True, 5, True, "Active", id="unsched-hints-queue"),
        pytest.param("Unschedulable-labels", True, 5, False, "Unschedulable", id="unsched-hints-status-only"),
        pytest.param("Unschedulable", False, 0.1, True, "Backoff", id="unsched-nohints-updated-backing-off"),
        pytest.param("Unschedulable", False, 5, True, "Active", id="unsched-nohints-updated"),
        pytest.param("Unschedulable", False, 5, False, "Unschedulable", id="unsched-nohints-status-only"),
        pytest.param("Absent", True, 0, True, "Active", id="absent-is-added"),
    ],
)
def test_update(where: str, queueing_hints: bool, elapsed: float, labels_changed: bool, expected: str) -> None:
    clock = FakeClock()
    q = queue_with_pod_in(where, clock, queueing_hints=queueing_hints)
    clock.advance(elapsed)
    old = make_pod("p", nominated="n1")
    new = make_pod("p", nominated="n1", labels={"v": "2"} if labels_changed else {}, resource_version="2")
    if not labels_changed:
        new = make_pod("p", nominated="n2", resource_version="2")  # a status-only change
    q.update(old, new)
    assert q.where("default/p") == expected
    qpi = q.get("default/p")
    assert qpi is not None
    assert qpi.pod is new
    assert [pi.pod for pi in q.nominated_pods_for_node(new.status.nominated_node_name)] == [new]
    assert sum(q.statistics()[k] for k in ("active", "backoff", "unschedulable")) == 1


@pytest.mark.parametrize("where", ["Active", "Backoff", "Unschedulable", "Absent"])
def test_delete(where: str) -> None:
    q = queue_with_pod_in(where, FakeClock())
    q.delete(make_pod("p"))
    assert q.where("default/p") is None
    assert q.nominated_pods_for_node("n1") == []
    assert q.pending_pods() == []


def test_delete_of_an_in_flight_pod_leaves_it_in_flight_until_done() -> None:
    q = make_queue(FakeClock(), Registry())
    q.add(make_pod("p"))
    qpi = pop(q)
    q.delete(qpi.pod)
    assert q.is_in_flight(qpi.uid)
    q.done(qpi.uid)
    assert not q.is_in_flight(qpi.uid)


@pytest.mark.parametrize(
    ("where", "expected", "move_request_cycle"),
    [
        pytest.param("Unschedulable", "Active", -1, id="from-unschedulable"),
        pytest.param("Backoff", "Active", 1, id="from-backoff"),
        pytest.param("Active", "Active", 0, id="already-active-counts-as-not-found"),
        pytest.param("Absent", None, 0, id="unknown-pod-ignored"),
    ],
)
def test_activate(where: str, expected: str | None, move_request_cycle: int) -> None:
    q = queue_with_pod_in(where, FakeClock())
    q.activate([make_pod("p")])
    assert q.where("default/p") == expected
    # A pod not found in unschedulablePods/backoffQ bumps moveRequestCycle (upstream), a found one does not.
    assert q.move_request_cycle == move_request_cycle


def test_activate_records_force_activate() -> None:
    q = queue_with_pod_in("Unschedulable", FakeClock())
    q.activate([make_pod("p")])
    assert q.incoming_pods()[("Active", "ForceActivate")] == 1


def test_add_unschedulable_if_not_present_refuses_queued_pods() -> None:
    clock = FakeClock()
    q = make_queue(clock, Registry())
    q.add(make_pod("p"))
    qpi = pop(q)
    q.add(make_pod("p"))  # informer re-add while in flight
    counts = (qpi.unschedulable_count, qpi.consecutive_errors_count, qpi.timestamp)
    clock.advance(3)
    assert fail(q, qpi, "Fit") is False
    assert (qpi.unschedulable_count, qpi.consecutive_errors_count, qpi.timestamp) == counts
    assert not q.is_in_flight(qpi.uid)  # done() happens whatever the outcome


def test_statistics_repr_and_pending_pods() -> None:
    clock = FakeClock()
    q = make_queue(clock, Registry().register("Fit", NODE_ADD))
    for n in ("a", "b", "c", "d", "e", "f"):
        q.add(make_pod(n))
    a, b, c = pop(q), pop(q), pop(q)
    fail(q, a, "Fit")
    fail(q, b, "Fit")
    q.move_all_to_active_or_backoff(NODE_ADD)  # a, b -> backoffQ
    fail(q, c, "Other")  # c saw the event in flight, but Other did not register it: unschedulable
    pop(q)  # d in flight
    q.add(make_pod("g", gates=["x"]))
    assert repr(q) == "<SchedulingQueue active=2 backoff=2 unschedulable=2 inflight=1>"
    assert q.statistics() == {
        "active": 2,
        "backoff": 2,
        "backoff_error": 0,
        "unschedulable": 2,
        "gated": 1,
        "inflight": 1,
        "inflight_events": 0,
        "nominated": 0,
        "scheduling_cycle": 4,
        "move_request_cycle": 3,
    }
    assert names(q.pending_pods()) == ["e", "f", "a", "b", "c", "g"]
    assert names(q.in_flight_pods()) == ["d"]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(make_pod("p"), make_pod("p", labels={"a": "b"}), ["UpdatePodLabel"], id="labels"),
        pytest.param(make_pod("p", cpu="2"), make_pod("p", cpu="1"), ["UpdatePodScaleDown"], id="scale-down"),
        pytest.param(make_pod("p", cpu="2"), make_pod("p"), ["UpdatePodScaleDown"], id="request-removed"),
        pytest.param(make_pod("p", cpu="1"), make_pod("p", cpu="2"), ["Update"], id="scale-up-is-generic"),
        pytest.param(
            make_pod("p", gates=["a"]), make_pod("p"), ["UpdatePodSchedulingGatesEliminated"], id="gates-eliminated"
        ),
        pytest.param(make_pod("p", gates=["a", "b"]), make_pod("p", gates=["b"]), ["Update"], id="one-gate-left"),
        pytest.param(make_pod("p"), make_pod("p", tolerations=1), ["UpdatePodToleration"], id="toleration"),
        pytest.param(
            make_pod("p"),
            make_pod("p", labels={"a": "b"}, tolerations=1),
            ["UpdatePodLabel", "UpdatePodToleration"],
            id="several-in-upstream-order",
        ),
        pytest.param(make_pod("p"), make_pod("p", nominated="n"), ["Update"], id="status-only-is-generic"),
    ],
)
def test_pod_scheduling_properties_change(old: Pod, new: Pod, expected: list[str]) -> None:
    events = pod_scheduling_properties_change(new, old)
    assert [e.action.name for e in events] == expected
    assert {e.resource for e in events} == {EventResource.UnscheduledPod}


def test_pod_scheduling_properties_change_of_an_assigned_pod() -> None:
    old = make_pod("p", node_name="n")
    events = pod_scheduling_properties_change(make_pod("p", node_name="n", labels={"a": "b"}), old)
    assert events == [ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodLabel)]


@pytest.mark.parametrize(
    ("new", "updated"),
    [
        pytest.param(make_pod("p", nominated="n"), False, id="status-only"),
        pytest.param(make_pod("p", resource_version="9"), False, id="resource-version-only"),
        pytest.param(make_pod("p", labels={"a": "b"}), True, id="labels"),
        pytest.param(make_pod("p", gates=["a"]), True, id="spec"),
    ],
)
def test_is_pod_updated(new: Pod, updated: bool) -> None:
    assert is_pod_updated(make_pod("p"), new) is updated
