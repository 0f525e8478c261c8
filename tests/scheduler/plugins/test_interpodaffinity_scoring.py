"""InterPodAffinity PreScore / Score / NormalizeScore: upstream scoring_test.go ``TestPreferredAffinity``
and ``TestPreferredAffinityWithHardPodAffinitySymmetricWeight`` (scores to the integer), plus the
float64-then-truncate normalization and the missing-state errors."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.types import MAX_NODE_SCORE, Code, CycleState, NodeScore, Status
from agents.scheduler.plugins.interpodaffinity import PRE_SCORE_STATE_KEY, PreScoreState
from emulator.base.api.core import Node, Pod
from tests.scheduler.plugins.interpodaffinity_helpers import (
    NAMESPACES,
    affinity,
    expr,
    node,
    plugin,
    pod,
    team_in,
    term,
    weighted,
)

M = MAX_NODE_SCORE
SKIP = Status(Code.Skip)
CHINA, INDIA, AZ1, AZ2 = {"region": "China"}, {"region": "India"}, {"az": "az1"}, {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1, S2 = {"security": "S1"}, {"security": "S2"}

STAY_WITH_S1_IN_REGION = affinity(pref=[weighted(5, term(expr("security", "In", "S1"), topo="region"))])
STAY_WITH_S2_IN_REGION = affinity(pref=[weighted(6, term(expr("security", "In", "S2"), topo="region"))])
AFFINITY3 = affinity(
    pref=[
        weighted(8, term(expr("security", "NotIn", "S1"), expr("security", "In", "S2"), topo="region")),
        weighted(2, term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region")),
    ]
)
HARD_AFFINITY = affinity(
    aff=[
        term(expr("security", "In", "S1", "value2"), topo="region"),
        term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
    ]
)
AWAY_FROM_S1_IN_AZ = affinity(pref_anti=[weighted(5, term(expr("security", "In", "S1"), topo="az"))])
AWAY_FROM_S2_IN_AZ = affinity(pref_anti=[weighted(5, term(expr("security", "In", "S2"), topo="az"))])
STAY_S1_AWAY_S2 = affinity(
    pref=[weighted(8, term(expr("security", "In", "S1"), topo="region"))],
    pref_anti=[weighted(5, term(expr("security", "In", "S2"), topo="az"))],
)
NS_TERM = term(expr("security", "In", "S1"), topo="region", namespaces=["subteam2.team2"], ns_selector=team_in("team1"))
AFFINITY_NS_SELECTOR = affinity(pref=[weighted(5, NS_TERM)])
ANTI_AFFINITY_NS_SELECTOR = affinity(pref_anti=[weighted(5, NS_TERM)])
INVALID_AFFINITY = affinity(pref=[weighted(8, term(expr("security", "In", "{{.bad-value.}}"), topo="region"))])
INVALID_ANTI_AFFINITY = affinity(pref_anti=[weighted(5, term(expr("security", "In", "{{.bad-value.}}"), topo="az"))])


def p(
    node_name: str = "", labels: dict[str, str] | None = None, aff: dict[str, Any] | None = None, ns: str = ""
) -> Pod:
    return pod(node=node_name, labels=labels, raw_affinity=aff or {}, ns=ns)


def nodes(*labels: dict[str, str]) -> list[Node]:
    return [node(f"node{i}", **lb) for i, lb in enumerate(labels, 1)]


def on(node_name: str, labels: dict[str, str], ns: str = "") -> Pod:
    return p(node_name, labels, ns=ns)


NS_PODS = [
    on("node1", S1, "subteam1.team1"),
    on("node1", S1, "subteam1.team1"),
    on("node1", S1, "subteam1.team2"),
    on("node2", S1, "subteam2.team1"),
]
NS_PODS_BOTH = [
    on("node1", S1, "subteam1.team1"),
    on("node1", S1, "subteam1.team1"),
    on("node1", S1, "subteam2.team2"),
    on("node2", S1, "subteam2.team1"),
]

PREFERRED = [
    pytest.param(
        p(labels=S1),
        [],
        nodes(CHINA, INDIA, AZ1),
        False,
        SKIP,
        None,
        id="all nodes are same priority as Affinity is nil",
    ),
    pytest.param(
        p(labels=S1, aff=STAY_WITH_S1_IN_REGION),
        [on("node1", S1), on("node2", S2), on("node3", S1)],
        nodes(CHINA, INDIA, AZ1),
        False,
        None,
        [M, 0, 0],
        id="Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
        "which doesn't match either pods in nodes or in topology key",
    ),
    pytest.param(
        p(aff=STAY_WITH_S1_IN_REGION),
        [on("node1", S1)],
        nodes(CHINA, CHINA_AZ1, INDIA),
        False,
        None,
        [M, M, 0],
        id="All the nodes that have the same topology key & label value with one of them has an existing pod that "
        "match the affinity rules, have the same score",
    ),
    pytest.param(
        p(labels=S1, aff=STAY_WITH_S2_IN_REGION),
        [on("node1", S2), on("node1", S2), on("node2", S2), on("node3", S2), on("node4", S2), on("node5", S2)],
        nodes(CHINA, INDIA, CHINA, CHINA, INDIA),
        False,
        None,
        [M, 0, M, M, 0],
        id="Affinity: nodes in one region has more matching pods comparing to other region, so the region which has "
        "more matches will get high score",
    ),
    pytest.param(
        p(labels=S1, aff=AFFINITY3),
        [on("node1", S1), on("node2", S2), on("node3", S1)],
        nodes(CHINA, INDIA, AZ1),
        False,
        None,
        [20, M, 0],
        id="Affinity: different Label operators and values for pod affinity scheduling preference, including some "
        "match failures ",
    ),
    pytest.param(
        p(labels=S2),
        [p("node1", S1, STAY_WITH_S1_IN_REGION), p("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        False,
        None,
        [0, M, 0],
        id="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
        "symmetry",
    ),
    pytest.param(
        p(labels=S1, ns="subteam1.team1"),
        [p("node1", S1, AFFINITY_NS_SELECTOR), p("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        False,
        None,
        [M, 0, 0],
        id="Affinity symmetry with namespace selector",
    ),
    pytest.param(
        p(labels=S1, ns="subteam1.team1"),
        [p("node1", S1, ANTI_AFFINITY_NS_SELECTOR), p("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        False,
        None,
        [0, M, M],
        id="AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        p(labels=S1),
        [p("node1", S1, HARD_AFFINITY), p("node2", S2, HARD_AFFINITY)],
        nodes(CHINA, INDIA, AZ1),
        False,
        None,
        [M, M, 0],
        id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        p(labels=S1, aff=AWAY_FROM_S1_IN_AZ),
        [on("node1", S1), on("node2", S2)],
        nodes(AZ1, CHINA),
        False,
        None,
        [0, M],
        id="Anti Affinity: pod that does not match existing pods in node will get high score ",
    ),
    pytest.param(
        p(labels=S1, aff=AWAY_FROM_S1_IN_AZ),
        [on("node1", S1), on("node2", S1)],
        nodes(AZ1, CHINA),
        False,
        None,
        [0, M],
        id="Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
        "comparing to others ",
    ),
    pytest.param(
        p(labels=S1, aff=AWAY_FROM_S1_IN_AZ),
        [on("node1", S1), on("node1", S1), on("node2", S2)],
        nodes(AZ1, INDIA),
        False,
        None,
        [0, M],
        id="Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
        "unmatches will get high score",
    ),
    pytest.param(
        p(labels=S2),
        [p("node1", S1, AWAY_FROM_S2_IN_AZ), p("node2", S2, AWAY_FROM_S1_IN_AZ)],
        nodes(AZ1, AZ2),
        False,
        None,
        [0, M],
        id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
    ),
    pytest.param(
        p(labels=S1, aff=STAY_S1_AWAY_S2),
        [on("node1", S1), on("node2", S1)],
        nodes(CHINA, AZ1),
        False,
        None,
        [M, 0],
        id="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
        "affinity & anti affinity",
    ),
    pytest.param(
        p(labels=S1, aff=STAY_S1_AWAY_S2),
        [
            on("node1", S1),
            on("node1", S1),
            on("node2", S1),
            on("node3", S1),
            on("node3", S1),
            on("node4", S1),
            on("node5", S1),
        ],
        nodes(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA),
        False,
        None,
        [M, 0, M, M, 0],
        id="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing "
        "pods have the same labels",
    ),
    pytest.param(
        p(labels=S1, aff=STAY_S1_AWAY_S2),
        [on("node1", S1), on("node2", S2), p("node3", aff=STAY_S1_AWAY_S2), p("node4", aff=AWAY_FROM_S1_IN_AZ)],
        nodes(CHINA, AZ1, INDIA, AZ2),
        False,
        None,
        [M, 0, M, 0],
        id="Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution "
        "in both pod affinity & anti affinity & symmetry",
    ),
    pytest.param(
        p(labels=S1),
        [on("node1", S1), p("node2", aff=STAY_S1_AWAY_S2)],
        nodes(CHINA, CHINA),
        False,
        None,
        [0, 0],
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
    pytest.param(
        p(aff=INVALID_AFFINITY),
        [],
        nodes(CHINA, CHINA),
        False,
        Status(Code.Error, 'Invalid value: "{{.bad-value.}}"'),
        None,
        id="invalid Affinity fails PreScore",
    ),
    pytest.param(
        p(aff=INVALID_ANTI_AFFINITY),
        [],
        nodes(CHINA, CHINA),
        False,
        Status(Code.Error, 'Invalid value: "{{.bad-value.}}"'),
        None,
        id="invalid AntiAffinity fails PreScore",
    ),
    pytest.param(
        p(labels=S1, aff=AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        NS_PODS,
        nodes(CHINA, INDIA),
        False,
        None,
        [M, 0],
        id="Affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        p(labels=S1, aff=AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        NS_PODS_BOTH,
        nodes(CHINA, INDIA),
        False,
        None,
        [M, 0],
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        p(labels=S1, aff=ANTI_AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        NS_PODS,
        nodes(CHINA, INDIA),
        False,
        None,
        [0, M],
        id="Affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        p(labels=S1, aff=ANTI_AFFINITY_NS_SELECTOR, ns="subteam1.team1"),
        NS_PODS_BOTH,
        nodes(CHINA, INDIA),
        False,
        None,
        [0, M],
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        p(labels=S2),
        [p("node1", S1, STAY_S1_AWAY_S2), p("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA),
        True,
        SKIP,
        None,
        id="Ignore preferred terms of existing pods",
    ),
    pytest.param(
        p(labels=S2),
        [p("node1", S1, STAY_S1_AWAY_S2), p("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA),
        False,
        None,
        [0, M],
        id="Do not ignore preferred terms of existing pods",
    ),
    pytest.param(p(labels=S2), [], [], False, SKIP, None, id="No nodes to score"),
]


def run_scores(
    incoming: Pod, pods: list[Pod], node_list: list[Node], args: dict[str, Any], want_status: Status | None
) -> list[int] | None:
    snapshot = Snapshot.from_objects(pods, node_list)
    pl = plugin(snapshot, NAMESPACES, args)
    state = CycleState()
    status = pl.pre_score(state, incoming, snapshot.node_info_list)
    if want_status is not None:
        assert status.code == want_status.code
        assert want_status.message() in status.message()
        assert PRE_SCORE_STATE_KEY not in list(state)
        return None
    assert status.is_success(), status
    scores = []
    for n in node_list:
        score, s = pl.score(state, incoming, snapshot.get(n.metadata.name))
        assert s.is_success()
        scores.append(NodeScore(n.metadata.name, score))
    ext = pl.score_extensions()
    assert ext.normalize_score(state, incoming, scores).is_success()
    return [ns.score for ns in scores]


@pytest.mark.parametrize(("incoming", "pods", "node_list", "ignore", "want_status", "want"), PREFERRED)
def test_preferred_affinity(
    incoming: Pod,
    pods: list[Pod],
    node_list: list[Node],
    ignore: bool,
    want_status: Status | None,
    want: list[int] | None,
) -> None:
    args = {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore}
    assert run_scores(incoming, pods, node_list, args, want_status) == want


HARD_POD_AFFINITY = affinity(
    aff=[
        term(
            expr("service", "In", "S1"),
            topo="region",
            namespaces=["", "subteam2.team2"],
            ns_selector=team_in("team1"),
        )
    ]
)
HARD_PODS = [p("node1", aff=HARD_POD_AFFINITY), p("node2", aff=HARD_POD_AFFINITY)]
SERVICE_S1 = {"service": "S1"}

HARD_WEIGHT = [
    pytest.param(p(labels=SERVICE_S1), 1, None, [M, M, 0], id="with default weight"),
    pytest.param(p(labels=SERVICE_S1), 0, SKIP, None, id="with zero weight"),
    pytest.param(p(labels=SERVICE_S1, ns="subteam1.team2"), 1, SKIP, None, id="with no matching namespace"),
    pytest.param(p(labels=SERVICE_S1, ns="subteam1.team1"), 1, None, [M, M, 0], id="with matching NamespaceSelector"),
    pytest.param(p(labels=SERVICE_S1, ns="subteam2.team2"), 1, None, [M, M, 0], id="with matching Namespaces"),
]


@pytest.mark.parametrize(("incoming", "weight", "want_status", "want"), HARD_WEIGHT)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    incoming: Pod, weight: int, want_status: Status | None, want: list[int] | None
) -> None:
    args = {"hardPodAffinityWeight": weight}
    assert run_scores(incoming, HARD_PODS, nodes(CHINA, INDIA, AZ1), args, want_status) == want


def test_hard_pod_affinity_weight_scales_the_raw_score() -> None:
    snapshot = Snapshot.from_objects(HARD_PODS, nodes(CHINA, INDIA, AZ1))
    pl = plugin(snapshot, NAMESPACES, {"hardPodAffinityWeight": 7})
    state = CycleState()
    assert pl.pre_score(state, p(labels=SERVICE_S1), snapshot.node_info_list).is_success()
    raw = [pl.score(state, p(), snapshot.get(n))[0] for n in ("node1", "node2", "node3")]
    assert raw == [7, 7, 0]


NORMALIZE = [
    pytest.param([0, 29, 100], [0, 28, 100], id="float64 product truncated: 100*(29/100) is 28.999…"),
    pytest.param([-5, 3, 8], [0, 61, 100], id="negative minimum"),
    pytest.param([4, 4], [0, 0], id="max equals min"),
    pytest.param([-10, -10, -4], [0, 0, 100], id="all negative"),
]


@pytest.mark.parametrize(("raw", "want"), NORMALIZE)
def test_normalize_score(raw: list[int], want: list[int]) -> None:
    pl = plugin(Snapshot.from_objects([], []))
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState({"zone": {"z": 1}}))
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert pl.normalize_score(state, p(), scores).is_success()
    assert [s.score for s in scores] == want


def test_normalize_is_a_no_op_with_an_empty_topology_score() -> None:
    pl = plugin(Snapshot.from_objects([], []))
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState({}))
    scores = [NodeScore("a", 3), NodeScore("b", 9)]
    assert pl.normalize_score(state, p(), scores).is_success()
    assert [s.score for s in scores] == [3, 9]


def test_score_and_normalize_without_pre_score_state_are_errors() -> None:
    snapshot = Snapshot.from_objects([], nodes(CHINA))
    pl = plugin(snapshot)
    want = Status(Code.Error, 'failed to read "PreScoreInterPodAffinity" from cycleState: not found')
    assert pl.score(CycleState(), p(), snapshot.get("node1")) == (0, want)
    assert pl.normalize_score(CycleState(), p(), [NodeScore("node1", 0)]) == want
