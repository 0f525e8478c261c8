"""NodeResourcesBalancedAllocation: upstream balanced_allocation_test.go
``TestNodeResourcesBalancedAllocation`` cases to the integer (case names are upstream's), the
best-effort PreScore Skip (v1.33+), the scorer's own arithmetic, and its place in a Framework."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

import pytest

from agents.scheduler.args import ConfigError
from agents.scheduler.cache import Snapshot
from agents.scheduler.framework.interface import ExtensionPoint as EP
from agents.scheduler.framework.interface import ProfileSpec
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import MAX_NODE_SCORE, Code, CycleState
from agents.scheduler.plugins.defaultbinder import DefaultBinder
from agents.scheduler.plugins.noderesources_balanced_allocation import (
    NAME,
    PRE_SCORE_STATE_KEY,
    NodeResourcesBalancedAllocation,
    balanced_resource_scorer,
)
from agents.scheduler.plugins.queuesort import PrioritySort
from emulator.base.api.core import Container, Node, Pod
from tests import builders

GPU = "nvidia.com/gpu"
DEFAULT_ARGS: dict[str, Any] = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
WITH_GPU: dict[str, Any] = {"resources": [*DEFAULT_ARGS["resources"], {"name": GPU, "weight": 1}]}

_seq = iter(range(1_000_000))


def pod(
    *containers: dict[str, str], node: str = "", init: Sequence[Container] = (), overhead: dict[str, str] | None = None
) -> Pod:
    """A pod ``p<n>`` whose containers request ``containers`` (one dict of requests per container)."""
    n = next(_seq)
    ctrs = [builders.container(f"c{i}", image="", requests=r) for i, r in enumerate(containers)]
    return builders.pod(f"p{n}", uid=f"u{n}", containers=ctrs, init_containers=init, overhead=overhead, node=node)


def make_node(name: str, milli_cpu: int, memory: int, scalar: dict[str, int] | None = None) -> Node:
    """Upstream's test ``makeNode``: capacity = allocatable = cpu (milli), memory, 100 pods, extras."""
    extra = {k: str(v) for k, v in (scalar or {}).items()}
    return builders.node(name, cpu=f"{milli_cpu}m", memory=str(memory), pods="100", extra=extra)


# upstream's pod specs (containers only; NodeName set where the case schedules them)
CPU_ONLY = ({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})
CPU_AND_MEMORY = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})
CPU_AND_MEMORY_AND_GPU = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"})
SCALAR = {GPU: 8}


def cpu_only(node: str = "node1") -> Pod:
    return pod(*CPU_ONLY, node=node)


def cpu_and_memory(node: str = "node2") -> Pod:
    return pod(*CPU_AND_MEMORY, node=node)


CASES = [
    pytest.param(
        cpu_and_memory(),
        [],
        [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)],
        DEFAULT_ARGS,
        True,
        [87, MAX_NODE_SCORE],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        cpu_and_memory(),
        [cpu_only(), cpu_and_memory()],
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        DEFAULT_ARGS,
        True,
        [82, 95],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        cpu_and_memory(),
        [cpu_only(), cpu_and_memory()],
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
        DEFAULT_ARGS,
        True,
        [82, 80],
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        cpu_only(),
        [cpu_only(), cpu_and_memory()],
        [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
        DEFAULT_ARGS,
        True,
        [50, 75],
        id="requested resources at node capacity",
    ),
    pytest.param(
        pod({"memory": "0", GPU: "1"}),
        [cpu_and_memory(), pod(*CPU_AND_MEMORY_AND_GPU, node="node1")],
        [make_node("node1", 3500, 40000, SCALAR), make_node("node2", 3500, 40000, SCALAR)],
        WITH_GPU,
        True,
        [70, 65],
        id="include scalar resource on a node for balanced resource allocation",
    ),
    pytest.param(
        cpu_and_memory(),
        [],
        [make_node("node1", 3500, 40000, SCALAR), make_node("node2", 3500, 40000)],
        WITH_GPU,
        True,
        [63, 63],
        id="node without the scalar resource should skip the scalar resource",
    ),
    pytest.param(
        cpu_and_memory(),
        [cpu_only(), cpu_and_memory()],
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        DEFAULT_ARGS,
        False,
        [82, 95],
        id="resources requested, pods scheduled with resources if PreScore not called",
    ),
]


@pytest.mark.parametrize(("incoming", "existing", "nodes", "args", "run_pre_score", "want"), CASES)
def test_upstream_scores(
    incoming: Pod, existing: list[Pod], nodes: list[Node], args: dict[str, Any], run_pre_score: bool, want: list[int]
) -> None:
    snapshot = Snapshot.from_objects(existing, nodes)
    pl = NodeResourcesBalancedAllocation(args, None)
    state = CycleState()
    if run_pre_score:
        assert pl.pre_score(state, incoming, snapshot.node_info_list).code is Code.Success
        assert PRE_SCORE_STATE_KEY in list(state)
    got = []
    for n in nodes:
        score, status = pl.score(state, incoming, snapshot.get(n.metadata.name))
        assert status.is_success()
        got.append(score)
    assert got == want


