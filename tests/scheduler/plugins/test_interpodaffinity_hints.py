"""InterPodAffinity events and queueing hints (upstream plugin_test.go ``Test_isSchedulableAfterPodChange``,
``Test_isSchedulableAfterNodeChange``, at v1.34 behaviour), plus this emulator's own choices: the
namespace fallback without a lister hook, matchLabelKeys / mismatchLabelKeys merging, selector
error messages and the parsed-terms cache."""

from __future__ import annotations

import msgspec
import pytest

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.types import ActionType, ClusterEvent, Code, EventResource, QueueingHint, Status
from agents.scheduler.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
)
from agents.scheduler.plugins.interpodaffinity.terms import SelectorError, TermCache, compile_selector, parse_pod
from emulator.base.api.codec import convert
from emulator.base.api.core import LabelSelector, Namespace, Node, Pod
from tests.scheduler.plugins.interpodaffinity_helpers import (
    NAMESPACES,
    expr,
    node,
    plugin,
    pod,
    prefiltered,
    t_exists,
    t_in,
    team_in,
    term,
)

Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip


def _pl() -> InterPodAffinity:
    return plugin(Snapshot.from_objects([], []), NAMESPACES)


def test_events_to_register() -> None:
    events = {e.event: e.hint for e in _pl().events_to_register()}
    assert set(events) == {
        ClusterEvent(EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
    }
    assert all(hint is not None for hint in events.values())


AFF_SVC = [t_in("service", "region", "securityscan", "value2")]
ANTI_SVC = [t_in("service", "region", "securityscan", "value2")]
AFF_AB = [t_exists("aaa", "hostname"), t_exists("bbb", "hostname")]


def other(labels: dict[str, str], node_name: str = "fake-node", **kw: object) -> Pod:
    return pod("other", uid="other", node=node_name, labels=labels, **kw)  # type: ignore[arg-type]


POD_CHANGE = [
    pytest.param(
        pod("p", uid="p", aff=AFF_SVC),
        None,
        other({"service": "securityscan"}),
        Q,
        id="add a pod which matches the pod affinity",
    ),
    pytest.param(
        pod("p", uid="p", aff=AFF_SVC), None, other({"service": "securityscan"}, ""), SKIP, id="add an un-scheduled pod"
    ),
    pytest.param(
        pod("p", uid="p", aff=AFF_SVC),
        None,
        other({"aaa": "a"}),
        SKIP,
        id="add a pod which doesn't match the pod affinity",
    ),
    pytest.param(
        pod("p", uid="p", aff=AFF_SVC),
        other({"aaa": "a"}),
        other({"service": "securityscan"}),
        Q,
        id="update a pod from non-match to match pod affinity",
    ),
    pytest.param(
        pod("p", uid="p", aff=AFF_SVC),
        other({"service": "value2"}),
        other({"service": "securityscan"}),
        SKIP,
        id="the updating pod matches target pod's affinity both before and after label changes",
    ),
    pytest.param(
        pod("p", uid="p", aff=AFF_SVC),
        other({"aaa": "a"}, ""),
        other({"service": "securityscan"}, ""),
        SKIP,
        id="update an un-scheduled pod",
    ),
    pytest.param(
        pod("p", uid="p", aff=AFF_SVC),
        other({"service": "securityscan"}),
        other({"aaa": "a"}),
        SKIP,
        id="update a pod from match to non-match the pod affinity",
    ),
    pytest.param(
        pod("p", uid="p", aff=AFF_AB),
        other({"aaa": "a"}),
        other({"service": "securityscan"}),
        SKIP,
        id="update a pod from match to non-match pod's affinity - multiple terms case",
    ),
    pytest.param(
        pod("p", uid="p", aff=AFF_AB),
        other({"aaa": "a"}),
        other({"aaa": "", "bbb": ""}),
        Q,
        id="update a pod from non-match to match pod's affinity - multiple terms case",
    ),
    pytest.param(
        pod("p", uid="p", labels={"foo": "baz"}),
        pod("p", uid="p", labels={"foo": "bar"}),
        pod("p", uid="p", labels={"foo": "baz"}),
        SKIP,  # v1.35 (#135394) queues on the target pod's own label change; v1.34 skips unscheduled pods
        id="updated pod is the target pod",
    ),
    pytest.param(
        pod("p", uid="p", anti=ANTI_SVC),
        other({"service": "securityscan"}),
        other({"service": "aaaa"}),
        Q,
        id="modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
    ),
    pytest.param(
        pod("p", uid="p", anti=ANTI_SVC),
        other({"service": "bbb"}),
        other({"service": "securityscan"}),
        SKIP,
        id="modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
    ),
    pytest.param(
        pod("p", uid="p", anti=ANTI_SVC),
        other({"aaa": "a"}),
        None,
        SKIP,
        id="delete a pod which doesn't match pod's anti-affinity",
    ),
    pytest.param(
        pod("p", uid="p", anti=ANTI_SVC),
        other({"service": "securityscan"}),
        None,
        Q,
        id="delete a pod which matches pod's anti-affinity",
    ),
    pytest.param(
        pod("p", labels={"service": "securityscan"}),
        pod("e", node="fake-node", anti=ANTI_SVC),
        None,
        SKIP,  # v1.35 (#135325) also queues when the deleted pod's anti-affinity rejected this pod
        id="delete a pod with anti-affinity that matches pending pod",
    ),
    pytest.param(
        pod("p", labels={"service": "foo"}),
        pod("e", node="fake-node", anti=ANTI_SVC),
        None,
        SKIP,
        id="delete a pod with anti-affinity that doesn't match pending pod",
    ),
    pytest.param(
        pod("p", labels={"service": "foo"}, anti=ANTI_SVC),
        pod("e", node="fake-node", labels={"service": "foo"}, anti=ANTI_SVC),
        None,
        SKIP,
        id="delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match "
        "pending pod",
    ),
    pytest.param(
        pod("p", anti=[t_exists("aaa", "zone"), t_exists("bbb", "zone")]),
        other({"aaa": ""}),
        None,
        SKIP,  # v1.34 needs ALL anti-affinity terms to match the deleted pod (any-term since #139161)
        id="delete a pod matching one of two anti-affinity terms (v1.34: all terms)",
    ),
]


@pytest.mark.parametrize(("target", "old", "new", "want"), POD_CHANGE)
def test_is_schedulable_after_pod_change(target: Pod, old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    assert _pl().is_schedulable_after_pod_change(target, old, new) is want


ZONE_AFF = pod("p", aff=[t_in("service", "zone", "securityscan", "value2")])
REGION_AFF = pod("p", aff=[t_in("service", "region", "securityscan", "value2")])
ZONE_ANTI = pod("p", anti=[term(topo="zone", match_labels={"another": "label"})])

NODE_CHANGE = [
    pytest.param(
        ZONE_AFF, None, node("node-a", zone="zone1"), Q, id="add a new node with matched pod affinity topologyKey"
    ),
    pytest.param(REGION_AFF, None, node("node-a", zone="zone1"), SKIP, id="add a new node without matched topologyKey"),
    pytest.param(
        ZONE_AFF, node("node-a", aaa="a"), node("node-a", aaa="b"), SKIP, id="update node label but not topologyKey"
    ),
    pytest.param(
        ZONE_AFF,
        node("node-a", zone="zone1"),
        node("node-a", zone="zone1", **{"unrelated-label": "unrelated"}),
        SKIP,
        id="update node label that isn't related to the pod affinity",
    ),
    pytest.param(
        ZONE_AFF,
        node("node-a", zone="zone1"),
        node("node-a", zone="zone2"),
        Q,
        id="update node with different affinity topologyKey value",
    ),
    pytest.param(
        ZONE_AFF,
        node("node-a", aaa="a"),
        node("node-a", zone="zone1"),
        Q,
        id="update node to have the affinity topology label",
    ),
    pytest.param(
        ZONE_ANTI, None, node("node-a", zone="zone1"), Q, id="add a new node with matched pod anti-affinity topologyKey"
    ),
    pytest.param(ZONE_ANTI, None, node("node-a"), Q, id="add a new node without matched pod anti-affinity topologyKey"),
    pytest.param(
        ZONE_ANTI,
        node("node-a", zone="zone1"),
        node("node-a", zone="zone1", **{"unrelated-label": "unrelated"}),
        SKIP,
        id="update node label that isn't related to the pod anti-affinity",
    ),
    pytest.param(
        ZONE_ANTI,
        node("node-a", zone="zone1"),
        node("node-a", zone="zone2"),
        Q,
        id="update node with different anti-affinity topologyKey value",
    ),
    pytest.param(
        ZONE_ANTI,
        node("node-a", aaa="a"),
        node("node-a", zone="zone1"),
        SKIP,
        id="update node to have the anti-affinity topology label",
    ),
    pytest.param(
        ZONE_ANTI,
        node("node-a", zone="zone1"),
        node("node-a", aaa="a"),
        Q,
        id="update node label not to have anti-affinity topology label",
    ),
]


@pytest.mark.parametrize(("target", "old", "new", "want"), NODE_CHANGE)
def test_is_schedulable_after_node_change(target: Pod, old: Node | None, new: Node, want: QueueingHint) -> None:
    assert _pl().is_schedulable_after_node_change(target, old, new) is want


def test_hints_queue_a_pod_whose_terms_do_not_parse() -> None:
    bad = pod("p", aff=[t_in("service", "zone", "{{bad}}")])
    assert _pl().is_schedulable_after_pod_change(bad, None, other({"aaa": "a"})) is Q
    assert _pl().is_schedulable_after_node_change(bad, None, node("n")) is Q


# --- namespaces without a lister hook ----------------------------------------------------------

ANTI_TEAM1 = term(expr("service", "In", "securityscan"), topo="zone", ns_selector=team_in("team1"))
ANTI_OWN_NAME = term(
    expr("service", "In", "securityscan"),
    topo="zone",
    ns_selector={"matchLabels": {"kubernetes.io/metadata.name": "subteam1.team1"}},
)
ANTI = Status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)

NO_LISTER = [
    pytest.param(ANTI_TEAM1, NAMESPACES, "subteam2.team1", ANTI, id="with a lister, team1 selects subteam2.team1"),
    pytest.param(
        ANTI_TEAM1,
        None,
        "subteam2.team1",
        Status(),
        id="without a lister, team1 selects nothing (only the pod's own namespace is known, without team label)",
    ),
    pytest.param(
        ANTI_OWN_NAME,
        None,
        "subteam1.team1",
        ANTI,
        id="without a lister, the metadata.name label selects the pod's own namespace",
    ),
]


@pytest.mark.parametrize(("anti_term", "namespaces", "existing_ns", "want"), NO_LISTER)
def test_namespace_selector_without_lister(
    anti_term: dict[str, object], namespaces: list[Namespace] | None, existing_ns: str, want: Status
) -> None:
    incoming = pod("in", ns="subteam1.team1", anti=[anti_term])
    existing = pod("e", ns=existing_ns, node="n", labels={"service": "securityscan"})
    snapshot = Snapshot.from_objects([existing], [node("n", zone="z")])
    pl = plugin(snapshot, namespaces)
    state, status = prefiltered(pl, snapshot, incoming)
    assert status.is_success()
    assert pl.filter(state, incoming, snapshot.get("n")) == want


def test_existing_pod_namespace_selector_sees_metadata_name_label_without_lister() -> None:
    """An existing pod's anti-affinity selecting namespaces by name rejects the incoming pod."""
    by_name = {"matchLabels": {"kubernetes.io/metadata.name": "team-b"}}
    existing = pod("e", ns="team-a", node="n", anti=[term(expr("app", "Exists"), topo="zone", ns_selector=by_name)])
    snapshot = Snapshot.from_objects([existing], [node("n", zone="z")])
    pl = plugin(snapshot, None)
    for ns, want in (("team-b", Code.Unschedulable), ("team-c", Code.Skip)):
        incoming = pod("in", ns=ns, labels={"app": "x"})
        state, status = prefiltered(pl, snapshot, incoming)
        if want is Code.Skip:
            assert status.is_skip()
        else:
            assert pl.filter(state, incoming, snapshot.get("n")).code is want


# --- matchLabelKeys / mismatchLabelKeys ----------------------------------------------------------


def test_match_label_keys_merged_into_the_selector() -> None:
    """Pods of the same ``rev`` attract each other; another revision's pods do not count."""
    aff = [term(expr("app", "In", "web"), topo="zone", match_label_keys=["rev"])]
    existing = [
        pod("old", node="a", labels={"app": "web", "rev": "1"}),
        pod("new", node="b", labels={"app": "web", "rev": "2"}),
    ]
    snapshot = Snapshot.from_objects(existing, [node("a", zone="z1"), node("b", zone="z2")])
    pl = plugin(snapshot)
    incoming = pod("p", labels={"app": "web", "rev": "2"}, aff=aff)
    state, status = prefiltered(pl, snapshot, incoming)
    assert status.is_success()
    got = [pl.filter(state, incoming, snapshot.get(n)) for n in ("a", "b")]
    assert got == [Status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH), Status()]


