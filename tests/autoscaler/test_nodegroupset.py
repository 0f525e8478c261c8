"""Similar node groups and the balanced scale-up, on upstream's own cases
(cluster-autoscaler 1.34, ``processors/nodegroupset/``): ``compare_nodegroups_test.go``
(``TestIdenticalNodesSimilar``, ``TestNodesSimilarVariousRequirements``,
``...AndPods``, ``...MemoryRequirements``, the m5.xlarge and m5.16xlarge memory cases,
``TestNodesSimilarVariousLabels``), ``label_nodegroups_test.go`` (``TestNodeLabelComparison``)
and ``balancing_processor_test.go`` (``TestFindSimilarNodeGroups*``, ``TestBalanceSingleGroup``,
``TestBalanceUnderMaxSize``, ``TestBalanceHittingMaxSize``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from msgspec.structs import replace

from agents.autoscaler.clusterautoscaler.nodegroupset import (
    DEFAULT_MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO,
    DifferenceRatios,
    NodeInfo,
    ScaleUpInfo,
    balance_scale_up,
    find_similar_node_groups,
    generic_comparator,
    label_comparator,
)
from emulator.base.api.core import Node, Pod
from emulator.base.api.quantity import parse_quantity
from tests.builders import node, pod


def build_test_node(name: str, milli_cpu: int, memory: int) -> Node:
    """``BuildTestNode``: 100 pods, the cpu and memory given; allocatable = capacity; no labels."""
    return node(name, cpu=f"{milli_cpu}m", memory=str(memory), pods="100")


def _with(n: Node, *, capacity: Mapping[str, str] = {}, allocatable: Mapping[str, str] = {}) -> Node:
    cap = {**n.status.capacity, **{k: parse_quantity(v) for k, v in capacity.items()}}
    alloc = {**n.status.allocatable, **{k: parse_quantity(v) for k, v in allocatable.items()}}
    return replace(n, status=replace(n.status, capacity=cap, allocatable=alloc))


def _labels(n: Node, labels: Mapping[str, str]) -> Node:
    return replace(n, metadata=replace(n.metadata, labels=dict(labels)))


def _similar(n1: Node, n2: Node, pods1: Sequence[Pod] = (), pods2: Sequence[Pod] = (), extra=()) -> bool:  # type: ignore[no-untyped-def]
    return generic_comparator(extra)(NodeInfo(n1, pods1), NodeInfo(n2, pods2))


N1 = build_test_node("node1", 1000, 2000)
GPU = "nvidia.com/gpu"


@pytest.mark.parametrize(
    ("other", "similar"),
    [
        pytest.param(build_test_node("node2", 1000, 2000), True, id="TestIdenticalNodesSimilar"),
        pytest.param(_with(build_test_node("n2", 1000, 2000), capacity={"cpu": "1001m"}), False, id="different-cpu"),
        pytest.param(
            _with(build_test_node("n3", 1000, 2000), allocatable={"cpu": "999m"}), True, id="slightly-less-allocatable"
        ),
        pytest.param(
            _with(build_test_node("n4", 1000, 2000), allocatable={"cpu": "500m"}), False, id="much-less-allocatable"
        ),
        pytest.param(
            _with(build_test_node("n5", 1000, 2000), capacity={GPU: "1"}, allocatable={GPU: "1"}),
            False,
            id="one-with-gpu",
        ),
    ],
)
def test_nodes_similar_various_requirements(other: Node, similar: bool) -> None:
    assert _similar(N1, other) is similar


P1 = pod("pod1", cpu="500m", memory="1000")


@pytest.mark.parametrize(
    ("other", "pods2", "similar"),
    [
        pytest.param(
            _with(build_test_node("node2", 1000, 2000), allocatable={"cpu": "500m", "memory": "1000"}),
            [],
            False,
            id="different-allocatable-same-free",
        ),
        pytest.param(build_test_node("n3", 1000, 2000), [pod("pod3", cpu="500m", memory="1000")], True, id="same-pods"),
        pytest.param(
            _with(build_test_node("node4", 1000, 2000), allocatable={"cpu": "999m"}),
            [pod("pod4", cpu="501m", memory="1001")],
            True,
            id="similar-allocatable-similar-pods",
        ),
    ],
)
def test_nodes_similar_various_requirements_and_pods(other: Node, pods2: list[Pod], similar: bool) -> None:
    assert _similar(N1, other, [P1], pods2) is similar


def _memory(n: Node, q: str) -> Node:
    return _with(n, capacity={"memory": q}, allocatable={"memory": q})


@pytest.mark.parametrize(
    ("q1", "q2", "both", "similar"),
    [
        # TestNodesSimilarVariousMemoryRequirements: node2's capacity changed, not its allocatable
        pytest.param("1000", str(int(1000 - 1000 * DEFAULT_MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO + 1)), False, True),
        pytest.param("1000", str(int(1000 - 1000 * DEFAULT_MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO - 1)), False, False),
        # ...LargeMemoryRequirementsM5XLarge / M516XLarge: whole nodes of those sizes
        pytest.param("16116152Ki", "15944120Ki", True, True, id="m5.xlarge-other-zone"),
        pytest.param("16116152Ki", "16438475Ki", True, False, id="m5.xlarge-times-1.02"),
        pytest.param("259970052Ki", "257217528Ki", True, True, id="m5.16xlarge-other-zone"),
        pytest.param("259970052Ki", "265169453Ki", True, False, id="m5.16xlarge-times-1.02"),
    ],
)
def test_nodes_similar_memory(q1: str, q2: str, both: bool, similar: bool) -> None:
    base = build_test_node("n", 1000, 1000)
    other = _memory(base, q2) if both else _with(base, capacity={"memory": q2})
    assert _similar(_memory(base, q1), other) is similar


def test_nodes_similar_various_labels() -> None:
    def check(l1: Mapping[str, str], l2: Mapping[str, str]) -> bool:
        return _similar(_labels(N1, l1), _labels(N1, l2), extra=["example.com/ready"])

    base1 = {"test-label": "test-value", "character": "winnie the pooh"}
    base2 = {"test-label": "test-value"}
    assert not check(base1, base2)  # missing character label
    base2 = {**base2, "character": "winnie the pooh"}
    assert check(base1, base2)
    for key, v1, v2 in [
        ("kubernetes.io/hostname", "node1", "node2"),
        ("failure-domain.beta.kubernetes.io/zone", "mars-olympus-mons1-b", "us-houston1-a"),
        ("beta.kubernetes.io/fluentd-ds-ready", "true", "false"),
        ("example.com/ready", "true", "false"),  # the extra ignored label
    ]:
        base1, base2 = {**base1, key: v1}, {**base2, key: v2}
        assert check(base1, base2), key
    missing = {k: v for k, v in base2.items() if k != "beta.kubernetes.io/fluentd-ds-ready"}
    assert check(base1, missing)
    assert check({**base1, "topology.kubernetes.io/zone": "a"}, {**base2, "topology.kubernetes.io/zone": "b"})


LABELS = ["node.kubernetes.io/instance-type", "kubernetes.io/arch"]
M5 = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"


@pytest.mark.parametrize(
    ("l1", "l2", "similar"),
    [
        pytest.param({M5: "m5.4xlarge", ARCH: "amd64"}, {M5: "m5.4xlarge", ARCH: "amd64"}, True, id="both-match"),
        pytest.param({M5: "m5.4xlarge", ARCH: "amd64"}, {M5: "m5.4xlarge", ARCH: "i386"}, False, id="one-differs"),
        pytest.param(
            {M5: "m5.4xlarge", ARCH: "amd64", "unspecified-label": "eu-west1"},
            {M5: "m5.4xlarge", ARCH: "amd64", "unspecified-label": "eu-west2"},
            True,
            id="unspecified-not-considered",
        ),
        pytest.param({}, {}, False, id="no-labels-set"),
        pytest.param({M5: "m5.4xlarge", ARCH: "amd64"}, {ARCH: "amd64"}, False, id="unset-on-second"),
        pytest.param({ARCH: "amd64"}, {M5: "m5.4xlarge", ARCH: "amd64"}, False, id="unset-on-first"),
        pytest.param({M5: "", ARCH: ""}, {M5: "", ARCH: ""}, True, id="explicitly-empty"),
        pytest.param({M5: "", ARCH: "amd64"}, {M5: "", ARCH: "amd64"}, True, id="one-explicitly-empty"),
    ],
)
def test_node_label_comparison(l1: dict[str, str], l2: dict[str, str], similar: bool) -> None:
    n = build_test_node("node1", 1000, 2000)
    assert label_comparator(LABELS)(NodeInfo(_labels(n, l1)), NodeInfo(_labels(n, l2))) is similar


def _basic_infos(labels1: Mapping[str, str] = {}, labels2: Mapping[str, str] = {}) -> dict[str, NodeInfo]:
    return {
        "ng1": NodeInfo(_labels(build_test_node("n1", 1000, 1000), labels1)),
        "ng2": NodeInfo(_labels(build_test_node("n2", 1000, 1000), labels2)),
        "ng3": NodeInfo(build_test_node("n3", 2000, 2000)),
    }


def _names(n1: NodeInfo, n2: NodeInfo) -> bool:
    return {n1.node.metadata.name, n2.node.metadata.name} == {"n1", "n2"}


@pytest.mark.parametrize(
    ("comparator", "infos"),
    [
        pytest.param(generic_comparator((), DifferenceRatios(0, 0, 0)), _basic_infos(), id="TestFindSimilarNodeGroups"),
        pytest.param(
            generic_comparator(["example.com/ready"], DifferenceRatios(0, 0, 0)),
            _basic_infos({"example.com/ready": "true"}, {"example.com/ready": "false"}),
            id="CustomLabels",
        ),
        pytest.param(_names, _basic_infos(), id="CustomComparator"),
    ],
)
def test_find_similar_node_groups(comparator, infos: dict[str, NodeInfo]) -> None:  # type: ignore[no-untyped-def]
    groups = ["ng1", "ng2", "ng3"]
    assert find_similar_node_groups(comparator, "ng1", groups, infos) == ["ng2"]
    assert find_similar_node_groups(comparator, "ng2", groups, infos) == ["ng1"]
    assert find_similar_node_groups(comparator, "ng3", groups, infos) == []


def _sizes(infos: list[ScaleUpInfo]) -> dict[str, int]:
    return {i.group: i.new for i in infos}


def test_balance_single_group() -> None:
    assert _sizes(balance_scale_up([("ng1", 1, 10)], 1)) == {"ng1": 2}
    assert _sizes(balance_scale_up([("ng1", 1, 10)], 4)) == {"ng1": 5}


UNDER = [("ng1", 1, 10), ("ng2", 3, 10), ("ng3", 5, 10), ("ng4", 5, 10)]


def test_balance_under_max_size() -> None:
    assert _sizes(balance_scale_up(UNDER, 1)) == {"ng1": 2}
    assert _sizes(balance_scale_up(UNDER, 2)) == {"ng1": 3}
    assert _sizes(balance_scale_up(UNDER, 4)) == {"ng1": 4, "ng2": 4}
    five = _sizes(balance_scale_up(UNDER, 5))
    assert sorted(five) == ["ng1", "ng2"]
    assert sorted(five.values()) == [4, 5]  # "doesn't matter which group gets how many"
    assert _sizes(balance_scale_up(UNDER, 10)) == {"ng1": 6, "ng2": 6, "ng3": 6, "ng4": 6}


GROUPS = {"ng1": ("ng1", 1, 1), "ng2": ("ng2", 1, 3), "ng3": ("ng3", 3, 10), "ng4": ("ng4", 5, 7), "ng5": ("ng5", 6, 3)}


@pytest.mark.parametrize(
    ("names", "new_nodes", "sizes"),
    [
        pytest.param(["ng1"], 1, {}, id="one-maxed-out-group"),
        pytest.param(["ng1", "ng2"], 1, {"ng2": 2}, id="smallest-maxed-out-add-one"),
        pytest.param(["ng1", "ng2"], 5, {"ng2": 3}, id="smallest-maxed-out-capped"),
        pytest.param(["ng2", "ng3"], 4, {"ng2": 3, "ng3": 5}, id="first-maxes-out-before-next"),
        pytest.param(["ng2", "ng3", "ng4"], 9, {"ng2": 3, "ng3": 8, "ng4": 7}, id="last-maxes-out-before-previous"),
        pytest.param(["ng2", "ng3", "ng4"], 900, {"ng2": 3, "ng3": 10, "ng4": 7}, id="all-capacity-capped"),
        pytest.param(["ng2", "ng5"], 1, {"ng2": 2}, id="one-group-above-max"),
    ],
)
def test_balance_hitting_max_size(names: list[str], new_nodes: int, sizes: dict[str, int]) -> None:
    assert _sizes(balance_scale_up([GROUPS[n] for n in names], new_nodes)) == sizes


def test_balance_needs_a_group() -> None:
    with pytest.raises(ValueError, match="Can't balance scale up between 0 groups"):
        balance_scale_up([], 1)
