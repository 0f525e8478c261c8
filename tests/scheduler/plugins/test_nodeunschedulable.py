"""NodeUnschedulable: cordoned nodes reject pods not tolerating node.kubernetes.io/unschedulable."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    QueueingHint,
)
from agents.scheduler.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NAME, NodeUnschedulable
from emulator.base.api.core import Node, Pod, Toleration
from tests import builders

Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip
KEY = "node.kubernetes.io/unschedulable"
TOL = builders.toleration(KEY, effect="NoSchedule")


def pod(*tolerations: Toleration, uid: str = "u1") -> Pod:
    return builders.pod("p", namespace="", uid=uid, image="", tolerations=tolerations)


def node(unschedulable: bool) -> Node:
    return builders.node("n", cpu=None, memory=None, pods=None, unschedulable=unschedulable)


@pytest.mark.parametrize(
    ("p", "unschedulable", "want_code"),
    [
        pytest.param(pod(), False, Code.Success, id="schedulable-node"),
        pytest.param(pod(), True, Code.UnschedulableAndUnresolvable, id="cordoned-no-toleration"),
        pytest.param(pod(TOL), True, Code.Success, id="cordoned-tolerated"),
        pytest.param(pod(builders.toleration()), True, Code.Success, id="tolerate-everything"),
        pytest.param(
            pod(builders.toleration(KEY, effect="NoExecute")),
            True,
            Code.UnschedulableAndUnresolvable,
            id="wrong-effect",
        ),
        pytest.param(pod(builders.toleration(KEY)), True, Code.Success, id="empty-effect-matches-all"),
        pytest.param(
            pod(builders.toleration(KEY, "x", effect="NoSchedule")),
            True,
            Code.UnschedulableAndUnresolvable,
            id="equal-with-other-value",
        ),
    ],
)
def test_filter(p: Pod, unschedulable: bool, want_code: Code) -> None:
    status = NodeUnschedulable(None, None).filter(CycleState(), p, NodeInfo(node(unschedulable)))
    assert status.code == want_code
    assert status.reasons == (() if want_code is Code.Success else (ERR_REASON_UNSCHEDULABLE,))


def test_filter_without_node() -> None:
    status = NodeUnschedulable(None, None).filter(CycleState(), pod(), NodeInfo())
    assert (status.code, status.reasons) == (Code.UnschedulableAndUnresolvable, ("node(s) had unknown conditions",))


def test_events() -> None:
    pl = NodeUnschedulable(None, None)
    assert pl.name == NAME == "NodeUnschedulable"
    assert [e.event for e in pl.events_to_register()] == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
    ]
    assert all(e.hint is not None for e in pl.events_to_register())


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, node(False), Q, id="added-schedulable"),
        pytest.param(None, node(True), SKIP, id="added-cordoned"),
        pytest.param(node(True), node(False), Q, id="uncordoned"),
        pytest.param(node(False), node(False), SKIP, id="stays-schedulable"),
        pytest.param(node(False), node(True), SKIP, id="cordoned"),
    ],
)
def test_node_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    assert NodeUnschedulable.is_schedulable_after_node_change(pod(), old, new) is want


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(pod(TOL), Q, id="target-now-tolerates"),
        pytest.param(pod(builders.toleration("other")), SKIP, id="target-unrelated-toleration"),
        pytest.param(pod(TOL, uid="someone-else"), SKIP, id="other-pod"),
    ],
)
def test_pod_toleration_hint(new: Pod, want: QueueingHint) -> None:
    assert NodeUnschedulable.is_schedulable_after_pod_toleration_change(pod(), pod(), new) is want
