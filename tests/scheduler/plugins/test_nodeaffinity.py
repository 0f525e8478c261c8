"""NodeAffinity: upstream's node_affinity_test.go tables (``TestNodeAffinity`` for PreFilter and
Filter, ``TestNodeAffinityPriority`` to the integer, ``Test_isSchedulableAfterNodeChange``), the
registered events, and args decoding."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.config import ConfigError
from agents.scheduler.framework.interface import PreFilterResult
from agents.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    QueueingHint,
)
from agents.scheduler.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NAME,
    NodeAffinity,
)
from emulator.base.api.codec import convert
from emulator.base.api.core import Affinity, Node, Pod
from emulator.base.api.core import NodeAffinity as NodeAffinitySpec
from tests import builders

UU = Code.UnschedulableAndUnresolvable
Term = dict[str, Any]


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def name_in(*names: str) -> dict[str, Any]:
    return expr("metadata.name", "In", *names)


def term(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> Term:
    t: Term = {"matchExpressions": list(exprs)}
    if fields:
        t["matchFields"] = fields
    return t


def required(*terms: Term) -> dict[str, Any]:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def preferred(*weighted: tuple[int, Term]) -> dict[str, Any]:
    return {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": w, "preference": t} for w, t in weighted]}


def pod(node_affinity: dict[str, Any] | None = None, node_selector: dict[str, str] | None = None) -> Pod:
    """The terms stay documents: the same ones feed ``addedAffinity`` in the plugin's args."""
    aff = None if node_affinity is None else Affinity(node_affinity=convert(node_affinity, NodeAffinitySpec))
    return builders.pod("p", uid="u", image="", node_selector=node_selector, affinity=aff)


def node(name: str = "", labels: dict[str, str] | None = None) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, labels=labels)


