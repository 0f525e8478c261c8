"""PodTopologySpread, hard constraints: upstream filtering_test.go tables (``TestPreFilterState``,
``TestPreFilterStateAddPod``, ``TestPreFilterStateRemovePod``, ``TestSingleConstraint``,
``TestMultipleConstraints``, ``TestPreFilterDisabled``) with v1.34's gates (node inclusion policies,
minDomains, matchLabelKeys all on), plus the critical-paths bookkeeping, nominated pods through the
framework, and args. Scoring lives in ``test_podtopologyspread_scoring.py``, hints in
``test_podtopologyspread_hints.py``; the builders below are shared with them."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.config import ConfigError
from agents.scheduler.framework.interface import (
    ExtensionPoint,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ProfileSpec,
    ScorePlugin,
)
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import Code, CycleState, PodInfo
from agents.scheduler.plugins.defaultbinder import DefaultBinder
from agents.scheduler.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
    PRE_FILTER_STATE_KEY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    PodTopologySpread,
    Selector,
)
from agents.scheduler.plugins.podtopologyspread.common import Constraint
from agents.scheduler.plugins.podtopologyspread.filtering import MAX_INT32, CriticalPaths, PreFilterState
from agents.scheduler.plugins.queuesort import PrioritySort
from emulator.base.api.codec import convert
from emulator.base.api.core import LabelSelector, Node, Pod, Taint, TopologySpreadConstraint
from emulator.base.api.labelselector import NOTHING, compile_selector
from tests import builders

S, U, UU, SKIP = Code.Success, Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Skip
DNS, SA = "DoNotSchedule", "ScheduleAnyway"
HOSTNAME, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
FOO: dict[str, Any] = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR: dict[str, Any] = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
UNSCHEDULABLE_TAINT = [builders.taint("node.kubernetes.io/unschedulable")]
LIST: dict[str, Any] = {"defaultingType": "List"}


# --- builders (upstream's st.MakePod / st.MakeNode, as camelCase dicts) ------------------------


def spread(
    max_skew: int,
    key: str,
    when: str,
    selector: Mapping[str, Any] | None,
    min_domains: int | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: Sequence[str] = (),
) -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = dict(selector)
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity_policy is not None:
        c["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        c["nodeTaintsPolicy"] = taints_policy
    if match_label_keys:
        c["matchLabelKeys"] = list(match_label_keys)
    return c


def make_pod(
    name: str = "p",
    node: str = "",
    *,
    labels: Mapping[str, str] | None = None,
    ns: str = "default",
    uid: str = "",
    constraints: Sequence[dict[str, Any]] = (),
    node_selector: Mapping[str, str] | None = None,
    affinity: tuple[str, str, list[str]] | None = None,
    tolerations: Sequence[str] = (),
    terminating: bool = False,
) -> Pod:
    """A pod (uid ``uid-<ns>-<name>``); ``constraints`` are documents, as in the plugin's args;
    ``affinity`` one required node-affinity expression; ``tolerations`` Exists-tolerated keys."""
    return builders.pod(
        name,
        namespace=ns,
        uid=uid or f"uid-{ns}-{name}",
        labels=labels,
        deletion_timestamp="2024-01-01T00:00:00Z" if terminating else None,
        image="",
        node=node,
        node_selector=node_selector,
        affinity=builders.affinity(required_nodes=[builders.node_term(affinity)]) if affinity else None,
        tolerations=[builders.toleration(k) for k in tolerations],
        spread=[convert(c, TopologySpreadConstraint) for c in constraints],
    )


def existing(name: str, node: str, *, ns: str = "default", terminating: bool = False, **labels: str) -> Pod:
    """An assigned pod with ``labels`` (``foo=""`` is written ``foo=""``)."""
    return make_pod(name, node, labels=labels, ns=ns, terminating=terminating)


def make_node(name: str, labels: Mapping[str, str], *, taints: Sequence[Taint] = ()) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, labels=labels, taints=taints)


def zn(name: str, zone: str, **extra: str) -> Node:
    """A node labelled ``zone`` and ``node`` (upstream's filtering fixtures)."""
    return make_node(name, {"zone": zone, "node": name, **extra})


FOUR = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


class FakeHandle:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def snapshot_shared_lister(self) -> Snapshot:
        return self.snapshot


def plugin(snapshot: Snapshot, args: Mapping[str, Any] | None = None, **kw: Any) -> PodTopologySpread:
    return PodTopologySpread(dict(args) if args is not None else dict(LIST), FakeHandle(snapshot), **kw)  # type: ignore[arg-type]


def services(*selectors: Mapping[str, str]) -> Any:
    """A default-selector source standing for Services: the union of those selecting the pod."""

    def source(pod: Pod) -> Selector:
        merged: dict[str, str] = {}
        for sel in selectors:
            if Selector.from_set(sel).matches(pod.metadata.labels):
                merged.update(sel)
        return Selector.from_set(merged)

    return source


def paths_of(s: PreFilterState) -> list[list[tuple[str, int]]]:
    """Critical paths with equal-count slots in name order (upstream's ``criticalPaths.sort``)."""
    out = []
    for cp in s.critical_paths:
        (v0, n0), (v1, n1) = cp.paths
        if n0 == n1 and v0 > v1:
            v0, v1 = v1, v0
        out.append([(v0, n0), (v1, n1)])
    return out


def norm(paths: list[list[tuple[str, int]]]) -> list[list[tuple[str, int]]]:
    out = []
    for (v0, n0), (v1, n1) in paths:
        if n0 == n1 and v0 > v1:
            v0, v1 = v1, v0
        out.append([(v0, n0), (v1, n1)])
    return out


def pre_filter(
    pod: Pod, nodes: list[Node], pods: Sequence[Pod] = (), args: Mapping[str, Any] | None = None, **kw: Any
) -> tuple[PodTopologySpread, Snapshot, CycleState, Code]:
    snap = Snapshot.from_objects(pods, nodes)
    pl = plugin(snap, args, **kw)
    state = CycleState()
    result, status = pl.pre_filter(state, pod, snap.node_info_list)
    assert result is None
    return pl, snap, state, status.code


# --- TestPreFilterState ------------------------------------------------------------------------

FOO_PODS_2_1_0_2 = [
    existing("p-a1", "node-a", foo=""),
    existing("p-a2", "node-a", foo=""),
    existing("p-b1", "node-b", foo=""),
    existing("p-y1", "node-y", foo=""),
    existing("p-y2", "node-y", foo=""),
]
FOO_PODS_2_1_0_4 = [
    *FOO_PODS_2_1_0_2,
    existing("p-y3", "node-y", foo=""),
    existing("p-y4", "node-y", foo=""),
]
POLICY_NODES = [
    make_node("node-a", {"node": "node-a", "foo": ""}),
    make_node("node-b", {"node": "node-b", "foo": ""}),
    make_node("node-c", {"node": "node-c", "bar": ""}),
]
BAR_PODS_1_2_0 = [
    existing("p-a", "node-a", bar=""),
    existing("p-b", "node-b", bar=""),
    existing("p-c", "node-b", bar=""),
    existing("p-d", "node-c"),
]
TAINT_NODES = [
    make_node("node-a", {"node": "node-a"}),
    make_node("node-b", {"node": "node-b"}),
    make_node("node-c", {"node": "node-c", "bar": ""}, taints=UNSCHEDULABLE_TAINT),
]
FOO_A_PODS = [
    existing(name, node, foo="a")
    for name, node in [
        ("p-a1", "node-a"),
        ("p-a2", "node-a"),
        ("p-b1", "node-b"),
        ("p-y1", "node-y"),
        ("p-y2", "node-y"),
    ]
]
ZONES3 = [*FOUR, zn("node-o", "zone3"), zn("node-p", "zone3")]


@pytest.mark.parametrize(
    ("pod", "nodes", "pods", "want_counts", "want_paths"),
    [
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(5, "zone", DNS, {"matchLabels": {"foo": "bar"}})]),
            FOUR,
            [],
            [{"zone1": 0, "zone2": 0}],
            [[("zone1", 0), ("zone2", 0)]],
            id="clean cluster with one spreadConstraint",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, FOO)]),
            FOUR,
            FOO_PODS_2_1_0_2,
            [{"zone1": 3, "zone2": 2}],
            [[("zone2", 2), ("zone1", 3)]],
            id="normal case with one spreadConstraint",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, None)]),
            FOUR,
            FOO_PODS_2_1_0_2,
            [{"zone1": 0, "zone2": 0}],
            [[("zone2", 0), ("zone1", 0)]],
            id="normal case with null label selector",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, {})]),
            FOUR,
            FOO_PODS_2_1_0_2,
            [{"zone1": 0, "zone2": 0}],
            [[("zone1", 0), ("zone2", 0)]],
            id="emulator: an empty label selector counts no existing pod (countPodsMatchSelector)",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, FOO)]),
            ZONES3,
            FOO_PODS_2_1_0_2,
            [{"zone1": 3, "zone2": 2, "zone3": 0}],
            [[("zone3", 0), ("zone2", 2)]],
            id="normal case with one spreadConstraint, on a 3-zone cluster",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, FOO)]),
            FOUR,
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-a2", "node-a", ns="ns1", foo=""),
                existing("p-b1", "node-b", foo=""),
                existing("p-y1", "node-y", ns="ns2", foo=""),
                existing("p-y2", "node-y", foo=""),
            ],
            [{"zone1": 2, "zone2": 1}],
            [[("zone2", 1), ("zone1", 2)]],
            id="namespace mismatch doesn't count",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
            FOUR,
            FOO_PODS_2_1_0_4,
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
            [[("zone1", 3), ("zone2", 4)], [("node-x", 0), ("node-b", 1)]],
            id="normal case with two spreadConstraints",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""},
                constraints=[
                    spread(1, "zone", SA, FOO),
                    spread(1, "zone", DNS, FOO),
                    spread(1, "node", SA, FOO),
                    spread(1, "node", DNS, FOO),
                ],
            ),
            [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
            FOO_PODS_2_1_0_4,
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
            [[("zone1", 3), ("zone2", 4)], [("node-b", 1), ("node-a", 2)]],
            id="soft spreadConstraints should be bypassed",
        ),
        pytest.param(
            make_pod(
                labels={"foo": "", "bar": ""}, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]
            ),
            [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
            [existing("p-a", "node-a", foo=""), existing("p-b", "node-b", bar="")],
            [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
            [[("zone2", 0), ("zone1", 1)], [("node-a", 0), ("node-y", 0)]],
            id="different labelSelectors - simple version",
        ),
        pytest.param(
            make_pod(
                labels={"foo": "", "bar": ""}, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]
            ),
            [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-a2", "node-a", foo="", bar=""),
                existing("p-b1", "node-b", foo=""),
                existing("p-y1", "node-y", foo=""),
                existing("p-y2", "node-y", foo="", bar=""),
                existing("p-y3", "node-y", foo=""),
                existing("p-y4", "node-y", foo="", bar=""),
            ],
            [{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}],
            [[("zone1", 3), ("zone2", 4)], [("node-b", 0), ("node-a", 1)]],
            id="different labelSelectors - complex pods",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""},
                affinity=("node", "NotIn", ["node-x"]),
                constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)],
            ),
            FOUR,
            FOO_PODS_2_1_0_4,
            [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
            [[("zone1", 3), ("zone2", 4)], [("node-b", 1), ("node-a", 2)]],
            id="two spreadConstraints, and with podAffinity",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, node_selector={"foo": ""}, constraints=[spread(1, "node", DNS, BAR)]),
            POLICY_NODES,
            BAR_PODS_1_2_0,
            [{"node-a": 1, "node-b": 2}],
            [[("node-a", 1), ("node-b", 2)]],
            id="NodeAffinityPolicy honored with labelSelectors",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""}, node_selector={"foo": ""}, constraints=[spread(1, "node", DNS, BAR, None, "Ignore")]
            ),
            POLICY_NODES,
            BAR_PODS_1_2_0,
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
            [[("node-c", 0), ("node-a", 1)]],
            id="NodeAffinityPolicy ignored with labelSelectors",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, affinity=("foo", "In", [""]), constraints=[spread(1, "node", DNS, BAR)]),
            POLICY_NODES,
            BAR_PODS_1_2_0,
            [{"node-a": 1, "node-b": 2}],
            [[("node-a", 1), ("node-b", 2)]],
            id="NodeAffinityPolicy honored with nodeAffinity",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""},
                affinity=("foo", "In", [""]),
                constraints=[spread(1, "node", DNS, BAR, None, "Ignore")],
            ),
            POLICY_NODES,
            BAR_PODS_1_2_0,
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
            [[("node-c", 0), ("node-a", 1)]],
            id="NodeAffinityPolicy ignored with nodeAffinity",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "node", DNS, BAR)]),
            TAINT_NODES,
            BAR_PODS_1_2_0,
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
            [[("node-c", 0), ("node-a", 1)]],
            id="NodeTaintsPolicy ignored",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "node", DNS, BAR, None, None, "Honor")]),
            TAINT_NODES,
            BAR_PODS_1_2_0,
            [{"node-a": 1, "node-b": 2}],
            [[("node-a", 1), ("node-b", 2)]],
            id="NodeTaintsPolicy honored",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""},
                tolerations=["node.kubernetes.io/unschedulable"],
                constraints=[spread(1, "node", DNS, BAR, None, None, "Honor")],
            ),
            TAINT_NODES,
            BAR_PODS_1_2_0,
            [{"node-a": 1, "node-b": 2, "node-c": 0}],
            [[("node-c", 0), ("node-a", 1)]],
            id="NodeTaintsPolicy honored with tolerated taints",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""},
                node_selector={"foo": ""},
                constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO, None, "Ignore")],
            ),
            [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
            [
                existing("p-b1", "node-b", foo=""),
                existing("p-b2", "node-b", foo=""),
                existing("p-x1", "node-x", foo=""),
            ],
            [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
            [[("zone1", 0), ("zone2", 1)], [("node-a", 0), ("node-x", 1)]],
            id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""},
                constraints=[spread(1, "zone", DNS, FOO, None, None, "Honor"), spread(1, "node", DNS, FOO)],
            ),
            [
                zn("node-a", "zone1", foo=""),
                make_node("node-b", {"zone": "zone1", "node": "node-b"}, taints=UNSCHEDULABLE_TAINT),
                zn("node-x", "zone2", foo=""),
            ],
            [
                existing("p-b1", "node-b", foo=""),
                existing("p-b2", "node-b", foo=""),
                existing("p-x1", "node-x", foo=""),
            ],
            [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
            [[("zone1", 0), ("zone2", 1)], [("node-a", 0), ("node-x", 1)]],
            id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""},
                node_selector={"foo": ""},
                constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)],
            ),
            [
                zn("node-a", "zone1"),
                make_node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, taints=UNSCHEDULABLE_TAINT),
                zn("node-x", "zone2", foo=""),
                zn("node-y", "zone2"),
            ],
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-a2", "node-a", foo=""),
                existing("p-x1", "node-x", foo=""),
                existing("p-y1", "node-y", foo=""),
            ],
            [{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}],
            [[("zone1", 0), ("zone2", 1)], [("node-b", 0), ("node-x", 1)]],
            id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""},
                node_selector={"foo": ""},
                constraints=[
                    spread(1, "zone", DNS, FOO, None, "Ignore"),
                    spread(1, "node", DNS, FOO, None, None, "Honor"),
                ],
            ),
            [
                zn("node-a", "zone1"),
                make_node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, taints=UNSCHEDULABLE_TAINT),
                zn("node-x", "zone2", foo=""),
                zn("node-y", "zone2", foo=""),
            ],
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-a2", "node-a", foo=""),
                existing("p-x1", "node-x", foo=""),
                existing("p-x2", "node-x", foo=""),
                existing("p-y1", "node-y", foo=""),
            ],
            [{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}],
            [[("zone1", 2), ("zone2", 3)], [("node-y", 1), ("node-x", 2)]],
            id="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        ),
        pytest.param(
            make_pod(
                labels={"foo": "", "bar": "a"}, constraints=[spread(1, "zone", DNS, FOO, match_label_keys=["bar"])]
            ),
            FOUR,
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-a2", "node-a", foo="", bar="a"),
                existing("p-b1", "node-b", foo=""),
                existing("p-y1", "node-y", foo="", bar="a"),
                existing("p-y2", "node-y", bar=""),
            ],
            [{"zone1": 1, "zone2": 1}],
            [[("zone1", 1), ("zone2", 1)]],
            id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        ),
        pytest.param(
            make_pod(labels={"foo": "a"}, constraints=[spread(1, "zone", DNS, {}, match_label_keys=["foo"])]),
            FOUR,
            FOO_A_PODS,
            [{"zone1": 3, "zone2": 2}],
            [[("zone2", 2), ("zone1", 3)]],
            id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, None, match_label_keys=["bar"])]),
            FOUR,
            FOO_A_PODS,
            [{"zone1": 0, "zone2": 0}],
            [[("zone1", 0), ("zone2", 0)]],
            id="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, FOO, match_label_keys=["bar"])]),
            FOUR,
            FOO_A_PODS,
            [{"zone1": 3, "zone2": 2}],
            [[("zone2", 2), ("zone1", 3)]],
            id="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
        ),
        pytest.param(
            make_pod(
                labels={"foo": "", "bar": ""}, constraints=[spread(1, "zone", DNS, FOO), spread(1, "zone", DNS, BAR)]
            ),
            FOUR,
            [
                existing("p-a1", "node-a", foo="", bar=""),
                existing("p-b1", "node-b", foo=""),
                existing("p-x1", "node-x", bar=""),
                existing("p-y1", "node-y", foo="", bar=""),
                existing("p-y2", "node-y", bar=""),
            ],
            [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}],
            [[("zone2", 1), ("zone1", 2)], [("zone1", 1), ("zone2", 3)]],
            id="two spreadConstraints with the same topologyKey",
        ),
    ],
)
def test_pre_filter_state(
    pod: Pod, nodes: list[Node], pods: list[Pod], want_counts: list[dict[str, int]], want_paths: Any
) -> None:
    _, _, state, code = pre_filter(pod, nodes, pods)
    assert code is S
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == want_counts
    assert paths_of(s) == norm(want_paths)


