"""The DaemonSet's ``manage`` and ``rolling_update`` without an event loop, table by table:
which nodes get a pod, which pods go, and how ``maxUnavailable``/``maxSurge`` pace an update."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from msgspec.structs import replace

from agents.controllers.daemonset.eligibility import (
    POD_TEMPLATE_GENERATION,
    daemon_tolerations,
    replace_node_name_affinity,
)
from agents.controllers.daemonset.manage import (
    FailedPodBackoff,
    daemon_status,
    eligibility,
    manage,
    nodes_to_daemon_pods,
)
from agents.controllers.daemonset.update import desired_counts, rolling_update, surge_enabled
from agents.controllers.history import CONTROLLER_REVISION_HASH
from emulator.base.api.apps import DaemonSet
from emulator.base.api.core import Node, Pod, PodCondition
from emulator.base.api.workloaddefaults import default_object
from tests.builders import node, pod, taint
from tests.controllers.stsdsworld import daemonset as _daemonset

State = Literal["ready", "pending", "failed", "succeeded", "deleting"]
NEW, OLD = "newhash", "oldhash"
NOW = 1000.0


def daemonset(**kwargs: Any) -> DaemonSet:
    ds: DaemonSet = default_object(_daemonset(**kwargs))
    return replace(ds, metadata=replace(ds.metadata, uid="ds-uid", generation=2))


def dpod(name: str, node_name: str, state: State = "ready", hash_: str = NEW, created: int = 0) -> Pod:
    phase = {"ready": "Running", "pending": "Pending", "failed": "Failed", "succeeded": "Succeeded"}.get(
        state, "Running"
    )
    conditions = [PodCondition(type="Ready", status="True", last_transition_time="2026-01-01T00:00:00Z")]
    p = pod(
        name,
        labels={CONTROLLER_REVISION_HASH: hash_, POD_TEMPLATE_GENERATION: "0"},
        affinity=replace_node_name_affinity(None, node_name),
        phase=phase,
        conditions=conditions if state in ("ready", "deleting") else (),
    )
    meta = replace(p.metadata, creation_timestamp=f"2026-01-01T00:00:{created:02d}Z")
    if state == "deleting":
        meta = replace(meta, deletion_timestamp="2026-01-01T00:01:00Z")
    return replace(p, metadata=meta)


def plan_of(ds: DaemonSet, nodes: list[Node], pods: list[Pod]) -> tuple[list[str], list[str]]:
    eligible = eligibility(ds, nodes, daemon_tolerations(ds.spec.template.spec))
    plan = manage(ds, eligible, nodes_to_daemon_pods(pods), NEW, FailedPodBackoff(), NOW, surge=surge_enabled(ds))
    return plan.create_on, [p.metadata.name for p in plan.delete]


@pytest.mark.parametrize(
    ("nodes", "pods", "creates", "deletes"),
    [
        pytest.param([node("a"), node("b")], [], ["a", "b"], [], id="a-pod-per-node"),
        pytest.param([node("a"), node("b")], [dpod("p", "a")], ["b"], [], id="only-missing"),
        pytest.param([node("a")], [dpod("p", "a"), dpod("q", "a", created=5)], [], ["q"], id="extra-newest-goes"),
        pytest.param([node("a")], [dpod("p", "a", "failed")], [], ["p"], id="failed-deleted-first"),
        pytest.param([node("a")], [dpod("p", "a", "succeeded")], [], ["p"], id="succeeded-deleted"),
        pytest.param([node("a")], [dpod("p", "a", "deleting")], [], [], id="deleting-left-alone"),
        pytest.param(
            [node("a", taints=[taint("x", effect="NoExecute")])], [dpod("p", "a")], [], ["p"], id="noexecute-evicts"
        ),
        pytest.param([node("a", taints=[taint("x")])], [dpod("p", "a")], [], [], id="noschedule-keeps"),
        pytest.param([node("a", taints=[taint("x")])], [], [], [], id="noschedule-no-new-pod"),
        pytest.param([node("a")], [dpod("p", "gone")], ["a"], ["p"], id="unbound-pod-of-a-gone-node"),
        pytest.param(
            [node("a")],
            [replace(dpod("p", "gone"), spec=replace(dpod("p", "gone").spec, node_name="gone"))],
            ["a"],
            [],
            id="bound-pod-of-a-gone-node-is-the-pod-gcs",
        ),
    ],
)
def test_manage(nodes: list[Node], pods: list[Pod], creates: list[str], deletes: list[str]) -> None:
    assert plan_of(daemonset(), nodes, pods) == (creates, deletes)


def test_failed_pods_back_off_per_node() -> None:
    ds = daemonset()
    nodes = [node("a")]
    eligible = eligibility(ds, nodes, daemon_tolerations(ds.spec.template.spec))
    backoff = FailedPodBackoff()
    by_node = nodes_to_daemon_pods([dpod("p", "a", "failed")])
    first = manage(ds, eligible, by_node, NEW, backoff, NOW, surge=False)
    assert [p.metadata.name for p in first.delete] == ["p"]
    again = manage(ds, eligible, nodes_to_daemon_pods([dpod("q", "a", "failed")]), NEW, backoff, NOW + 0.5, surge=False)
    assert again.delete == []
    assert again.requeue_after == 1.0


def update_of(ds: DaemonSet, n: int, pods: list[Pod]) -> tuple[list[str], list[str]]:
    nodes = [node(f"n{i}") for i in range(n)]
    eligible = eligibility(ds, nodes, daemon_tolerations(ds.spec.template.spec))
    plan = rolling_update(ds, eligible, nodes_to_daemon_pods(pods), NEW, 2, NOW)
    return sorted(p.metadata.name for p in plan.delete), plan.create_on


@pytest.mark.parametrize(
    ("max_unavailable", "states", "deletes"),
    [
        pytest.param(1, ["old", "old", "old", "old"], ["p0"], id="one-at-a-time"),
        pytest.param(2, ["old", "old", "old", "old"], ["p0", "p1"], id="two-at-a-time"),
        pytest.param("50%", ["old", "old", "old"], ["p0", "p1"], id="percent-rounds-up"),
        pytest.param(1, ["new-pending", "old", "old"], [], id="a-new-pod-not-available-holds"),
        pytest.param(1, ["missing", "old", "old"], [], id="a-node-without-pod-counts-unavailable"),
        pytest.param(1, ["new-pending", "old-pending", "old"], ["p1"], id="unavailable-old-replaced-anyway"),
        pytest.param(1, ["new", "new", "new"], [], id="done"),
        # upstream update.go rollingUpdate since kubernetes/kubernetes#123233 (v1.31): the
        # replaced unavailable old pod counts against maxUnavailable, so no available one goes
        pytest.param(1, ["old-pending", "old", "old", "old"], ["p0"], id="123233-replaced-counts-unavailable"),
        pytest.param(2, ["old-pending", "old", "old", "old"], ["p0", "p1"], id="123233-room-left-for-one"),
    ],
)
def test_rolling_update_max_unavailable(max_unavailable: int | str, states: list[str], deletes: list[str]) -> None:
    ds = daemonset(max_unavailable=max_unavailable)
    pods = []
    for i, s in enumerate(states):
        if s == "missing":
            continue
        hash_ = NEW if s.startswith("new") else OLD
        pods.append(dpod(f"p{i}", f"n{i}", "pending" if s.endswith("pending") else "ready", hash_))
    assert update_of(ds, len(states), pods) == (deletes, [])


@pytest.mark.parametrize(
    ("states", "deletes", "creates"),
    [
        pytest.param(["old", "old", "old"], [], ["n0"], id="surge-one-node"),
        pytest.param(["old+new-pending", "old", "old"], [], [], id="wait-for-the-surge-pod"),
        pytest.param(["old+new", "old", "old"], ["o0"], ["n1"], id="old-goes-next-surges"),
        pytest.param(["old-pending", "old", "old"], [], ["n0", "n1"], id="unavailable-old-replaced-beyond-surge"),
    ],
)
def test_rolling_update_max_surge(states: list[str], deletes: list[str], creates: list[str]) -> None:
    ds = daemonset(max_unavailable=0, max_surge=1)
    pods = []
    for i, s in enumerate(states):
        olds, _, news = s.partition("+")
        pods.append(dpod(f"o{i}", f"n{i}", "pending" if olds.endswith("pending") else "ready", OLD))
        if news:
            pods.append(dpod(f"u{i}", f"n{i}", "pending" if news.endswith("pending") else "ready", NEW, created=9))
    assert update_of(ds, len(states), pods) == (deletes, creates)


def test_desired_counts_never_both_zero() -> None:
    ds = daemonset(max_unavailable=0, max_surge=0)
    nodes = [node("a")]
    eligible = eligibility(ds, nodes, daemon_tolerations(ds.spec.template.spec))
    assert desired_counts(ds, eligible, {}) == (0, 1, 1)


def test_status_counts_the_oldest_pod_per_node() -> None:
    ds = daemonset(node_selector={"run": "yes"})
    nodes = [
        node("a", labels={"run": "yes"}),
        node("b", labels={"run": "yes"}),
        node("c"),
        node("d", labels={"run": "yes"}),
    ]
    pods = [dpod("pa", "a"), dpod("pb", "b", "pending", OLD), dpod("pc", "c")]
    eligible = eligibility(ds, nodes, daemon_tolerations(ds.spec.template.spec))
    s = daemon_status(ds, eligible, nodes_to_daemon_pods(pods), NEW, 2, NOW)
    assert (s.desired_number_scheduled, s.current_number_scheduled, s.number_misscheduled) == (3, 2, 1)
    assert (s.number_ready, s.number_available, s.number_unavailable, s.updated_number_scheduled) == (1, 1, 2, 1)
    assert s.observed_generation == 2