def test_mismatch_label_keys_merged_into_the_selector() -> None:
    """Anti-affinity against other tenants only: ``tenant NotIn [mine]`` is added."""
    anti = [term(expr("app", "Exists"), topo="zone", mismatch_label_keys=["tenant"])]
    existing = [
        pod("t1", node="a", labels={"app": "x", "tenant": "t1"}),
        pod("t2", node="b", labels={"app": "x", "tenant": "t2"}),
    ]
    snapshot = Snapshot.from_objects(existing, [node("a", zone="z1"), node("b", zone="z2")])
    pl = plugin(snapshot)
    incoming = pod("p", labels={"app": "x", "tenant": "t1"}, anti=anti)
    state, status = prefiltered(pl, snapshot, incoming)
    assert status.is_success()
    got = [pl.filter(state, incoming, snapshot.get(n)) for n in ("a", "b")]
    assert got == [Status(), ANTI]


def test_match_label_keys_ignored_without_a_label_selector_or_the_label() -> None:
    no_selector = {"topologyKey": "zone", "matchLabelKeys": ["rev"]}
    parsed = parse_pod(pod("p", labels={"rev": "1"}, aff=[no_selector]))
    assert parsed.required_affinity[0].selector.nothing
    missing = parse_pod(
        pod("p", labels={"app": "web"}, aff=[term(expr("app", "Exists"), topo="z", match_label_keys=["rev"])])
    )
    assert missing.required_affinity[0].selector.requirements == (("app", "Exists", frozenset()),)


