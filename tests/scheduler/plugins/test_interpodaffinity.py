"""InterPodAffinity PreFilter / Filter: upstream filtering_test.go ``TestRequiredAffinitySingleNode``,
``TestRequiredAffinityMultipleNodes``, ``TestPreFilterDisabled``, ``TestPreFilterStateAddRemovePod``,
``TestPreFilterStateClone`` and ``TestGetTPMapMatchingIncomingAffinityAntiAffinity`` (v1.34, with
the namespaces fixture behind the namespace-lister hook), plus a run through the Framework."""

from __future__ import annotations

import random

import pytest

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.interface import ExtensionPoint, ProfileSpec
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import Code, CycleState, PodInfo, Status
from agents.scheduler.plugins.defaultbinder import DefaultBinder
from agents.scheduler.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
    PRE_FILTER_STATE_KEY,
    InterPodAffinity,
    PreFilterState,
)
from agents.scheduler.plugins.interpodaffinity.filtering import incoming_affinity_anti_affinity_counts
from agents.scheduler.plugins.interpodaffinity.terms import parse_pod
from agents.scheduler.plugins.queuesort import PrioritySort
from emulator.base.api.core import Node, Pod
from tests.scheduler.plugins.interpodaffinity_helpers import (
    NAMESPACES,
    expr,
    namespace,
    node,
    plugin,
    pod,
    prefiltered,
    t_exists,
    t_in,
    t_not_in,
    team_in,
    term,
)

