"""Expectations over the final cluster state: each passes and fails on the right inputs."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.app.scenario.expectations import check
from emulator.app.scenario.monitor import Overcommit
from emulator.app.scenario.schema import MaxPodsPerNode, NoOvercommit, PodCount, PodOnNode, PodsOnNodes, TopologySpread
from emulator.base.api.core import Node, Pod
from emulator.base.api.labelparse import parse_label_selector
from tests import builders


def node(name: str, **labels: str) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, labels=labels)


def pod(name: str, node_name: str = "", phase: str = "Running", **labels: str) -> Pod:
    return builders.pod(name, labels=labels, image="i", node=node_name, phase=phase)


NODES = [node("a1", zone="a"), node("a2", zone="a"), node("b1", zone="b"), node("c1", zone="c")]
SEL = parse_label_selector("app=web")


@pytest.mark.parametrize(
    ("expectation", "pods", "passed", "detail"),
    [
        pytest.param(
            TopologySpread(topology_key="zone", max_skew=1, selector=SEL),
            [pod("p1", "a1", app="web"), pod("p2", "b1", app="web"), pod("p3", "c1", app="web")],
            True,
            "skew 0 (a: 1, b: 1, c: 1)",
            id="spread-even",
        ),
        pytest.param(
            TopologySpread(topology_key="zone", max_skew=1, selector=SEL),
            [pod("p1", "a1", app="web"), pod("p2", "a2", app="web"), pod("p3", "b1", app="web")],
            False,
            "skew 2 (a: 2, b: 1, c: 0)",
            id="spread-empty-zone-counts",
        ),
        pytest.param(
            TopologySpread(topology_key="zone", max_skew=0, selector=SEL),
            [pod("p1", "a1", app="web"), pod("done", "b1", phase="Succeeded", app="web"), pod("x", "c1")],
            False,
            "skew 1 (a: 1, b: 0, c: 0)",
            id="spread-ignores-terminal-and-unselected",
        ),
        pytest.param(
            PodsOnNodes(node_selector=parse_label_selector("zone in (a,b)"), selector=SEL),
            [pod("p1", "a1", app="web"), pod("p2", "b1", app="web")],
            True,
            "2 of 2 pods on the 3 matching nodes",
            id="on-nodes-all",
        ),
        pytest.param(
            PodsOnNodes(node_selector=parse_label_selector("zone in (a,b)"), selector=SEL),
            [pod("p1", "a1", app="web"), pod("p2", "c1", app="web")],
            False,
            "1 of 2 pods on the 3 matching nodes",
            id="on-nodes-one-outside",
        ),
        pytest.param(
            PodsOnNodes(node_selector=parse_label_selector("zone=c"), selector=SEL, count=0),
            [pod("p1", "a1", app="web")],
            True,
            "0 of 1 pods on the 1 matching nodes",
            id="on-nodes-none-wanted",
        ),
        pytest.param(
            PodCount(condition="podsRunning", count="all", selector=SEL),
            [],
            False,
            "0 of 0 pods matching 'app=web'",
            id="all-of-nothing-fails",
        ),
        pytest.param(
            PodOnNode(name="p1", node="a1"),
            [pod("p1", "", phase="Pending")],
            False,
            "pod is on <unscheduled> (Pending)",
            id="pod-on-node-unscheduled",
        ),
        pytest.param(
            MaxPodsPerNode(count=1),
            [pod("p1", "a1"), pod("p2", "a1"), pod("p3", "b1")],
            False,
            "at most 2 pods on one node (a1)",
            id="max-per-node",
        ),
    ],
)
def test_expectation(expectation: Any, pods: list[Pod], passed: bool, detail: str) -> None:
    (result,) = check([expectation], pods, [], NODES)
    assert (result.passed, result.detail) == (passed, detail)


def test_no_overcommit_reports_the_first_violation() -> None:
    violations = [Overcommit(12.5, "a1", "cpu", 4500, 4000), Overcommit(13.0, "b1", "memory", 9, 8)]
    (result,) = check([NoOvercommit()], [], violations, NODES)
    assert not result.passed
    assert result.detail == "2 violation(s); first at t=12.5s on a1: cpu requested 4500 > allocatable 4000"
