"""``statefulset.control.plan_sync`` without an event loop: upstream's ``updateStatefulSet``
decisions table by table, and properties over random pod states (OrderedReady never makes
more than one change a sync; Parallel never waits)."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.controllers.history import CONTROLLER_REVISION_HASH
from agents.controllers.statefulset.control import Revisions, plan_sync
from agents.controllers.statefulset.identity import new_versioned_pod, ordinal_of
from emulator.base.api.apps import StatefulSet
from emulator.base.api.core import Pod, PodCondition
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.workloaddefaults import default_object
from tests.controllers.stsdsworld import statefulset as _statefulset

State = Literal["ready", "pending", "terminating", "failed"]
OLD, NEW = "web-old", "web-new"


def statefulset(**kwargs: Any) -> StatefulSet:
    """The manifest as the API server stores it (defaulted)."""
    got: StatefulSet = default_object(_statefulset(**kwargs))
    return got


def revs(sts: StatefulSet) -> Revisions:
    return Revisions(current=OLD, update=NEW, current_template=sts.spec.template, update_template=sts.spec.template)


def member(sts: StatefulSet, ordinal: int, state: State = "ready", revision: str = OLD) -> Pod:
    pod = new_versioned_pod(sts.spec.template, sts.spec.template, revision, revision, sts, ordinal)
    meta = replace(pod.metadata, uid=f"uid-{ordinal}", creation_timestamp="2026-01-01T00:00:00Z")
    if state == "terminating":
        meta = replace(meta, deletion_timestamp="2026-01-01T00:00:05Z")
    phase = {"ready": "Running", "pending": "Pending", "terminating": "Running", "failed": "Failed"}[state]
    conditions = (
        [PodCondition(type="Ready", status="True", last_transition_time="2026-01-01T00:00:00Z")]
        if state in ("ready", "terminating")
        else []
    )
    return replace(pod, metadata=meta, status=replace(pod.status, phase=phase, conditions=conditions))


def names(pods: list[Pod]) -> list[str]:
    return [p.metadata.name for p in pods]


@pytest.mark.parametrize(
    ("policy", "replicas", "states", "creates", "deletes"),
    [
        pytest.param("OrderedReady", 3, [], ["web-0"], [], id="ordered-empty-creates-0-only"),
        pytest.param("OrderedReady", 3, ["ready"], ["web-1"], [], id="ordered-next-after-ready"),
        pytest.param("OrderedReady", 3, ["pending"], [], [], id="ordered-waits-on-unready"),
        pytest.param("OrderedReady", 3, ["ready", "terminating"], [], [], id="ordered-waits-on-terminating"),
        pytest.param("Parallel", 3, [], ["web-0", "web-1", "web-2"], [], id="parallel-creates-all"),
        pytest.param("Parallel", 3, ["pending"], ["web-1", "web-2"], [], id="parallel-does-not-wait"),
        pytest.param("OrderedReady", 1, ["ready", "ready", "ready"], [], ["web-2"], id="ordered-scale-down-highest"),
        pytest.param("Parallel", 1, ["ready", "ready", "ready"], [], ["web-2", "web-1"], id="parallel-scale-down-all"),
        pytest.param(
            "OrderedReady", 1, ["ready", "ready", "pending"], [], ["web-2"], id="ordered-unhealthy-condemned-goes-first"
        ),
        pytest.param(
            "OrderedReady", 1, ["ready", "pending", "pending"], [], [], id="ordered-unhealthy-not-first-blocks"
        ),
    ],
)
def test_scaling(policy: str, replicas: int, states: list[State], creates: list[str], deletes: list[str]) -> None:
    sts = statefulset(replicas=replicas, policy=policy)
    pods = [member(sts, i, s, NEW) for i, s in enumerate(states)]
    plan = plan_sync(sts, pods, revs(sts), now=100.0)
    assert names(plan.creates) == creates
    assert names(plan.deletes) == deletes


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_a_failed_pod_is_deleted_now_and_recreated_by_a_later_sync(policy: str) -> None:
    """Upstream ``stateful_set_control.go`` ``processReplica`` (1.34): a Failed or Succeeded
    replica is deleted and the sync moves on; "New pod should be generated on the next sync
    after the current pod is removed", so two pods of one name never exist at once."""
    sts = statefulset(replicas=2, policy=policy)
    plan = plan_sync(sts, [member(sts, 0), member(sts, 1, "failed")], revs(sts), now=100.0)
    assert (names(plan.deletes_failed), names(plan.creates), names(plan.deletes)) == (["web-1"], [], [])
    still_going = replace(member(sts, 1, "failed"), metadata=replace(member(sts, 1).metadata, deletion_timestamp="x"))
    plan = plan_sync(sts, [member(sts, 0), still_going], revs(sts), now=101.0)
    assert (names(plan.deletes_failed), names(plan.creates)) == ([], [])
    plan = plan_sync(sts, [member(sts, 0)], revs(sts), now=102.0)
    assert names(plan.creates) == ["web-1"]