def args(added: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if added is None else {"addedAffinity": added}


_FOO_BAR = {"foo": "bar"}
_GPU = term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER"))
_ADDED_NODE2 = required(term(fields=[name_in("node2")]))

# (pod, node labels, node name, added affinity, want PreFilter (code, reasons), want PreFilterResult,
#  want Filter (code, reasons), run PreFilter)
_OK: tuple[Code, tuple[str, ...]] = (Code.Success, ())
_SKIP: tuple[Code, tuple[str, ...]] = (Code.Skip, ())
_POD = (UU, (ERR_REASON_POD,))


@pytest.mark.parametrize(
    ("p", "labels", "node_name", "added", "want_pre", "want_result", "want", "run_pre_filter"),
    [
        pytest.param(pod(node_selector=_FOO_BAR), None, "", None, _OK, None, _POD, True, id="missing labels"),
        pytest.param(pod(node_selector=_FOO_BAR), _FOO_BAR, "", None, _OK, None, _OK, True, id="same labels"),
        pytest.param(
            pod(node_selector=_FOO_BAR),
            {"foo": "bar", "baz": "blah"},
            "",
            None,
            _OK,
            None,
            _OK,
            True,
            id="node labels are superset",
        ),
        pytest.param(
            pod(node_selector={"foo": "bar", "baz": "blah"}),
            _FOO_BAR,
            "",
            None,
            _OK,
            None,
            _POD,
            True,
            id="node labels are subset",
        ),
        pytest.param(
            pod(required(term(expr("foo", "In", "bar", "value2")))),
            _FOO_BAR,
            "",
            None,
            _OK,
            None,
            _OK,
            True,
            id="Pod with matchExpressions using In operator that matches the existing node",
        ),
        pytest.param(
            pod(required(term(expr("kernel-version", "Gt", "0204")))),
            {"kernel-version": "0206"},
            "",
            None,
            _OK,
            None,
            _OK,
            True,
            id="Pod with matchExpressions using Gt operator that matches the existing node",
        ),
        pytest.param(
            pod(required(term(expr("mem-type", "NotIn", "DDR", "DDR2")))),
            {"mem-type": "DDR3"},
            "",
            None,
            _OK,
            None,
            _OK,
            True,
            id="Pod with matchExpressions using NotIn operator that matches the existing node",
        ),
        pytest.param(
            pod(required(term(expr("GPU", "Exists")))),
            {"GPU": "NVIDIA-GRID-K1"},
            "",
            None,
            _OK,
            None,
            _OK,
            True,
            id="Pod with matchExpressions using Exists operator that matches the existing node",
        ),
        pytest.param(
            pod(required(term(expr("foo", "In", "value1", "value2")))),
            _FOO_BAR,
            "",
            None,
            _OK,
            None,
            _POD,
            True,
            id="Pod with affinity that don't match node's labels won't schedule onto the node",
        ),
        pytest.param(
            pod(required(term())),
            _FOO_BAR,
            "",
            None,
            _OK,
            None,
            _POD,
            True,
            id="Pod with empty MatchExpressions is not a valid value will match no objects "
            "and won't schedule onto the node",
        ),
        pytest.param(
            pod(), _FOO_BAR, "", None, _SKIP, None, _OK, True, id="Pod with no Affinity will schedule onto a node"
        ),
        pytest.param(
            pod({}),
            _FOO_BAR,
            "",
            None,
            _SKIP,
            None,
            _OK,
            True,
            id="Pod with Affinity but nil NodeSelector will schedule onto a node",
        ),
        pytest.param(
            pod(required(_GPU)),
            {"GPU": "NVIDIA-GRID-K1"},
            "",
            None,
            _OK,
            None,
            _OK,
            True,
            id="Pod with multiple matchExpressions ANDed that matches the existing node",
        ),
        pytest.param(
            pod(required(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))),
            {"GPU": "NVIDIA-GRID-K1"},
            "",
            None,
            _OK,
            None,
            _POD,
            True,
            id="Pod with multiple matchExpressions ANDed that doesn't match the existing node",
        ),
        pytest.param(
            pod(required(term(expr("foo", "In", "bar", "value2")), term(expr("diffkey", "In", "wrong", "value2")))),
            _FOO_BAR,
            "",
            None,
            _OK,
            None,
            _OK,
            True,
            id="Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels "
            "and will schedule onto the node",
        ),
        pytest.param(
            pod(required(term(expr("foo", "Exists"))), node_selector=_FOO_BAR),
            _FOO_BAR,
            "",
            None,
            _OK,
            None,
            _OK,
            True,
            id="Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) "
            "both are satisfied, will schedule onto the node",
        ),
        pytest.param(
            pod(required(term(expr("foo", "Exists"))), node_selector=_FOO_BAR),
            {"foo": "barrrrrr"},
            "",
            None,
            _OK,
            None,
            _POD,
            True,
            id="Pod with an Affinity matches node's labels but the PodSpec.NodeSelector"
            "(the old thing that we are deprecating) is not satisfied, won't schedule onto the node",
        ),
        pytest.param(
            pod(required(term(expr("foo", "NotIn", "invalid value: ___@#$%^")))),
            _FOO_BAR,
            "",
            None,
            _OK,
            None,
            _POD,
            True,
            id="Pod with an invalid value in Affinity term won't be scheduled onto the node",
        ),
        pytest.param(
            pod(required(term(fields=[name_in("node1")]))),
            None,
            "node1",
            None,
            _OK,
            PreFilterResult(frozenset({"node1"})),
            _OK,
            True,
            id="Pod with matchFields using In operator that matches the existing node",
        ),
        pytest.param(
            pod(required(term(fields=[name_in("node1")]))),
            None,
            "node2",
            None,
            _OK,
            PreFilterResult(frozenset({"node1"})),
            _POD,
            True,
            id="Pod with matchFields using In operator that does not match the existing node",
        ),
        pytest.param(
            pod(required(term(fields=[name_in("node1"), name_in("node2")]), term(expr("foo", "In", "bar")))),
            _FOO_BAR,
            "node2",
            None,
            _OK,
            None,
            _OK,
            True,
            id="Pod with two terms: matchFields does not match, but matchExpressions matches",
        ),
        pytest.param(
            pod(required(term(expr("foo", "In", "bar"), fields=[name_in("node1")]))),
            _FOO_BAR,
            "node2",
            None,
            _OK,
            PreFilterResult(frozenset({"node1"})),
            _POD,
            True,
            id="Pod with one term: matchFields does not match, but matchExpressions matches",
        ),
        pytest.param(
            pod(required(term(expr("foo", "In", "bar"), fields=[name_in("node1")]))),
            _FOO_BAR,
            "node1",
            None,
            _OK,
            PreFilterResult(frozenset({"node1"})),
            _OK,
            True,
            id="Pod with one term: both matchFields and matchExpressions match",
        ),
        pytest.param(
            pod(required(term(fields=[name_in("node1")]), term(expr("foo", "In", "not-match-to-bar")))),
            _FOO_BAR,
            "node2",
            None,
            _OK,
            None,
            _POD,
            True,
            id="Pod with two terms: both matchFields and matchExpressions do not match",
        ),
        pytest.param(
            pod(required(term(fields=[name_in("node1")]), term(fields=[name_in("node2")]))),
            None,
            "node2",
            None,
            _OK,
            PreFilterResult(frozenset({"node1", "node2"})),
            _OK,
            True,
            id="Pod with two terms of node.Name affinity",
        ),
        pytest.param(
            pod(required(term(fields=[name_in("node1"), name_in("node2")]))),
            _FOO_BAR,
            "node2",
            None,
            (UU, (ERR_REASON_CONFLICT,)),
            None,
            _POD,
            True,
            id="Pod with two conflicting mach field requirements",
        ),
        pytest.param(
            pod(required(term(expr("zone", "In", "foo")))),
            {"zone": "foo"},
            "node2",
            _ADDED_NODE2,
            _OK,
            None,
            _OK,
            True,
            id="Matches added affinity and Pod's node affinity",
        ),
        pytest.param(
            pod(required(term(expr("zone", "In", "bar")))),
            {"zone": "foo"},
            "node2",
            _ADDED_NODE2,
            _OK,
            None,
            _POD,
            True,
            id="Matches added affinity but not Pod's node affinity",
        ),
        pytest.param(
            pod(),
            {"zone": "foo"},
            "node2",
            required(term(expr("zone", "In", "bar"))),
            _OK,
            None,
            (UU, (ERR_REASON_ENFORCED,)),
            True,
            id="Doesn't match added affinity",
        ),
        pytest.param(
            pod(node_selector=_FOO_BAR),
            {"foo": "bar", "baz": "blah"},
            "",
            None,
            None,
            None,
            _OK,
            False,
            id="Matches node selector correctly even if PreFilter is not called",
        ),
        pytest.param(
            pod(required(_GPU)),
            {"GPU": "NVIDIA-GRID-K1"},
            "",
            None,
            None,
            None,
            _OK,
            False,
            id="Matches node affinity correctly even if PreFilter is not called",
        ),
        pytest.param(
            pod(node_selector={"foo": "bar"}),
            {"foo": "baz"},
            "",
            None,
            None,
            None,
            _POD,
            False,
            id="rejects by node selector even if PreFilter is not called",
        ),
    ],
)
def test_pre_filter_and_filter(
    p: Pod,
    labels: dict[str, str] | None,
    node_name: str,
    added: dict[str, Any] | None,
    want_pre: tuple[Code, tuple[str, ...]] | None,
    want_result: PreFilterResult | None,
    want: tuple[Code, tuple[str, ...]],
    run_pre_filter: bool,
) -> None:
    pl = NodeAffinity(args(added), None)
    state = CycleState()
    ni = NodeInfo(node(node_name, labels))
    if run_pre_filter:
        result, status = pl.pre_filter(state, p, [ni])
        assert (status.code, status.reasons) == want_pre
        assert result == want_result
    got = pl.filter(state, p, ni)
    assert (got.code, got.reasons) == want


