"""PDB-aware DefaultPreemption end to end: the scheduler's PodDisruptionBudget informer feeds
``filterPodsWithPDBViolation`` and ``pickOneNodeForPreemption``'s first criterion, with the
budgets' status written by the disruption controller."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from msgspec.structs import replace

from agents.controllers.manager import start_workload_controllers
from agents.scheduler.plugins.defaultpreemption import NAME as DEFAULT_PREEMPTION
from agents.scheduler.preemption import Evaluator
from agents.scheduler.preemption import PodDisruptionBudget as PreemptionPDB
from agents.scheduler.workload_listers import WorkloadListers
from emulator.base.api.core import LabelSelector, PodCondition
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus
from tests.builders import node, pod, priority_class
from tests.cluster import Cluster

LOW, HIGH = 10, 1000


def _victim(c: Cluster, name: str, node_name: str, app: str, started: str) -> None:
    p = pod(name, labels={"app": app}, node=node_name, cpu="1", priority_class="low", start_time=started)
    created = c.server.create(p)
    c.server.update_status(
        replace(
            created,
            status=replace(
                created.status,
                phase="Running",
                start_time=started,
                conditions=[PodCondition(type="Ready", status="True")],
            ),
        )
    )


async def _world(c: Cluster, *, protect: str | None) -> None:
    c.server.create(priority_class("high", HIGH))
    c.server.create(priority_class("low", LOW))
    for n in ("n1", "n2"):
        c.server.create(node(n, cpu="1"))
    # Without budgets n1 wins: its victim started last (criterion 5).
    _victim(c, "a", "n1", "a", "2026-01-01T00:00:10Z")
    _victim(c, "b", "n2", "b", "2026-01-01T00:00:00Z")
    if protect is not None:
        c.server.create(
            PodDisruptionBudget(
                metadata=ObjectMeta(name=f"pdb-{protect}", namespace="default"),
                spec=PodDisruptionBudgetSpec(selector=LabelSelector(match_labels={"app": protect}), min_available=1),
            )
        )

    async def controllers() -> None:
        async with asyncio.TaskGroup() as tg:
            start_workload_controllers(tg, c.clock, c.client, names=["disruption"])

    c.spawn(controllers(), "controllers")
    await c.at(1.0)  # the budgets' status is written before the preemptor comes


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("protect", "nominated", "evicted"),
    [
        pytest.param(None, "n1", "a", id="no-budget-latest-start-wins"),
        pytest.param("a", "n2", "b", id="budget-reprieves-a"),
        pytest.param("b", "n1", "a", id="budget-on-the-other-node"),
    ],
)
async def test_preemption_avoids_the_node_whose_victim_a_budget_protects(
    cluster: Cluster, protect: str | None, nominated: str, evicted: str
) -> None:
    c = cluster
    await _world(c, protect=protect)
    if protect is not None:
        pdb: PodDisruptionBudget = c.server.get("PodDisruptionBudget", f"pdb-{protect}", "default")
        assert pdb.status.disruptions_allowed == 0
    sched = await c.start_scheduler()
    c.server.create(pod("p", cpu="1", priority_class="high"))
    await c.until(lambda: c.pod("p").status.nominated_node_name != "")
    assert c.pod("p").status.nominated_node_name == nominated
    assert c.pod(evicted).metadata.deletion_timestamp is not None
    kept = "b" if evicted == "a" else "a"
    assert c.pod(kept).metadata.deletion_timestamp is None
    assert len(sched.workloads.pdbs()) == (0 if protect is None else 1)


@pytest.mark.asyncio
async def test_violating_victim_is_taken_when_no_node_avoids_it(cluster: Cluster) -> None:
    """Both victims are protected: preemption still happens (PDBs are best effort) on the
    node with fewest violations; here a tie, so the later start wins as without budgets."""
    c = cluster
    await _world(c, protect=None)
    for app in ("a", "b"):
        c.server.create(
            PodDisruptionBudget(
                metadata=ObjectMeta(name=f"pdb-{app}", namespace="default"),
                spec=PodDisruptionBudgetSpec(selector=LabelSelector(match_labels={"app": app}), min_available=1),
            )
        )
    await c.at(2.0)
    await c.start_scheduler()
    c.server.create(pod("p", cpu="1", priority_class="high"))
    await c.until(lambda: c.pod("p").status.nominated_node_name != "")
    assert c.pod("p").status.nominated_node_name == "n1"


def _pdb_obj(ns: str, name: str, allowed: int, disrupted: dict[str, str] | None = None) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace=ns),
        spec=PodDisruptionBudgetSpec(selector=LabelSelector(match_labels={"app": name})),
        status=PodDisruptionBudgetStatus(disruptions_allowed=allowed, disrupted_pods=disrupted or {}),
    )


@pytest.mark.asyncio
async def test_listers_give_preemption_every_budget_in_order(cluster: Cluster) -> None:
    listers = WorkloadListers(cluster.client("s:workloads"))
    informer = listers.informers["PodDisruptionBudget"]
    objs = [_pdb_obj("b", "x", 1), _pdb_obj("a", "y", 0, {"y-1": "2026-01-01T00:00:00Z"})]
    for obj in objs:
        informer.store[(obj.metadata.namespace, obj.metadata.name)] = obj
    assert listers.pdbs() == [
        PreemptionPDB("a", LabelSelector(match_labels={"app": "y"}), 0, frozenset({"y-1"})),
        PreemptionPDB("b", LabelSelector(match_labels={"app": "x"}), 1, frozenset()),
    ]


class _Handle:
    def __init__(self, lister: Any = None) -> None:
        if lister is not None:
            self.pdb_lister = lister


@pytest.mark.parametrize(
    ("handle", "want"),
    [
        pytest.param(_Handle(), [], id="no-hook-no-budgets"),
        pytest.param(_Handle(lambda: [PreemptionPDB("default")]), [PreemptionPDB("default")], id="hook"),
    ],
)
def test_evaluator_reads_the_handles_budgets(handle: Any, want: list[PreemptionPDB]) -> None:
    ev = Evaluator(DEFAULT_PREEMPTION, handle, plugin=None)  # type: ignore[arg-type]
    assert list(ev.pdb_lister()) == want
