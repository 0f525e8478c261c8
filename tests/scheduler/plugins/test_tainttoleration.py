"""TaintToleration: upstream's taint_toleration_test.go tables (``TestTaintTolerationScore``,
``TestTaintTolerationFilter``, ``TestIsSchedulableAfterNodeChange``, the pod-toleration hint),
plus the reversed ``helper.default_normalize_score`` it relies on."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    QueueingHint,
    Status,
)
from agents.scheduler.plugins.helper import default_normalize_score
from agents.scheduler.plugins.tainttoleration import NAME, PRE_SCORE_STATE_KEY, TaintToleration
from emulator.base.api.core import Node, Pod, Taint, Toleration
from tests import builders

UU = Code.UnschedulableAndUnresolvable
PNS, NS, NE = "PreferNoSchedule", "NoSchedule", "NoExecute"
UNTOLERATED = "node(s) had untolerated taint(s)"
"""v1.34 Filter reason (taint_toleration.go since #134740, cherry-picked as #135023)."""


def taint(key: str, value: str, effect: str) -> Taint:
    return builders.taint(key, value, effect=effect)


def tol(key: str = "", value: str = "", effect: str = "", operator: str = "") -> Toleration:
    return builders.toleration(key, value, effect=effect, operator=operator)


def node(name: str, *taints: Taint) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, taints=taints)


def pod(*tolerations: Toleration, uid: str = "uid-pod1", labels: dict[str, str] | None = None) -> Pod:
    return builders.pod("pod1", namespace="ns-1", uid=uid, labels=labels, image="", tolerations=tolerations)


def run_score(p: Pod, nodes: list[Node]) -> list[tuple[str, int]]:
    pl = TaintToleration(None, None)
    state = CycleState()
    infos = [NodeInfo(n) for n in nodes]
    assert pl.pre_score(state, p, infos).is_success()
    scores = []
    for ni in infos:
        s, status = pl.score(state, p, ni)
        assert status.is_success()
        scores.append(NodeScore(ni.name, s))
    ext = pl.score_extensions()
    assert ext.normalize_score(state, p, scores).is_success()
    return [(s.name, s.score) for s in scores]


@pytest.mark.parametrize(
    ("p", "nodes", "want"),
    [
        pytest.param(
            pod(tol("foo", "bar", PNS, "Equal")),
            [node("nodeA", taint("foo", "bar", PNS)), node("nodeB", taint("foo", "blah", PNS))],
            [("nodeA", 100), ("nodeB", 0)],
            id="node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
        ),
        pytest.param(
            pod(tol("cpu-type", "arm64", PNS, "Equal"), tol("disk-type", "ssd", PNS, "Equal")),
            [
                node("nodeA"),
                node("nodeB", taint("cpu-type", "arm64", PNS)),
                node("nodeC", taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)),
            ],
            [("nodeA", 100), ("nodeB", 100), ("nodeC", 100)],
            id="the nodes that all of their taints are tolerated by the pod, get the same score, "
            "no matter how many tolerable taints a node has",
        ),
        pytest.param(
            pod(tol("foo", "bar", PNS, "Equal")),
            [
                node("nodeA"),
                node("nodeB", taint("cpu-type", "arm64", PNS)),
                node("nodeC", taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)),
            ],
            [("nodeA", 100), ("nodeB", 50), ("nodeC", 0)],
            id="the more intolerable taints a node has, the lower score it gets.",
        ),
        pytest.param(
            pod(tol("cpu-type", "arm64", NS, "Equal"), tol("disk-type", "ssd", NS, "Equal")),
            [
                node("nodeA"),
                node("nodeB", taint("cpu-type", "arm64", NS)),
                node("nodeC", taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)),
            ],
            [("nodeA", 100), ("nodeB", 100), ("nodeC", 0)],
            id="only taints and tolerations that have effect PreferNoSchedule are checked by "
            "taints-tolerations priority function",
        ),
        pytest.param(
            pod(),
            [node("nodeA"), node("nodeB", taint("cpu-type", "arm64", PNS))],
            [("nodeA", 100), ("nodeB", 0)],
            id="Default behaviour No taints and tolerations, lands on node with no taints",
        ),
        # Beyond upstream's table: an empty-effect toleration counts for PreferNoSchedule, and
        # 1 of 3 untolerated taints normalizes to 100 - 100*1//3 = 67 (integer division).
        pytest.param(
            pod(tol("a", "x", "", "Equal")),
            [
                node("n1", taint("a", "x", PNS)),
                node("n2", taint("a", "x", PNS), taint("b", "", PNS)),
                node("n3", taint("b", "", PNS), taint("c", "", PNS), taint("d", "", PNS)),
            ],
            [("n1", 100), ("n2", 67), ("n3", 0)],
            id="empty-effect toleration tolerates PreferNoSchedule; integer normalization",
        ),
    ],
)
def test_score(p: Pod, nodes: list[Node], want: list[tuple[str, int]]) -> None:
    assert run_score(p, nodes) == want