# --- best effort (v1.33+, PR #130260) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("incoming", "args", "want_code"),
    [
        pytest.param(pod(), DEFAULT_ARGS, Code.Skip, id="nothing scheduled, nothing requested, skip in PreScore"),
        pytest.param(pod({}), None, Code.Skip, id="container without requests, default args"),
        pytest.param(pod({"cpu": "0", "memory": "0"}), None, Code.Skip, id="explicit zero requests are best effort"),
        pytest.param(pod({GPU: "1"}), None, Code.Skip, id="only unconfigured resources requested"),
        pytest.param(pod({GPU: "1"}), WITH_GPU, Code.Success, id="configured extended resource requested"),
        pytest.param(pod({"cpu": "1m"}), None, Code.Success, id="cpu only requested"),
        pytest.param(pod(overhead={"memory": "1"}), None, Code.Success, id="overhead alone is not best effort"),
    ],
)
def test_pre_score_skips_best_effort_pods(incoming: Pod, args: dict[str, Any] | None, want_code: Code) -> None:
    pl = NodeResourcesBalancedAllocation(args, None)
    state = CycleState()
    status = pl.pre_score(state, incoming, [])
    assert status.code is want_code
    assert (PRE_SCORE_STATE_KEY in list(state)) is (want_code is Code.Success)


def test_score_without_pre_score_gives_best_effort_pods_zero() -> None:
    snapshot = Snapshot.from_objects([cpu_only()], [make_node("node1", 4000, 10000)])
    score, status = NodeResourcesBalancedAllocation(None, None).score(CycleState(), pod(), snapshot.get("node1"))
    assert (score, status.code) == (0, Code.Success)


# --- real requests (useRequested) and the resource table --------------------------------------


@pytest.mark.parametrize(
    ("incoming", "existing", "node", "args", "want"),
    [
        # real requests: existing best-effort pods add nothing (NodeResourcesFit would count
        # 100m / 200Mi each); cpu 1000/4000 = .25, memory 2500/10000 = .25 -> std 0
        pytest.param(
            pod({"cpu": "1000m", "memory": "2500"}),
            [pod({}, node="node1"), pod(node="node1")],
            make_node("node1", 4000, 10000),
            None,
            100,
            id="existing best-effort pods count zero",
        ),
        # a container without a memory request counts 0, not 200Mi: cpu .5, memory 0 -> 75
        pytest.param(
            pod({"cpu": "2000m"}), [], make_node("node1", 4000, 10000), None, 75, id="missing memory request is zero"
        ),
        # init container max and overhead (pod_requests): cpu max(1000, 3000) + 1000 = 4000/4000,
        # memory 5000/10000 -> std .25 -> 75
        pytest.param(
            pod(
                {"cpu": "1000m", "memory": "5000"},
                init=[builders.container("i", image="", requests={"cpu": "3000m"})],
                overhead={"cpu": "1000m"},
            ),
            [],
            make_node("node1", 4000, 10000),
            None,
            75,
            id="init containers and overhead",
        ),
        # over capacity: fraction capped at 1 -> cpu 1, memory 0 -> 50
        pytest.param(pod({"cpu": "9000m"}), [], make_node("node1", 4000, 10000), None, 50, id="fraction capped at 1"),
        # one resource left (memory allocatable 0 skipped) -> std 0
        pytest.param(pod({"cpu": "1000m"}), [], make_node("node1", 4000, 0), None, 100, id="zero allocatable skipped"),
        # ephemeral-storage: 1000/4000 = .25 vs cpu 3000/4000 = .75 -> 75
        pytest.param(
            pod({"cpu": "3000m", "ephemeral-storage": "1000"}),
            [],
            builders.node(
                "node1", cpu="4", memory=None, pods=None, extra={"ephemeral-storage": "4000"}, allocatable_only=True
            ),
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "ephemeral-storage", "weight": 1}]},
            75,
            id="ephemeral-storage configured",
        ),
        # "pods" is neither standard nor scalar for scoring: left out -> cpu alone -> 100
        pytest.param(
            pod({"cpu": "3000m"}),
            [],
            make_node("node1", 4000, 10000),
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "pods", "weight": 1}]},
            100,
            id="pods resource is never scored",
        ),
        # hugepages are scalar: 1Gi of 4Gi = .25 vs cpu .75 -> 75
        pytest.param(
            pod({"cpu": "3000m", "hugepages-1Gi": "1Gi"}),
            [],
            builders.node(
                "node1", cpu="4", memory=None, pods=None, extra={"hugepages-1Gi": "4Gi"}, allocatable_only=True
            ),
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "hugepages-1Gi", "weight": 1}]},
            75,
            id="hugepages scored as scalar",
        ),
    ],
)
def test_score_resource_table(
    incoming: Pod, existing: list[Pod], node: Node, args: dict[str, Any] | None, want: int
) -> None:
    snapshot = Snapshot.from_objects(existing, [node])
    pl = NodeResourcesBalancedAllocation(args, None)
    state = CycleState()
    assert pl.pre_score(state, incoming, snapshot.node_info_list).is_success()
    score, status = pl.score(state, incoming, snapshot.get(node.metadata.name))
    assert status.is_success()
    assert score == want


