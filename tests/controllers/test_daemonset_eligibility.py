"""The pure parts of the DaemonSet controller: upstream's daemon tolerations,
``NodeShouldRunDaemonPod``, the node-name affinity a daemon pod gets, and the failed-pod
backoff."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from agents.controllers.daemonset.eligibility import (
    daemon_tolerations,
    node_should_run,
    replace_node_name_affinity,
    target_node,
)
from agents.controllers.daemonset.manage import FailedPodBackoff
from emulator.base.api.core import Node, NodeSelectorRequirement, PodSpec, Toleration
from emulator.base.api.nodeaffinity import NODE_NAME_FIELD
from tests.builders import affinity, node, node_term, pod, taint, toleration
from tests.controllers.stsdsworld import daemonset

UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
SSD = {"disk": "ssd"}
ZONE_A = ("zone", "In", ["a"])
DEFAULT = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
]


def _pairs(tols: list[Toleration]) -> list[tuple[str, str]]:
    assert all(t.operator == "Exists" for t in tols[-len(DEFAULT) :])
    return [(t.key, t.effect) for t in tols]


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(PodSpec(), DEFAULT, id="defaults"),
        pytest.param(
            PodSpec(host_network=True),
            [*DEFAULT, ("node.kubernetes.io/network-unavailable", "NoSchedule")],
            id="host-network-adds-network-unavailable",
        ),
        pytest.param(
            PodSpec(tolerations=[Toleration(key="dedicated", operator="Exists", effect="NoSchedule")]),
            [("dedicated", "NoSchedule"), *DEFAULT],
            id="own-tolerations-kept-first",
        ),
        pytest.param(
            PodSpec(tolerations=[Toleration(key=UNSCHEDULABLE, operator="Exists", effect="NoSchedule")]),
            [(UNSCHEDULABLE, "NoSchedule"), *[d for d in DEFAULT if d[0] != UNSCHEDULABLE]],
            id="same-toleration-not-doubled",
        ),
    ],
)
def test_daemon_tolerations(spec: PodSpec, want: list[tuple[str, str]]) -> None:
    assert _pairs(daemon_tolerations(spec)) == want


@pytest.mark.parametrize(
    ("n", "kwargs", "want"),
    [
        pytest.param(node("n1"), {}, (True, True), id="plain-node"),
        pytest.param(
            node("n1", labels={"disk": "ssd"}), {"node_selector": {"disk": "ssd"}}, (True, True), id="selector-matches"
        ),
        pytest.param(node("n1"), {"node_selector": {"disk": "ssd"}}, (False, False), id="selector-does-not-match"),
        pytest.param(node("n1", taints=[taint("dedicated")]), {}, (False, True), id="untolerated-noschedule-keeps-pod"),
        pytest.param(
            node("n1", taints=[taint("dedicated", effect="NoExecute")]), {}, (False, False), id="untolerated-noexecute"
        ),
        pytest.param(
            node("n1", taints=[taint("dedicated", effect="NoExecute")]),
            {"tolerations": [toleration("dedicated")]},
            (True, True),
            id="tolerated-noexecute",
        ),
        pytest.param(
            node("n1", taints=[taint("node.kubernetes.io/unschedulable")], unschedulable=True),
            {},
            (True, True),
            id="cordoned-node-runs-daemon-pods",
        ),
        pytest.param(
            node("n1", taints=[taint("node.kubernetes.io/not-ready", effect="NoExecute")]),
            {},
            (True, True),
            id="not-ready-tolerated-by-default",
        ),
        pytest.param(
            node("n1", taints=[taint("node.kubernetes.io/network-unavailable")]),
            {},
            (False, True),
            id="network-unavailable-needs-host-network",
        ),
        pytest.param(
            node("n1", taints=[taint("node.kubernetes.io/network-unavailable")]),
            {"host_network": True},
            (True, True),
            id="network-unavailable-host-network",
        ),
        pytest.param(
            node("n1", taints=[taint("soft", effect="PreferNoSchedule")]),
            {},
            (True, True),
            id="prefer-no-schedule-ignored",
        ),
    ],
)
def test_node_should_run(n: Node, kwargs: dict[str, Any], want: tuple[bool, bool]) -> None:
    assert node_should_run(n, daemonset(**kwargs)) == want


def test_node_should_run_reads_required_node_affinity_and_node_name() -> None:
    ds = daemonset()
    spec = ds.spec.template.spec
    with_affinity = replace(
        ds,
        spec=replace(
            ds.spec,
            template=replace(
                ds.spec.template,
                spec=replace(spec, affinity=affinity(required_nodes=[node_term(("zone", "In", ["a"]))])),
            ),
        ),
    )
    assert node_should_run(node("n1", labels={"zone": "a"}), with_affinity) == (True, True)
    assert node_should_run(node("n2", labels={"zone": "b"}), with_affinity) == (False, False)
    pinned = replace(ds, spec=replace(ds.spec, template=replace(ds.spec.template, spec=replace(spec, node_name="n1"))))
    assert node_should_run(node("n1"), pinned) == (True, True)
    assert node_should_run(node("n2"), pinned) == (False, False)


def test_node_name_affinity_replaces_the_required_terms_and_keeps_the_rest() -> None:
    before = affinity(
        required_nodes=[node_term(("zone", "In", ["a"]))], preferred_nodes=[(5, node_term(("disk", "In", ["ssd"])))]
    )
    after = replace_node_name_affinity(before, "n7")
    assert after.node_affinity is not None
    required = after.node_affinity.required_during_scheduling_ignored_during_execution
    assert required is not None
    (term,) = required.node_selector_terms
    assert term.match_expressions == []
    assert term.match_fields == [NodeSelectorRequirement(key=NODE_NAME_FIELD, operator="In", values=["n7"])]
    assert after.node_affinity.preferred_during_scheduling_ignored_during_execution == (
        before.node_affinity.preferred_during_scheduling_ignored_during_execution  # type: ignore[union-attr]
    )
    fresh = replace_node_name_affinity(None, "n1")
    assert target_node(pod("p", affinity=fresh)) == "n1"
    assert target_node(pod("p", node="n3", affinity=fresh)) == "n3"
    assert target_node(pod("p")) is None


def test_failed_pod_backoff_doubles_to_its_cap() -> None:
    b = FailedPodBackoff(initial=1.0, cap=4.0)
    key = ("uid", "n1")
    assert not b.in_backoff(key, 0.0)
    delays = []
    t = 0.0
    for _ in range(4):
        b.next(key, t)
        delays.append(b.get(key))
        assert b.in_backoff(key, t + b.get(key) - 0.01)
        assert not b.in_backoff(key, t + b.get(key))
        t += b.get(key)
    assert delays == [1.0, 2.0, 4.0, 4.0]
    b.next(key, t + 100.0)  # idle for over twice the cap: starts again
    assert b.get(key) == 1.0