U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable
AFF = Status(UU, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI = Status(U, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING = Status(U, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
OK = Status()
SKIP = Status(Code.Skip)

SVC = {"service": "securityscan"}
SEC = {"security": "S1"}
NODE1 = node("node1", region="r1", zone="z11")
EXISTING_SVC = pod("e", node="node1", labels=SVC)
BAD = "{{.bad-value.}}"
BAD_VALUE_MSG = (
    'values[0][service]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or consist of '
    "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
    "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
MULTI_TERMS_OK = [
    term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
    term(expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue"), topo="region"),
]
MULTI_TERMS_FAIL = [
    term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topo="region"),
    term(expr("service", "In", "securityscan2"), expr("service", "NotIn", "WrongValue"), topo="region"),
]
SVC_IN = t_in("service", "region", "securityscan", "value2")

SINGLE_NODE = [
    pytest.param(
        pod(),
        [],
        SKIP,
        None,
        id="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
    ),
    pytest.param(
        pod(labels=SEC, aff=[SVC_IN]),
        [EXISTING_SVC],
        OK,
        OK,
        id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
        "matches the existing pod",
    ),
    pytest.param(
        pod(labels=SEC, aff=[t_not_in("service", "region", "securityscan3", "value3")]),
        [EXISTING_SVC],
        OK,
        OK,
        id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
        "operator in labelSelector that matches the existing pod",
    ),
    pytest.param(
        pod(labels=SEC, aff=[term(expr("service", "In", "securityscan", "value2"), namespaces=["DiffNameSpace"])]),
        [pod("e", ns="ns", node="node1", labels=SVC)],
        OK,
        AFF,
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    pytest.param(
        pod(labels=SVC, aff=[t_in("service", "", "antivirusscan", "value2")]),
        [EXISTING_SVC],
        OK,
        AFF,
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
    ),
    pytest.param(
        pod(labels=SEC, aff=MULTI_TERMS_OK),
        [EXISTING_SVC],
        OK,
        OK,
        id="satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution ",
    ),
    pytest.param(
        pod(labels=SEC, aff=MULTI_TERMS_FAIL),
        [EXISTING_SVC],
        OK,
        AFF,
        id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the "
        "node because one of the matchExpression item don't match.",
    ),
    pytest.param(
        pod(labels=SEC, aff=[SVC_IN], anti=[t_in("service", "node", "antivirusscan", "value2")]),
        [EXISTING_SVC],
        OK,
        OK,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        pod(labels=SEC, aff=[SVC_IN], anti=[t_in("service", "node", "antivirusscan", "value2")]),
        [pod("e", node="node1", labels=SVC, anti=[t_in("service", "node", "antivirusscan", "value2")])],
        OK,
        OK,
        id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pod(labels=SEC, aff=[SVC_IN], anti=[t_in("service", "zone", "securityscan", "value2")]),
        [EXISTING_SVC],
        OK,
        ANTI,
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        pod(labels=SVC, aff=[SVC_IN], anti=[t_in("service", "node", "antivirusscan", "value2")]),
        [pod("e", node="node1", labels=SVC, anti=[t_in("service", "zone", "securityscan", "value2")])],
        OK,
        EXISTING,
        id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
        "existing pod",
    ),
    pytest.param(
        pod(labels=SVC, aff=[t_not_in("service", "region", "securityscan", "value2")]),
        [pod("e", node="node2", labels=SVC)],
        OK,
        AFF,
        id="pod matches its own Label in PodAffinity and that matches the existing pod Labels",
    ),
    pytest.param(
        pod(labels=SVC),
        [pod("e", node="node1", labels=SVC, anti=[t_in("service", "zone", "securityscan", "value2")])],
        OK,
        EXISTING,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pod(labels=SVC),
        [pod("e", node="node1", labels=SVC, anti=[t_not_in("service", "zone", "securityscan", "value2")])],
        SKIP,
        None,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pod(labels=SVC, anti=[t_exists("service", "region"), t_exists("security", "region")]),
        [pod("e", node="node1", labels=SEC, anti=[t_exists("security", "zone")])],
        OK,
        ANTI,
        id="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
        "incoming pod",
    ),
    pytest.param(
        pod(labels=SVC, anti=[t_exists("service", "zone"), t_exists("security", "zone")]),
        [pod("e", node="node1", labels=SEC, anti=[t_exists("security", "zone")])],
        OK,
        ANTI,
        id="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        pod(labels=SEC, anti=[t_exists("security", "zone")]),
        [pod("e", node="node1", labels=SVC, anti=[t_exists("service", "zone"), t_exists("security", "zone")])],
        OK,
        EXISTING,
        id="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        pod(labels={"abc": "", "xyz": ""}, anti=[t_exists("abc", "zone"), t_exists("def", "zone")]),
        [
            pod(
                "e",
                node="node1",
                labels={"def": "", "xyz": ""},
                anti=[t_exists("abc", "zone"), t_exists("def", "zone")],
            )
        ],
        OK,
        ANTI,
        id="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        pod(labels={"def": "", "xyz": ""}, anti=[t_exists("abc", "zone"), t_exists("def", "zone")]),
        [
            pod(
                "e",
                node="node1",
                labels={"abc": "", "xyz": ""},
                anti=[t_exists("abc", "zone"), t_exists("def", "zone")],
            )
        ],
        OK,
        ANTI,
        id="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
    ),
    pytest.param(
        pod(labels=SVC, aff=[t_in("service", "region", BAD), t_in("service", "node", "antivirusscan", "value2")]),
        [],
        Status(UU, f"parsing pod: requiredAffinityTerms: {BAD_VALUE_MSG}"),
        None,
        id="PodAffinity fails PreFilter with an invalid affinity label syntax",
    ),
    pytest.param(
        pod(labels=SVC, aff=[t_in("service", "region", "foo"), t_in("service", "node", BAD)]),
        [],
        Status(UU, f"parsing pod: requiredAffinityTerms: {BAD_VALUE_MSG}"),
        None,
        id="PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
    ),
    pytest.param(
        pod(
            labels=SEC,
            aff=[term(expr("service", "In", "securityscan", "value2"), topo="region", ns_selector=team_in("team1"))],
        ),
        [pod("e", ns="subteam1.team1", node="node1", labels=SVC)],
        OK,
        OK,
        id="affinity with NamespaceSelector",
    ),
    pytest.param(
        pod(
            labels=SEC,
            aff=[term(expr("service", "In", "securityscan", "value2"), topo="region", ns_selector=team_in("team1"))],
        ),
        [pod("e", ns="subteam1.team2", node="node1", labels=SVC)],
        OK,
        AFF,
        id="affinity with non-matching NamespaceSelector",
    ),
    pytest.param(
        pod(
            ns="subteam1.team1",
            labels=SEC,
            anti=[term(expr("service", "In", "securityscan", "value2"), topo="zone", ns_selector=team_in("team1"))],
        ),
        [pod("e", ns="subteam2.team1", node="node1", labels=SVC)],
        OK,
        ANTI,
        id="anti-affinity with matching NamespaceSelector",
    ),
    pytest.param(
        pod(
            ns="subteam1.team1",
            labels=SEC,
            anti=[term(expr("service", "In", "securityscan", "value2"), topo="zone", ns_selector={})],
        ),
        [pod("e", ns="subteam2.team1", node="node1", labels=SVC)],
        OK,
        ANTI,
        id="anti-affinity with matching all NamespaceSelector",
    ),
    pytest.param(
        pod(
            ns="subteam1.team1",
            labels=SEC,
            anti=[term(expr("service", "In", "securityscan", "value2"), topo="zone", ns_selector=team_in("team1"))],
        ),
        [pod("e", ns="subteam1.team2", node="node1", labels=SVC)],
        OK,
        OK,
        id="anti-affinity with non-matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "want_pre_filter", "want_filter"), SINGLE_NODE)
def test_required_affinity_single_node(
    incoming: Pod, pods: list[Pod], want_pre_filter: Status, want_filter: Status | None
) -> None:
    snapshot = Snapshot.from_objects(pods, [NODE1])
    pl = plugin(snapshot, NAMESPACES)
    state, status = prefiltered(pl, snapshot, incoming)
    assert status == want_pre_filter
    if not status.is_success():
        assert PRE_FILTER_STATE_KEY not in list(state)
        return
    assert pl.filter(state, incoming, snapshot.get("node1")) == want_filter


CHINA, CHINA_AZ1, INDIA = {"region": "China"}, {"region": "China", "az": "az1"}, {"region": "India"}


def nodes3() -> list[Node]:
    return [node("nodeA", **CHINA), node("nodeB", **CHINA_AZ1), node("nodeC", **INDIA)]


def ab(zone_a: str = "z1", zone_b: str = "z2") -> list[Node]:
    return [
        node("nodeA", region="r1", zone=zone_a, hostname="nodeA"),
        node("nodeB", region="r1", zone=zone_b, hostname="nodeB"),
    ]


MULTIPLE_NODES = [
    pytest.param(
        pod(aff=[t_in("foo", "region", "bar")]),
        [pod("p1", node="nodeA", labels={"foo": "bar"})],
        nodes3(),
        OK,
        [OK, OK, AFF],
        id="A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them "
        "has an existing pod that matches the affinity rules",
    ),
    pytest.param(
        pod(
            labels={"foo": "bar", "service": "securityscan"},
            aff=[t_in("foo", "zone", "bar"), t_in("service", "zone", "securityscan")],
        ),
        [pod("p1", node="nodeA", labels={"foo": "bar"})],
        [node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az2", hostname="h2")],
        OK,
        [OK, OK],
        id="The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of "
        "the collection should not be blocked from being scheduled onto any node, even there's no existing pod that "
        "matches the rule anywhere.",
    ),
    pytest.param(
        pod(
            labels={"foo": "bar", "service": "securityscan"},
            aff=[t_in("foo", "zone", "bar"), t_in("service", "zone", "securityscan")],
        ),
        [pod("p1", node="nodeA", labels={"foo": "bar"})],
        [node("nodeA", zoneLabel="az1", hostname="h1"), node("nodeB", zoneLabel="az2", hostname="h2")],
        OK,
        [AFF, AFF],
        id="The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
    ),
    pytest.param(
        pod(anti=[t_in("foo", "region", "abc")]),
        [pod("e", node="nodeA", labels={"foo": "abc"})],
        [node("nodeA", region="r1", hostname="nodeA"), node("nodeB", region="r1", hostname="nodeB")],
        OK,
        [ANTI, ANTI],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
    ),
    pytest.param(
        pod(anti=[t_in("foo", "region", "abc"), t_in("service", "zone", "securityscan")]),
        [pod("e", node="nodeA", labels={"foo": "abc", "service": "securityscan"})],
        ab(),
        OK,
        [ANTI, ANTI],
        id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
    ),
    pytest.param(
        pod(anti=[t_in("foo", "region", "abc")]),
        [pod("e", node="nodeA", labels={"foo": "abc"})],
        nodes3(),
        OK,
        [ANTI, ANTI, OK],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
    ),
    pytest.param(
        pod(ns="NS1", labels={"foo": "123"}, anti=[t_in("foo", "region", "bar")]),
        [
            pod("e1", node="nodeA", ns="NS1", labels={"foo": "bar"}),
            pod("e2", node="nodeC", ns="NS2", anti=[t_in("foo", "region", "123")]),
        ],
        nodes3(),
        OK,
        [ANTI, ANTI, OK],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC "
        "has an existing pod that match the inter pod affinity rule but in different namespace)",
    ),
    pytest.param(
        pod(labels={"foo": ""}),
        [pod("e", node="nodeA", anti=[t_exists("foo", "invalid-node-label")])],
        ab("z1", "z1"),
        SKIP,
        None,
        id="Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector "
        "of the term is firstly checked, and then topologyKey of the term is also checked",
    ),
    pytest.param(
        pod(node="nodeA", anti=[t_exists("foo", "invalid-node-label")]),
        [pod("e", node="nodeA", labels={"foo": ""})],
        ab("z1", "z1"),
        OK,
        [OK, OK],
        id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
    ),
    pytest.param(
        pod(labels={"foo": "", "bar": ""}),
        [
            pod("e1", node="nodeA", anti=[t_exists("foo", "zone")]),
            pod("e2", node="nodeA", anti=[t_exists("bar", "region")]),
        ],
        ab(),
        OK,
        [EXISTING, EXISTING],
        id="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
        "existingPod's terms on all nodes",
    ),
    pytest.param(
        pod(anti=[t_exists("foo", "zone"), t_exists("bar", "region")]),
        [pod("e1", node="nodeA", labels={"foo": ""}), pod("e2", node="nodeB", labels={"bar": ""})],
        ab(),
        OK,
        [ANTI, ANTI],
        id="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
        "anti-affinity rule of existingPod",
    ),
    pytest.param(
        pod(labels={"foo": "", "bar": ""}),
        [pod("e", node="nodeA", anti=[t_exists("foo", "invalid-node-label"), t_exists("bar", "zone")])],
        ab(),
        OK,
        [EXISTING, OK],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        pod(anti=[t_exists("foo", "invalid-node-label"), t_exists("bar", "zone")]),
        [pod("podA", node="nodeA", labels={"foo": "", "bar": ""})],
        ab(),
        OK,
        [ANTI, OK],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        pod(labels={"foo": "", "bar": ""}),
        [pod("e", node="nodeA", anti=[t_exists("foo", "region"), t_exists("bar", "zone")])],
        ab(),
        OK,
        [EXISTING, EXISTING],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        pod(anti=[t_exists("foo", "region"), t_exists("bar", "zone")]),
        [pod("e", node="nodeA", labels={"foo": "", "bar": ""})],
        ab(),
        OK,
        [ANTI, ANTI],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        pod(labels={"foo": "", "bar": ""}),
        [
            pod("e1", node="nodeA", anti=[t_exists("foo", "zone"), t_exists("labelA", "zone")]),
            pod("e2", node="nodeB", anti=[t_exists("bar", "zone"), t_exists("labelB", "zone")]),
        ],
        [*ab(), node("nodeC", region="r1", zone="z3", hostname="nodeC")],
        OK,
        [EXISTING, EXISTING, OK],
        id="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term "
        "matches incoming pod, so incoming pod can only be scheduled to nodeC",
    ),
    pytest.param(
        pod(aff=[t_exists("foo", "region"), t_exists("bar", "zone")]),
        [pod("pod1", node="nodeA", labels={"foo": "", "bar": ""})],
        ab("z1", "z1"),
        OK,
        [OK, OK],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match",
    ),
    pytest.param(
        pod(aff=[t_exists("foo", "region"), t_exists("bar", "zone")]),
        [pod("pod1", node="nodeA", labels={"foo": ""}), pod("pod2", node="nodeB", labels={"bar": ""})],
        ab(),
        OK,
        [AFF, AFF],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match, and the match logic should be satisfied on the same pod",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "want_pre_filter", "want_filters"), MULTIPLE_NODES)
def test_required_affinity_multiple_nodes(
    incoming: Pod, pods: list[Pod], nodes: list[Node], want_pre_filter: Status, want_filters: list[Status] | None
) -> None:
    snapshot = Snapshot.from_objects(pods, nodes)
    pl = plugin(snapshot, [namespace("NS1")])
    state, status = prefiltered(pl, snapshot, incoming)
    assert status == want_pre_filter
    if status.is_skip():
        return
    assert want_filters is not None
    got = [pl.filter(state, incoming, snapshot.get(n.metadata.name)) for n in nodes]
    assert got == want_filters


def test_pre_filter_disabled() -> None:
    snapshot = Snapshot.from_objects([], [node("n")])
    got = plugin(snapshot).filter(CycleState(), pod(), snapshot.get("n"))
    assert got == Status(Code.Error, 'error reading "PreFilterInterPodAffinity" from cycleState: not found')


# --- AddPod / RemovePod ----------------------------------------------------------------------

FOO_BAR = {"foo": "bar"}
ANTI_FOO_BAR = [t_in("foo", "region", "bar")]
COMPLEX = [t_in("foo", "region", "bar", "buzz"), t_not_in("service", "zone", "bar", "security", "test")]
ADD_REMOVE_NODES = [
    node("nodeA", region="r1", zone="z11"),
    node("nodeB", region="r1", zone="z12"),
    node("nodeC", region="r2", zone="z21"),
]


def _existing(p2_aff: list[dict[str, object]] | None = None) -> list[Pod]:
    return [
        pod("p1", uid="p1", node="nodeA", labels=FOO_BAR),
        pod("p2", uid="p2", node="nodeC", anti=ANTI_FOO_BAR, aff=p2_aff or []),
    ]


ADD_REMOVE = [
    pytest.param(
        pod("pending", labels=FOO_BAR, anti=ANTI_FOO_BAR),
        _existing(),
        pod("addedPod", uid="added", labels=FOO_BAR, node="nodeB", anti=ANTI_FOO_BAR),
        {("region", "r1"): 2},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
    ),
    pytest.param(
        pod("pending", labels=FOO_BAR, anti=COMPLEX),
        _existing(),
        pod("addedPod", uid="added", labels=FOO_BAR, node="nodeA", anti=COMPLEX),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
    ),
    pytest.param(
        pod("pending", labels=FOO_BAR, aff=COMPLEX),
        _existing(p2_aff=COMPLEX),
        pod("addedPod", uid="added", labels=FOO_BAR, node="nodeA", anti=COMPLEX),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
        id="preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing "
        "a pod",
    ),
]


def _state(pending: Pod, pods: list[Pod]) -> tuple[InterPodAffinity, CycleState, PreFilterState, Snapshot]:
    snapshot = Snapshot.from_objects(pods, ADD_REMOVE_NODES)
    pl = plugin(snapshot, None)
    state, status = prefiltered(pl, snapshot, pending)
    assert status.is_success()
    return pl, state, state.read(PRE_FILTER_STATE_KEY), snapshot


def _counts(s: PreFilterState) -> tuple[object, ...]:
    return s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts


@pytest.mark.parametrize(("pending", "existing", "added", "want_anti", "want_affinity"), ADD_REMOVE)
def test_pre_filter_state_add_remove_pod(
    pending: Pod,
    existing: list[Pod],
    added: Pod,
    want_anti: dict[tuple[str, str], int],
    want_affinity: dict[tuple[str, str], int],
) -> None:
    *_, all_pods_state, _ = _state(pending, [*existing, added])
    pl, cycle, state, snapshot = _state(pending, existing)
    original = state.clone()
    node_info = snapshot.get(added.spec.node_name)
    assert pl.add_pod(cycle, pending, PodInfo(added), node_info).is_success()
    got: PreFilterState = cycle.read(PRE_FILTER_STATE_KEY)
    assert got.anti_affinity_counts == want_anti
    assert got.affinity_counts == want_affinity
    assert _counts(got) == _counts(all_pods_state)
    assert pl.remove_pod(cycle, pending, PodInfo(added), node_info).is_success()
    assert _counts(state) == _counts(original)


def test_add_pod_without_pre_filter_state_is_an_error() -> None:
    snapshot = Snapshot.from_objects([], [node("n")])
    got = plugin(snapshot).add_pod(CycleState(), pod(), PodInfo(pod("x", node="n")), snapshot.get("n"))
    assert got == Status(Code.Error, 'error reading "PreFilterInterPodAffinity" from cycleState: not found')


def test_pre_filter_state_clone() -> None:
    source = PreFilterState(
        {("name", "node1"): 1, ("name", "node2"): 1},
        {("name", "nodeA"): 1, ("name", "nodeC"): 2},
        {("name", "nodeN"): 3, ("name", "nodeM"): 1},
        pod(),
        parse_pod(pod()),
        {},
    )
    clone = source.clone()
    assert clone is not source
    assert _counts(clone) == _counts(source)
    clone.affinity_counts[("name", "nodeA")] = 7
    clone.existing_anti_affinity_counts.clear()
    assert source.affinity_counts[("name", "nodeA")] == 1
    assert source.existing_anti_affinity_counts == {("name", "node1"): 1, ("name", "node2"): 1}


# --- getIncomingAffinityAntiAffinityCounts ----------------------------------------------------


def _normal(*labels: str) -> Pod:
    return pod("normal", node="nodeA", labels=dict.fromkeys(labels, ""))


HOST_A = {("hostname", "nodeA"): 1}
INCOMING_COUNTS = [
    pytest.param([], pod("aaa-normal"), {}, {}, id="nil test"),
    pytest.param(
        [_normal("aaa")], pod("aaa-normal"), {}, {}, id="incoming pod without affinity/anti-affinity causes a no-op"
    ),
    pytest.param(
        [_normal("bbb")],
        pod("aaa-anti", aff=[t_exists("aaa", "hostname")], anti=[t_exists("aaa", "hostname")]),
        {},
        {},
        id="no pod has label that violates incoming pod's affinity and anti-affinity",
    ),
    pytest.param(
        [_normal("aaa")],
        pod("affi-antiaffi", aff=[t_exists("aaa", "hostname")], anti=[t_exists("aaa", "hostname")]),
        HOST_A,
        HOST_A,
        id="existing pod matches incoming pod's affinity and anti-affinity - single term case",
    ),
    pytest.param(
        [_normal("aaa", "bbb")],
        pod(
            "affi-antiaffi",
            aff=[t_exists("aaa", "hostname"), t_exists("bbb", "hostname")],
            anti=[t_exists("aaa", "hostname")],
        ),
        {("hostname", "nodeA"): 2},
        HOST_A,
        id="existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
    ),
    pytest.param(
        [_normal("aaa")],
        pod(
            "affi-antiaffi",
            aff=[t_exists("aaa", "hostname"), t_exists("bbb", "hostname")],
            anti=[t_exists("aaa", "hostname"), t_exists("bbb", "hostname")],
        ),
        {},
        HOST_A,
        id="existing pod not match incoming pod's affinity but matches anti-affinity",
    ),
    pytest.param(
        [_normal("aaa", "bbb")],
        pod(
            "anaffi-antiaffiti",
            aff=[t_exists("aaa", "hostname"), t_exists("ccc", "hostname")],
            anti=[t_exists("aaa", "hostname"), t_exists("ccc", "hostname")],
        ),
        {},
        HOST_A,
        id="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
    ),
    pytest.param(
        [_normal("bbb")],
        pod(
            "affi-antiaffi",
            aff=[t_exists("aaa", "hostname"), t_exists("bbb", "hostname")],
            anti=[t_exists("aaa", "hostname"), t_exists("bbb", "hostname")],
        ),
        {},
        HOST_A,
        id="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
    ),
]


@pytest.mark.parametrize(("existing", "incoming", "want_affinity", "want_anti"), INCOMING_COUNTS)
def test_get_tp_map_matching_incoming_affinity_anti_affinity(
    existing: list[Pod], incoming: Pod, want_affinity: dict[str, int], want_anti: dict[str, int]
) -> None:
    snapshot = Snapshot.from_objects(existing, [node("nodeA", hostname="nodeA")])
    got = incoming_affinity_anti_affinity_counts(parse_pod(incoming), snapshot.node_info_list)
    assert got == (want_affinity, want_anti)


# --- through the Framework ---------------------------------------------------------------------


def test_framework_runs_prefilter_filter_and_skips_filter_on_prefilter_skip() -> None:
    nodes = [node("a", zone="z1"), node("b", zone="z2")]
    snapshot = Snapshot.from_objects([pod("web", uid="w", node="a", labels={"app": "web"})], nodes)
    registry = {"PrioritySort": PrioritySort, "DefaultBinder": DefaultBinder, NAME: InterPodAffinity}
    spec = ProfileSpec(
        plugins={
            ExtensionPoint.QueueSort: [("PrioritySort", 0)],
            ExtensionPoint.PreFilter: [(NAME, 0)],
            ExtensionPoint.Filter: [(NAME, 0)],
            ExtensionPoint.Bind: [("DefaultBinder", 0)],
        }
    )
    fw = Framework(spec, registry, clock=None, rng=random.Random(0), snapshot=snapshot)  # type: ignore[arg-type]
    with_anti = pod("new", labels={"app": "web"}, anti=[t_in("app", "zone", "web")])
    state = CycleState()
    _, status, _ = fw.run_pre_filter_plugins(state, with_anti, snapshot.node_info_list)
    assert status.is_success()
    got = [fw.run_filter_plugins(state, with_anti, snapshot.get(n)) for n in ("a", "b")]
    assert got == [ANTI, OK]
    assert got[0].plugin == NAME
    plain = pod("plain", labels={"app": "db"})
    state = CycleState()
    _, status, _ = fw.run_pre_filter_plugins(state, plain, snapshot.node_info_list)
    assert status.is_success()
    assert state.skip_filter_plugins == {NAME}
    assert fw.run_filter_plugins(state, plain, snapshot.get("a")).is_success()
