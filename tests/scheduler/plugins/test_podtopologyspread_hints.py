"""PodTopologySpread's events and queueing hints: upstream plugin_test.go
(``Test_isSchedulableAfterNodeChange``, ``Test_isSchedulableAfterPodChange``, v1.34 expectations)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.types import ActionType, ClusterEvent, EventResource, QueueingHint
from emulator.base.api.core import Node, Pod, Taint
from tests import builders
from tests.scheduler.plugins.test_podtopologyspread import BAR, DNS, FOO, make_node, make_pod, plugin, spread

Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip
ZONE_FOO = spread(1, "zone", DNS, FOO)
NODE_FOO = spread(1, "node", DNS, FOO)
TWO = [ZONE_FOO, NODE_FOO]


def target(constraints: list[dict[str, Any]], labels: dict[str, str] | None = None) -> Pod:
    return make_pod("p", labels={"foo": ""} if labels is None else labels, uid="p", constraints=constraints)


def other(node: str = "fake-node", *, uid: str = "p2", ns: str = "default", **labels: str) -> Pod:
    return make_pod("p2", node, labels=labels, uid=uid, ns=ns)


def taint(key: str) -> list[Taint]:
    return [builders.taint(key, "bbb")]


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            target([ZONE_FOO]),
            make_node("node-a", {"zone": "zone1"}),
            make_node("node-a", {"zone": "zone2"}),
            Q,
            id="node updates label which matches topologyKey",
        ),
        pytest.param(
            target([ZONE_FOO]),
            make_node("node-a", {"foo": "bar1"}),
            make_node("node-a", {"foo": "bar2"}),
            SKIP,
            id="node that doesn't match topologySpreadConstraints updates non-related label",
        ),
        pytest.param(
            target(TWO),
            make_node("node-a", {"zone": "zone1", "node": "node1", "foo": "bar"}),
            make_node("node-a", {"zone": "zone1", "node": "node1"}),
            SKIP,
            id="node that match topologySpreadConstraints adds non-related label",
        ),
        pytest.param(
            target([ZONE_FOO]),
            None,
            make_node("node-a", {"foo": "bar"}),
            SKIP,
            id="create node with non-related labels",
        ),
        pytest.param(
            target([ZONE_FOO]), None, make_node("node-a", {"zone": "zone1"}), Q, id="create node with related labels"
        ),
        pytest.param(
            target([ZONE_FOO]),
            make_node("node-a", {"foo": "bar"}),
            None,
            SKIP,
            id="delete node with non-related labels",
        ),
        pytest.param(
            target([ZONE_FOO]), make_node("node-a", {"zone": "zone1"}), None, Q, id="delete node with related labels"
        ),
        pytest.param(
            target(TWO),
            None,
            make_node("node-a", {"zone": "zone1"}),
            SKIP,
            id="add node with related labels that only match one of topologySpreadConstraints",
        ),
        pytest.param(
            target(TWO),
            None,
            make_node("node-a", {"zone": "zone1", "node": "node1"}),
            Q,
            id="add node with related labels that match all topologySpreadConstraints",
        ),
        pytest.param(
            target(TWO),
            make_node("node-a", {"zone": "zone1"}),
            make_node("node-a", {"zone": "zone1"}),
            SKIP,
            id="update node with related labels that only match one of topologySpreadConstraints",
        ),
        pytest.param(
            target(TWO),
            make_node("node-a", {"zone": "zone1", "node": "node1"}),
            make_node("node-a", {"zone": "zone1", "node": "node2"}),
            Q,
            id="update node with related labels that match all topologySpreadConstraints",
        ),
        pytest.param(
            target(TWO),
            make_node("node-a", {"zone": "zone1", "node": "node1"}, taints=taint("aaa")),
            make_node("node-a", {"zone": "zone1", "node": "node1"}, taints=taint("ccc")),
            Q,
            id="update node with different taints that match all topologySpreadConstraints",
        ),
        pytest.param(
            target(TWO),
            make_node("node-a", {"node": "node1"}, taints=taint("aaa")),
            make_node("node-a", {"node": "node1"}, taints=taint("ccc")),
            SKIP,
            id="update node with different taints that only match one of topologySpreadConstraints",
        ),
    ],
)
def test_is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node | None, want: QueueingHint) -> None:
    pl = plugin(Snapshot())
    assert pl.is_schedulable_after_node_change(pod, old, new) is want


ZONE_FOO_HONOR_TAINTS = spread(1, "zone", DNS, FOO, None, None, "Honor")
ZONE_FOO_IGNORE_TAINTS = spread(1, "zone", DNS, FOO, None, None, "Ignore")
NODE_BAR = spread(1, "node", DNS, BAR)


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            target([ZONE_FOO]),
            None,
            other(foo=""),
            Q,
            id="add pod with labels match topologySpreadConstraints selector",
        ),
        pytest.param(target([ZONE_FOO]), None, other("", foo=""), SKIP, id="add un-scheduled pod"),
        pytest.param(target([ZONE_FOO]), other("", bar=""), other("", foo=""), SKIP, id="update un-scheduled pod"),
        pytest.param(target([ZONE_FOO]), other("", foo=""), None, SKIP, id="delete un-scheduled pod"),
        pytest.param(
            target([ZONE_FOO]), None, other(ns="fake-namespace", foo=""), SKIP, id="add pod with different namespace"
        ),
        pytest.param(
            target([ZONE_FOO]),
            None,
            other(bar=""),
            SKIP,
            id="add pod with labels don't match topologySpreadConstraints selector",
        ),
        pytest.param(
            target([ZONE_FOO]),
            other(foo=""),
            None,
            Q,
            id="delete pod with labels that match topologySpreadConstraints selector",
        ),
        pytest.param(
            target([ZONE_FOO]),
            other(bar=""),
            None,
            SKIP,
            id="delete pod with labels that don't match topologySpreadConstraints selector",
        ),
        pytest.param(
            target([ZONE_FOO]),
            other(foo="", bar="bar1"),
            other(foo="", bar="bar2"),
            SKIP,
            id="update pod's non-related label",
        ),
        pytest.param(
            target([ZONE_FOO]),
            other(),
            other(foo=""),
            Q,
            id="add pod's label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            target([ZONE_FOO]),
            other(foo=""),
            other(),
            Q,
            id="delete pod label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            target([ZONE_FOO]),
            other(foo="foo1"),
            other(foo="foo2"),
            SKIP,
            id="change pod's label that matches topologySpreadConstraints selector",
        ),
        pytest.param(
            target([ZONE_FOO]),
            other(foo="", bar="bar1"),
            other(foo="", bar="bar2"),
            SKIP,
            id="change pod's label that doesn't match topologySpreadConstraints selector",
        ),
        pytest.param(
            target([ZONE_FOO, NODE_BAR]),
            other(foo=""),
            other(foo="", bar="bar2"),
            Q,
            id="add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
        ),
        pytest.param(
            target([ZONE_FOO, NODE_BAR]),
            other(foo=""),
            other(foo="", baz=""),
            SKIP,
            id="change pod's label that doesn't match topologySpreadConstraints selector with multi "
            "topologySpreadConstraints",
        ),
        pytest.param(
            target([ZONE_FOO, NODE_BAR]),
            other(foo="", bar=""),
            other(foo="", bar="bar2"),
            SKIP,
            id="change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
        ),
        pytest.param(
            target([ZONE_FOO_HONOR_TAINTS, NODE_BAR]),
            make_pod("p", uid="p", labels={"foo": ""}),
            make_pod("p", uid="p", labels={"foo": ""}, tolerations=["node.kubernetes.io/unschedulable"]),
            Q,
            id="the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new "
            "toleration",
        ),
        pytest.param(
            target([ZONE_FOO_IGNORE_TAINTS, NODE_BAR]),
            make_pod("p", uid="p", labels={"foo": ""}),
            make_pod("p", uid="p", labels={"foo": ""}, tolerations=["node.kubernetes.io/unschedulable"]),
            SKIP,
            id="the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new "
            "toleration",
        ),
        pytest.param(
            target([ZONE_FOO_IGNORE_TAINTS, NODE_BAR]),
            make_pod("p", uid="p"),
            make_pod("p", uid="p", labels={"foo": ""}),
            Q,
            id="the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of "
            "the constraint",
        ),
        pytest.param(
            target([ZONE_FOO_IGNORE_TAINTS, NODE_BAR]),
            make_pod("p", uid="p"),
            make_pod("p", uid="p", labels={"unrelated": ""}),
            SKIP,
            id="the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label",
        ),
    ],
)
def test_is_schedulable_after_pod_change(pod: Pod, old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    pl = plugin(Snapshot())
    assert pl.is_schedulable_after_pod_change(pod, old, new) is want


def test_events_to_register() -> None:
    pl = plugin(Snapshot())
    got = [(r.event, r.hint) for r in pl.events_to_register()]
    pod_actions = ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodToleration | ActionType.Delete
    node_actions = ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint
    assert got == [
        (ClusterEvent(EventResource.Pod, pod_actions), pl.is_schedulable_after_pod_change),
        (ClusterEvent(EventResource.Node, node_actions), pl.is_schedulable_after_node_change),
    ]
    pod_event, node_event = (r.event for r in pl.events_to_register())
    assert pod_event.match(ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodLabel))
    assert not pod_event.match(ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodScaleDown))
    assert node_event.match(ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint))
    assert not node_event.match(ClusterEvent(EventResource.Node, ActionType.UpdateNodeAllocatable))


def test_hints_use_only_hard_constraints() -> None:
    """A pod with only ScheduleAnyway constraints has no hard ones: a node with none of its keys
    still "matches all" of zero constraints, so any node add is worth a retry."""
    pl = plugin(Snapshot())
    pod = target([spread(1, "zone", "ScheduleAnyway", FOO)])
    assert pl.is_schedulable_after_node_change(pod, None, make_node("n", {})) is Q
    assert pl.is_schedulable_after_pod_change(pod, None, other(foo="")) is SKIP
