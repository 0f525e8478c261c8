"""The disruption controller's status arithmetic (``disruptionstatus``), without a loop:
upstream's ``getExpectedPodCount``, ``countHealthyPods``, ``buildDisruptedPodMap``,
``updatePdbStatus`` and ``failSafe`` rules, table-driven."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.controllers.disruptionstatus import (
    DELETION_TIMEOUT,
    ScaleError,
    build_disrupted_pod_map,
    count_healthy_pods,
    expected_pod_count,
    fail_safe_status,
    go_selector,
    new_status,
    stale_disruption_wait,
)
from emulator.base.api.core import LabelSelector, LabelSelectorRequirement, Pod, PodCondition
from emulator.base.api.intstr import IntOrString
from emulator.base.api.meta import Condition, OwnerReference
from emulator.base.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus
from emulator.base.runtime.clock import format_timestamp
from tests.builders import pod

READY = PodCondition(type="Ready", status="True")


def _pod(name: str, *, ready: bool = True, owner: str = "", kind: str = "ReplicaSet", deleting: bool = False) -> Pod:
    p = pod(name, labels={"app": "web"}, conditions=[READY] if ready else [])
    if deleting:
        p = replace(p, metadata=replace(p.metadata, deletion_timestamp=format_timestamp(0)))
    if owner:
        ref = OwnerReference(api_version="apps/v1", kind=kind, name=owner, uid=f"uid-{owner}", controller=True)
        p = replace(p, metadata=replace(p.metadata, owner_references=[ref]))
    return p


def _pdb(
    *,
    min_available: IntOrString | None = None,
    max_unavailable: IntOrString | None = None,
    generation: int = 1,
    status: PodDisruptionBudgetStatus | None = None,
) -> PodDisruptionBudget:
    pdb = PodDisruptionBudget(
        spec=PodDisruptionBudgetSpec(
            min_available=min_available,
            max_unavailable=max_unavailable,
            selector=LabelSelector(match_labels={"app": "web"}),
        )
    )
    pdb = replace(pdb, metadata=replace(pdb.metadata, name="pdb", namespace="default", generation=generation))
    return replace(pdb, status=status) if status is not None else pdb


SCALES = {"uid-rs": 4, "uid-sts": 5}


def _find(ref: OwnerReference, namespace: str) -> tuple[str, int] | None:
    scale = SCALES.get(ref.uid)
    return None if scale is None else (ref.uid, scale)


@pytest.mark.parametrize(
    ("pdb", "pods", "want"),
    [
        pytest.param(_pdb(min_available=2), [_pod("a"), _pod("b"), _pod("c")], (3, 2, []), id="min-int-counts-pods"),
        pytest.param(
            _pdb(min_available="50%"), [_pod("a", owner="rs"), _pod("b", owner="rs")], (4, 2, []), id="min-pct-of-scale"
        ),
        pytest.param(_pdb(min_available="30%"), [_pod("a", owner="rs")], (4, 2, []), id="min-pct-rounds-up"),
        pytest.param(
            _pdb(max_unavailable=1),
            [_pod("a", owner="rs"), _pod("b", owner="sts", kind="StatefulSet")],
            (9, 8, []),
            id="max-int-sums-controllers",
        ),
        pytest.param(_pdb(max_unavailable="25%"), [_pod("a", owner="rs")], (4, 3, []), id="max-pct"),
        pytest.param(_pdb(max_unavailable=10), [_pod("a", owner="rs")], (4, 0, []), id="max-over-scale-floors-at-0"),
        pytest.param(
            _pdb(max_unavailable=1), [_pod("naked"), _pod("a", owner="rs")], (4, 3, ["naked"]), id="unmanaged-reported"
        ),
        pytest.param(_pdb(), [_pod("a")], (0, 0, []), id="neither-set"),
    ],
)
def test_expected_pod_count(pdb: PodDisruptionBudget, pods: list[Pod], want: tuple[int, int, list[str]]) -> None:
    assert expected_pod_count(pdb, pods, _find) == want


@pytest.mark.parametrize(
    ("pdb", "owner", "match"),
    [
        pytest.param(_pdb(max_unavailable=1), "job", 'found no controllers for pod "a"', id="unknown-controller"),
        pytest.param(_pdb(min_available="x%"), "rs", "invalid value", id="bad-percent"),
    ],
)
def test_expected_pod_count_errors(pdb: PodDisruptionBudget, owner: str, match: str) -> None:
    with pytest.raises(ScaleError, match=match):
        expected_pod_count(pdb, [_pod("a", owner=owner)], _find)


@pytest.mark.parametrize(
    ("pods", "disrupted", "want"),
    [
        pytest.param([_pod("a"), _pod("b")], {}, 2, id="ready"),
        pytest.param([_pod("a"), _pod("b", ready=False)], {}, 1, id="not-ready"),
        pytest.param([_pod("a"), _pod("b", deleting=True)], {}, 1, id="terminating"),
        pytest.param([_pod("a"), _pod("b")], {"b": format_timestamp(100)}, 1, id="recently-disrupted"),
        pytest.param([_pod("a"), _pod("b")], {"b": format_timestamp(0)}, 2, id="disruption-expired"),
    ],
)
def test_count_healthy_pods(pods: list[Pod], disrupted: dict[str, str], want: int) -> None:
    assert count_healthy_pods(pods, disrupted, now=150.0) == want


def test_disrupted_pod_map_keeps_recent_drops_expired_and_deleted() -> None:
    status = PodDisruptionBudgetStatus(
        disrupted_pods={"old": format_timestamp(0), "new": format_timestamp(100), "gone": format_timestamp(100)}
    )
    pods = [_pod("old"), _pod("new"), _pod("gone", deleting=True)]
    kept, recheck, not_deleted = build_disrupted_pod_map(pods, _pdb(status=status), now=150.0)
    assert kept == {"new": format_timestamp(100)}
    assert recheck == 100 + DELETION_TIMEOUT
    assert [p.metadata.name for p in not_deleted] == ["old"]


@pytest.mark.parametrize(
    ("healthy", "desired", "expected", "allowed", "cond"),
    [
        pytest.param(3, 2, 3, 1, ("True", "SufficientPods"), id="sufficient"),
        pytest.param(2, 2, 3, 0, ("False", "InsufficientPods"), id="at-budget"),
        pytest.param(1, 2, 3, 0, ("False", "InsufficientPods"), id="below-budget"),
        pytest.param(3, 0, 0, 0, ("False", "InsufficientPods"), id="nothing-expected"),
    ],
)
def test_new_status(healthy: int, desired: int, expected: int, allowed: int, cond: tuple[str, str]) -> None:
    pdb = _pdb(min_available=desired, generation=3)
    status = new_status(pdb, healthy, desired, expected, {}, "2026-01-01T00:00:05Z")
    assert status is not None
    assert (status.current_healthy, status.desired_healthy, status.expected_pods) == (healthy, desired, expected)
    assert status.disruptions_allowed == allowed
    assert status.observed_generation == 3
    [c] = status.conditions
    assert (c.type, c.status, c.reason, c.observed_generation) == ("DisruptionAllowed", *cond, 3)
    assert c.last_transition_time == "2026-01-01T00:00:05Z"
    # Written back, the same numbers need no write.
    assert new_status(replace(pdb, status=status), healthy, desired, expected, {}, "later") is None


def test_condition_transition_time_moves_only_on_status_change() -> None:
    pdb = _pdb(min_available=1)
    first = new_status(pdb, 3, 1, 3, {}, "t1")
    assert first is not None
    second = new_status(replace(pdb, status=first), 2, 1, 3, {}, "t2")
    assert second is not None
    assert second.conditions[0].last_transition_time == "t1"
    third = new_status(replace(pdb, status=second), 1, 1, 3, {}, "t3")
    assert third is not None
    assert third.conditions[0].last_transition_time == "t3"


def test_fail_safe_zeroes_disruptions_and_says_why() -> None:
    old = PodDisruptionBudgetStatus(
        disruptions_allowed=2,
        current_healthy=4,
        conditions=[
            Condition(type="DisruptionAllowed", status="True", reason="SufficientPods", last_transition_time="t0")
        ],
    )
    status = fail_safe_status(_pdb(status=old), "boom", "t1")
    assert status.disruptions_allowed == 0
    assert status.current_healthy == 4
    [c] = status.conditions
    assert (c.status, c.reason, c.message, c.last_transition_time) == ("False", "SyncFailed", "boom", "t1")


def test_go_selector_prints_like_go() -> None:
    sel = LabelSelector(
        match_labels={"b": "2", "a": "1"},
        match_expressions=[LabelSelectorRequirement(key="k", operator="In", values=["x", "y"])],
    )
    assert go_selector(sel) == (
        "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},"
        "MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],}},}"
    )


def test_disrupted_entry_is_dropped_at_exactly_its_expiry() -> None:
    """Regression: kept at its expiry instant, the entry asked for a recheck 0 s later,
    forever (virtual time never moved)."""
    status = PodDisruptionBudgetStatus(disrupted_pods={"a": format_timestamp(1)})
    kept, recheck, _ = build_disrupted_pod_map([_pod("a")], _pdb(status=status), now=1 + DELETION_TIMEOUT)
    assert (kept, recheck) == ({}, None)


def _target(status: str = "True", reason: str = "PreemptionByScheduler", at: float = 0.0) -> PodCondition:
    return PodCondition(
        type="DisruptionTarget", status=status, reason=reason, last_transition_time=format_timestamp(at)
    )


@pytest.mark.parametrize(
    ("p", "now", "want"),
    [
        pytest.param(_pod("a"), 30.0, None, id="no-condition"),
        pytest.param(pod("a", conditions=[_target()]), 30.0, 90.0, id="fresh"),
        pytest.param(pod("a", conditions=[_target()]), 200.0, 0.0, id="stale"),
        pytest.param(pod("a", conditions=[_target(status="False")]), 200.0, None, id="already-false"),
        pytest.param(pod("a", conditions=[_target(reason="TerminationByKubelet")]), 200.0, None, id="kubelet-s"),
        pytest.param(pod("a", conditions=[_target()], phase="Failed"), 200.0, None, id="terminal"),
        pytest.param(
            pod("a", conditions=[_target()], deletion_timestamp=format_timestamp(1)), 200.0, None, id="terminating"
        ),
    ],
)
def test_stale_disruption_wait(p: Pod, now: float, want: float | None) -> None:
    assert stale_disruption_wait(p, now) == want