_L1 = {"foo": "bar"}
_L2 = {"key": "value"}
_L3 = {"az": "az1"}
_L4 = {"abc": "az11", "def": "az22"}
_L5 = {"foo": "bar", "key": "value", "az": "az1"}
_AFF1 = preferred((2, term(expr("foo", "In", "bar"))))
_AFF2 = preferred(
    (2, term(expr("foo", "In", "bar"))),
    (4, term(expr("key", "In", "value"))),
    (5, term(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))),
)


def _scores(pl: NodeAffinity, state: CycleState, p: Pod, infos: list[NodeInfo]) -> list[tuple[str, int]]:
    scores = []
    for ni in infos:
        s, status = pl.score(state, p, ni)
        assert status.is_success()
        scores.append(NodeScore(ni.name, s))
    ext = pl.score_extensions()
    assert ext.normalize_score(state, p, scores).is_success()
    return [(s.name, s.score) for s in scores]


@pytest.mark.parametrize(
    ("p", "nodes", "added", "run_pre_score", "want_pre", "want"),
    [
        pytest.param(
            pod(),
            [("node1", _L1), ("node2", _L2), ("node3", _L3)],
            None,
            False,
            None,
            [("node1", 0), ("node2", 0), ("node3", 0)],
            id="all nodes are same priority as NodeAffinity is nil",
        ),
        pytest.param(
            pod(),
            [("node1", _L1)],
            None,
            True,
            (Code.Skip, ""),
            None,
            id="Skip is returned in PreScore when NodeAffinity is nil",
        ),
        pytest.param(
            pod(preferred((2, term(expr("invalid key", "In", "bar"))))),
            [("node1", _L1)],
            None,
            True,
            (
                Code.Error,
                '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of '
                "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
            None,
            id="PreScore returns error when an incoming Pod has a broken affinity",
        ),
        pytest.param(
            pod(_AFF1),
            [("node1", _L4), ("node2", _L2), ("node3", _L3)],
            None,
            True,
            (Code.Success, ""),
            [("node1", 0), ("node2", 0), ("node3", 0)],
            id="no node matches preferred scheduling requirements in NodeAffinity of pod "
            "so all nodes' priority is zero",
        ),
        pytest.param(
            pod(_AFF1),
            [("node1", _L1), ("node2", _L2), ("node3", _L3)],
            None,
            True,
            (Code.Success, ""),
            [("node1", 100), ("node2", 0), ("node3", 0)],
            id="only node1 matches the preferred scheduling requirements of pod",
        ),
        pytest.param(
            pod(_AFF2),
            [("node1", _L1), ("node5", _L5), ("node2", _L2)],
            None,
            True,
            (Code.Success, ""),
            [("node1", 18), ("node5", 100), ("node2", 36)],
            id="all nodes matches the preferred scheduling requirements of pod but with different priorities ",
        ),
        pytest.param(
            pod(),
            [("node1", _L1), ("node2", _L2)],
            _AFF1,
            True,
            (Code.Success, ""),
            [("node1", 100), ("node2", 0)],
            id="added affinity",
        ),
        pytest.param(
            pod(_AFF1),
            [("node1", _L1), ("node2", _L2), ("node3", _L5)],
            preferred((3, term(expr("key", "In", "value")))),
            True,
            (Code.Success, ""),
            [("node1", 40), ("node2", 60), ("node3", 100)],
            id="added affinity and pod has default affinity",
        ),
        pytest.param(
            pod(_AFF2),
            [("node1", _L1), ("node5", _L5), ("node2", _L2)],
            None,
            False,
            None,
            [("node1", 18), ("node5", 100), ("node2", 36)],
            id="calculate the priorities correctly even if PreScore is not called",
        ),
        pytest.param(
            pod(preferred((0, term(expr("foo", "In", "bar"))), (7, term()), (3, term(fields=[name_in("node2")])))),
            [("node1", _L1), ("node2", _L2)],
            None,
            True,
            (Code.Success, ""),
            [("node1", 0), ("node2", 100)],
            id="weight-0 and empty preferred terms are ignored; matchFields scored",
        ),
    ],
)
def test_score(
    p: Pod,
    nodes: list[tuple[str, dict[str, str]]],
    added: dict[str, Any] | None,
    run_pre_score: bool,
    want_pre: tuple[Code, str] | None,
    want: list[tuple[str, int]] | None,
) -> None:
    pl = NodeAffinity(args(added), None)
    state = CycleState()
    infos = [NodeInfo(node(n, labels)) for n, labels in nodes]
    if run_pre_score:
        status = pl.pre_score(state, p, infos)
        assert (status.code, status.message()) == want_pre
        if not status.is_success():
            assert want is None
            return
    assert _scores(pl, state, p, infos) == want


_P_FOO_BAR = pod(required(term(expr("foo", "In", "bar"))))
_ENFORCED = required(term(expr("foo", "In", "bar")))


@pytest.mark.parametrize(
    ("added", "p", "old", "new", "want"),
    [
        pytest.param(None, _P_FOO_BAR, None, node(), QueueingHint.QueueSkip, id="skip-queue-on-add"),
        pytest.param(None, _P_FOO_BAR, None, node(labels=_FOO_BAR), QueueingHint.Queue, id="queue-on-add"),
        pytest.param(None, _P_FOO_BAR, node(), node(), QueueingHint.QueueSkip, id="skip-unrelated-changes"),
        pytest.param(
            None,
            _P_FOO_BAR,
            node(),
            node(labels={"k": "v"}),
            QueueingHint.QueueSkip,
            id="skip-unrelated-changes-on-labels",
        ),
        pytest.param(
            None,
            _P_FOO_BAR,
            node(labels=_FOO_BAR),
            node(labels={"k": "v"}),
            QueueingHint.QueueSkip,
            id="skip-labels-changes-on-node-from-suitable-to-unsuitable",
        ),
        pytest.param(
            None,
            _P_FOO_BAR,
            node(),
            node(labels=_FOO_BAR),
            QueueingHint.Queue,
            id="queue-on-labels-change-makes-pod-schedulable",
        ),
        pytest.param(
            _ENFORCED,
            _P_FOO_BAR,
            None,
            node(),
            QueueingHint.QueueSkip,
            id="skip-queue-on-add-scheduler-enforced-node-affinity",
        ),
        pytest.param(
            _ENFORCED,
            _P_FOO_BAR,
            None,
            node(labels=_FOO_BAR),
            QueueingHint.Queue,
            id="queue-on-add-scheduler-enforced-node-affinity",
        ),
        pytest.param(
            None,
            _P_FOO_BAR,
            node(labels=_FOO_BAR),
            node(labels={"foo": "bar", "k": "v"}),
            QueueingHint.QueueSkip,
            id="skip-matched-to-matched",
        ),
        pytest.param(
            None,
            pod(required(term(expr("foo", "Bogus", "bar")))),
            None,
            node(labels=_FOO_BAR),
            QueueingHint.Queue,
            id="queue-when-matching-fails-on-an-invalid-term (upstream hint error)",
        ),
    ],
)
def test_node_change_hint(
    added: dict[str, Any] | None, p: Pod, old: Node | None, new: Node, want: QueueingHint
) -> None:
    assert NodeAffinity(args(added), None).is_schedulable_after_node_change(p, old, new) is want


def test_events_to_register() -> None:
    pl = NodeAffinity(None, None)
    assert [(e.event, e.hint) for e in pl.events_to_register()] == [
        (
            ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
            pl.is_schedulable_after_node_change,
        )
    ]
    assert pl.name == NAME == "NodeAffinity"


def test_bad_args_rejected() -> None:
    with pytest.raises(ConfigError):
        NodeAffinity({"addedAffinity": "zone=a"}, None)
