"""The generic preemption package: upstream ``preemption_test.go`` (``TestDryRunPreemption`` with a
fake plugin, ``TestSelectCandidate`` with custom score functions, ``TestPrepareCandidate``), the
default ``pickOneNodeForPreemption`` criteria one by one, the util helpers (start times,
``MoreImportantPod``), ``filterPodsWithPDBViolation``, and the executor's async steps (gate
order, waiting pods, nominations cleared, events, errors → activation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from msgspec.structs import replace

from agents.scheduler.framework.types import Code, CycleState, NodeInfo, PodInfo, Status
from agents.scheduler.framework.waiting_pods import WaitingPod, WaitingPodsMap
from agents.scheduler.preemption import (
    Candidate,
    Evaluator,
    PodDisruptionBudget,
    ScoreFunc,
    Victims,
    earliest_pod_start_time,
    filter_pods_with_pdb_violation,
    importance_key,
    pick_one_node_for_preemption,
    with_disruption_target,
)
from emulator.base.api.codec import convert
from emulator.base.api.core import LabelSelector, Pod, PodStatus
from emulator.base.api.errors import ApiError
from tests.scheduler.preemption.preemption_helpers import (
    HIGH,
    LOW,
    MID,
    NEG,
    SCHEDULER,
    FakeClient,
    FakeClock,
    FakeNominator,
    build,
    make_node,
    make_pod,
)

NOW = 100.0


def names(pods: Sequence[Pod]) -> list[str]:
    return [p.metadata.name for p in pods]


# --- util helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "a_first"),
    [
        pytest.param(make_pod("a", priority=HIGH), make_pod("b", priority=MID), True, id="higher priority first"),
        pytest.param(make_pod("a", priority=LOW), make_pod("b", priority=MID), False, id="lower priority last"),
        pytest.param(make_pod("a", start=1), make_pod("b", start=2), True, id="same priority: earlier start first"),
        pytest.param(make_pod("a", start=3), make_pod("b", start=2), False, id="same priority: later start last"),
        pytest.param(make_pod("a"), make_pod("b", start=NOW - 1), False, id="not started counts as now"),
        pytest.param(make_pod("a", priority=NEG, start=0), make_pod("b", start=50), False, id="negative priority"),
    ],
)
def test_more_important_pod(a: Pod, b: Pod, a_first: bool) -> None:
    assert (importance_key(a, NOW) < importance_key(b, NOW)) is a_first


@pytest.mark.parametrize(
    ("pods", "expected"),
    [
        pytest.param([], None, id="no victims"),
        pytest.param([make_pod("a", priority=MID, start=5)], 5.0, id="one"),
        pytest.param(
            [
                make_pod("a", priority=LOW, start=1),
                make_pod("b", priority=MID, start=7),
                make_pod("c", priority=MID, start=4),
            ],
            4.0,
            id="earliest among the highest-priority victims only",
        ),
        pytest.param([make_pod("a", priority=MID), make_pod("b", priority=MID, start=9)], 9.0, id="unstarted is now"),
    ],
)
def test_earliest_pod_start_time(pods: list[Pod], expected: float | None) -> None:
    assert earliest_pod_start_time(pods, NOW) == expected


# --- pickOneNodeForPreemption ----------------------------------------------------------------


def victims(*pods: Pod, pdb: int = 0) -> Victims:
    return Victims(list(pods), pdb)


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param(
            {"n1": victims(make_pod("a", priority=LOW), pdb=1), "n2": victims(make_pod("b", priority=HIGH))},
            "n2",
            id="a node with minimum number of PDB violations",
        ),
        pytest.param(
            {
                "node1": victims(make_pod("p1.1", priority=MID), make_pod("p1.2", priority=MID)),
                "node2": victims(make_pod("p2.1", priority=MID), make_pod("p2.2", priority=LOW)),
                "node3": victims(make_pod("p3.1", priority=LOW), make_pod("p3.2", priority=LOW)),
            },
            "node3",
            id="node with min highest priority pod is picked",
        ),
        pytest.param(
            {
                "node1": victims(make_pod("p1.1", priority=MID), make_pod("p1.2", priority=MID)),
                "node2": victims(make_pod("p2.1", priority=MID), make_pod("p2.2", priority=LOW)),
            },
            "node2",
            id="when highest priorities are the same, minimum sum of priorities is picked",
        ),
        pytest.param(
            {
                "node1": victims(*(make_pod(f"p1.{i}", priority=NEG) for i in range(3))),
                "node2": victims(make_pod("p2.1", priority=NEG), make_pod("p2.2", priority=NEG)),
            },
            "node2",
            id="sum of adjusted priorities is considered",
        ),
        pytest.param(
            {
                # Σ(priority + 2^31) ties only with an int32-min priority: 100 + 2^31 on both.
                "node1": victims(make_pod("p1.1", priority=MID), make_pod("p1.2", priority=-(2**31))),
                "node2": victims(make_pod("p2.1", priority=MID)),
            },
            "node2",
            id="when highest priority and sum are the same, minimum number of pods is picked",
        ),
        pytest.param(
            {
                "node1": victims(make_pod("p1.1", priority=MID, start=2), make_pod("p1.2", priority=MID, start=2)),
                "node2": victims(make_pod("p2.1", priority=MID, start=3), make_pod("p2.2", priority=MID, start=3)),
                "node3": victims(make_pod("p3.1", priority=MID, start=1), make_pod("p3.2", priority=MID, start=1)),
            },
            "node2",
            id="same priority, same number of victims, different start time for each node's pod",
        ),
        pytest.param(
            {
                "node1": victims(make_pod("p1.1", priority=MID, start=4), make_pod("p1.2", priority=MID, start=2)),
                "node2": victims(make_pod("p2.1", priority=MID, start=5), make_pod("p2.2", priority=MID, start=1)),
                "node3": victims(make_pod("p3.1", priority=MID, start=3), make_pod("p3.2", priority=MID, start=6)),
            },
            "node3",
            id="same priority, same number of victims, different start time for all pods",
        ),
        pytest.param(
            {"n1": victims(make_pod("a", priority=MID, start=1)), "n2": victims(make_pod("b", priority=MID, start=1))},
            "n1",
            id="full tie: the first remaining node",
        ),
    ],
)
def test_pick_one_node_for_preemption(nodes: dict[str, Victims], expected: str) -> None:
    assert pick_one_node_for_preemption(nodes, NOW) == expected


def test_pick_one_node_with_custom_score_funcs_and_empty_map() -> None:
    nodes = {"a": victims(make_pod("x", priority=LOW)), "b": victims(make_pod("y", priority=HIGH))}
    assert pick_one_node_for_preemption(nodes, NOW, [lambda n: 1 if n == "b" else 0]) == "b"
    assert pick_one_node_for_preemption({}, NOW) == ""


# --- PDBs -------------------------------------------------------------------------------------


def pdb(allowed: int, *, labels: dict[str, str] | None = None, ns: str = "default", **kw: Any) -> PodDisruptionBudget:
    sel = convert({"matchLabels": labels}, LabelSelector) if labels is not None else None
    return PodDisruptionBudget(ns, sel, allowed, frozenset(kw.get("disrupted", ())))


FOO = {"app": "foo"}


@pytest.mark.parametrize(
    ("pods", "pdbs", "violating"),
    [
        pytest.param([make_pod("a", labels=FOO)], [], [], id="no budgets"),
        pytest.param(
            [make_pod("a", labels=FOO), make_pod("b", labels=FOO)],
            [pdb(1, labels=FOO)],
            ["b"],
            id="second drains the budget",
        ),
        pytest.param([make_pod("a")], [pdb(0, labels=FOO)], [], id="a pod without labels matches no budget"),
        pytest.param([make_pod("a", labels=FOO)], [pdb(0, labels={})], [], id="empty selector matches nothing"),
        pytest.param([make_pod("a", labels=FOO)], [pdb(0)], [], id="nil selector matches nothing"),
        pytest.param([make_pod("a", labels=FOO)], [pdb(0, labels=FOO, ns="other")], [], id="other namespace"),
        pytest.param(
            [make_pod("a", labels=FOO), make_pod("b", labels=FOO)],
            [pdb(1, labels=FOO, disrupted=["b"])],
            [],
            id="a pod in disruptedPods is not counted",
        ),
        pytest.param(
            [make_pod("a", labels=FOO)], [pdb(0, labels={"bad key!": "x"})], [], id="invalid selector matches nothing"
        ),
    ],
)
def test_filter_pods_with_pdb_violation(pods: list[Pod], pdbs: list[PodDisruptionBudget], violating: list[str]) -> None:
    infos = [PodInfo(p) for p in pods]
    bad, good = filter_pods_with_pdb_violation(infos, pdbs)
    assert [pi.pod.metadata.name for pi in bad] == violating
    assert [pi.pod.metadata.name for pi in good] == [n for n in names(pods) if n not in violating]


# --- the evaluator with a fake plugin (preemption_test.go) ------------------------------------


class FakePostFilterPlugin:
    """Upstream's: every node's first pod is the victim, with a fixed number of PDB violations."""

    def __init__(self, num_violating: int = 0, score_funcs: list[ScoreFunc] | None = None) -> None:
        self.num_violating = num_violating
        self.score_funcs = score_funcs

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def pod_eligible_to_preempt_others(self, pod: Pod, status: Status | None) -> tuple[bool, str]:
        return True, ""

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status]:
        return [node_info.pods[0].pod], self.num_violating, Status()

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc] | None:
        if self.score_funcs is None:
            return None
        return [lambda n: -sum(len(p.spec.containers) for p in nodes_to_victims[n].pods)]


@pytest.mark.parametrize(
    ("num_violating", "expected"),
    [
        pytest.param(0, [("node1", ["p1"], 0), ("node2", ["p2"], 0)], id="no pdb violation"),
        pytest.param(1, [("node1", ["p1"], 1), ("node2", ["p2"], 1)], id="pdb violation on each node"),
    ],
)
def test_dry_run_preemption_with_fake_plugin(num_violating: int, expected: list[tuple[str, list[str], int]]) -> None:
    pods = [make_pod("p1", node="node1", priority=MID), make_pod("p2", node="node2", priority=MID)]
    fwk, _ = build(pods, [make_node("node1"), make_node("node2")])
    ev = Evaluator("FakePostFilter", fwk, FakePostFilterPlugin(num_violating))
    nodes = fwk.snapshot_shared_lister().node_info_list
    got, _, errors = ev.dry_run_preemption(CycleState(), make_pod("p", priority=HIGH), nodes, [], 0, len(nodes))
    assert [(c.name, names(c.victims.pods), c.victims.num_pdb_violations) for c in got] == expected
    assert errors == []


def test_select_candidate_with_ordered_score_funcs() -> None:
    """Upstream ``TestSelectCandidate``: "pod has different number of containers on each node"."""
    pods = [
        make_pod("p1.1", node="node1", priority=MID, containers=2),
        make_pod("p2.1", node="node2", priority=MID, containers=1),
        make_pod("p3.1", node="node3", priority=MID, containers=3),
    ]
    fwk, _ = build(pods, [make_node(n) for n in ("node1", "node2", "node3")])
    ev = Evaluator("FakePreemptionScorePostFilter", fwk, FakePostFilterPlugin(1, score_funcs=[]))
    nodes = fwk.snapshot_shared_lister().node_info_list
    candidates, _, _ = ev.dry_run_preemption(CycleState(), make_pod("p", priority=HIGH), nodes, [], 0, 3)
    best = ev.select_candidate(candidates)
    assert best is not None
    assert best.name == "node2"
    assert ev.select_candidate([]) is None


# --- the executor (TestPrepareCandidate and the async steps) ----------------------------------

CONDITION = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "PreemptionByScheduler",
    "message": f"{SCHEDULER}: preempting to accommodate a higher priority pod",
}
victim1 = make_pod("victim1", node="node1", priority=MID)
fail_victim = make_pod("fail-victim", uid="victim1", node="node1", priority=MID)
victim2 = make_pod("victim2", node="node1", priority=50000)
victim1_cond = make_pod("victim1", node="node1", priority=MID, conditions=[CONDITION])
fail_victim_cond = make_pod("fail-victim", uid="victim1", node="node1", priority=MID, conditions=[CONDITION])
preemptor = make_pod("preemptor", priority=HIGH)
PATCH_FAILED = {("updateStatus", "fail-victim"): ApiError("patch pod status failed")}
DELETE_FAILED = {("delete", "fail-victim"): ApiError("delete pod failed")}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("victims_", "stored", "fail", "deleted", "patched", "errors"),
    [
        pytest.param([], [victim1], {}, [], [], [], id="no victims"),
        pytest.param([victim1], [victim1], {}, ["victim1"], ["victim1"], [], id="one victim without condition"),
        pytest.param([victim1_cond], [victim1_cond], {}, ["victim1"], [], [], id="one victim with same condition"),
        pytest.param(
            [victim1_cond], [], {}, [], [], [], id="one victim, not-found victim error is ignored when patching"
        ),
        pytest.param(
            [fail_victim_cond], [fail_victim_cond], DELETE_FAILED, [], [], ["delete pod failed"],
            id="one victim, but pod deletion failed",
        ),
        pytest.param(
            [fail_victim], [fail_victim], PATCH_FAILED, [], [], ["patch pod status failed"],
            id="one victim, but patch pod failed",
        ),
        pytest.param(
            [fail_victim, victim2], [fail_victim, victim2], PATCH_FAILED, [], [], ["patch pod status failed"],
            id="two victims without condition, one passes successfully and the second fails",
        ),
    ],
)  # fmt: skip
async def test_prepare_candidate(
    victims_: list[Pod],
    stored: list[Pod],
    fail: dict[tuple[str, str], ApiError],
    deleted: list[str],
    patched: list[str],
    errors: list[str],
) -> None:
    client = FakeClient(stored, fail)
    activated: list[str] = []
    _fwk, plugin = build(
        stored,
        [make_node("node1")],
        client=client,
        activate=lambda pods: activated.extend(p.metadata.name for p in pods),
    )
    ex = plugin.evaluator.executor
    ex.prepare_candidate(Candidate("node1", Victims(list(victims_))), preemptor)
    # The preempting set is filled synchronously, in the cycle.
    assert ex.is_pod_running_preemption("preemptor") is bool(victims_)
    await ex.run_pending()
    assert not ex.is_pod_running_preemption("preemptor")
    assert client.deleted == deleted
    assert [p.metadata.name for p in client.updated] == patched
    for pod in client.updated:
        (cond,) = pod.status.conditions
        assert (cond.type, cond.status, cond.reason, cond.message) == tuple(CONDITION.values())
        assert cond.last_transition_time == FakeClock().timestamp()
    assert ex.errors == errors
    assert activated == (["preemptor"] if errors else [])
    assert [e.involved_object.name for e in client.events] == deleted


@pytest.mark.asyncio
async def test_preempting_gate_is_lifted_before_the_last_victim() -> None:
    """While the first victims are deleted the preemptor is gated; the last deletion finds it free."""
    vs = [make_pod(f"v{i}", node="node1", priority=LOW) for i in range(3)]
    client = FakeClient(vs)
    _, plugin = build(vs, [make_node("node1")], client=client)
    ex = plugin.evaluator.executor
    seen: list[tuple[str, bool]] = []
    client.on_call = lambda verb, name: (
        seen.append((name, ex.is_pod_running_preemption("preemptor"))) if verb == "delete" else None
    )
    ex.prepare_candidate(Candidate("node1", Victims(vs)), preemptor)
    assert plugin.pre_enqueue(preemptor).code is Code.UnschedulableAndUnresolvable
    await ex.run_pending()
    assert seen == [("v0", True), ("v1", True), ("v2", False)]
    assert plugin.pre_enqueue(preemptor).is_success()
    assert ex.statistics() == {"preempting": 0, "preemptions": 1, "victims": 3, "succeeded": 1, "failed": 0}


@pytest.mark.asyncio
async def test_waiting_victim_is_rejected_not_deleted_and_terminating_victims_are_skipped() -> None:
    waiting_victim = make_pod("w", node="node1", priority=LOW)
    terminating = make_pod("t", node="node1", priority=LOW, terminating=True)
    wp_map = WaitingPodsMap()
    clock = FakeClock()
    wp_map.add(WaitingPod(waiting_victim, {"Coscheduling": 10.0}, clock))  # type: ignore[arg-type]
    client = FakeClient([waiting_victim, terminating])
    _, plugin = build([], [make_node("node1")], client=client, waiting_pods=wp_map, clock=clock)
    ex = plugin.evaluator.executor
    ex.prepare_candidate(Candidate("node1", Victims([terminating, waiting_victim])), preemptor)
    await ex.run_pending()
    wp = wp_map.get("w")
    assert wp is not None
    assert wp.status == Status(Code.Unschedulable, "preempted")
    assert wp.status is not None
    assert wp.status.plugin == "DefaultPreemption"
    assert client.verbs("delete") == []
    assert client.verbs("updateStatus") == []
    (event,) = client.events
    assert (event.reason, event.message, event.involved_object.name) == (
        "Preempted",
        "Preempted by pod preemptor on node node1",
        "w",
    )
    assert event.metadata.generate_name == "w."
    assert event.reporting_component == SCHEDULER


@pytest.mark.asyncio
async def test_lower_priority_nominations_on_the_node_are_cleared() -> None:
    low = make_pod("low", priority=LOW, nominated="node1")
    high = make_pod("high", priority=HIGH + 1, nominated="node1")
    v = make_pod("v", node="node1", priority=LOW)
    client = FakeClient([low, high, v])
    nominator = FakeNominator({"node1": [low, high]})
    _, plugin = build([v], [make_node("node1")], client=client, nominator=nominator)
    ex = plugin.evaluator.executor
    ex.prepare_candidate(Candidate("node1", Victims([v])), preemptor)
    await ex.run_pending()
    assert client.pods[("default", "low")].status.nominated_node_name == ""
    assert client.pods[("default", "high")].status.nominated_node_name == "node1"
    assert client.verbs("updateStatus") == ["low", "v"]


@pytest.mark.asyncio
async def test_run_async_hook_receives_named_coroutines() -> None:
    v = make_pod("v", node="node1", priority=LOW)
    client = FakeClient([v])
    started: list[tuple[str, Any]] = []
    _fwk, plugin = build(
        [v], [make_node("node1")], client=client, run_async=lambda coro, name: started.append((name, coro))
    )
    plugin.evaluator.executor.prepare_candidate(Candidate("node1", Victims([v])), preemptor)
    assert [n for n, _ in started] == ["preemption:default/preemptor"]
    assert plugin.evaluator.executor.pending == []
    await started[0][1]
    assert [n for n, _ in started] == ["preemption:default/preemptor", "event:default/v"]
    await started[1][1]
    assert client.verbs("delete") == ["v"]
    assert len(client.events) == 1


@pytest.mark.parametrize(
    ("conditions", "changed", "ltt"),
    [
        pytest.param([], True, "T1", id="added"),
        pytest.param([dict(CONDITION, lastTransitionTime="T0")], False, "T0", id="same condition: no write"),
        pytest.param(
            [dict(CONDITION, status="False", lastTransitionTime="T0")], True, "T1", id="status flips: new time"
        ),
        pytest.param(
            [dict(CONDITION, reason="Other", lastTransitionTime="T0")], True, "T0", id="reason changes: time kept"
        ),
    ],
)
def test_with_disruption_target(conditions: list[dict[str, str]], changed: bool, ltt: str) -> None:
    status = convert({"conditions": conditions}, PodStatus)
    new, got_changed = with_disruption_target(status, CONDITION["message"], "T1", 0)
    assert got_changed is changed
    (cond,) = new.conditions
    assert (cond.type, cond.status, cond.reason, cond.message, cond.last_transition_time) == (
        "DisruptionTarget",
        "True",
        "PreemptionByScheduler",
        CONDITION["message"],
        ltt,
    )


def test_executor_queues_work_without_run_async() -> None:
    """Without the hook, the work waits in ``pending`` (no coroutine is created in the cycle)."""
    v = make_pod("v", node="node1", priority=LOW)
    client = FakeClient([v])
    _, plugin = build([v], [make_node("node1")], client=client)
    ex = plugin.evaluator.executor
    ex.prepare_candidate(Candidate("node1", Victims([v])), preemptor)
    assert [name for name, _ in ex.pending] == ["preemption:default/preemptor"]
    assert ex.is_pod_running_preemption("preemptor")
    assert client.calls == []


@pytest.mark.asyncio
async def test_the_preemption_condition_carries_the_victims_generation() -> None:
    """1.34 (PodObservedGenerationTracking, beta, on): ``prepareCandidate``'s DisruptionTarget
    has ``observedGeneration`` = the victim's ``metadata.generation``."""
    victim = replace(victim1, metadata=replace(victim1.metadata, generation=3))
    client = FakeClient([victim], {})
    _fwk, plugin = build([victim], [make_node("node1")], client=client)
    ex = plugin.evaluator.executor
    ex.prepare_candidate(Candidate("node1", Victims([victim])), preemptor)
    await ex.run_pending()
    [patched] = client.updated
    (cond,) = patched.status.conditions
    assert (cond.type, cond.observed_generation) == ("DisruptionTarget", 3)


def test_a_new_generation_alone_is_no_preemption_write() -> None:
    """``UpdatePodCondition``'s ``isEqual`` leaves ``observedGeneration`` out."""
    status = convert({"conditions": [dict(CONDITION, lastTransitionTime="T0", observedGeneration=1)]}, PodStatus)
    _new, changed = with_disruption_target(status, CONDITION["message"], "T1", 2)
    assert changed is False