# --- selector parsing -----------------------------------------------------------------------------

SELECTOR_ERRORS = [
    pytest.param(
        {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
        '"Gt" is not a valid label selector operator',
        id="unknown operator",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "a", "operator": "In"}]},
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
        id="In without values",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x", "y"]}]},
        'values: Invalid value: []string{"x", "y"}: values set must be empty for exists and does not exist',
        id="Exists with values",
    ),
    pytest.param(
        {"matchLabels": {"-bad": "v"}},
        'key: Invalid value: "-bad": name part must consist of alphanumeric characters',
        id="invalid key",
    ),
]


@pytest.mark.parametrize(("raw", "message"), SELECTOR_ERRORS)
def test_compile_selector_errors(raw: dict[str, object], message: str) -> None:
    with pytest.raises(SelectorError) as info:
        compile_selector(convert(raw, LabelSelector))
    assert str(info.value).startswith(message)


def test_parse_errors_aggregate_in_upstream_order() -> None:
    bad = t_in("k", "zone", "{{x}}")
    parsed = parse_pod(pod("p", aff=[bad], pref_anti=[{"weight": 1, "podAffinityTerm": bad}]))
    assert parsed.error.startswith("[requiredAffinityTerms: values[0][k]: Invalid value: ")
    assert ", preferredAntiAffinityTerms: values[0][k]" in parsed.error
    assert parsed.required_affinity == ()
    assert parsed.preferred_anti_affinity == ()


def test_term_cache_reuses_until_affinity_or_labels_change() -> None:
    cache = TermCache()
    p1 = pod("p", uid="u", labels={"rev": "1"}, aff=[term(expr("app", "Exists"), topo="z", match_label_keys=["rev"])])
    first = cache.get(p1)
    assert cache.get(p1) is first
    relabelled_same = msgspec.structs.replace(p1, metadata=msgspec.structs.replace(p1.metadata, resource_version="9"))
    assert cache.get(relabelled_same) is first
    relabelled = msgspec.structs.replace(p1, metadata=msgspec.structs.replace(p1.metadata, labels={"rev": "2"}))
    again = cache.get(relabelled)
    assert again is not first
    assert again.required_affinity[0].selector.requirements[-1] == ("rev", "In", frozenset({"2"}))
    assert len(cache) == 1
