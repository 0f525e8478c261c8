"""DefaultPreemption: upstream ``default_preemption_test.go`` ported — ``TestPostFilter``,
``TestDryRunPreemption`` (with the fake filter's call counts), ``TestSelectBestCandidate``,
``TestPodEligibleToPreemptOthers``, ``TestPreempt``, ``TestPreEnqueue`` — plus the candidate-count
arithmetic, victim selection and reprieve order, the events, the nominated-pods guarantee end to
end, and one run against the real API server (condition, graceful deletion, Event).

Not ported: cases needing plugins not in this tree yet (InterPodAffinity "pod with anti-affinity
is preempted", PodTopologySpread "preemption to resolve pod topology spread filter failure" /
"preemption for topology spread constraints"), extenders (the emulator has none), pod groups
and custom eligibility/ordering hooks (post-v1.34).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from msgspec.structs import replace

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.framework.interface import NodeToStatus, PostFilterResult
from agents.scheduler.framework.types import ActionType, ClusterEvent, Code, EventResource, QueueingHint, Status
from agents.scheduler.plugins.defaultpreemption import NAME
from agents.scheduler.preemption import MAX_INT32, PodDisruptionBudget
from emulator.base.api.core import Binding, Event, LabelSelector, Pod
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client
from emulator.base.runtime.clock import LoopClock
from tests import builders
from tests.scheduler.preemption.preemption_helpers import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    NEG,
    ONE_POD,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    ErrorExtensions,
    FakeClient,
    FakeFilter,
    FakeNominator,
    FalseFilter,
    MatchFilter,
    ScriptedRng,
    TrueFilter,
    build,
    cap,
    make_node,
    make_pod,
    prefiltered,
)

U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable
NODE_RES = cap({"cpu": "200m", "memory": "400"})
REMOVE_POD_ERROR = 'running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'


def statuses(**codes: Code) -> NodeToStatus:
    return NodeToStatus({n: Status(c) for n, c in codes.items()})


def sel(**labels: str) -> LabelSelector:
    return builders.label_selector(labels)


# --- TestPostFilter -----------------------------------------------------------------------------

VIOLATING = {"test.kubernetes.io/is-violating-pdb": "violating"}
NON_VIOLATING = {"test.kubernetes.io/is-violating-pdb": "non-violating"}


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "m", "pdbs", "want_result", "want_status"),
    [
        pytest.param(
            make_pod("p", priority=HIGH), [make_pod("p1", node="node1")], [make_node("node1", ONE_POD)],
            statuses(node1=U), [], PostFilterResult("node1"), Status(),
            id="pod with higher priority can be made schedulable",
        ),
        pytest.param(
            make_pod("p"), [make_pod("p1", node="node1")], [make_node("node1", ONE_POD)],
            statuses(node1=U), [], PostFilterResult(""),
            Status(U, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
            id="pod with tied priority is still unschedulable",
        ),
        pytest.param(
            make_pod("p", priority=HIGH), [make_pod("p1", node="node1")], [make_node("node1", ONE_POD)],
            statuses(node1=UU), [], PostFilterResult(""),
            Status(U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
            id="preemption should respect filteredNodesStatuses",
        ),
        pytest.param(
            make_pod("p", priority=HIGH), [make_pod("p1", node="node1")], [make_node("node1", ONE_POD)],
            NodeToStatus(), [], PostFilterResult(""),
            Status(U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
            id="preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
        ),
        pytest.param(
            make_pod("p", priority=MID),
            [make_pod("p1", node="node1", priority=HIGH), make_pod("p2", node="node2", priority=LOW)],
            [make_node("node1", ONE_POD), make_node("node2", ONE_POD)],
            statuses(node1=U, node2=U), [], PostFilterResult("node2"), Status(),
            id="pod can be made schedulable on one node",
        ),
        pytest.param(
            make_pod("p", priority=VERY_HIGH),
            [
                make_pod("p1", node="node1", priority=HIGH, labels=NON_VIOLATING),
                make_pod("p2", node="node1", priority=LOW, labels=VIOLATING),
                make_pod("p3", node="node2", priority=MID, labels=VIOLATING),
            ],
            [make_node("node1", ONE_POD), make_node("node2", ONE_POD)],
            statuses(node1=U, node2=U),
            [
                PodDisruptionBudget("default", sel(**VIOLATING), 0),
                PodDisruptionBudget("default", sel(**NON_VIOLATING), MAX_INT32),
            ],
            PostFilterResult("node2"), Status(),
            id="pod can be made schedulable on minHighestPriority node",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=LARGE),
            [make_pod("p1", node="node1"), make_pod("p2", node="node2")],
            [make_node("node1", NODE_RES), make_node("node2", NODE_RES)],
            statuses(node1=U, node2=U), [], PostFilterResult(""),
            Status(U, "preemption: 0/2 nodes are available: 2 Insufficient cpu."),
            id="no candidate nodes found, no enough resource after removing low priority pods",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=LARGE),
            [
                make_pod("p1", node="node1", priority=HIGH),
                make_pod("p2", node="node2"),
                make_pod("p3", node="node3", priority=HIGH),
            ],
            [make_node("node1", ONE_POD), make_node("node2", NODE_RES), make_node("node3", ONE_POD)],
            statuses(node1=U, node2=U, node3=U), [], PostFilterResult(""),
            Status(
                U,
                "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                "2 No preemption victims found for incoming pod.",
            ),
            id="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=LARGE),
            [make_pod("p1", node="node1"), make_pod("p2", node="node2")],
            [make_node(f"node{i}", NODE_RES) for i in range(1, 5)],
            statuses(node1=U, node2=U, node4=UU), [], PostFilterResult(""),
            Status(
                U,
                "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                "2 Preemption is not helpful for scheduling.",
            ),
            id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't "
            "have enough CPU resource",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=LARGE), [make_pod("p1", node="node1")],
            [make_node("node1", cap(LARGE), labels={"error": "true"})],
            statuses(node1=U), [], None,
            Status(Code.Error, f"preemption: {REMOVE_POD_ERROR}"),
            id="only one node but failed with TestPlugin",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=LARGE),
            [make_pod("p1", node="node1"), make_pod("p2", node="node2", req=MEDIUM)],
            [make_node("node1", cap(LARGE), labels={"error": "true"}), make_node("node2", cap(LARGE))],
            statuses(node1=U, node2=U), [], PostFilterResult("node2"), Status(),
            id="one failed with TestPlugin and the other pass",
        ),
    ],
)  # fmt: skip
def test_post_filter(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Any],
    m: NodeToStatus,
    pdbs: list[PodDisruptionBudget],
    want_result: PostFilterResult | None,
    want_status: Status,
) -> None:
    fwk, plugin = build(pods, nodes, pre_filters=[ErrorExtensions()], client=FakeClient([pod, *pods]))
    plugin.evaluator.pdb_lister = lambda: pdbs
    state = prefiltered(fwk, pod)
    result, status = plugin.post_filter(state, pod, m)
    assert (status.code, status.reasons) == (want_status.code, want_status.reasons)
    assert result == want_result
    assert plugin.attempts == 1


def test_post_filter_through_the_framework_stamps_the_plugin() -> None:
    pod = make_pod("p", priority=HIGH)
    fwk, _ = build([make_pod("p1", node="node1")], [make_node("node1", ONE_POD)])
    result, status = fwk.run_post_filter_plugins(prefiltered(fwk, pod), pod, statuses(node1=U))
    assert (result, status.is_success()) == (PostFilterResult("node1"), True)


# --- TestDryRunPreemption -----------------------------------------------------------------------

FOO = {"app": "foo"}
Expected = list[tuple[str, list[str], int]]


def five(test_pod: Pod, *, high: tuple[int, ...] = (), labelled: tuple[int, ...] = ()) -> list[Pod]:
    """p1..p5 on node1..node5, LARGE; ``high`` ones VERY_HIGH, ``labelled`` ones app=foo."""
    return [
        make_pod(
            f"p{i}",
            node=f"node{i}",
            priority=VERY_HIGH if i in high else MID,
            req=LARGE,
            labels=FOO if i in labelled else None,
        )
        for i in range(1, 6)
    ]


NODES5 = [f"node{i}" for i in range(1, 6)]
ARGS_40_1 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
ARGS_40_2 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}
two_mid = [make_pod("p1", node="node1", priority=MID), make_pod("p2", node="node2", priority=MID)]
two_mid_large = [
    make_pod("p1", node="node1", priority=MID, req=LARGE),
    make_pod("p2", node="node2", priority=MID, req=LARGE),
]
same_pdb = [make_pod(f"p1.{i}", node="node1", priority=MID, req=MEDIUM, labels=FOO) for i in (1, 2)]


@pytest.mark.parametrize(
    ("node_names", "test_pods", "init_pods", "fit", "extra", "codes", "args", "pdbs", "expected", "calls"),
    [
        pytest.param(
            ["node1", "node2"], [make_pod("p", priority=HIGH)], two_mid, False, [FalseFilter()], {}, None, [],
            [[]], [2], id="a pod that does not fit on any node",
        ),
        pytest.param(
            ["node1", "node2"], [make_pod("p", priority=HIGH)], two_mid, False, [TrueFilter()], U, None, [],
            [[]], [2], id="a pod that fits with no preemption",
        ),
        pytest.param(
            ["node1", "node2"], [make_pod("node1", priority=HIGH)], two_mid, False, [MatchFilter()], U, None, [],
            [[]], [2], id="a pod that fits on one node with no preemption",
        ),
        pytest.param(
            ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)], two_mid_large, True, [], {}, None, [],
            [[("node1", ["p1"], 0), ("node2", ["p2"], 0)]], [4],
            id="a pod that fits on both nodes when lower priority pods are preempted",
        ),
        pytest.param(
            ["node1", "node2"], [make_pod("p", priority=LOW, req=LARGE)], two_mid_large, True, [], {}, None, [],
            [[]], [0],
            id="a pod that would fit on the nodes, but other pods running are higher priority, "
            "no preemption would happen",
        ),
        pytest.param(
            ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)],
            [
                make_pod("p1.1", node="node1", priority=LOW, req=SMALL),
                make_pod("p1.2", node="node1", priority=MID, req=LARGE),
                make_pod("p2", node="node2", priority=MID, req=LARGE),
            ],
            True, [], {}, None, [], [[("node1", ["p1.2"], 0), ("node2", ["p2"], 0)]], [5],
            id="medium priority pod is preempted, but lower priority one stays as it is small",
        ),
        pytest.param(
            ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)],
            [
                make_pod("p1.1", node="node1", priority=MID, req=SMALL),
                make_pod("p1.2", node="node1", priority=LOW, req=SMALL),
                make_pod("p1.3", node="node1", priority=MID, req=MEDIUM),
                make_pod("p1.4", node="node1", priority=HIGH, req=SMALL),
                make_pod("p2", node="node2", priority=HIGH, req=LARGE),
            ],
            True, [], {}, None, [], [[("node1", ["p1.2", "p1.3"], 0)]], [4],
            id="mixed priority pods are preempted",
        ),
        pytest.param(
            ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)],
            [
                make_pod("p1.1", node="node1", priority=LOW, req=SMALL, start=5),
                make_pod("p1.2", node="node1", priority=LOW, req=SMALL, start=4),
                make_pod("p1.3", node="node1", priority=MID, req=MEDIUM, start=3),
                make_pod("p1.4", node="node1", priority=HIGH, req=SMALL, start=2),
                make_pod("p2", node="node2", priority=HIGH, req=LARGE, start=1),
            ],
            True, [], {}, None, [], [[("node1", ["p1.1", "p1.3"], 0)]], [4],
            id="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        ),
        pytest.param(
            ["node1", "node2"], [make_pod("p", priority=HIGH, req=LARGE)], two_mid_large, True, [], U, None, [],
            [[]], [2], id="get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        ),
        pytest.param(
            ["node1"], [make_pod("p", priority=HIGH, req=VERY_LARGE)], same_pdb, True, [], {}, None,
            [PodDisruptionBudget("default", sel(**FOO), 1)],
            [[("node1", ["p1.1", "p1.2"], 1)]], [3], id="preemption with violation of same pdb",
        ),
        pytest.param(
            ["node1"], [make_pod("p", priority=HIGH, req=VERY_LARGE)], same_pdb, True, [], {}, None,
            [PodDisruptionBudget("default", sel(**FOO), 1, frozenset({"p2"}))],
            [[("node1", ["p1.1", "p1.2"], 1)]], [3],
            id="preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't "
            "belong to DisruptedPods",
        ),
        pytest.param(
            ["node1"], [make_pod("p", priority=HIGH, req=VERY_LARGE)], same_pdb, True, [], {}, None,
            [PodDisruptionBudget("default", sel(**FOO), 1, frozenset({"p1.2"}))],
            [[("node1", ["p1.1", "p1.2"], 0)]], [3],
            id="preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to "
            "DisruptedPods",
        ),
        pytest.param(
            ["node1"], [make_pod("p", priority=HIGH, req=VERY_LARGE)],
            [*same_pdb, make_pod("p1.3", node="node1", priority=MID, req=MEDIUM, labels=FOO)], True, [], {}, None,
            [PodDisruptionBudget("default", sel(**FOO), 1, frozenset({"p1.3"}))],
            [[("node1", ["p1.1", "p1.2", "p1.3"], 1)]], [4],
            id="preemption with violation of the pdb with pod whose eviction was processed, the victim which "
            "belongs to DisruptedPods is treated as 'nonViolating'",
        ),
        pytest.param(
            NODES5, [make_pod("p", priority=HIGH, req=LARGE)], five(make_pod("p")), True, [], {}, ARGS_40_1, [],
            [[("node1", ["p1"], 0), ("node5", ["p5"], 0)]], [4],
            id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        ),
        pytest.param(
            NODES5, [make_pod("p", priority=HIGH, req=LARGE)], five(make_pod("p"), high=(2, 5)), True, [], {},
            ARGS_40_1, [], [[("node1", ["p1"], 0), ("node3", ["p3"], 0)]], [4],
            id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        ),
        pytest.param(
            NODES5, [make_pod(f"tp{i}", priority=HIGH, req=LARGE) for i in (1, 2, 3)], five(make_pod("p")), True, [],
            {}, ARGS_40_1, [],
            [
                [("node1", ["p1"], 0), ("node5", ["p5"], 0)],
                [("node2", ["p2"], 0), ("node3", ["p3"], 0)],
                [("node4", ["p4"], 0), ("node5", ["p5"], 0)],
            ],
            [4, 4, 4], id="preemption offset across multiple scheduling cycles and wrap around",
        ),
        pytest.param(
            NODES5, [make_pod("p", priority=HIGH, req=LARGE)], five(make_pod("p"), labelled=(1, 2, 5)), True, [], {},
            ARGS_40_2, [PodDisruptionBudget("default", sel(**FOO), 0)],
            [[("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)]], [8],
            id="preemption looks past numCandidates until a non-PDB violating node is found",
        ),
    ],
)  # fmt: skip
def test_dry_run_preemption(
    node_names: list[str],
    test_pods: list[Pod],
    init_pods: list[Pod],
    fit: bool,
    extra: list[Any],
    codes: Code | dict[str, Code],
    args: dict[str, Any] | None,
    pdbs: list[PodDisruptionBudget],
    expected: list[Expected],
    calls: list[int],
) -> None:
    fake = FakeFilter(dict.fromkeys(node_names, codes) if isinstance(codes, Code) else codes)
    rng = ScriptedRng([4, 1, 3])  # what upstream's rand.NewSource(4).Int31n(5) draws
    fwk, plugin = build(
        init_pods, [make_node(n) for n in node_names], filters=[fake, *extra], fit=fit, args=args, rng=rng
    )
    nodes = sorted(fwk.snapshot_shared_lister().node_info_list, key=lambda ni: ni.name)
    for cycle, pod in enumerate(test_pods):
        state = prefiltered(fwk, pod)
        before = fake.calls
        offset, num = plugin.get_offset_and_num_candidates(len(nodes))
        got, _, _ = plugin.evaluator.dry_run_preemption(state, pod, nodes, pdbs, offset, num)
        summary = sorted(
            (c.name, sorted(p.metadata.name for p in c.victims.pods), c.victims.num_pdb_violations) for c in got
        )
        assert summary == expected[cycle], f"cycle {cycle}"
        assert fake.calls - before == calls[cycle], f"cycle {cycle}"


def test_dry_run_lists_non_violating_candidates_first_and_reports_statuses() -> None:
    pods = five(make_pod("p"), high=(2,), labelled=(1, 5))
    fwk, plugin = build(pods, [make_node(n) for n in NODES5])
    pod = make_pod("p", priority=HIGH, req=LARGE)
    nodes = sorted(fwk.snapshot_shared_lister().node_info_list, key=lambda ni: ni.name)
    got, node_statuses, errors = plugin.evaluator.dry_run_preemption(
        prefiltered(fwk, pod), pod, nodes, [PodDisruptionBudget("default", sel(**FOO), 0)], 0, 5
    )
    assert [(c.name, c.victims.num_pdb_violations) for c in got] == [
        ("node3", 0),
        ("node4", 0),
        ("node1", 1),
        ("node5", 1),
    ]
    assert node_statuses.get("node2") == Status(UU, "No preemption victims found for incoming pod")
    assert errors == []


# --- TestSelectBestCandidate --------------------------------------------------------------------


def pods_of(*specs: tuple[str, int, dict[str, str], float]) -> list[Pod]:
    return [make_pod(n, node=f"node{n[1]}", priority=pr, req=req, start=st) for n, pr, req, st in specs]


@pytest.mark.parametrize(
    ("node_count", "pod", "pods", "expected"),
    [
        pytest.param(
            2, make_pod("p", priority=HIGH, req=LARGE),
            pods_of(("p1", MID, LARGE, 0), ("p2", MID, LARGE, 0)), {"node1", "node2"},
            id="a pod that fits on both nodes when lower priority pods are preempted",
        ),
        pytest.param(
            3, make_pod("p", priority=HIGH, req=VERY_LARGE),
            pods_of(
                ("p1.1", MID, MEDIUM, 0), ("p1.2", MID, LARGE, 0), ("p2.1", MID, MEDIUM, 0),
                ("p2.2", LOW, MEDIUM, 0), ("p3.1", LOW, MEDIUM, 0), ("p3.2", LOW, MEDIUM, 0),
            ),
            {"node3"}, id="node with min highest priority pod is picked",
        ),
        pytest.param(
            3, make_pod("p", priority=HIGH, req=VERY_LARGE),
            pods_of(
                ("p1.1", MID, MEDIUM, 0), ("p1.2", MID, LARGE, 0), ("p2.1", MID, LARGE, 0),
                ("p2.2", LOW, MEDIUM, 0), ("p3.1", MID, MEDIUM, 0), ("p3.2", MID, MEDIUM, 0),
            ),
            {"node2"}, id="when highest priorities are the same, minimum sum of priorities is picked",
        ),
        pytest.param(
            3, make_pod("p", priority=HIGH, req=VERY_LARGE),
            pods_of(
                ("p1.1", MID, SMALL, 0), ("p1.2", NEG, SMALL, 0), ("p1.3", MID, SMALL, 0), ("p1.4", NEG, SMALL, 0),
                ("p2.1", MID, LARGE, 0), ("p2.2", NEG, MEDIUM, 0),
                ("p3.1", MID, MEDIUM, 0), ("p3.2", NEG, SMALL, 0), ("p3.3", LOW, SMALL, 0),
            ),
            {"node2"}, id="when highest priority and sum are the same, minimum number of pods is picked",
        ),
        pytest.param(
            3, make_pod("p", priority=HIGH, req=VERY_LARGE),
            pods_of(
                ("p1.1", MID, SMALL, 0), ("p1.2", NEG, SMALL, 0), ("p1.3", NEG, SMALL, 0),
                ("p2.1", MID, LARGE, 0), ("p2.2", NEG, MEDIUM, 0),
                ("p3.1", MID, MEDIUM, 0), ("p3.2", NEG, SMALL, 0), ("p3.3", LOW, SMALL, 0),
            ),
            {"node2"}, id="sum of adjusted priorities is considered",
        ),
        pytest.param(
            4, make_pod("p", priority=VERY_HIGH, req=VERY_LARGE),
            pods_of(
                ("p1.1", MID, SMALL, 0), ("p1.2", LOW, SMALL, 0), ("p1.3", LOW, SMALL, 0),
                ("p2.1", HIGH, LARGE, 0),
                ("p3.1", MID, MEDIUM, 0), ("p3.2", LOW, SMALL, 0), ("p3.3", LOW, SMALL, 0), ("p3.4", LOW, MEDIUM, 0),
                ("p4.1", MID, MEDIUM, 0), ("p4.2", MID, SMALL, 0), ("p4.3", MID, SMALL, 0), ("p4.4", NEG, SMALL, 0),
            ),
            {"node1"}, id="non-overlapping lowest high priority, sum priorities, and number of pods",
        ),
        pytest.param(
            3, make_pod("p", priority=HIGH, req=VERY_LARGE),
            pods_of(
                ("p1.1", MID, MEDIUM, 2), ("p1.2", MID, MEDIUM, 2), ("p2.1", MID, MEDIUM, 3),
                ("p2.2", MID, MEDIUM, 3), ("p3.1", MID, MEDIUM, 1), ("p3.2", MID, MEDIUM, 1),
            ),
            {"node2"}, id="same priority, same number of victims, different start time for each node's pod",
        ),
        pytest.param(
            3, make_pod("p", priority=HIGH, req=VERY_LARGE),
            pods_of(
                ("p1.1", MID, MEDIUM, 4), ("p1.2", MID, MEDIUM, 2), ("p2.1", MID, MEDIUM, 5),
                ("p2.2", MID, MEDIUM, 1), ("p3.1", MID, MEDIUM, 3), ("p3.2", MID, MEDIUM, 6),
            ),
            {"node3"}, id="same priority, same number of victims, different start time for all pods",
        ),
        pytest.param(
            3, make_pod("p", priority=HIGH, req=VERY_LARGE),
            pods_of(
                ("p1.1", LOW, MEDIUM, 4), ("p1.2", MID, MEDIUM, 2), ("p2.1", MID, MEDIUM, 6),
                ("p2.2", LOW, MEDIUM, 1), ("p3.1", LOW, MEDIUM, 3), ("p3.2", MID, MEDIUM, 5),
            ),
            {"node2"}, id="different priority, same number of victims, different start time for all pods",
        ),
    ],
)  # fmt: skip
def test_select_best_candidate(node_count: int, pod: Pod, pods: list[Pod], expected: set[str]) -> None:
    fwk, plugin = build(pods, [make_node(f"node{i}") for i in range(1, node_count + 1)], rng=ScriptedRng([1]))
    nodes = fwk.snapshot_shared_lister().node_info_list
    offset, num = plugin.get_offset_and_num_candidates(len(nodes))
    candidates, _, _ = plugin.evaluator.dry_run_preemption(prefiltered(fwk, pod), pod, nodes, [], offset, num)
    best = plugin.evaluator.select_candidate(candidates)
    assert best is not None
    assert best.name in expected


# --- victims on one node --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "pods", "pdbs", "victims", "violations"),
    [
        pytest.param(
            make_pod("p", priority=HIGH, req=MEDIUM),
            [
                make_pod("low", node="node1", priority=LOW, req=LARGE),
                make_pod("mid", node="node1", priority=MID, req=LARGE),
            ],
            [], ["low"], 0, id="the higher-priority pod is reprieved first",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=MEDIUM),
            [make_pod("new", node="node1", req=LARGE, start=5), make_pod("old", node="node1", req=LARGE, start=1)],
            [], ["new"], 0, id="same priority: the earlier-started pod is reprieved first",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=MEDIUM),
            [
                make_pod("mid", node="node1", priority=MID, req=LARGE),
                make_pod("low", node="node1", req=LARGE, labels=FOO),
            ],
            [PodDisruptionBudget("default", sel(**FOO), 0)], ["mid"], 0,
            id="a PDB-violating pod is reprieved before more important ones",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=VERY_LARGE),
            [
                make_pod("low", node="node1", req=SMALL, labels=FOO),
                make_pod("mid", node="node1", priority=MID, req=SMALL),
            ],
            [PodDisruptionBudget("default", sel(**FOO), 0)], ["mid", "low"], 1,
            id="victims of both groups are sorted most important first",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=SMALL),
            [
                make_pod("a", node="node1", priority=LOW, req=SMALL),
                make_pod("b", node="node1", priority=HIGH, req=LARGE),
                make_pod("c", node="node1", priority=LOW, req=SMALL),
            ],
            [], ["c"], 0, id="equal importance: the first listed is reprieved, the higher-priority pod untouched",
        ),
    ],
)  # fmt: skip
def test_select_victims_on_node(
    pod: Pod, pods: list[Pod], pdbs: list[PodDisruptionBudget], victims: list[str], violations: int
) -> None:
    fwk, plugin = build(pods, [make_node("node1")])
    node = fwk.snapshot_shared_lister().get("node1")
    copy = node.clone()
    got, num, status = plugin.select_victims_on_node(prefiltered(fwk, pod), pod, copy, pdbs)
    assert status.is_success(), status
    assert ([p.metadata.name for p in got], num) == (victims, violations)
    assert len(node.pods) == len(pods)  # the snapshot's NodeInfo is untouched
    assert len(copy.pods) == len(pods) - len(victims)


@pytest.mark.parametrize(
    ("pods", "node_labels", "want"),
    [
        pytest.param(
            [make_pod("a", node="node1", priority=HIGH)], None,
            Status(UU, "No preemption victims found for incoming pod"), id="no lower-priority pod",
        ),
        pytest.param(
            [make_pod("a", node="node1", priority=LOW)], None,
            Status(UU, "Insufficient cpu", "Insufficient memory"), id="does not fit even on the emptied node",
        ),
        pytest.param(
            [make_pod("a", node="node1", priority=LOW)], {"error": "true"},
            Status(Code.Error, REMOVE_POD_ERROR), id="RemovePod extension error",
        ),
    ],
)  # fmt: skip
def test_select_victims_on_node_failures(pods: list[Pod], node_labels: dict[str, str] | None, want: Status) -> None:
    fwk, plugin = build(pods, [make_node("node1", cap(VERY_LARGE), node_labels)], pre_filters=[ErrorExtensions()])
    pod = make_pod("p", priority=MID, req={"cpu": "600m", "memory": "600"})
    node = fwk.snapshot_shared_lister().get("node1").clone()
    got, num, status = plugin.select_victims_on_node(prefiltered(fwk, pod), pod, node, [])
    assert (got, num) == ([], 0)
    assert (status.code, status.reasons) == (want.code, want.reasons)


# --- TestPodEligibleToPreemptOthers ---------------------------------------------------------

PREEMPTED = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "nominated_status", "expected"),
    [
        pytest.param(
            make_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
            [make_pod("p1", priority=LOW, node="node1", terminating=True)], ["node1"],
            Status(UU, "node(s) had untolerated taint"), (True, ""), id="Pod with nominated node",
        ),
        pytest.param(
            make_pod("p_without_nominated_node", uid="p", priority=HIGH), [], [], None, (True, ""),
            id="Pod without nominated node",
        ),
        pytest.param(
            make_pod("p_with_preempt_never_policy", uid="p", priority=HIGH, policy="Never"), [], [], None,
            (False, "not eligible due to preemptionPolicy=Never."), id="Pod with 'PreemptNever' preemption policy",
        ),
        pytest.param(
            make_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
            [make_pod("p1", priority=LOW, node="node1", terminating=True, conditions=[PREEMPTED])], ["node1"], None,
            (False, "not eligible due to a terminating pod on the nominated node."),
            id="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
        ),
        pytest.param(
            make_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
            [make_pod("p1", priority=LOW, node="node1", terminating=True)], ["node1"], None, (True, ""),
            id="non-victim Pods terminating",
        ),
        pytest.param(
            make_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
            [make_pod("p1", priority=HIGH, node="node1", terminating=True, conditions=[PREEMPTED])], ["node1"],
            Status(U), (True, ""), id="a terminating victim of equal priority does not count",
        ),
    ],
)  # fmt: skip
def test_pod_eligible_to_preempt_others(
    pod: Pod, pods: list[Pod], nodes: list[str], nominated_status: Status | None, expected: tuple[bool, str]
) -> None:
    _, plugin = build(pods, [make_node(n) for n in nodes])
    assert plugin.pod_eligible_to_preempt_others(pod, nominated_status) == expected


def test_post_filter_not_eligible_keeps_the_nomination() -> None:
    pod = make_pod("p", priority=HIGH, policy="Never")
    fwk, plugin = build([make_pod("p1", node="node1")], [make_node("node1", ONE_POD)])
    result, status = plugin.post_filter(prefiltered(fwk, pod), pod, statuses(node1=U))
    assert result is None
    assert (status.code, status.reasons) == (U, ("preemption: not eligible due to preemptionPolicy=Never.",))


# --- TestPreempt ------------------------------------------------------------------------------

PREEMPT_PODS = [
    make_pod("p1.1", node="node1", priority=LOW, req=SMALL),
    make_pod("p1.2", node="node1", priority=LOW, req=SMALL),
    make_pod("p2.1", node="node2", priority=HIGH, req=LARGE),
    make_pod("p3.1", node="node3", priority=MID, req=MEDIUM),
]


@pytest.mark.asyncio
@pytest.mark.parametrize("async_preemption", [True, False])
@pytest.mark.parametrize(
    ("pod", "want", "expected_pods"),
    [
        pytest.param(
            make_pod("p", priority=HIGH, req=VERY_LARGE, policy="PreemptLowerPriority"), PostFilterResult("node1"),
            ["p1.1", "p1.2"], id="basic preemption logic",
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=VERY_LARGE, policy="Never"), None, [], id="no preempting in pod"
        ),
        pytest.param(
            make_pod("p", priority=HIGH, req=VERY_LARGE), PostFilterResult("node1"), ["p1.1", "p1.2"],
            id="PreemptionPolicy is nil",
        ),
    ],
)  # fmt: skip
async def test_preempt(
    async_preemption: bool, pod: Pod, want: PostFilterResult | None, expected_pods: list[str]
) -> None:
    client = FakeClient([pod, *PREEMPT_PODS])
    nodes = [make_node(n) for n in ("node1", "node2", "node3")]
    fwk, plugin = build(PREEMPT_PODS, nodes, client=client, async_preemption=async_preemption)
    state = prefiltered(fwk, pod)
    result, status = plugin.evaluator.preempt(state, pod, statuses(node1=U, node2=U, node3=U))
    assert status.is_success() or status.is_rejected()
    assert result == want
    assert plugin.pre_enqueue(pod).is_success() is (not async_preemption or not expected_pods)
    await plugin.evaluator.executor.run_pending()
    assert sorted(client.deleted) == expected_pods
    assert sorted(p.metadata.name for p in client.updated) == expected_pods
    for p in client.updated:
        (cond,) = p.status.conditions
        assert (cond.type, cond.status, cond.reason, cond.message) == (
            "DisruptionTarget",
            "True",
            "PreemptionByScheduler",
            "default-scheduler: preempting to accommodate a higher priority pod",
        )
    # The victims are terminating now; preempting again must not choose more victims.
    terminating = [
        replace(p, metadata=replace(p.metadata, deletion_timestamp="2026-01-01T00:00:01Z"))
        if p.metadata.name in expected_pods
        else p
        for p in PREEMPT_PODS
    ]
    fwk.set_snapshot(Snapshot.from_objects(terminating, nodes))
    again = make_pod("p", priority=HIGH, req=VERY_LARGE, nominated=want.nominated_node_name if want else "")
    before = list(client.calls)
    result, _ = plugin.evaluator.preempt(prefiltered(fwk, again), again, NodeToStatus())
    await plugin.evaluator.executor.run_pending()
    assert result in (None, PostFilterResult(""))
    assert client.calls == before


# --- TestPreEnqueue, events -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("async_preemption", "pod_to_check", "want"),
    [
        pytest.param(False, make_pod("p", priority=HIGH), Status(), id="AsyncPreemption disabled, returns nil"),
        pytest.param(
            True, make_pod("p", priority=HIGH),
            Status(UU, "waiting for the preemption for this pod to be finished"),
            id="AsyncPreemption enabled, same pod, returns UnschedulableAndUnresolvable",
        ),
        pytest.param(
            True, make_pod("p_other", priority=HIGH), Status(), id="AsyncPreemption enabled, different pod, returns nil"
        ),
    ],
)  # fmt: skip
def test_pre_enqueue(async_preemption: bool, pod_to_check: Pod, want: Status) -> None:
    trigger = make_pod("p", priority=HIGH)
    fwk, plugin = build(
        [make_pod("p1", node="node1")],
        [make_node("node1", ONE_POD)],
        async_preemption=async_preemption,
        client=FakeClient(),
    )
    result, _ = plugin.post_filter(prefiltered(fwk, trigger), trigger, statuses(node1=U))
    assert result == PostFilterResult("node1")
    status = plugin.pre_enqueue(pod_to_check)
    assert (status.code, status.reasons) == (want.code, want.reasons)
    _, gated_by = fwk.run_pre_enqueue_plugins(pod_to_check)
    assert gated_by == ("" if want.is_success() else NAME)


@pytest.mark.parametrize(
    ("async_preemption", "events"),
    [
        pytest.param(
            True, [ClusterEvent(EventResource.AssignedPod, ActionType.Delete)], id="async: AssignedPod Delete"
        ),
        pytest.param(False, [], id="sync: nothing to wait for"),
    ],
)
def test_events_to_register(async_preemption: bool, events: list[ClusterEvent]) -> None:
    _, plugin = build([], [make_node("node1")], async_preemption=async_preemption)
    registered = plugin.events_to_register()
    assert [e.event for e in registered] == events
    for e in registered:
        assert e.hint is not None
        assert e.hint(make_pod("p"), make_pod("gone", node="node1"), None) is QueueingHint.QueueSkip


# --- the candidate count ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "num_nodes", "expected"),
    [
        pytest.param(None, 500, 100, id="500 nodes: 10% = 50, raised to the absolute minimum 100"),
        pytest.param(None, 5000, 500, id="5000 nodes: 10% = 500"),
        pytest.param(None, 50, 50, id="50 nodes: minimum 100 capped at the node count"),
        pytest.param(None, 1, 1, id="one node"),
        pytest.param(None, 1999, 199, id="integer division: 1999 * 10 // 100"),
        pytest.param(ARGS_40_1, 5, 2, id="40% of 5, minimum 1"),
        pytest.param({"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0}, 3, 3, id="100%"),
        pytest.param({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 7}, 100, 7, id="absolute only"),
    ],
)
def test_num_candidates(args: dict[str, int] | None, num_nodes: int, expected: int) -> None:
    rng = ScriptedRng([3])
    _, plugin = build([], [make_node("node1")], args=args, rng=rng)
    assert plugin.calculate_num_candidates(num_nodes) == expected
    assert plugin.get_offset_and_num_candidates(num_nodes) == (3, expected)
    assert rng.calls == [num_nodes]


def test_offset_draws_from_the_handle_rng() -> None:
    _, plugin = build([], [make_node("node1")], rng=random.Random(42))
    twin = random.Random(42)
    assert [plugin.get_offset_and_num_candidates(500)[0] for _ in range(5)] == [twin.randrange(500) for _ in range(5)]


# --- the nominated-pods guarantee, end to end -----------------------------------------------------


def test_lower_priority_pods_cannot_take_the_room_nominated_for_the_preemptor() -> None:
    preemptor = make_pod("p", priority=HIGH, req=LARGE)
    victim = make_pod("v", node="node1", priority=LOW, req={"cpu": "400m", "memory": "400"})
    nominator = FakeNominator()
    fwk, plugin = build([victim], [make_node("node1")], client=FakeClient([victim]), nominator=nominator)
    result, status = plugin.post_filter(prefiltered(fwk, preemptor), preemptor, statuses(node1=U))
    assert (result, status.is_success()) == (PostFilterResult("node1"), True)

    # The scheduler nominates the preemptor to node1; the victim is gone, a small pod W remains.
    nominated = replace(preemptor, status=replace(preemptor.status, nominated_node_name="node1"))
    nominator.nominated = FakeNominator({"node1": [nominated]}).nominated
    small = make_pod("w", node="node1", priority=LOW, req=SMALL)
    fwk.set_snapshot(Snapshot.from_objects([small], [make_node("node1")]))
    node1 = fwk.snapshot_shared_lister().get("node1")

    intruder = make_pod("l", priority=MID, req=LARGE)  # would fit the freed room
    status = fwk.run_filter_plugins_with_nominated_pods(prefiltered(fwk, intruder), intruder, node1)
    assert (status.code, status.reasons) == (U, ("Insufficient cpu", "Insufficient memory"))
    # ... nor can it preempt its way in: evicting W does not make room beside the nominated pod.
    result, status = plugin.post_filter(prefiltered(fwk, intruder), intruder, statuses(node1=U))
    assert result == PostFilterResult("")
    assert status.reasons == ("preemption: 0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",)
    # The preemptor itself, and a more important pod, still fit.
    for pod in (nominated, make_pod("vip", priority=VERY_HIGH, req=LARGE)):
        assert fwk.run_filter_plugins_with_nominated_pods(prefiltered(fwk, pod), pod, node1).is_success()


# --- against the real API server ---------------------------------------------------------------


@pytest.mark.asyncio
async def test_preemption_against_the_api_server() -> None:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    srv = ApiServer(clock, random.Random(0))
    srv.create(builders.namespace("default"))
    srv.create(builders.priority_class("high", HIGH))

    def pod_doc(name: str, req: dict[str, str], priority_class: str = "") -> Pod:
        return builders.pod(name, namespace="", image="i", requests=req, priority_class=priority_class)

    for name in ("v1", "v2"):
        srv.create(pod_doc(name, MEDIUM))
        target = ObjectReference(kind="Node", name="node1")
        srv.bind(Binding(metadata=ObjectMeta(name=name, namespace="default"), target=target))
    preemptor = srv.create(pod_doc("p", VERY_LARGE, priority_class="high"))
    victims = [srv.get("Pod", n, "default") for n in ("v1", "v2")]
    client = Client(srv, clock, random.Random(1), name="default-scheduler")
    fwk, plugin = build(victims, [make_node("node1")], client=client, clock=clock)
    result, status = plugin.post_filter(prefiltered(fwk, preemptor), preemptor, statuses(node1=U))
    assert (result, status.is_success()) == (PostFilterResult("node1"), True)
    await plugin.evaluator.executor.run_pending()
    for name in ("v1", "v2"):
        pod: Pod = srv.get("Pod", name, "default")
        assert pod.metadata.deletion_timestamp is not None  # graceful: the kubelet finishes it
        assert pod.metadata.deletion_grace_period_seconds == 30
        (cond,) = [c for c in pod.status.conditions if c.type == "DisruptionTarget"]
        assert (cond.status, cond.reason) == ("True", "PreemptionByScheduler")
    events, _ = srv.list("Event", namespace="default")
    assert sorted((e.involved_object.name, e.reason, e.message) for e in events if isinstance(e, Event)) == [
        (n, "Preempted", f"Preempted by pod {preemptor.metadata.uid} on node node1") for n in ("v1", "v2")
    ]
    assert plugin.evaluator.executor.errors == []