def test_pre_filter_state_constraints_are_parsed_with_upstream_defaults() -> None:
    pod = make_pod(
        labels={"foo": "", "bar": "a"},
        constraints=[spread(2, "zone", DNS, FOO, 3, "Ignore", "Honor", ["bar"]), spread(1, "node", DNS, None)],
    )
    _, _, state, _ = pre_filter(pod, FOUR)
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    merged = Selector.from_set({"bar": "a"}).add(compile_selector(convert(FOO, LabelSelector)))
    assert s.constraints == [
        Constraint(2, "zone", merged, 3, "Ignore", "Honor"),
        Constraint(1, "node", NOTHING, 1, "Honor", "Ignore"),
    ]


@pytest.mark.parametrize(
    ("pod", "defaults", "source", "want_code", "want"),
    [
        pytest.param(
            make_pod(labels={"foo": "bar", "baz": "kar"}),
            [spread(3, "node", DNS, None), spread(2, "node", SA, None), spread(5, "rack", DNS, None)],
            services({"foo": "bar"}),
            S,
            [(3, "node"), (5, "rack")],
            id="default constraints and a service",
        ),
        pytest.param(
            make_pod(labels={"foo": "bar"}),
            [spread(3, "node", DNS, None)],
            services({"baz": "kep"}),
            SKIP,
            [],
            id="default constraints and a service that doesn't match",
        ),
        pytest.param(
            make_pod(
                labels={"foo": "bar", "baz": "tar"},
                constraints=[
                    spread(1, "zone", DNS, {"matchLabels": {"baz": "tar"}}),
                    spread(2, "planet", SA, {"matchLabels": {"fot": "rok"}}),
                ],
            ),
            [spread(2, "node", DNS, None)],
            services({"foo": "bar"}),
            S,
            [(1, "zone")],
            id="default constraints and a service, but pod has constraints",
        ),
        pytest.param(
            make_pod(labels={"foo": "bar"}),
            [spread(2, "node", SA, None)],
            services({"foo": "bar"}),
            SKIP,
            [],
            id="default soft constraints and a service",
        ),
        pytest.param(
            make_pod(labels={"foo": "bar"}),
            [spread(3, "node", DNS, None)],
            None,
            SKIP,
            [],
            id="emulator: default constraints without any workload object",
        ),
        pytest.param(make_pod(labels={"foo": ""}), [], None, SKIP, [], id="skip if not specified"),
    ],
)
def test_pre_filter_default_constraints(
    pod: Pod, defaults: list[dict[str, Any]], source: Any, want_code: Code, want: list[tuple[int, str]]
) -> None:
    args = {"defaultingType": "List", "defaultConstraints": defaults}
    kw = {"default_selector": source} if source is not None else {}
    _, _, state, code = pre_filter(pod, [], args=args, **kw)
    assert code is want_code
    if code is SKIP:
        assert PRE_FILTER_STATE_KEY not in state
        return
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    assert [(c.max_skew, c.topology_key) for c in s.constraints] == want
    assert s.tp_value_to_match_num == [{} for _ in want]
    assert all(cp.paths == [("", MAX_INT32), ("", MAX_INT32)] for cp in s.critical_paths)
    if not pod.spec.topology_spread_constraints:  # the workload selector replaces the (absent) one
        assert all(c.selector == Selector.from_set({"foo": "bar"}) for c in s.constraints)


