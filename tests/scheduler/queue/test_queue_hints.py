"""QueueingHint routing of unschedulable pods on cluster events (hints on), and hints off."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.framework.types import ActionType, ClusterEvent, EventResource, PodInfo, QueueingHint
from agents.scheduler.queue import (
    EventAssignedPodAdd,
    EventForceActivate,
    EventUnschedulableTimeout,
    HintEvaluator,
    QueuedPodInfo,
    QueueingStrategy,
    SchedulingQueue,
)
from emulator.base.api.codec import convert
from emulator.base.api.core import Pod
from tests.scheduler.queue.queue_helpers import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    NODE_ALLOCATABLE,
    NODE_DELETE,
    NODE_LABEL,
    NODE_TAINT,
    FakeClock,
    Registry,
    always,
    fail,
    make_node,
    make_pod,
    make_queue,
    names,
    pop,
)

Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip
POD_ADD = ClusterEvent(EventResource.Pod, ActionType.Add)
POD_SCALE_DOWN = ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown)
ASSIGNED_SCALE_DOWN = ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodScaleDown)
ASSIGNED_LABEL = ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodLabel)


def broken(pod: Pod, old: Any, new: Any) -> QueueingHint:
    raise RuntimeError("hint bug")


def registry() -> Registry:
    return (
        Registry()
        .register("Fit", NODE_ADD, always(Q))
        .register("Fit", ASSIGNED_POD_DELETE, always(SKIP))
        .register("Affinity", NODE_LABEL, always(Q))
        .register("Taint", NODE_TAINT)  # no hint function: always Queue
        .register("Broken", NODE_ALLOCATABLE, broken)
        .register("Pend", NODE_ADD, always(Q))
    )


def unschedulable_pod(
    clock: FakeClock, reg: Registry, unschedulable: tuple[str, ...], pending: tuple[str, ...] = (), **kw: Any
) -> SchedulingQueue:
    q = make_queue(clock, reg, **kw)
    q.add(make_pod("p"))
    fail(q, pop(q), *unschedulable, pending=pending)
    assert q.where("default/p") == "Unschedulable"
    return q


@pytest.mark.parametrize(
    ("unschedulable", "pending", "event", "elapsed", "expected", "hints_called"),
    [
        pytest.param(("Fit",), (), ASSIGNED_POD_DELETE, 0.1, "Unschedulable", ["Fit"], id="skip-keeps-pod"),
        pytest.param(("Fit",), (), NODE_ADD, 0.1, "Backoff", ["Fit"], id="queue-while-backing-off"),
        pytest.param(("Fit",), (), NODE_ADD, 5.0, "Active", ["Fit"], id="queue-after-backoff"),
        pytest.param((), ("Pend",), NODE_ADD, 0.1, "Active", ["Pend"], id="pending-plugin-skips-backoff"),
        pytest.param(("Fit",), ("Pend",), NODE_ADD, 0.1, "Active", ["Fit", "Pend"], id="pending-wins"),
        pytest.param(("Affinity",), ("Other",), NODE_LABEL, 0.1, "Backoff", ["Affinity"], id="unsched-with-pending"),
        pytest.param(("Affinity",), (), NODE_ADD, 5.0, "Unschedulable", [], id="event-of-other-plugin-ignored"),
        pytest.param(("Taint",), (), NODE_TAINT, 5.0, "Active", [], id="no-hint-fn-means-queue"),
        pytest.param(("Broken",), (), NODE_ALLOCATABLE, 5.0, "Active", ["Broken"], id="hint-error-means-queue"),
        pytest.param(("Fit",), (), NODE_DELETE, 5.0, "Unschedulable", [], id="unregistered-event"),
        pytest.param(("Fit",), (), EventUnschedulableTimeout, 5.0, "Active", [], id="wildcard"),
    ],
)
def test_hint_routing(
    unschedulable: tuple[str, ...],
    pending: tuple[str, ...],
    event: ClusterEvent,
    elapsed: float,
    expected: str,
    hints_called: list[str],
) -> None:
    clock = FakeClock(10.0)
    reg = registry()
    q = unschedulable_pod(clock, reg, unschedulable, pending)
    clock.advance(elapsed)
    q.move_all_to_active_or_backoff(event, None, None if event.is_wildcard() else make_node("n"))
    assert q.where("default/p") == expected
    assert [plugin for plugin, _ in reg.calls] == hints_called
    assert sum(v for k, v in q.statistics().items() if k in ("active", "backoff", "unschedulable")) == 1


def test_event_of_interest_short_cut() -> None:
    clock = FakeClock()
    reg = registry()
    q = unschedulable_pod(clock, reg, ("Fit",))
    assert q.move_request_cycle == -1
    q.move_all_to_active_or_backoff(NODE_DELETE)  # nobody registered Node/Delete
    assert q.move_request_cycle == -1
    q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)  # registered (by Fit): cycle recorded
    assert q.move_request_cycle == 1
    # Without the registered-events list every event counts as of interest.
    q2 = unschedulable_pod(clock, reg, ("Fit",), with_registered_events=False)
    q2.move_all_to_active_or_backoff(NODE_DELETE)
    assert q2.move_request_cycle == 1
    assert q2.where("default/p") == "Unschedulable"


@pytest.mark.parametrize(
    ("unschedulable", "event", "expected"),
    [
        pytest.param(("Fit",), ASSIGNED_POD_DELETE, "Active", id="skip-hint-ignored"),
        pytest.param(("Broken",), NODE_ALLOCATABLE, "Active", id="hint-not-called"),
        pytest.param(("Affinity",), NODE_ADD, "Unschedulable", id="still-only-rejectors-events"),
        pytest.param(("Fit",), NODE_DELETE, "Unschedulable", id="unregistered-event"),
    ],
)
def test_hints_off_every_registered_event_is_queue(
    unschedulable: tuple[str, ...], event: ClusterEvent, expected: str
) -> None:
    clock = FakeClock()
    reg = registry()
    q = unschedulable_pod(clock, reg, unschedulable, queueing_hints=False)
    clock.advance(5)
    q.move_all_to_active_or_backoff(event)
    assert q.where("default/p") == expected
    assert reg.calls == []


def test_pre_check_limits_the_pods_moved() -> None:
    clock = FakeClock()
    q = make_queue(clock, registry())
    for n in ("a", "b", "c"):
        q.add(make_pod(n))
    for _ in range(3):
        fail(q, pop(q), "Fit")
    clock.advance(5)
    q.move_all_to_active_or_backoff(NODE_ADD, None, None, pre_check=lambda pod: pod.metadata.name != "b")
    assert names(q.pods_in_active_q()) == ["a", "c"]
    assert names(q.unschedulable_pods()) == ["b"]


@pytest.mark.parametrize(
    ("queueing_hints", "event", "expected_active"),
    [
        pytest.param(False, NODE_ADD, ["fits"], id="hints-off-node-add-prechecked"),
        pytest.param(False, NODE_LABEL, ["fits"], id="hints-off-node-update-prechecked"),
        pytest.param(True, NODE_ADD, ["fits", "does-not-fit"], id="hints-on-no-precheck"),
    ],
)
def test_pre_check_for_node(queueing_hints: bool, event: ClusterEvent, expected_active: list[str]) -> None:
    clock = FakeClock()
    reg = Registry().register("Fit", NODE_ADD).register("Fit", NODE_LABEL)
    seen: list[tuple[str, str]] = []

    def admits(pod: Pod, node: Any) -> bool:
        seen.append((pod.metadata.name, node.metadata.name))
        return pod.metadata.name == "fits"

    q = make_queue(clock, reg, queueing_hints=queueing_hints, pre_check_for_node=admits)
    for n in ("fits", "does-not-fit"):
        q.add(make_pod(n))
    for _ in range(2):
        fail(q, pop(q), "Fit")
    clock.advance(5)
    q.move_all_to_active_or_backoff(event, None, make_node("n1"))
    assert names(q.pods_in_active_q()) == expected_active
    assert seen == ([] if queueing_hints else [("fits", "n1"), ("does-not-fit", "n1")])


def test_assigned_pod_added_only_asks_pods_with_cross_topology_terms() -> None:
    clock = FakeClock()
    reg = Registry().register("PodTopologySpread", POD_ADD).register("InterPodAffinity", POD_ADD)
    reg.register("NodeResourcesFit", POD_ADD)
    q = make_queue(clock, reg)
    pods = [
        (make_pod("pts-same-ns"), "PodTopologySpread"),
        (make_pod("pts-other-ns", namespace="other"), "PodTopologySpread"),
        (make_pod("aff-web", affinity_to={"app": "web"}), "InterPodAffinity"),
        (make_pod("aff-db", affinity_to={"app": "db"}), "InterPodAffinity"),
        (make_pod("fit", affinity_to=None), "NodeResourcesFit"),
    ]
    for p, _ in pods:
        q.add(p)
    for _, plugin in pods:
        fail(q, pop(q), plugin)
    clock.advance(5)
    q.assigned_pod_added(make_pod("web-0", labels={"app": "web"}, node_name="n1"))
    assert names(q.pods_in_active_q()) == ["pts-same-ns", "aff-web"]
    assert q.move_request_cycle == q.scheduling_cycle
    # A request scale-down of an assigned pod asks everybody (Fit registered Pod/UpdatePodScaleDown).
    reg.register("NodeResourcesFit", POD_SCALE_DOWN)
    q2 = make_queue(clock, reg)
    for p, _ in pods:
        q2.add(p)
    for _, plugin in pods:
        fail(q2, pop(q2), plugin)
    clock.advance(5)
    old = make_pod("web-0", labels={"app": "web"}, node_name="n1", cpu="2")
    new = make_pod("web-0", labels={"app": "web"}, node_name="n1", cpu="1")
    q2.assigned_pod_updated(old, new, ASSIGNED_SCALE_DOWN)
    assert names(q2.pods_in_active_q()) == ["fit"]  # only Fit registered the scale-down
    q2.assigned_pod_updated(old, new, ASSIGNED_LABEL)  # not registered by anyone
    assert names(q2.pods_in_active_q()) == ["fit"]


def test_assigned_pod_added_event_reaches_hints_with_the_pod() -> None:
    clock = FakeClock()
    got: list[Any] = []

    def hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
        got.append((old, new.metadata.name))
        return Q

    reg = Registry().register("PodTopologySpread", POD_ADD, hint)
    q = make_queue(clock, reg)
    q.add(make_pod("p"))
    fail(q, pop(q), "PodTopologySpread")
    q.assigned_pod_added(make_pod("x", node_name="n"))
    assert got == [(None, "x")]
    assert EventAssignedPodAdd.resource is EventResource.AssignedPod


@pytest.mark.parametrize(
    ("event", "new", "expected"),
    [
        pytest.param(EventUnschedulableTimeout, None, QueueingStrategy.AfterBackoff, id="timeout-for-everyone"),
        pytest.param(EventForceActivate, make_pod("p"), QueueingStrategy.AfterBackoff, id="force-activate-this-pod"),
        pytest.param(EventForceActivate, make_pod("other"), QueueingStrategy.Skip, id="force-activate-other-pod"),
        pytest.param(EventForceActivate, make_node("n"), QueueingStrategy.Skip, id="wildcard-with-non-pod"),
    ],
)
def test_wildcard_events(event: ClusterEvent, new: Any, expected: QueueingStrategy) -> None:
    decide = HintEvaluator(registry(), queueing_hints=True, registered_events=None, namespace_labels=None)
    qpi = QueuedPodInfo(PodInfo(make_pod("p")), 0.0, unschedulable_plugins={"Fit"})
    assert decide.worth_requeuing(qpi, event, None, new) is expected
    assert decide.is_event_of_interest(event)


def test_in_flight_decision_without_tracking_or_rejectors() -> None:
    decide = HintEvaluator(registry(), queueing_hints=True, registered_events=(), namespace_labels=None)
    rejected = QueuedPodInfo(PodInfo(make_pod("p")), 0.0, unschedulable_plugins={"Fit"})
    errored = QueuedPodInfo(PodInfo(make_pod("q")), 0.0)
    assert decide.for_in_flight_pod(rejected, None) is QueueingStrategy.AfterBackoff
    assert decide.for_in_flight_pod(rejected, []) is QueueingStrategy.Skip
    assert decide.for_in_flight_pod(errored, []) is QueueingStrategy.AfterBackoff
    assert not decide.is_event_of_interest(NODE_ADD)  # an empty registration list: nothing is


def test_namespace_selector_affinity_terms_use_namespace_labels() -> None:
    labels = {"team-a": {"team": "a"}, "team-b": {"team": "b"}, "default": {}}
    decide = HintEvaluator(registry(), queueing_hints=True, registered_events=None, namespace_labels=labels.__getitem__)
    pod = convert(
        {
            "metadata": {"name": "w", "namespace": "default", "uid": "w"},
            "spec": {
                "affinity": {
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "topologyKey": "zone",
                                "labelSelector": {"matchLabels": {"app": "db"}},
                                "namespaceSelector": {"matchLabels": {"team": "a"}},
                            }
                        ]
                    }
                }
            },
        },
        Pod,
    )
    waiting = [QueuedPodInfo(PodInfo(pod), 0.0, unschedulable_plugins={"InterPodAffinity"})]
    db_a = make_pod("db", namespace="team-a", labels={"app": "db"}, node_name="n")
    db_b = make_pod("db", namespace="team-b", labels={"app": "db"}, node_name="n")
    db_default = make_pod("db", namespace="default", labels={"app": "db"}, node_name="n")
    assert decide.cross_topology_pods(waiting, db_a) == waiting
    assert decide.cross_topology_pods(waiting, db_b) == []
    assert decide.cross_topology_pods(waiting, db_default) == []  # a selector replaces the own-namespace default


def test_pod_of_an_unknown_profile_is_requeued_after_backoff() -> None:
    decide = HintEvaluator(lambda pod: None, queueing_hints=True, registered_events=None, namespace_labels=None)
    qpi = QueuedPodInfo(PodInfo(make_pod("p")), 0.0, unschedulable_plugins={"Fit"})
    assert decide.worth_requeuing(qpi, NODE_ADD, None, None) is QueueingStrategy.AfterBackoff
    assert decide.gating_events(qpi.pod, "Fit") == ()