# --- the scorer ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "allocatable", "want"),
    [
        pytest.param([], [], 100, id="no resources"),
        pytest.param([3, 0], [4, 0], 100, id="one resource with allocatable"),
        pytest.param([3000, 5000], [4000, 10000], 87, id="two: |.75-.5|/2 truncated"),
        pytest.param([1, 0], [1, 10], 50, id="two: the floor of 50"),
        pytest.param([8, 1], [4, 10], 55, id="two: over-capacity fraction capped"),
        pytest.param([3000, 5000, 4], [3500, 40000, 8], 70, id="three: population std"),
        pytest.param([1, 1, 1, 1], [4, 4, 4, 4], 100, id="four equal fractions"),
    ],
)
def test_balanced_resource_scorer(requested: list[int], allocatable: list[int], want: int) -> None:
    assert balanced_resource_scorer(requested, allocatable) == want


def test_three_resource_std_matches_population_formula() -> None:
    fr = [3000 / 3500, 5000 / 40000, 1 / 8]
    mean = sum(fr) / 3
    std = math.sqrt(sum((f - mean) ** 2 for f in fr) / 3)
    assert balanced_resource_scorer([3000, 5000, 1], [3500, 40000, 8]) == int((1 - std) * 100) == 65


# --- args, plugin shape, framework ------------------------------------------------------------------


def test_args_default_to_cpu_and_memory() -> None:
    pl = NodeResourcesBalancedAllocation(None, None)
    assert [(r.name, r.weight) for r in pl.args.resources] == [("cpu", 1), ("memory", 1)]
    assert pl.name == NAME == "NodeResourcesBalancedAllocation"
    assert pl.score_extensions() is None  # type: ignore[func-returns-value]
    assert not hasattr(pl, "events_to_register")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        pytest.param({"resources": [{"name": "cpu", "weight": 2}]}, r"resources\[0\]\.weight", id="weight must be 1"),
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
            r"resources\[1\]\.name: Duplicate value",
            id="duplicate resource",
        ),
    ],
)
def test_invalid_args_are_rejected(args: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        NodeResourcesBalancedAllocation(args, None)


class _Clock:
    virtual = True

    def now(self) -> float:
        return 0.0


def _framework(snapshot: Snapshot) -> Framework:
    spec = ProfileSpec(
        plugins={
            EP.QueueSort: [("PrioritySort", 0)],
            EP.Bind: [("DefaultBinder", 0)],
            EP.PreScore: [(NAME, 0)],
            EP.Score: [(NAME, 1)],
        },
        plugin_args={NAME: DEFAULT_ARGS},
    )
    registry: dict[str, Any] = {
        "PrioritySort": PrioritySort,
        "DefaultBinder": DefaultBinder,
        NAME: NodeResourcesBalancedAllocation,
    }
    return Framework(spec, registry, clock=_Clock(), rng=random.Random(0), snapshot=snapshot)  # type: ignore[arg-type]


def test_framework_skips_scoring_best_effort_pods_and_scores_others() -> None:
    snapshot = Snapshot.from_objects([], [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)])
    fw = _framework(snapshot)
    nodes = snapshot.node_info_list

    state = CycleState()
    assert fw.run_pre_score_plugins(state, pod(), nodes).is_success()
    assert NAME in state.skip_score_plugins
    scores, status = fw.run_score_plugins(state, pod(), nodes)
    assert status.is_success()
    assert all(not s.scores for s in scores)

    state = CycleState()
    incoming = pod(*CPU_AND_MEMORY)
    assert fw.run_pre_score_plugins(state, incoming, nodes).is_success()
    assert NAME not in state.skip_score_plugins
    scores, status = fw.run_score_plugins(state, incoming, nodes)
    assert status.is_success()
    assert [(s.name, s.scores[0].raw_score) for s in scores] == [("node1", 87), ("node2", 100)]
    # a Score-only plugin: no queueing registration at all
    assert NAME not in fw.events_to_register()