# --- TestPreFilterStateAddPod / RemovePod ----------------------------------------------------------

NODE_FOO = spread(1, "node", DNS, FOO)
ZONE_FOO = spread(1, "zone", DNS, FOO)
AB = [zn("node-a", "zone1"), zn("node-b", "zone1")]
AX = [zn("node-a", "zone1"), zn("node-x", "zone2")]
ABX = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")]
AFF_NODES = [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")]
TAINTED_A = [
    make_node("node-a", {"zone": "zone1", "node": "node-a"}, taints=UNSCHEDULABLE_TAINT),
    zn("node-b", "zone2"),
]


def _zoned(name: str, node: str, zone: str, **labels: str) -> Pod:
    return make_pod(name, node, labels={"zone": zone, **labels})


@pytest.mark.parametrize(
    ("preemptor", "added", "pods", "node_idx", "nodes", "want_counts", "want_paths"),
    [
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[NODE_FOO]),
            existing("p-a1", "node-a", foo=""),
            [],
            0,
            AB,
            [{"node-a": 1, "node-b": 0}],
            [[("node-b", 0), ("node-a", 1)]],
            id="node a and b both impact current min match",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[NODE_FOO]),
            existing("p-a1", "node-a", foo=""),
            [existing("p-b1", "node-b", foo="")],
            0,
            AB,
            [{"node-a": 1, "node-b": 1}],
            [[("node-a", 1), ("node-b", 1)]],
            id="only node a impacts current min match",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[NODE_FOO]),
            existing("p-a1", "node-a", ns="ns1", foo=""),
            [existing("p-b1", "node-b", foo="")],
            0,
            AB,
            [{"node-a": 0, "node-b": 1}],
            [[("node-a", 0), ("node-b", 1)]],
            id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[NODE_FOO]),
            existing("p-b2", "node-b", foo=""),
            [existing("p-b1", "node-b", foo="")],
            1,
            AB,
            [{"node-a": 0, "node-b": 2}],
            [[("node-a", 0), ("node-b", 2)]],
            id="add pod on non-critical node won't trigger re-calculation",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO, NODE_FOO]),
            existing("p-a1", "node-a", foo=""),
            [],
            0,
            AX,
            [{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}],
            [[("zone2", 0), ("zone1", 1)], [("node-x", 0), ("node-a", 1)]],
            id="node a and x both impact topologyKeyToMinPodsMap on zone and node",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO, NODE_FOO]),
            existing("p-a1", "node-a", foo=""),
            [existing("p-x1", "node-x", foo="")],
            0,
            AX,
            [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
            [[("zone1", 1), ("zone2", 1)], [("node-a", 1), ("node-x", 1)]],
            id="only node a impacts topologyKeyToMinPodsMap on zone and node",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO, NODE_FOO]),
            existing("p-a1", "node-a", foo=""),
            [
                existing("p-b1", "node-b", foo=""),
                existing("p-b2", "node-b", foo=""),
                existing("p-x1", "node-x", foo=""),
            ],
            0,
            ABX,
            [{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}],
            [[("zone2", 1), ("zone1", 3)], [("node-a", 1), ("node-x", 1)]],
            id="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
        ),
        pytest.param(
            make_pod(labels={"foo": "", "bar": ""}, constraints=[ZONE_FOO, spread(1, "node", DNS, BAR)]),
            existing("p-a1", "node-a", foo=""),
            [
                existing("p-b1", "node-b", foo="", bar=""),
                existing("p-x1", "node-x", foo="", bar=""),
                existing("p-x2", "node-x", bar=""),
            ],
            0,
            ABX,
            [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}],
            [[("zone2", 1), ("zone1", 2)], [("node-a", 0), ("node-b", 1)]],
            id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
        ),
        pytest.param(
            make_pod(labels={"foo": "", "bar": ""}, constraints=[ZONE_FOO, spread(1, "node", DNS, BAR)]),
            existing("p-a1", "node-a", foo="", bar=""),
            [
                existing("p-b1", "node-b", bar=""),
                existing("p-x1", "node-x", foo="", bar=""),
                existing("p-x2", "node-x", bar=""),
            ],
            0,
            ABX,
            [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
            [[("zone1", 1), ("zone2", 1)], [("node-a", 1), ("node-b", 1)]],
            id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone "
            "and node",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, affinity=("foo", "NotIn", ["bar"]), constraints=[ZONE_FOO]),
            _zoned("p-a1", "node-a", "zone1", foo=""),
            [_zoned("p-a2", "node-a", "zone1", foo=""), _zoned("p-b1", "node-b", "zone2", foo="")],
            0,
            AFF_NODES,
            [{"zone2": 1}],
            [[("zone2", 1), ("", MAX_INT32)]],
            id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            _zoned("p-b1", "node-b", "zone2", foo=""),
            [_zoned("p-a1", "node-a", "zone1", foo=""), _zoned("p-b2", "node-b", "zone2", foo="")],
            1,
            AFF_NODES,
            [{"zone1": 1, "zone2": 2}],
            [[("zone1", 1), ("zone2", 2)]],
            id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            existing("p-b1", "node-b", zone="zone2"),
            [_zoned("p-a1", "node-a", "zone1", foo=""), _zoned("p-b2", "node-b", "zone2", foo="")],
            1,
            AFF_NODES,
            [{"zone1": 1, "zone2": 1}],
            [[("zone1", 1), ("zone2", 1)]],
            id="add a label selector not matched pod when with NodeInclusionPolicy enabled",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, tolerations=["node.kubernetes.io/unschedulable"], constraints=[ZONE_FOO]),
            _zoned("p-b1", "node-b", "zone2", foo=""),
            [_zoned("p-a1", "node-a", "zone1", foo=""), _zoned("p-b2", "node-b", "zone2", foo="")],
            1,
            TAINTED_A,
            [{"zone1": 1, "zone2": 2}],
            [[("zone1", 1), ("zone2", 2)]],
            id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
        ),
    ],
)
def test_pre_filter_state_add_pod(
    preemptor: Pod,
    added: Pod,
    pods: list[Pod],
    node_idx: int,
    nodes: list[Node],
    want_counts: list[dict[str, int]],
    want_paths: Any,
) -> None:
    pl, snap, state, code = pre_filter(preemptor, nodes, pods)
    assert code is S
    ext = pl.pre_filter_extensions()
    status = ext.add_pod(state, preemptor, PodInfo(added), snap.get(nodes[node_idx].metadata.name))
    assert status.is_success()
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == want_counts
    assert paths_of(s) == norm(want_paths)


