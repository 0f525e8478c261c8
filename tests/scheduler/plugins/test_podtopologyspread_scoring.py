"""PodTopologySpread, soft constraints: upstream scoring_test.go tables (``TestPreScoreSkip``,
``TestPreScoreStateEmptyNodes``, ``TestPodTopologySpreadScore``) with upstream's expected scores,
run as upstream runs them (plugin built with ``defaultingType: System`` unless stated; Score on the
filtered nodes, NormalizeScore over them)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pytest

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.types import Code, CycleState, NodeScore
from agents.scheduler.plugins.podtopologyspread import PRE_SCORE_STATE_KEY, Selector
from agents.scheduler.plugins.podtopologyspread.scoring import PreScoreState, go_round, topology_normalizing_weight
from emulator.base.api.core import Node, Pod
from tests.scheduler.plugins.test_podtopologyspread import (
    BAR,
    DNS,
    FOO,
    HOSTNAME,
    SA,
    UNSCHEDULABLE_TAINT,
    ZONE,
    existing,
    make_node,
    make_pod,
    plugin,
    services,
    spread,
)

SYSTEM: dict[str, Any] = {"defaultingType": "System"}


def hn(name: str, **extra: str) -> Node:
    return make_node(name, {HOSTNAME: name, **extra})


def zh(name: str, zone: str) -> Node:
    return make_node(name, {"zone": zone, HOSTNAME: name})


def nn(name: str, *, foo: bool = False, tainted: bool = False) -> Node:
    labels = {"node": name, **({"foo": ""} if foo else {})}
    return make_node(name, labels, taints=UNSCHEDULABLE_TAINT if tainted else ())


def foo_pods(**per_node: int) -> list[Pod]:
    """``foo_pods(a=2, b=1)``: two foo pods on node-a, one on node-b."""
    return [existing(f"p-{n}{i}", f"node-{n}", foo="") for n, k in per_node.items() for i in range(1, k + 1)]


def run_score(
    pod: Pod,
    nodes: list[Node],
    failed: list[Node],
    pods: list[Pod],
    args: Mapping[str, Any] = SYSTEM,
    **kw: Any,
) -> list[tuple[str, int]]:
    snap = Snapshot.from_objects(pods, [*nodes, *failed])
    pl = plugin(snap, args, **kw)
    filtered = [snap.get(n.metadata.name) for n in nodes]
    state = CycleState()
    assert pl.pre_score(state, pod, filtered).is_success()
    scores = []
    for ni in filtered:
        raw, status = pl.score(state, pod, ni)
        assert status.is_success()
        scores.append(NodeScore(ni.name, raw))
    assert pl.normalize_score(state, pod, scores).is_success()
    return [(ns.name, ns.score) for ns in scores]


FOO_HOST = spread(1, HOSTNAME, SA, FOO)
FOUR_HOSTS = [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")]
ZONE_HOSTS = [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")]
P_FOO = {"foo": ""}
P_FOO_BAR = {"foo": "", "bar": ""}
SPREAD_4_2_1_3 = foo_pods(a=4, b=2, x=1, y=3)
POLICY_PODS = foo_pods(a=2, b=1, c=1)
ZONE_HOSTS_ABCD = [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-c", "zone2"), zh("node-d", "zone2")]


@pytest.mark.parametrize(
    ("pod", "nodes", "failed", "pods", "want", "kw"),
    [
        pytest.param(
            make_pod(labels=P_FOO, constraints=[FOO_HOST]),
            [hn("node-a"), hn("node-b")],
            [],
            [],
            [100, 100],
            {},
            id="one constraint on node, no existing pods",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[FOO_HOST]),
            [hn("node-a")],
            [hn("node-b")],
            foo_pods(a=2, b=1),
            [100],
            {},
            id="one constraint on node, only one node is candidate",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[FOO_HOST]),
            [hn("node-a"), hn("node-b")],
            [],
            foo_pods(a=1, b=1),
            [100, 100],
            {},
            id="one constraint on node, all nodes have the same number of matching pods",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[FOO_HOST]),
            FOUR_HOSTS,
            [],
            foo_pods(a=2, b=1, d=3),
            [20, 60, 100, 0],
            {},
            id="one constraint on node, all 4 nodes are candidates",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(1, HOSTNAME, SA, None)]),
            FOUR_HOSTS,
            [],
            foo_pods(a=2, b=1, d=3),
            [100, 100, 100, 100],
            {},
            id="one constraint on node, null selector",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(2, HOSTNAME, SA, FOO)]),
            FOUR_HOSTS,
            [],
            foo_pods(a=2, b=1, d=3),
            [33, 66, 100, 16],
            {},
            id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(3, HOSTNAME, SA, FOO)]),
            FOUR_HOSTS,
            [],
            foo_pods(a=4, b=3, c=2, d=1),
            [44, 66, 77, 100],
            {},
            id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
        ),
        pytest.param(
            make_pod(labels=P_FOO),
            FOUR_HOSTS,
            [],
            foo_pods(a=4, b=3, c=2, d=1),
            [44, 66, 77, 100],
            {"default_selector": services({"foo": ""})},
            id="system defaulting, nodes don't have zone, pods match service",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[FOO_HOST]),
            [hn("node-a"), hn("node-b"), hn("node-x")],
            [hn("node-y")],
            SPREAD_4_2_1_3,
            [33, 83, 100],
            {},
            id="one constraint on node, 3 out of 4 nodes are candidates",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[FOO_HOST]),
            [hn("node-a"), make_node("node-b", {"n": "node-b"}), hn("node-x")],
            [hn("node-y")],
            SPREAD_4_2_1_3,
            [16, 0, 100],
            {},
            id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(1, "zone", SA, FOO)]),
            ZONE_HOSTS[:3],
            ZONE_HOSTS[3:],
            SPREAD_4_2_1_3,
            [75, 75, 100],
            {},
            id="one constraint on zone, 3 out of 4 nodes are candidates",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(1, "zone", SA, FOO), FOO_HOST]),
            [ZONE_HOSTS[0], ZONE_HOSTS[2]],
            [ZONE_HOSTS[1], ZONE_HOSTS[3]],
            foo_pods(a=2, b=1, x=2, y=4),
            [100, 63],
            {},
            id="two Constraints on zone and node, 2 out of 4 nodes are candidates",
        ),
        pytest.param(
            make_pod(labels=P_FOO_BAR, constraints=[spread(1, "zone", SA, FOO), spread(1, "zone", SA, BAR)]),
            [make_node("node-a", {"zone": "zone1"}), make_node("node-x", {"zone": "zone2"})],
            [make_node("node-b", {"zone": "zone1"}), make_node("node-y", {"zone": "zone2"})],
            [
                existing("p-a1", "node-a", foo="", bar=""),
                existing("p-a2", "node-a", foo=""),
                existing("p-b1", "node-b", foo="", bar=""),
                existing("p-y1", "node-y", foo=""),
                existing("p-y2", "node-y", foo="", bar=""),
                existing("p-y3", "node-y", foo=""),
            ],
            [85, 100],
            {},
            id="two Constraints on zone, 2 out of 4 nodes are candidates",
        ),
        pytest.param(
            make_pod(labels=P_FOO_BAR, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)]),
            ZONE_HOSTS,
            [],
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-b1", "node-b", foo="", bar=""),
                existing("p-y1", "node-y", foo=""),
                existing("p-y2", "node-y", bar=""),
            ],
            [60, 20, 100, 60],
            {},
            id="two Constraints on zone and node, with different labelSelectors",
        ),
        pytest.param(
            make_pod(labels=P_FOO_BAR, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)]),
            ZONE_HOSTS,
            [],
            [
                existing("p-b1", "node-b", bar=""),
                existing("p-x1", "node-x", foo=""),
                existing("p-y1", "node-y", foo="", bar=""),
            ],
            [100, 60, 40, 0],
            {},
            id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        ),
        pytest.param(
            make_pod(labels=P_FOO_BAR, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)]),
            ZONE_HOSTS[:3],
            ZONE_HOSTS[3:],
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-b1", "node-b", foo="", bar=""),
                existing("p-y1", "node-y", foo=""),
                existing("p-y2", "node-y", bar=""),
            ],
            [50, 25, 100],
            {},
            id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[FOO_HOST]),
            [hn("node-a"), hn("node-b")],
            [],
            [
                existing("p-a1", "node-a", ns="ns1", foo=""),
                existing("p-a2", "node-a", foo=""),
                existing("p-b1", "node-b", foo=""),
                existing("p-b2", "node-b", foo=""),
            ],
            [100, 33],
            {},
            id="existing pods in a different namespace do not count",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[FOO_HOST]),
            [hn("node-a"), hn("node-b")],
            [],
            [existing("p-a", "node-a", terminating=True, foo=""), existing("p-b", "node-b", foo="")],
            [100, 0],
            {},
            id="terminating Pods should be excluded",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(2, "node", SA, FOO, 10)]),
            [nn("node-a"), nn("node-b"), nn("node-c")],
            [],
            foo_pods(a=2, b=2, c=1),
            [75, 75, 100],
            {},
            id="minDomains has no effect when ScheduleAnyway",
        ),
        pytest.param(
            make_pod(labels=P_FOO, node_selector=P_FOO, constraints=[spread(1, "node", SA, FOO)]),
            [nn("node-a", foo=True), nn("node-b", foo=True), nn("node-c")],
            [],
            POLICY_PODS,
            [0, 33, 100],
            {},
            id="NodeAffinityPolicy honoed with labelSelectors",
        ),
        pytest.param(
            make_pod(labels=P_FOO, node_selector=P_FOO, constraints=[spread(1, "node", SA, FOO, None, "Ignore")]),
            [nn("node-a", foo=True), nn("node-b", foo=True), nn("node-c")],
            [],
            POLICY_PODS,
            [66, 100, 100],
            {},
            id="NodeAffinityPolicy ignored with labelSelectors",
        ),
        pytest.param(
            make_pod(labels=P_FOO, affinity=("foo", "In", [""]), constraints=[spread(1, "node", SA, FOO)]),
            [nn("node-a", foo=True), nn("node-b", foo=True), nn("node-c")],
            [],
            POLICY_PODS,
            [0, 33, 100],
            {},
            id="NodeAffinityPolicy honoed with nodeAffinity",
        ),
        pytest.param(
            make_pod(
                labels=P_FOO, affinity=("foo", "In", [""]), constraints=[spread(1, "node", SA, FOO, None, "Ignore")]
            ),
            [nn("node-a", foo=True), nn("node-b", foo=True), nn("node-c")],
            [],
            POLICY_PODS,
            [66, 100, 100],
            {},
            id="NodeAffinityPolicy ignored with nodeAffinity",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(1, "node", SA, FOO, None, None, "Honor")]),
            [nn("node-a"), nn("node-b"), nn("node-c", tainted=True)],
            [],
            POLICY_PODS,
            [0, 33, 100],
            {},
            id="NodeTaintsPolicy honored",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(1, "node", SA, FOO)]),
            [nn("node-a"), nn("node-b"), nn("node-c", tainted=True)],
            [],
            POLICY_PODS,
            [66, 100, 100],
            {},
            id="NodeTaintsPolicy ignored",
        ),
        pytest.param(
            make_pod(
                labels=P_FOO_BAR,
                constraints=[
                    spread(1, "zone", SA, {}, match_label_keys=["foo"]),
                    spread(1, HOSTNAME, SA, {}, match_label_keys=["bar"]),
                ],
            ),
            ZONE_HOSTS_ABCD,
            [],
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-b1", "node-b", foo="", bar=""),
                existing("p-y1", "node-c", foo=""),
                existing("p-y2", "node-c", bar=""),
            ],
            [60, 20, 60, 100],
            {},
            id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        ),
        pytest.param(
            make_pod(
                labels={"foo": "", "bar": "", "baz": ""},
                constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR, match_label_keys=["baz"])],
            ),
            ZONE_HOSTS_ABCD,
            [],
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-b1", "node-b", foo="", bar="", baz=""),
                existing("p-c1", "node-c", foo=""),
                existing("p-c2", "node-c", bar=""),
                existing("p-d3", "node-c", bar="", baz=""),
            ],
            [60, 20, 60, 100],
            {},
            id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        ),
    ],
)
def test_score(
    pod: Pod, nodes: list[Node], failed: list[Node], pods: list[Pod], want: list[int], kw: dict[str, Any]
) -> None:
    got = run_score(pod, nodes, failed, pods, **kw)
    assert got == [(n.metadata.name, score) for n, score in zip(nodes, want, strict=True)]


def test_raw_scores_before_normalizing() -> None:
    """2/1/0/3 with maxSkew 1 over 4 hostnames: raw = round(cnt · ln 6)."""
    pod = make_pod(labels=P_FOO, constraints=[FOO_HOST])
    snap = Snapshot.from_objects(foo_pods(a=2, b=1, d=3), FOUR_HOSTS)
    pl = plugin(snap, SYSTEM)
    state = CycleState()
    assert pl.pre_score(state, pod, snap.node_info_list).is_success()
    assert [pl.score(state, pod, ni)[0] for ni in snap.node_info_list] == [4, 2, 0, 5]


# --- TestPreScoreSkip -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "nodes", "args", "kw"),
    [
        pytest.param(
            make_pod(),
            [hn("node-a"), hn("node-b")],
            {"defaultingType": "List"},
            {},
            id="the pod doesn't have soft topology spread Constraints",
        ),
        pytest.param(
            make_pod(labels={"foo": "bar", "baz": "sup"}),
            [make_node("node-a", {"planet": "mars"})],
            {"defaultingType": "List", "defaultConstraints": [spread(2, "planet", SA, None)]},
            {"default_selector": services({"tar": "x"})},
            id="default constraints and a replicaset that doesn't match",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}),
            [hn("node-a"), hn("node-b")],
            SYSTEM,
            {},
            id="emulator: system defaulting without any workload object",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[FOO_HOST]),
            [],
            SYSTEM,
            {},
            id="emulator: no node in the snapshot",
        ),
    ],
)
def test_pre_score_skip(pod: Pod, nodes: list[Node], args: dict[str, Any], kw: dict[str, Any]) -> None:
    snap = Snapshot.from_objects([], nodes)
    pl = plugin(snap, args, **kw)
    state = CycleState()
    assert pl.pre_score(state, pod, snap.node_info_list).code is Code.Skip
    assert PRE_SCORE_STATE_KEY not in state


# --- TestPreScoreStateEmptyNodes ------------------------------------------------------------------

W = topology_normalizing_weight


@pytest.mark.parametrize(
    ("pod", "nodes", "args", "kw", "want_keys", "want_counts", "want_ignored", "want_weights"),
    [
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(1, "zone", SA, FOO), FOO_HOST]),
            [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")],
            {"defaultingType": "List"},
            {},
            ["zone", HOSTNAME],
            [{"zone1": 0, "zone2": 0}, {}],
            set(),
            [W(2), W(3)],
            id="normal case",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(1, "zone", SA, None)]),
            [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")],
            {"defaultingType": "List"},
            {},
            ["zone"],
            [{"zone1": 0, "zone2": 0}],
            set(),
            [W(2)],
            id="null selector",
        ),
        pytest.param(
            make_pod(labels=P_FOO, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)]),
            [zh("node-a", "zone1"), zh("node-b", "zone1"), hn("node-x")],
            {"defaultingType": "List"},
            {},
            ["zone", HOSTNAME],
            [{"zone1": 0}, {}],
            {"node-x"},
            [W(1), W(2)],
            id="node-x doesn't have label zone",
        ),
        pytest.param(
            make_pod(labels={"foo": "tar", "baz": "sup"}),
            [hn("node-a", **{ZONE: "mars"}), hn("node-b", **{ZONE: "mars"}), hn("node-c"), hn("node-d")],
            SYSTEM,
            {"default_selector": lambda pod: Selector.from_set({"foo": "tar"})},
            [HOSTNAME, ZONE],
            [{}, {"mars": 0, "": 0}],
            set(),
            [W(4), W(2)],
            id="system default constraints and a replicaset",
        ),
        pytest.param(
            make_pod(labels={"foo": "tar", "baz": "sup"}),
            [make_node("node-a", {"rack": "rack1", HOSTNAME: "node-a", "planet": "mars"})],
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    spread(1, HOSTNAME, SA, None),
                    spread(2, "rack", DNS, None),
                    spread(2, "planet", SA, None),
                ],
            },
            {"default_selector": lambda pod: Selector.from_set({"foo": "tar"})},
            [HOSTNAME, "planet"],
            [{}, {"mars": 0}],
            set(),
            [W(1), W(1)],
            id="default constraints and a replicaset",
        ),
        pytest.param(
            make_pod(
                labels={"foo": "bar", "baz": "sup"},
                constraints=[spread(1, "zone", DNS, BAR), spread(2, "planet", SA, {"matchLabels": {"baz": "sup"}})],
            ),
            [make_node("node-a", {"planet": "mars", "galaxy": "andromeda"})],
            {"defaultingType": "List", "defaultConstraints": [spread(2, "galaxy", SA, None)]},
            {"default_selector": lambda pod: Selector.from_set({"foo": "bar"})},
            ["planet"],
            [{"mars": 0}],
            set(),
            [W(1)],
            id="default constraints and a replicaset, but pod has constraints",
        ),
        pytest.param(
            make_pod(labels=P_FOO, node_selector=P_FOO, constraints=[spread(1, "zone", SA, BAR)]),
            [
                make_node("node-a", {"zone": "zone1", "foo": "", HOSTNAME: "node-a"}),
                make_node("node-b", {"zone": "zone1", "foo": "", HOSTNAME: "node-b"}),
                zh("node-x", "zone2"),
            ],
            {"defaultingType": "List"},
            {},
            ["zone"],
            [{"zone1": 0, "zone2": 0}],
            set(),
            [W(2)],
            id="NodeAffinityPolicy honored with labelSelectors",
        ),
    ],
)
def test_pre_score_state(
    pod: Pod,
    nodes: list[Node],
    args: dict[str, Any],
    kw: dict[str, Any],
    want_keys: list[str],
    want_counts: list[dict[str, int]],
    want_ignored: set[str],
    want_weights: list[float],
) -> None:
    snap = Snapshot.from_objects([], nodes)
    pl = plugin(snap, args, **kw)
    state = CycleState()
    assert pl.pre_score(state, pod, snap.node_info_list).is_success()
    s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
    assert [c.topology_key for c in s.constraints] == want_keys
    assert s.tp_value_to_pod_counts == want_counts
    assert s.ignored_nodes == want_ignored
    assert s.weights == want_weights


def test_system_defaults_count_zone_less_nodes_as_one_domain() -> None:
    """With system defaulting a node without a zone is not ignored: its pods count under the
    value "" for the zone constraint, while the node itself skips that constraint in Score."""
    nodes = [hn("node-a", **{ZONE: "mars"}), hn("node-b", **{ZONE: "mars"}), hn("node-c"), hn("node-d")]
    pods = foo_pods(a=1, c=2, d=1)
    snap = Snapshot.from_objects(pods, nodes)
    pl = plugin(snap, SYSTEM, default_selector=lambda pod: Selector.from_set({"foo": ""}))
    pod = make_pod(labels=P_FOO)
    state = CycleState()
    assert pl.pre_score(state, pod, snap.node_info_list).is_success()
    s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
    assert s.tp_value_to_pod_counts == [{}, {"mars": 1, "": 3}]
    w_host, w_zone = W(4), W(2)
    raw = [pl.score(state, pod, snap.get(n.metadata.name))[0] for n in nodes]
    assert raw == [
        go_round(1 * w_host + 2 + 1 * w_zone + 4),
        go_round(0 * w_host + 2 + 1 * w_zone + 4),
        go_round(2 * w_host + 2),
        go_round(1 * w_host + 2),
    ]


@pytest.mark.parametrize(
    ("x", "want"),
    [
        pytest.param(2.5, 3, id="half-up"),
        pytest.param(3.5, 4, id="half-up-odd"),
        pytest.param(2.4999999999999996, 2, id="just-below-half"),
        pytest.param(-2.5, -3, id="negative-half-away"),
        pytest.param(0.0, 0, id="zero"),
    ],
)
def test_go_round(x: float, want: int) -> None:
    assert go_round(x) == want  # Go math.Round, not Python's round-half-to-even


def test_weights_are_natural_logs() -> None:
    assert W(0) == math.log(2)
    assert W(4) == math.log(6)


def test_score_without_pre_score_state_errors() -> None:
    snap = Snapshot.from_objects([], [hn("node-a")])
    pl = plugin(snap, SYSTEM)
    raw, status = pl.score(CycleState(), make_pod(), snap.get("node-a"))
    assert (raw, status.code) == (0, Code.Error)
    assert status.reasons == (f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found',)
    assert pl.normalize_score(CycleState(), make_pod(), [NodeScore("node-a", 1)]).code is Code.Error
