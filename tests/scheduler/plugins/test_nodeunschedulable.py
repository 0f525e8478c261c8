"""NodeUnschedulable: cordoned nodes reject pods not tolerating node.kubernetes.io/unschedulable."""

from __future__ import annotations

from typing import Any

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
from emulator.api.codec import convert
from emulator.api.core import Node, Pod

Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip
TOL = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


def pod(*tolerations: dict[str, Any], uid: str = "u1") -> Pod:
    spec = {"containers": [{"name": "c"}], "tolerations": list(tolerations)}
    return convert({"metadata": {"name": "p", "uid": uid}, "spec": spec}, Pod)


def node(unschedulable: bool) -> Node:
    return convert({"metadata": {"name": "n"}, "spec": {"unschedulable": unschedulable}}, Node)


@pytest.mark.parametrize(
    ("p", "unschedulable", "want_code"),
    [
        pytest.param(pod(), False, Code.Success, id="schedulable-node"),
        pytest.param(pod(), True, Code.UnschedulableAndUnresolvable, id="cordoned-no-toleration"),
        pytest.param(pod(TOL), True, Code.Success, id="cordoned-tolerated"),
        pytest.param(pod({"operator": "Exists"}), True, Code.Success, id="tolerate-everything"),
        pytest.param(pod({**TOL, "effect": "NoExecute"}), True, Code.UnschedulableAndUnresolvable, id="wrong-effect"),
        pytest.param(pod({**TOL, "effect": ""}), True, Code.Success, id="empty-effect-matches-all"),
        pytest.param(
            pod({"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "x", "effect": "NoSchedule"}),
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
        pytest.param(pod({"key": "other", "operator": "Exists"}), SKIP, id="target-unrelated-toleration"),
        pytest.param(pod(TOL, uid="someone-else"), SKIP, id="other-pod"),
    ],
)
def test_pod_toleration_hint(new: Pod, want: QueueingHint) -> None:
    assert NodeUnschedulable.is_schedulable_after_pod_toleration_change(pod(), pod(), new) is want
