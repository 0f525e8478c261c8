"""The disruption controller as an agent: PDB status written through ``controller:disruption``
from the shared informers, on a test cluster (pods' readiness is set by hand, as the kubelet
would)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from msgspec.structs import replace

from agents.controllers.manager import start_workload_controllers
from emulator.base.api.apps import Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec, StatefulSet, StatefulSetSpec
from emulator.base.api.core import LabelSelector, Pod, PodCondition, Toleration
from emulator.base.api.intstr import IntOrString
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus
from tests.builders import pod
from tests.cluster import Cluster

LABELS = {"app": "web"}
SELECTOR = LabelSelector(match_labels=LABELS)
TEMPLATE = PodTemplateSpec(metadata=ObjectMeta(labels=LABELS), spec=pod("t").spec)


STARTED: dict[int, Any] = {}


@pytest_asyncio.fixture
async def disruption(cluster: Cluster) -> AsyncIterator[Cluster]:
    async def run() -> None:
        async with asyncio.TaskGroup() as tg:
            [STARTED[id(cluster)]] = start_workload_controllers(tg, cluster.clock, cluster.client, names=["disruption"])

    cluster.spawn(run(), "controllers")
    yield cluster
    STARTED.pop(id(cluster), None)


def _owned(obj: Any) -> list[OwnerReference]:
    m = obj.metadata
    return [OwnerReference(api_version="apps/v1", kind=obj.kind, name=m.name, uid=m.uid, controller=True)]


def _add_pods(c: Cluster, n: int, *, owner: Any = None, ready: int | None = None) -> list[Pod]:
    out = []
    for i in range(n):
        p = pod(f"web-{i}", labels=LABELS, node="n1")
        if owner is not None:
            p = replace(p, metadata=replace(p.metadata, owner_references=_owned(owner)))
        created = c.server.create(p)
        if ready is None or i < ready:
            created = c.server.update_status(
                replace(created, status=replace(created.status, conditions=[PodCondition(type="Ready", status="True")]))
            )
        out.append(created)
    return out


def _pdb(
    *, min_available: IntOrString | None = None, max_unavailable: IntOrString | None = None
) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        metadata=ObjectMeta(name="web", namespace="default"),
        spec=PodDisruptionBudgetSpec(selector=SELECTOR, min_available=min_available, max_unavailable=max_unavailable),
    )


def _status(c: Cluster) -> PodDisruptionBudgetStatus:
    got: PodDisruptionBudget = c.server.get("PodDisruptionBudget", "web", "default")
    return got.status


def _numbers(s: PodDisruptionBudgetStatus) -> tuple[int, int, int, int]:
    return (s.expected_pods, s.desired_healthy, s.current_healthy, s.disruptions_allowed)


def _rs(c: Cluster, replicas: int, owner: Any = None) -> ReplicaSet:
    meta = ObjectMeta(name="web-rs", namespace="default", owner_references=_owned(owner) if owner else [])
    created: ReplicaSet = c.server.create(
        ReplicaSet(metadata=meta, spec=ReplicaSetSpec(replicas=replicas, selector=SELECTOR, template=TEMPLATE))
    )
    return created


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("setup", "budget", "want"),
    [
        pytest.param("bare", {"min_available": 2}, (3, 2, 3, 1), id="min-int"),
        pytest.param("bare-1-unready", {"min_available": 2}, (3, 2, 2, 0), id="min-int-unready"),
        pytest.param("rs-4", {"min_available": "50%"}, (4, 2, 3, 1), id="min-pct-rs-scale"),
        pytest.param("deployment-5", {"max_unavailable": 1}, (5, 4, 3, 0), id="max-int-deployment-scale"),
        pytest.param("deployment-5", {"max_unavailable": "40%"}, (5, 3, 3, 0), id="max-pct-deployment-scale"),
        pytest.param("sts-3", {"max_unavailable": 1}, (3, 2, 3, 1), id="max-int-statefulset"),
    ],
)
async def test_status_per_budget(
    disruption: Cluster, setup: str, budget: dict[str, Any], want: tuple[int, ...]
) -> None:
    c = disruption
    if setup.startswith("bare"):
        _add_pods(c, 3, ready=2 if setup.endswith("unready") else None)
    elif setup == "rs-4":
        _add_pods(c, 3, owner=_rs(c, 4))
    elif setup == "deployment-5":
        dep = c.server.create(
            Deployment(
                metadata=ObjectMeta(name="web", namespace="default"),
                spec=DeploymentSpec(replicas=5, selector=SELECTOR, template=TEMPLATE),
            )
        )
        _add_pods(c, 3, owner=_rs(c, 3, owner=dep))
    else:
        sts = c.server.create(
            StatefulSet(
                metadata=ObjectMeta(name="web", namespace="default"),
                spec=StatefulSetSpec(replicas=3, selector=SELECTOR, template=TEMPLATE, service_name="web"),
            )
        )
        _add_pods(c, 3, owner=sts)
    c.server.create(_pdb(**budget))
    await c.at(1.0)
    s = _status(c)
    assert _numbers(s) == want
    assert s.observed_generation == 1
    [cond] = s.conditions
    assert (cond.type, cond.status, cond.reason) == (
        "DisruptionAllowed",
        "True" if want[3] > 0 else "False",
        "SufficientPods" if want[3] > 0 else "InsufficientPods",
    )
    controller = STARTED[id(c)]
    assert controller.client.name == "controller:disruption"
    assert controller.status_writes == 1


@pytest.mark.asyncio
async def test_pod_events_keep_status_current(disruption: Cluster) -> None:
    c = disruption
    pods = _add_pods(c, 3)
    c.server.create(_pdb(min_available=2))
    await c.at(1.0)
    assert _numbers(_status(c)) == (3, 2, 3, 1)
    c.server.delete("Pod", pods[0].metadata.name, "default", grace_period_seconds=0)
    await c.at(2.0)
    assert _numbers(_status(c)) == (2, 2, 2, 0)
    assert _status(c).conditions[0].reason == "InsufficientPods"


@pytest.mark.asyncio
async def test_disrupted_pods_expire_after_two_minutes(disruption: Cluster) -> None:
    c = disruption
    _add_pods(c, 3)
    c.server.create(_pdb(min_available=1))
    await c.at(1.0)
    # The Eviction API admitted web-0's eviction at t=1 but the pod was never deleted.
    cur: PodDisruptionBudget = c.server.get("PodDisruptionBudget", "web", "default")
    c.server.update_status(
        replace(cur, status=replace(cur.status, disrupted_pods={"web-0": c.clock.timestamp()}, disruptions_allowed=1))
    )
    await c.at(2.0)
    assert _numbers(_status(c)) == (3, 1, 2, 1)
    assert _status(c).disrupted_pods == {"web-0": c.clock.timestamp(1.0)}
    await c.at(125.0)  # 2 minutes after t=1, the controller's recheck drops the entry
    assert _status(c).disrupted_pods == {}
    assert _numbers(_status(c)) == (3, 1, 3, 2)
    reasons = [w.obj.reason for w in c.writes if w.kind == "Event"]
    assert "NotDeleted" in reasons


@pytest.mark.asyncio
async def test_unknown_controller_fails_safe(disruption: Cluster) -> None:
    c = disruption
    for i in range(2):
        p = pod(f"job-{i}", labels=LABELS, node="n1", conditions=[PodCondition(type="Ready", status="True")])
        ref = OwnerReference(api_version="batch/v1", kind="Job", name="j", uid="uid-j", controller=True)
        c.server.create(replace(p, metadata=replace(p.metadata, owner_references=[ref])))
    c.server.create(_pdb(max_unavailable=1))
    await c.at(1.0)
    s = _status(c)
    assert s.disruptions_allowed == 0
    [cond] = s.conditions
    assert (cond.status, cond.reason, cond.message) == ("False", "SyncFailed", 'found no controllers for pod "job-0"')
    events = [(w.obj.reason, w.obj.message) for w in c.writes if w.kind == "Event"]
    assert (
        "CalculateExpectedPodCountFailed",
        'Failed to calculate the number of expected pods: found no controllers for pod "job-0"',
    ) in events


@pytest.mark.asyncio
async def test_naked_pods_with_max_unavailable_are_reported(disruption: Cluster) -> None:
    c = disruption
    _add_pods(c, 2)
    c.server.create(_pdb(max_unavailable=1))
    await c.at(1.0)
    assert _numbers(_status(c)) == (0, 0, 2, 0)
    events = [w.obj for w in c.writes if w.kind == "Event" and w.verb == "create"]
    assert [e.reason for e in events] == ["UnmanagedPods"]
    assert events[0].source.component == "controllermanager"


@pytest.mark.asyncio
async def test_no_pod_informer_without_a_budget(disruption: Cluster) -> None:
    c = disruption
    _add_pods(c, 2)
    await c.at(5.0)
    assert sum(STARTED[id(c)].client.stats.calls.values()) == 0
    watches = {(w.name, w.kind) for w in c.server.watchers()}
    assert ("controller:shared-informers", "PodDisruptionBudget") in watches
    assert ("controller:shared-informers", "Pod") not in watches  # opened once a PDB exists
    c.server.create(_pdb(min_available=1))
    await c.at(6.0)
    assert ("controller:shared-informers", "Pod") in {(w.name, w.kind) for w in c.server.watchers()}


@pytest.mark.asyncio
async def test_pod_in_two_budgets_warns_and_both_are_kept_current(disruption: Cluster) -> None:
    c = disruption
    _add_pods(c, 2)
    for name, sel in (("b-web", SELECTOR), ("a-all", LabelSelector())):
        c.server.create(
            PodDisruptionBudget(
                metadata=ObjectMeta(name=name, namespace="default"),
                spec=PodDisruptionBudgetSpec(selector=sel, min_available=1),
            )
        )
    await c.at(1.0)
    for name in ("a-all", "b-web"):
        got: PodDisruptionBudget = c.server.get("PodDisruptionBudget", name, "default")
        assert _numbers(got.status) == (2, 1, 2, 1)
    warnings = sorted(
        (w.obj.involved_object.name, w.obj.message)
        for w in c.writes
        if w.kind == "Event" and w.verb == "create" and w.obj.reason == "MultiplePodDisruptionBudgets"
    )
    assert warnings == [
        (f"web-{i}", f'Pod "default"/"web-{i}" matches multiple PodDisruptionBudgets.  Chose "a-all" arbitrarily.')
        for i in range(2)
    ]


@pytest.mark.asyncio
async def test_stale_disruption_target_is_reset_after_two_minutes(disruption: Cluster) -> None:
    c = disruption
    [victim, _] = _add_pods(c, 2)
    c.server.create(_pdb(min_available=1))
    target = PodCondition(
        type="DisruptionTarget", status="True", reason="PreemptionByScheduler", last_transition_time=c.clock.timestamp()
    )
    cur = c.pod(victim.metadata.name)
    c.server.update_status(replace(cur, status=replace(cur.status, conditions=[*cur.status.conditions, target])))
    await c.at(100.0)
    [cond] = [x for x in c.pod("web-0").status.conditions if x.type == "DisruptionTarget"]
    assert cond.status == "True"
    await c.at(125.0)
    [cond] = [x for x in c.pod("web-0").status.conditions if x.type == "DisruptionTarget"]
    assert (cond.status, cond.reason) == ("False", "")
    assert STARTED[id(c)].statistics()["staleDisruptionResets"] == 1


@pytest.mark.asyncio
async def test_the_stale_reset_carries_the_pods_generation(disruption: Cluster) -> None:
    """1.34 (PodObservedGenerationTracking, beta, on): ``syncStalePodDisruption``'s
    DisruptionTarget=False has ``observedGeneration`` = the pod's ``metadata.generation``."""
    c = disruption
    [victim, _] = _add_pods(c, 2)
    c.server.create(_pdb(min_available=1))
    cur = c.pod(victim.metadata.name)
    extra = Toleration(key="example.com/extra", operator="Exists")
    cur = c.server.update(replace(cur, spec=replace(cur.spec, tolerations=[*cur.spec.tolerations, extra])))
    assert cur.metadata.generation == 2
    target = PodCondition(
        type="DisruptionTarget", status="True", reason="PreemptionByScheduler", last_transition_time=c.clock.timestamp()
    )
    c.server.update_status(replace(cur, status=replace(cur.status, conditions=[*cur.status.conditions, target])))
    await c.at(125.0)
    [cond] = [x for x in c.pod("web-0").status.conditions if x.type == "DisruptionTarget"]
    assert (cond.status, cond.observed_generation) == ("False", 2)