FOUR_FOO_1_1_1_1 = [
    existing("p-a1", "node-a", foo=""),
    existing("p-b1", "node-b", foo=""),
    existing("p-x1", "node-x", foo=""),
    existing("p-y1", "node-y", foo=""),
]


@pytest.mark.parametrize(
    ("preemptor", "nodes", "pods", "deleted", "node_idx", "want_counts", "want_paths"),
    [
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            ABX,
            FOUR_FOO_1_1_1_1[:3],
            0,
            0,
            [{"zone1": 1, "zone2": 1}],
            [[("zone1", 1), ("zone2", 1)]],
            id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            FOUR,
            FOUR_FOO_1_1_1_1,
            0,
            0,
            [{"zone1": 1, "zone2": 2}],
            [[("zone1", 1), ("zone2", 2)]],
            id="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            FOUR,
            [existing("p-a0", "node-a", bar=""), *FOUR_FOO_1_1_1_1],
            0,
            0,
            [{"zone1": 2, "zone2": 2}],
            [[("zone1", 2), ("zone2", 2)]],
            id="delete an irrelevant pod won't help",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            FOUR,
            FOUR_FOO_1_1_1_1,
            existing("p-a0", "node-a", bar=""),
            0,
            [{"zone1": 2, "zone2": 2}],
            [[("zone1", 2), ("zone2", 2)]],
            id="delete a non-existing pod won't help",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO, NODE_FOO]),
            ABX,
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-a2", "node-a", foo=""),
                existing("p-b1", "node-b", foo=""),
                existing("p-x1", "node-x", foo=""),
                existing("p-x2", "node-x", foo=""),
            ],
            3,
            2,
            [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}],
            [[("zone2", 1), ("zone1", 3)], [("node-b", 1), ("node-x", 1)]],
            id="two spreadConstraints",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, affinity=("foo", "NotIn", ["bar"]), constraints=[ZONE_FOO]),
            AFF_NODES,
            [_zoned("p-a2", "node-a", "zone1", foo=""), _zoned("p-b1", "node-b", "zone2", foo="")],
            _zoned("p-a1", "node-a", "zone1", foo=""),
            0,
            [{"zone2": 1}],
            [[("zone2", 1), ("", MAX_INT32)]],
            id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            AFF_NODES,
            [_zoned("p-a1", "node-a", "zone1", foo=""), _zoned("p-b2", "node-b", "zone2", foo="")],
            _zoned("p-b1", "node-b", "zone2", foo=""),
            1,
            [{"zone1": 1, "zone2": 0}],
            [[("zone2", 0), ("zone1", 1)]],
            id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        ),
    ],
)
def test_pre_filter_state_remove_pod(
    preemptor: Pod,
    nodes: list[Node],
    pods: list[Pod],
    deleted: int | Pod,
    node_idx: int,
    want_counts: list[dict[str, int]],
    want_paths: Any,
) -> None:
    pl, snap, state, code = pre_filter(preemptor, nodes, pods)
    assert code is S
    victim = pods[deleted] if isinstance(deleted, int) else deleted
    status = pl.remove_pod(state, preemptor, PodInfo(victim), snap.get(nodes[node_idx].metadata.name))
    assert status.is_success()
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == want_counts
    assert paths_of(s) == norm(want_paths)