def test_parallel_goes_on_past_a_failed_pod() -> None:
    sts = statefulset(replicas=3, policy="Parallel")
    plan = plan_sync(sts, [member(sts, 0, "failed")], revs(sts), now=100.0)
    assert (names(plan.deletes_failed), names(plan.creates)) == (["web-0"], ["web-1", "web-2"])


@pytest.mark.parametrize(
    ("partition", "revisions", "deletes"),
    [
        pytest.param(0, [OLD, OLD, OLD], ["web-2"], id="highest-first"),
        pytest.param(0, [OLD, OLD, NEW], ["web-1"], id="then-next"),
        pytest.param(2, [OLD, OLD, NEW], [], id="partition-stops-the-walk"),
        pytest.param(3, [OLD, OLD, OLD], [], id="partition-above-all"),
        pytest.param(0, [NEW, NEW, NEW], [], id="done"),
    ],
)
def test_rolling_update_by_partition(partition: int, revisions: list[str], deletes: list[str]) -> None:
    sts = statefulset(replicas=3, partition=partition)
    pods = [member(sts, i, "ready", r) for i, r in enumerate(revisions)]
    plan = plan_sync(sts, pods, revs(sts), now=100.0)
    assert names(plan.deletes) == deletes


def test_rolling_update_waits_for_an_unhealthy_updated_pod() -> None:
    sts = statefulset(replicas=3, policy="Parallel")
    pods = [member(sts, 0, "ready", OLD), member(sts, 1, "ready", OLD), member(sts, 2, "pending", NEW)]
    assert plan_sync(sts, pods, revs(sts), now=100.0).deletes == []


def test_new_pods_below_the_partition_get_the_current_revision() -> None:
    sts = statefulset(replicas=3, partition=2, policy="Parallel")
    plan = plan_sync(sts, [], revs(sts), now=100.0)
    assert [p.metadata.labels[CONTROLLER_REVISION_HASH] for p in plan.creates] == [OLD, OLD, NEW]


def test_status_completes_the_update_when_all_are_updated_and_ready() -> None:
    sts = replace(statefulset(replicas=2), metadata=ObjectMeta(name="web", namespace="default", generation=4))
    pods = [member(sts, i, "ready", NEW) for i in range(2)]
    s = plan_sync(sts, pods, revs(sts), now=100.0).status
    assert (s.current_revision, s.update_revision, s.current_replicas, s.updated_replicas) == (NEW, NEW, 2, 2)
    assert (s.replicas, s.ready_replicas, s.available_replicas, s.observed_generation) == (2, 2, 2, 4)


def test_ordinal_of() -> None:
    assert [ordinal_of("web", n) for n in ("web-0", "web-12", "web-x", "webx-1", "web-", "web-1-2")] == [
        0,
        12,
        -1,
        -1,
        -1,
        -1,
    ]


STATES = st.lists(st.sampled_from(["ready", "pending", "terminating", "failed", "missing"]), max_size=6)


@settings(max_examples=200, deadline=None)
@given(states=STATES, replicas=st.integers(0, 5), partition=st.integers(0, 5), new=st.lists(st.booleans(), max_size=6))
def test_ordered_ready_makes_at_most_one_change_per_sync(
    states: list[str], replicas: int, partition: int, new: list[bool]
) -> None:
    sts = statefulset(replicas=replicas, partition=partition)
    pods = [
        member(sts, i, s, NEW if i < len(new) and new[i] else OLD)  # type: ignore[arg-type]
        for i, s in enumerate(states)
        if s != "missing"
    ]
    plan = plan_sync(sts, pods, revs(sts), now=100.0)
    assert len(plan.creates) + len(plan.deletes) + len(plan.deletes_failed) <= 1
    # a failed pod is deleted alone; a later sync creates it again (upstream processReplica)
    # a create is always the lowest ordinal missing
    if plan.creates:
        ordinal = ordinal_of("web", plan.creates[0].metadata.name)
        have = {ordinal_of("web", p.metadata.name) for p in pods}
        assert ordinal == min(i for i in range(replicas) if i not in have)