def test_pre_score_keeps_only_prefer_no_schedule_or_empty_effect_tolerations() -> None:
    state = CycleState()
    p = pod(tol("a", effect=PNS, operator="Exists"), tol("b", effect=NS, operator="Exists"), tol(operator="Exists"))
    TaintToleration(None, None).pre_score(state, p, [])
    kept = state.read(PRE_SCORE_STATE_KEY).tolerations_prefer_no_schedule
    assert [(t.key, t.effect) for t in kept] == [("a", PNS), ("", "")]


def test_score_without_pre_score_is_an_error() -> None:
    _, status = TaintToleration(None, None).score(CycleState(), pod(), NodeInfo(node("n")))
    assert status.code is Code.Error


@pytest.mark.parametrize(
    ("p", "n", "want"),
    [
        pytest.param(
            pod(),
            node("nodeA", taint("dedicated", "user1", NS)),
            Status(UU, UNTOLERATED),
            id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        ),
        pytest.param(
            pod(tol("dedicated", "user1", NS)),
            node("nodeA", taint("dedicated", "user1", NS)),
            Status(),
            id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        ),
        pytest.param(
            pod(tol("dedicated", "user2", NS, "Equal")),
            node("nodeA", taint("dedicated", "user1", NS)),
            Status(UU, UNTOLERATED),
            id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        ),
        pytest.param(
            pod(tol("foo", effect=NS, operator="Exists")),
            node("nodeA", taint("foo", "bar", NS)),
            Status(),
            id="A pod can be scheduled onto the node, with a toleration uses operator Exists "
            "that tolerates the taints on the node",
        ),
        pytest.param(
            pod(tol("dedicated", "user2", NS, "Equal"), tol("foo", effect=NS, operator="Exists")),
            node("nodeA", taint("dedicated", "user2", NS), taint("foo", "bar", NS)),
            Status(),
            id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, "
            "pod can be scheduled onto the node",
        ),
        pytest.param(
            pod(tol("foo", "bar", PNS, "Equal")),
            node("nodeA", taint("foo", "bar", NS)),
            Status(UU, UNTOLERATED),
            id="A pod has a toleration that keys and values match the taint on the node, "
            "but (non-empty) effect doesn't match, can't be scheduled onto the node",
        ),
        pytest.param(
            pod(tol("foo", "bar", operator="Equal")),
            node("nodeA", taint("foo", "bar", NS)),
            Status(),
            id="The pod has a toleration that keys and values match the taint on the node, the effect of "
            "toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
        ),
        pytest.param(
            pod(tol("dedicated", "user2", NS, "Equal")),
            node("nodeA", taint("dedicated", "user1", PNS)),
            Status(),
            id="The pod has a toleration that key and value don't match the taint on the node, "
            "but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        ),
        pytest.param(
            pod(),
            node("nodeA", taint("dedicated", "user1", PNS)),
            Status(),
            id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. "
            "Pod can be scheduled onto the node",
        ),
        pytest.param(
            pod(tol("a", effect=NS, operator="Exists")),
            node("nodeA", taint("a", "", NS), taint("b", "2", NE), taint("c", "3", NS)),
            Status(UU, UNTOLERATED),
            id="NoExecute filters too; the message names no taint (kubernetes#134740, in release-1.34)",
        ),
    ],
)
def test_filter(p: Pod, n: Node, want: Status) -> None:
    got = TaintToleration(None, None).filter(CycleState(), p, NodeInfo(n))
    assert (got.code, got.reasons) == (want.code, want.reasons)


_p_user2 = pod(tol("dedicated", "user2", NS, "Equal"))


@pytest.mark.parametrize(
    ("p", "old", "new", "want"),
    [
        pytest.param(
            _p_user2,
            None,
            node("nodeA", taint("dedicated", "user1", NS)),
            QueueingHint.QueueSkip,
            id="skip-queue-on-untoleratedtaint-node-added",
        ),
        pytest.param(
            _p_user2,
            None,
            node("nodeA", taint("dedicated", "user2", NS)),
            QueueingHint.Queue,
            id="queue-on-toleratedtaint-node-added",
        ),
        pytest.param(
            _p_user2,
            node("nodeA", taint("dedicated", "user1", NS)),
            node("nodeA", taint("dedicated", "user1", NS), taint("dedicated", "user3", NS)),
            QueueingHint.QueueSkip,
            id="skip-unrelated-change",
        ),
        pytest.param(
            _p_user2,
            node("nodeA", taint("dedicated", "user1", NS)),
            node("nodeA", taint("dedicated", "user2", NS)),
            QueueingHint.Queue,
            id="queue-on-taint-change",
        ),
        pytest.param(
            _p_user2,
            node("nodeA"),
            node("nodeA", taint("other", "x", PNS)),
            QueueingHint.QueueSkip,
            id="already-tolerated-node-stays-tolerated",
        ),
    ],
)
def test_node_change_hint(p: Pod, old: Node | None, new: Node, want: QueueingHint) -> None:
    assert TaintToleration(None, None).is_schedulable_after_node_change(p, old, new) is want


@pytest.mark.parametrize(
    ("p", "old", "new", "want"),
    [
        pytest.param(
            pod(uid="uid0"),
            pod(uid="uid1"),
            pod(tol("foo", effect=NS), uid="uid1"),
            QueueingHint.QueueSkip,
            id="skip-updates-other-pod",
        ),
        pytest.param(
            pod(uid="uid0"),
            pod(uid="uid0"),
            pod(tol("foo", effect=NS), uid="uid0"),
            QueueingHint.Queue,
            id="queue-on-toleration-added",
        ),
    ],
)
def test_pod_toleration_change_hint(p: Pod, old: Pod, new: Pod, want: QueueingHint) -> None:
    assert TaintToleration(None, None).is_schedulable_after_pod_toleration_change(p, old, new) is want


def test_events_to_register() -> None:
    pl = TaintToleration(None, None)
    events = [(e.event, e.hint) for e in pl.events_to_register()]
    assert events == [
        (
            ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
            pl.is_schedulable_after_node_change,
        ),
        (
            ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
            pl.is_schedulable_after_pod_toleration_change,
        ),
    ]
    assert pl.name == NAME == "TaintToleration"


@pytest.mark.parametrize(
    ("reverse", "raw", "want"),
    [
        pytest.param(True, [0, 0, 0], [100, 100, 100], id="reverse-all-zero-gives-max"),
        pytest.param(False, [0, 0, 0], [0, 0, 0], id="all-zero-unchanged"),
        pytest.param(True, [0, 1, 2], [100, 50, 0], id="reverse-scaled"),
        pytest.param(False, [2, 4, 5], [40, 80, 100], id="scaled"),
        pytest.param(False, [1, 3], [33, 100], id="integer-division-truncates"),
        pytest.param(True, [1, 3], [67, 0], id="reverse-after-truncation"),
        pytest.param(False, [], [], id="empty"),
    ],
)
def test_default_normalize_score(reverse: bool, raw: list[int], want: list[int]) -> None:
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert default_normalize_score(100, reverse, scores).is_success()
    assert [s.score for s in scores] == want