def test_extensions_without_pre_filter_state_error() -> None:
    pl = plugin(Snapshot.from_objects([], FOUR))
    status = pl.add_pod(CycleState(), make_pod(), PodInfo(existing("q", "node-a")), node_info_of(FOUR[0]))
    assert (status.code, status.reasons) == (
        Code.Error,
        (f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',),
    )


def node_info_of(node: Node) -> Any:
    return Snapshot.from_objects([], [node]).get(node.metadata.name)


def test_add_pod_counts_for_an_empty_selector() -> None:
    """The initial count skips an empty selector, AddPod does not (upstream's updateWithPod only
    checks ``Matches``), so a nominated pod is counted."""
    pod = make_pod(labels={"foo": ""}, constraints=[spread(1, "node", DNS, {})])
    pl, snap, state, _ = pre_filter(pod, AB, _foo(("p-a1", "node-a")))
    assert pl.add_pod(state, pod, PodInfo(existing("n", "node-b")), snap.get("node-b")).is_success()
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == [{"node-a": 0, "node-b": 1}]


def test_clone_isolates_simulations() -> None:
    """CycleState.clone (nominated pods, preemption) copies counts and paths, shares constraints."""
    pod = make_pod(labels={"foo": ""}, constraints=[NODE_FOO])
    pl, snap, state, _ = pre_filter(pod, AB)
    clone = state.clone()
    assert pl.add_pod(clone, pod, PodInfo(existing("n", "node-b", foo="")), snap.get("node-b")).is_success()
    before: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    after: PreFilterState = clone.read(PRE_FILTER_STATE_KEY)
    assert before.tp_value_to_match_num == [{"node-a": 0, "node-b": 0}]
    assert after.tp_value_to_match_num == [{"node-a": 0, "node-b": 1}]
    assert after.constraints is before.constraints


# --- TestSingleConstraint / TestMultipleConstraints (Filter) -----------------------------------------


def _foo(*placements: tuple[str, str]) -> list[Pod]:
    return [existing(name, node, foo="") for name, node in placements]


SPREAD_2_1_0_3 = _foo(
    ("p-a1", "node-a"),
    ("p-a2", "node-a"),
    ("p-b1", "node-b"),
    ("p-y1", "node-y"),
    ("p-y2", "node-y"),
    ("p-y3", "node-y"),
)
NODES_ABC = [make_node(n, {"node": n}) for n in ("node-a", "node-b", "node-c")]
SPREAD_2_2_1 = _foo(("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-b2", "node-b"), ("p-c1", "node-c"))
FOO_NODES_XY = [
    make_node("node-a", {"node": "node-a", "foo": ""}),
    make_node("node-b", {"node": "node-b", "foo": ""}),
    make_node("node-x", {"node": "node-x", "foo": ""}),
    make_node("node-y", {"node": "node-y"}),
]
TAINTED_Y = [*FOO_NODES_XY[:3], make_node("node-y", {"node": "node-y"}, taints=UNSCHEDULABLE_TAINT)]
SPREAD_1_1_0_1 = _foo(("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y"))


@pytest.mark.parametrize(
    ("pod", "nodes", "pods", "want"),
    [
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]), FOUR, [], (S, S, S, S), id="no existing pods"
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, BAR)]),
            FOUR,
            [],
            (S, S, S, S),
            id="no existing pods, incoming pod doesn't match itself",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            FOUR,
            [
                existing("p-a1", "node-a", ns="ns1", foo=""),
                existing("p-b1", "node-a", ns="ns2", foo=""),
                existing("p-x1", "node-x", foo=""),
                existing("p-y1", "node-y", foo=""),
            ],
            (S, S, U, U),
            id="existing pods in a different namespace do not count",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, None)]),
            FOUR,
            _foo(("p-x1", "node-x"), ("p-y1", "node-y")),
            (S, S, S, S),
            id="existing pods do not match null selector",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            FOUR,
            SPREAD_2_1_0_3,
            (S, S, S, S),
            id="pods spread across zones as 3/3, all nodes fit",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO]),
            [zn("node-a", "zone1"), make_node("node-b", {"zon": "zone1", "node": "node-b"}), *FOUR[2:]],
            _foo(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")),
            (S, UU, U, U),
            id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "rack", DNS, FOO)]),
            [zn("node-a", "zone1"), zn("node-x", "zone2")],
            [],
            (UU, UU),
            id="pod cannot be scheduled as all nodes don't have label 'rack'",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[NODE_FOO]),
            FOUR,
            SPREAD_2_1_0_3,
            (U, U, S, U),
            id="pods spread across nodes as 2/1/0/3, only node-x fits",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(2, "node", DNS, FOO)]),
            FOUR,
            SPREAD_2_1_0_3,
            (U, S, S, U),
            id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        ),
        pytest.param(
            make_pod(labels={"bar": ""}, constraints=[NODE_FOO]),
            FOUR,
            SPREAD_2_1_0_3,
            (U, S, S, U),
            id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, affinity=("node", "In", ["node-a", "node-y"]), constraints=[NODE_FOO]),
            FOUR,
            SPREAD_2_1_0_3,
            (S, S, S, U),
            id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[NODE_FOO]),
            [make_node("node-a", {"node": "node-a"}), make_node("node-b", {"node": "node-b"})],
            [existing("p-a", "node-a", terminating=True, foo=""), existing("p-b", "node-b", foo="")],
            (S, U),
            id="terminating Pods should be excluded",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, affinity=("node", "NotIn", ["node-b"]), constraints=[ZONE_FOO]),
            FOUR,
            _foo(("p-b1", "node-b"), ("p-b2", "node-b"), ("p-y1", "node-y")),
            (S, S, U, U),
            id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(2, "node", DNS, FOO, 4)]),
            NODES_ABC,
            SPREAD_2_2_1,
            (U, U, S),
            id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
            "then the third node fits",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(2, "node", DNS, FOO, 2)]),
            NODES_ABC,
            SPREAD_2_2_1,
            (S, S, S),
            id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
            "then the all nodes fit",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(2, "zone", DNS, FOO, 3)]),
            FOUR,
            _foo(("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y")),
            (U, U, S, S),
            id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
            "then the third and fourth nodes fit",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(2, "zone", DNS, FOO, 1)]),
            FOUR,
            _foo(("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y")),
            (S, S, S, S),
            id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
            "then the all nodes fit",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, node_selector={"foo": ""}, constraints=[NODE_FOO]),
            FOO_NODES_XY,
            SPREAD_1_1_0_1,
            (U, U, S, S),
            id="NodeAffinityPolicy honored with labelSelectors",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""}, node_selector={"foo": ""}, constraints=[spread(1, "node", DNS, FOO, None, "Ignore")]
            ),
            FOO_NODES_XY,
            SPREAD_1_1_0_1,
            (U, U, S, U),
            id="NodeAffinityPolicy ignored with labelSelectors",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, affinity=("foo", "In", [""]), constraints=[NODE_FOO]),
            FOO_NODES_XY,
            SPREAD_1_1_0_1,
            (U, U, S, S),
            id="NodeAffinityPolicy honored with nodeAffinity",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "node", DNS, FOO, None, None, "Honor")]),
            TAINTED_Y,
            SPREAD_1_1_0_1,
            (U, U, S, S),
            id="NodeTaintsPolicy honored",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[NODE_FOO]),
            TAINTED_Y,
            SPREAD_1_1_0_1,
            (U, U, S, U),
            id="NodeTaintsPolicy ignored",
        ),
        # TestMultipleConstraints
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO, NODE_FOO]),
            FOUR,
            SPREAD_2_1_0_3,
            (U, U, S, U),
            id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO, NODE_FOO]),
            FOUR,
            [*SPREAD_2_1_0_3, existing("p-y4", "node-y", foo="")],
            (U, U, U, U),
            id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        ),
        pytest.param(
            make_pod(labels={"foo": "", "bar": ""}, constraints=[ZONE_FOO, spread(1, "node", DNS, BAR)]),
            FOUR,
            [existing("p-a1", "node-a", foo=""), existing("p-y1", "node-y", bar="")],
            (U, U, S, U),
            id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        ),
        pytest.param(
            make_pod(labels={"foo": "", "bar": ""}, constraints=[ZONE_FOO, spread(1, "node", DNS, BAR)]),
            FOUR,
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-x1", "node-x", bar=""),
                existing("p-y1", "node-y", bar=""),
            ],
            (U, U, U, U),
            id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        ),
        pytest.param(
            make_pod(labels={"foo": "", "bar": ""}, constraints=[ZONE_FOO, spread(1, "node", DNS, BAR)]),
            FOUR,
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-a2", "node-a", foo="", bar=""),
                existing("p-y1", "node-y", foo=""),
                existing("p-y2", "node-y", foo="", bar=""),
                existing("p-y3", "node-y", foo=""),
            ],
            (U, S, U, U),
            id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        ),
        pytest.param(
            make_pod(labels={"bar": ""}, constraints=[ZONE_FOO, spread(1, "node", DNS, BAR)]),
            FOUR,
            [
                existing("p-a1", "node-a", foo=""),
                existing("p-x1", "node-x", bar=""),
                existing("p-y1", "node-y", bar=""),
            ],
            (S, S, U, U),
            id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[ZONE_FOO, NODE_FOO]),
            [*FOUR[:2], make_node("node-x", {"zone": "zone2"}), FOUR[3]],
            _foo(("p-a1", "node-a"), ("p-y3", "node-y")),
            (U, S, UU, U),
            id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        ),
        pytest.param(
            make_pod(
                labels={"foo": ""},
                node_selector={"foo": ""},
                constraints=[ZONE_FOO, spread(1, "node", DNS, FOO, None, "Ignore")],
            ),
            [
                zn("node-a", "zone1", foo=""),
                zn("node-b", "zone1", foo=""),
                zn("node-x", "zone2", foo=""),
                zn("node-y", "zone2"),
            ],
            _foo(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y")),
            (U, U, S, U),
            id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        ),
        pytest.param(
            make_pod(labels={"foo": ""}, constraints=[spread(1, "zone", DNS, FOO, None, None, "Honor"), NODE_FOO]),
            [
                zn("node-a", "zone1", foo=""),
                zn("node-b", "zone1", foo=""),
                zn("node-x", "zone2", foo=""),
                make_node("node-y", {"zone": "zone2", "node": "node-y"}, taints=UNSCHEDULABLE_TAINT),
            ],
            _foo(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y")),
            (U, U, S, U),
            id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        ),
        pytest.param(
            make_pod(labels={"foo": "", "bar": ""}, constraints=[spread(1, "zone", DNS, BAR), ZONE_FOO]),
            FOUR,
            [
                existing("p-a1", "node-a", foo="", bar=""),
                existing("p-a2", "node-a", foo=""),
                existing("p-b1", "node-b", foo="", bar=""),
                existing("p-y1", "node-y", foo=""),
                existing("p-y2", "node-y", foo="", bar=""),
                existing("p-y3", "node-y", foo=""),
            ],
            (U, U, S, S),
            id="two Constraints on zone, spreads = [3/3, 2/1]",
        ),
    ],
)
def test_filter(pod: Pod, nodes: list[Node], pods: list[Pod], want: tuple[Code, ...]) -> None:
    pl, snap, state, code = pre_filter(pod, nodes, pods)
    assert code is S
    got = tuple(pl.filter(state, pod, snap.get(n.metadata.name)).code for n in nodes)
    assert got == want


def test_filter_reasons() -> None:
    pod = make_pod(labels={"foo": ""}, constraints=[ZONE_FOO])
    nodes = [zn("node-a", "zone1"), make_node("node-b", {"node": "node-b"}), zn("node-x", "zone2")]
    pl, snap, state, _ = pre_filter(pod, nodes, _foo(("p-a1", "node-a")))
    assert pl.filter(state, pod, snap.get("node-a")).reasons == (ERR_REASON_CONSTRAINTS_NOT_MATCH,)
    assert pl.filter(state, pod, snap.get("node-b")).reasons == (ERR_REASON_NODE_LABEL_NOT_MATCH,)
    assert (
        ERR_REASON_NODE_LABEL_NOT_MATCH
        == "node(s) didn't match pod topology spread constraints (missing required label)"
    )
    assert pl.filter(state, pod, snap.get("node-x")).is_success()


def test_pre_filter_disabled() -> None:
    """Filter without PreFilter's state is an error (upstream ``TestPreFilterDisabled``)."""
    pl = plugin(Snapshot())
    status = pl.filter(CycleState(), make_pod(), node_info_of(make_node("n", {})))
    assert (status.code, status.reasons) == (
        Code.Error,
        (f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',),
    )


def test_invalid_selector_is_an_error() -> None:
    bad = spread(1, "zone", DNS, {"matchExpressions": [{"key": "foo", "operator": "In"}]})
    _, _, _, code = pre_filter(make_pod(labels={"foo": ""}, constraints=[bad]), FOUR)
    assert code is Code.Error


# --- critical paths -----------------------------------------------------------------------------


def test_critical_paths_keep_upstreams_two_slot_approximation() -> None:
    """v1.34's criticalPaths: slot 0 is exact after PreFilter but may drift under repeated updates
    (domains a=1, b=2, c=2; a += 2, b += 1 leaves min 3 although c still holds 2)."""
    cp = CriticalPaths()
    for value, num in (("a", 1), ("b", 2), ("c", 2)):
        cp.update(value, num)
    assert cp.paths == [("a", 1), ("b", 2)]
    cp.update("a", 2)
    cp.update("a", 3)
    assert cp.paths == [("b", 2), ("a", 3)]
    cp.update("b", 3)
    assert cp.min_match == 3


def test_min_domains_zeroes_the_global_minimum() -> None:
    s = PreFilterState(
        [Constraint(1, "zone", Selector())], [CriticalPaths([("z1", 2), ("z2", 3)])], [{"z1": 2, "z2": 3}]
    )
    assert s.min_match_num(0, 2) == 2
    assert s.min_match_num(0, 3) == 0


# --- through the framework: nominated pods use AddPod on a cloned state ------------------------------


class _Nominator:
    def __init__(self, by_node: dict[str, list[PodInfo]]) -> None:
        self.by_node = by_node

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.by_node.get(node_name, [])


class _Clock:
    virtual = True

    def now(self) -> float:
        return 0.0


def test_framework_runs_filter_with_nominated_pods() -> None:
    snap = Snapshot.from_objects(_foo(("p-b1", "node-b")), AB)
    nominated = PodInfo(make_pod("nom", labels={"foo": ""}))
    spec = ProfileSpec(
        plugins={
            ExtensionPoint.QueueSort: [("PrioritySort", 0)],
            ExtensionPoint.PreFilter: [(NAME, 0)],
            ExtensionPoint.Filter: [(NAME, 0)],
            ExtensionPoint.Bind: [("DefaultBinder", 0)],
        },
        plugin_args={NAME: LIST},
    )
    fw = Framework(
        spec,
        {NAME: PodTopologySpread, "PrioritySort": PrioritySort, "DefaultBinder": DefaultBinder},
        clock=_Clock(),  # type: ignore[arg-type]
        rng=random.Random(0),
        snapshot=snap,
        nominator=_Nominator({"node-a": [nominated]}),
    )
    pod = make_pod(labels={"foo": ""}, constraints=[NODE_FOO])
    state = CycleState()
    _, status, _ = fw.run_pre_filter_plugins(state, pod, snap.node_info_list)
    assert status.is_success()
    # Alone, node-a (0 pods) fits; with the nominated pod counted it holds 1 like node-b: still fits.
    assert fw.run_filter_plugins_with_nominated_pods(state, pod, snap.get("node-a")).is_success()
    # node-b holds 1, the minimum is 0 without the nominated pod: skew 2 > 1.
    rejected = fw.run_filter_plugins_with_nominated_pods(state, pod, snap.get("node-b"))
    assert (rejected.code, rejected.reasons, rejected.plugin) == (U, (ERR_REASON_CONSTRAINTS_NOT_MATCH,), NAME)
    s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == [{"node-a": 0, "node-b": 1}]  # the simulation ran on a clone


def test_plugin_shape() -> None:
    pl = plugin(Snapshot())
    assert pl.name == NAME == "PodTopologySpread"
    assert isinstance(pl, PreFilterPlugin)
    assert isinstance(pl, FilterPlugin)
    assert isinstance(pl, PreScorePlugin)
    assert isinstance(pl, ScorePlugin)
    assert pl.score_extensions() is pl
    assert pl.pre_filter_extensions() is pl


# --- args ---------------------------------------------------------------------------------------


def test_args_default_to_system_defaulting() -> None:
    pl = PodTopologySpread(None, FakeHandle(Snapshot()))  # type: ignore[arg-type]
    assert pl.args.defaulting_type == "System"
    assert pl.system_defaulted
    assert [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in pl.default_constraints] == [
        (HOSTNAME, 3, SA),
        (ZONE, 5, SA),
    ]
    assert pl.default_constraints == SYSTEM_DEFAULT_CONSTRAINTS


def test_args_list_defaulting() -> None:
    args = {"defaultingType": "List", "defaultConstraints": [spread(2, "rack", DNS, None)]}
    pl = PodTopologySpread(args, FakeHandle(Snapshot()))  # type: ignore[arg-type]
    assert not pl.system_defaulted
    assert [(c.topology_key, c.max_skew) for c in pl.default_constraints] == [("rack", 2)]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        pytest.param({"defaultingType": "Nope"}, "defaultingType", id="unknown-defaulting-type"),
        pytest.param(
            {"defaultingType": "System", "defaultConstraints": [spread(1, "rack", DNS, None)]},
            "when .defaultConstraints are not empty",
            id="system-with-constraints",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [spread(1, "rack", DNS, FOO)]},
            "must not define a selector",
            id="default-constraint-with-selector",
        ),
    ],
)
def test_args_invalid(args: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        PodTopologySpread(args, FakeHandle(Snapshot()))  # type: ignore[arg-type]


# --- selectors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param(None, {"foo": ""}, False, id="null-matches-nothing"),
        pytest.param({}, {"foo": ""}, True, id="empty-matches-everything"),
        pytest.param(FOO, {"foo": "x"}, True, id="exists"),
        pytest.param(FOO, {"bar": ""}, False, id="exists-missing"),
        pytest.param({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True, id="match-labels"),
        pytest.param({"matchLabels": {"a": "1"}}, {"a": "2"}, False, id="match-labels-other-value"),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True, id="notin-missing-key"
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False, id="doesnotexist"
        ),
        pytest.param(
            {"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "b", "operator": "In", "values": ["2", "3"]}]},
            {"a": "1", "b": "3"},
            True,
            id="anded",
        ),
    ],
)
def test_selector_matches(selector: dict[str, Any] | None, labels: dict[str, str], want: bool) -> None:
    sel = compile_selector(None if selector is None else convert(selector, LabelSelector))
    assert sel.matches(labels) is want
    assert sel.empty() is (selector == {})
