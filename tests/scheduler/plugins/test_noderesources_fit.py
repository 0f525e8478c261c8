"""NodeResourcesFit: upstream's Filter cases (fit_test.go ``TestEnoughRequests``,
``TestNotEnoughRequests``, ``TestStorageRequests``, with v1.34's UnschedulableAndUnresolvable when
a request exceeds allocatable), the three scoring strategies (least_allocated_test.go cases to
the integer), the queueing hints, and args validation."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agents.scheduler.config import ConfigError, NodeResourcesFitArgs, decode_args
from agents.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
)
from agents.scheduler.plugins.noderesources_fit import (
    NAME,
    PRE_FILTER_STATE_KEY,
    InsufficientResource,
    NodeResourcesFit,
    fits,
)
from emulator.base.api.core import Container, Node, Pod
from tests import builders

U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable
A, B = "example.com/aaa", "example.com/bbb"
KIO_A, HP = "kubernetes.io/something", "hugepages-2Mi"
ALLOC = {"cpu": "10m", "memory": "20", "pods": "32", A: "5", "ephemeral-storage": "20", HP: "5"}
_seq = iter(range(10**6))


def ctr(**requests: Any) -> Container:
    """A container requesting ``requests`` (``cpu`` as given, other names unquoted: ``aaa=`` → A)."""
    names = {"aaa": A, "bbb": B, "kio": KIO_A, "hp": HP, "eph": "ephemeral-storage", "mem": "memory"}
    reqs = {names.get(k, k): str(v) for k, v in requests.items()}
    return builders.container(f"c{next(_seq)}", image="", requests=reqs)


def make_pod(
    containers: list[Container] | None = None,
    init: list[Container] | None = None,
    overhead: dict[str, str] | None = None,
    *,
    name: str = "p",
    node: str = "",
    uid: str = "",
) -> Pod:
    return builders.pod(
        name,
        uid=uid or f"uid-{name}",
        containers=containers or [],
        init_containers=init or (),
        overhead=overhead,
        node=node,
    )


def make_node(allocatable: dict[str, str], name: str = "n") -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, extra=allocatable, allocatable_only=True)


def node_info(allocatable: dict[str, str], *existing: Pod, name: str = "n") -> NodeInfo:
    ni = NodeInfo(make_node(allocatable, name))
    for i, p in enumerate(existing):
        meta = msgspec.structs.replace(p.metadata, name=f"e{i}", uid=f"{name}-e{i}")
        ni.add_pod(PodInfo(msgspec.structs.replace(p, metadata=meta)))
    return ni


Ins = InsufficientResource


# --- Filter -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "existing", "args", "want_code", "want"),
    [
        pytest.param(make_pod(), [ctr(cpu="10m", mem=20)], None, None, [], id="no-resources-requested-always-fits"),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1)]),
            [ctr(cpu="10m", mem=20)],
            None,
            U,
            [Ins("cpu", "Insufficient cpu", 1, 10, 10), Ins("memory", "Insufficient memory", 1, 20, 20)],
            id="too-many-resources-fails",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1)], [ctr(cpu="3m", mem=1)]),
            [ctr(cpu="8m", mem=19)],
            None,
            U,
            [Ins("cpu", "Insufficient cpu", 3, 8, 10)],
            id="init-container-cpu",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1)], [ctr(cpu="3m", mem=1), ctr(cpu="2m", mem=1)]),
            [ctr(cpu="8m", mem=19)],
            None,
            U,
            [Ins("cpu", "Insufficient cpu", 3, 8, 10)],
            id="highest-init-container-cpu",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1)], [ctr(cpu="1m", mem=3)]),
            [ctr(cpu="9m", mem=19)],
            None,
            U,
            [Ins("memory", "Insufficient memory", 3, 19, 20)],
            id="init-container-memory",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1)], [ctr(cpu="1m", mem=1), ctr(cpu="1m", mem=1)]),
            [ctr(cpu="9m", mem=19)],
            None,
            None,
            [],
            id="init-containers-max-not-sum",
        ),
        pytest.param(
            make_pod([ctr(cpu="2m")], [msgspec.structs.replace(ctr(cpu="3m"), restart_policy="Always")]),
            [ctr(cpu="6m")],
            None,
            U,
            [Ins("cpu", "Insufficient cpu", 5, 6, 10)],
            id="sidecar-adds-to-containers",
        ),
        pytest.param(make_pod([ctr(cpu="5m", mem=1)]), [ctr(cpu="5m", mem=19)], None, None, [], id="equal-edge-case"),
        pytest.param(make_pod([ctr(aaa=1)]), [], None, None, [], id="extended-resource-fits"),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1, aaa=10)]),
            [ctr(aaa=0)],
            None,
            UU,
            [Ins(A, f"Insufficient {A}", 10, 0, 5, True)],
            id="extended-over-allocatable-is-unresolvable",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1, aaa=1)]),
            [ctr(aaa=5)],
            None,
            U,
            [Ins(A, f"Insufficient {A}", 1, 5, 5)],
            id="extended-allocatable-enforced",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1, aaa=3), ctr(cpu="1m", mem=1, aaa=3)]),
            [ctr(aaa=2)],
            None,
            UU,
            [Ins(A, f"Insufficient {A}", 6, 2, 5, True)],
            id="extended-summed-over-containers",
        ),
        pytest.param(
            make_pod([], [ctr(cpu="1m", mem=1, aaa=3), ctr(cpu="1m", mem=1, aaa=3)]),
            [ctr(aaa=2)],
            None,
            None,
            [],
            id="extended-max-over-init-containers",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1, bbb=1)]),
            [],
            None,
            UU,
            [Ins(B, f"Insufficient {B}", 1, 0, 0, True)],
            id="extended-unknown-to-the-node",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1, kio=10)]),
            [],
            None,
            UU,
            [Ins(KIO_A, f"Insufficient {KIO_A}", 10, 0, 0, True)],
            id="kubernetes-io-resource",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1, hp=10)]),
            [ctr(hp=0)],
            None,
            UU,
            [Ins(HP, f"Insufficient {HP}", 10, 0, 5, True)],
            id="hugepages",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1, bbb=1)]),
            [],
            {"ignoredResources": [B]},
            None,
            [],
            id="ignored-extended-resource",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1, bbb=1, kio=1)]),
            [],
            {"ignoredResourceGroups": ["example.com"]},
            UU,
            [Ins(KIO_A, f"Insufficient {KIO_A}", 1, 0, 0, True)],
            id="ignored-resource-group-not-kubernetes-io",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1)], overhead={"cpu": "3m", "memory": "13"}),
            [ctr(cpu="5m", mem=5)],
            None,
            None,
            [],
            id="requests-plus-overhead-fit",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1)], overhead={"cpu": "1m", "memory": "15"}),
            [ctr(cpu="5m", mem=5)],
            None,
            U,
            [Ins("memory", "Insufficient memory", 16, 5, 20)],
            id="requests-plus-overhead-do-not-fit",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1, aaa=0)]), [ctr(aaa=6)], None, None, [], id="zero-extended-request-skipped"
        ),
        pytest.param(
            make_pod([ctr(aaa=1)]), [ctr(cpu="20m", mem=30, aaa=1)], None, None, [], id="zero-cpu-memory-not-checked"
        ),
        pytest.param(
            make_pod([ctr(eph=25)]),
            [ctr(cpu="2m", mem=2)],
            None,
            UU,
            [Ins("ephemeral-storage", "Insufficient ephemeral-storage", 25, 0, 20, True)],
            id="ephemeral-storage-over-allocatable",
        ),
        pytest.param(
            make_pod([ctr(eph=10)]), [ctr(cpu="2m", mem=2, eph=10)], None, None, [], id="ephemeral-storage-fits"
        ),
        pytest.param(
            make_pod([ctr(cpu="6m", eph=11, **{"example.com/zzz": 1}), ctr(bbb=1, mem=1)]),
            [ctr(cpu="5m", eph=10)],
            None,
            UU,
            [
                Ins("cpu", "Insufficient cpu", 6, 5, 10),
                Ins("ephemeral-storage", "Insufficient ephemeral-storage", 11, 10, 20),
                Ins(B, f"Insufficient {B}", 1, 0, 0, True),
                Ins("example.com/zzz", "Insufficient example.com/zzz", 1, 0, 0, True),
            ],
            id="order-cpu-memory-storage-then-scalars-by-name",
        ),
    ],
)
def test_filter(
    pod: Pod, existing: list[dict[str, Any]], args: dict[str, Any] | None, want_code: Code | None, want: list[Ins]
) -> None:
    ni = node_info(ALLOC, *[make_pod([c]) for c in existing])
    pl = NodeResourcesFit(args, None)
    state = CycleState()
    result, s = pl.pre_filter(state, pod, [ni])
    assert (result, s.code) == (None, Code.Success)
    status = pl.filter(state, pod, ni)
    if want_code is None:
        assert status.is_success()
    else:
        assert (status.code, status.reasons) == (want_code, tuple(r.reason for r in want))
    assert fits(PodInfo(pod), ni, pl.args) == want


@pytest.mark.parametrize(
    ("pod", "existing", "want_reasons"),
    [
        pytest.param(make_pod(), [ctr(cpu="10m", mem=20)], ("Too many pods",), id="no-requests-no-room"),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1)]), [ctr(cpu="5m", mem=5)], ("Too many pods",), id="fits-but-no-room"
        ),
        pytest.param(
            make_pod([ctr(cpu="5m", mem=1)], [ctr(cpu="5m", mem=1)]),
            [ctr(cpu="5m", mem=19)],
            ("Too many pods",),
            id="equal-edge-init-no-room",
        ),
        pytest.param(
            make_pod([ctr(cpu="1m", mem=1)]),
            [ctr(cpu="10m", mem=20)],
            ("Too many pods", "Insufficient cpu", "Insufficient memory"),
            id="pods-reported-first",
        ),
    ],
)
def test_too_many_pods(pod: Pod, existing: list[dict[str, Any]], want_reasons: tuple[str, ...]) -> None:
    ni = node_info({"cpu": "10m", "memory": "20", "pods": "1"}, *[make_pod([c]) for c in existing])
    pl = NodeResourcesFit(None, None)
    state = CycleState()
    pl.pre_filter(state, pod, [ni])
    status = pl.filter(state, pod, ni)
    assert (status.code, status.reasons) == (U, want_reasons)  # "Too many pods" alone is never unresolvable
    assert fits(PodInfo(pod), ni)[0] == Ins("pods", "Too many pods", 1, 1, 1)


def test_filter_without_prefilter_is_an_error() -> None:
    status = NodeResourcesFit(None, None).filter(CycleState(), make_pod(), node_info(ALLOC))
    assert (status.code, status.reasons) == (
        Code.Error,
        (f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',),
    )


# --- Score ------------------------------------------------------------------------------------

CPU_MEM = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXT = "intel.com/foo"
EXT_SET = [*CPU_MEM, {"name": EXT, "weight": 1}]


def big(cpu: str, mem: str, **more: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": mem, "pods": "110", **more}


@pytest.mark.parametrize(
    ("pod", "nodes", "resources", "want"),
    [
        pytest.param(
            make_pod(),
            [(big("4000", "10000"), []), (big("4000", "10000"), [])],
            CPU_MEM,
            [100, 100],
            id="nothing-scheduled-nothing-requested",
        ),
        pytest.param(
            make_pod([ctr(cpu="1000", mem=2000), ctr(cpu="2000", mem=3000)]),
            [(big("4000", "10000"), []), (big("6000", "10000"), [])],
            CPU_MEM,
            [37, 50],
            id="differently-sized-nodes",
        ),
        pytest.param(
            make_pod(),
            [(big("4000", "10000"), [make_pod(), make_pod()]), (big("4000", "10000"), [make_pod(), make_pod()])],
            CPU_MEM,
            [100, 100],
            id="no-resources-requested-pods-scheduled",
        ),
        pytest.param(
            make_pod(),
            [
                (big("10000", "20000"), [make_pod([ctr(cpu="3000", mem=0)]), make_pod([ctr(cpu="3000", mem=0)])]),
                (big("10000", "20000"), [make_pod([ctr(cpu="3000", mem=0)]), make_pod([ctr(cpu="3000", mem=5000)])]),
            ],
            CPU_MEM,
            [70, 57],
            id="pods-scheduled-with-resources",
        ),
        pytest.param(
            make_pod([ctr(cpu="1000", mem=2000), ctr(cpu="2000", mem=3000)]),
            [
                (big("10000", "20000"), [make_pod([ctr(cpu="3000", mem=0)])]),
                (big("10000", "20000"), [make_pod([ctr(cpu="3000", mem=5000)])]),
            ],
            CPU_MEM,
            [57, 45],
            id="requested-and-scheduled",
        ),
        pytest.param(
            make_pod([ctr(cpu="1000", mem=2000), ctr(cpu="2000", mem=3000)]),
            [
                (big("10000", "20000"), [make_pod([ctr(cpu="3000", mem=0)])]),
                (big("10000", "50000"), [make_pod([ctr(cpu="3000", mem=5000)])]),
            ],
            CPU_MEM,
            [57, 60],
            id="requested-and-scheduled-differently-sized",
        ),
        pytest.param(
            make_pod([ctr(cpu="3000", mem=0)]),
            [
                (big("4000", "10000"), [make_pod([ctr(cpu="3000", mem=0)])]),
                (big("4000", "10000"), [make_pod([ctr(cpu="3000", mem=5000)])]),
            ],
            CPU_MEM,
            [50, 25],
            id="requests-exceed-capacity",
        ),
        pytest.param(
            make_pod(),
            [
                ({"pods": "110"}, [make_pod([ctr(cpu="3000", mem=0)])]),
                ({"pods": "110"}, [make_pod([ctr(cpu="3000", mem=5000)])]),
            ],
            CPU_MEM,
            [0, 0],
            id="zero-node-resources",
        ),
        pytest.param(
            make_pod([ctr(cpu="1000", mem=2000), ctr(cpu="2000", mem=3000)]),
            [(big("4000", "10000"), []), (big("6000", "10000"), [])],
            [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
            [41, 50],
            id="memory-weighted-twice",
        ),
        pytest.param(
            make_pod([ctr(cpu="1000", mem=2000), ctr(cpu="2000", mem=3000)]),
            [(big("6000", "10000"), []), (big("6000", "10000", **{EXT: "4"}), [])],
            EXT_SET,
            [50, 50],
            id="extended-resource-not-requested-is-bypassed",
        ),
        pytest.param(
            make_pod([ctr(cpu="3000", mem=5000, **{EXT: 2})]),
            [(big("6000", "10000", **{EXT: "4"}), []), (big("6000", "10000", **{EXT: "10"}), [])],
            EXT_SET,
            [50, 60],
            id="extended-resource-requested-is-scored",
        ),
        pytest.param(
            make_pod([ctr(cpu="3000", mem=4000)]),
            [(big("6000", "10000"), []), (big("6000", "10000", **{EXT: "4"}), [])],
            [{"name": EXT, "weight": 2}, *CPU_MEM],
            [55, 55],
            id="node-without-the-resource",
        ),
        pytest.param(
            make_pod([builders.container("no-requests", image="")]),
            [(big("1", "1Gi"), [])],
            CPU_MEM,
            [85],
            id="non-zero-defaults-100m-200Mi",
        ),
    ],
)
def test_least_allocated(
    pod: Pod, nodes: list[tuple[dict[str, str], list[Pod]]], resources: list[dict[str, Any]], want: list[int]
) -> None:
    infos = [node_info(alloc, *existing, name=f"node{i + 1}") for i, (alloc, existing) in enumerate(nodes)]
    pl = NodeResourcesFit({"scoringStrategy": {"type": "LeastAllocated", "resources": resources}}, None)
    state = CycleState()
    assert pl.pre_score(state, pod, infos).is_success()
    got = [pl.score(state, pod, ni) for ni in infos]
    assert [s for s, _ in got] == want
    assert all(st.is_success() for _, st in got)
    assert [pl.score(CycleState(), pod, ni)[0] for ni in infos] == want  # without PreScore: same


@pytest.mark.parametrize(
    ("strategy", "pod", "alloc", "want"),
    [
        pytest.param(
            {"type": "MostAllocated", "resources": CPU_MEM},
            make_pod([ctr(cpu="1000", mem=2000), ctr(cpu="2000", mem=3000)]),
            big("4000", "10000"),
            62,
            id="most-allocated",
        ),
        pytest.param(
            {"type": "MostAllocated", "resources": CPU_MEM},
            make_pod([ctr(cpu="5000", mem=2000)]),
            big("4000", "10000"),
            60,
            id="most-allocated-capped-at-capacity",
        ),
        pytest.param(
            {
                "type": "RequestedToCapacityRatio",
                "resources": CPU_MEM,
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            },
            make_pod([ctr(cpu="3000", mem=5000)]),
            big("4000", "10000"),
            63,
            id="rtcr-mean-rounded-half-away-from-zero",
        ),
        pytest.param(
            {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "cpu", "weight": 1}],
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 30, "score": 0}]
                },
            },
            make_pod([ctr(cpu="7")]),
            big("100", "10"),
            77,
            id="rtcr-negative-slope-truncates-toward-zero",
        ),
        pytest.param(
            {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "cpu", "weight": 1}],
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 30, "score": 0}]
                },
            },
            make_pod([ctr(cpu="50")]),
            big("100", "10"),
            0,
            id="rtcr-zero-scores-left-out",
        ),
    ],
)
def test_other_strategies(strategy: dict[str, Any], pod: Pod, alloc: dict[str, str], want: int) -> None:
    pl = NodeResourcesFit({"scoringStrategy": strategy}, None)
    assert pl.score(CycleState(), pod, node_info(alloc))[0] == want


# --- args ------------------------------------------------------------------------------------------


def test_default_args() -> None:
    pl = NodeResourcesFit(None, None)
    assert pl.args == decode_args(NodeResourcesFitArgs, None)
    assert (pl.strategy.type, [(r.name, r.weight) for r in pl.strategy.resources]) == (
        "LeastAllocated",
        [("cpu", 1), ("memory", 1)],
    )


def test_bad_args_raise_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^args\.scoringStrategy\.type: Unsupported value: \"Nope\""):
        NodeResourcesFit({"scoringStrategy": {"type": "Nope"}}, None)


# --- queueing ---------------------------------------------------------------------------------------


def test_events_to_register() -> None:
    events = [e.event for e in NodeResourcesFit(None, None).events_to_register()]
    assert events == [
        ClusterEvent(EventResource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
    ]


TARGET = make_pod([ctr(cpu="2", mem="1Gi")], name="target")
Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, make_node(big("4", "2Gi")), Q, id="added-node-fits"),
        pytest.param(None, make_node(big("1", "2Gi")), SKIP, id="added-node-too-small"),
        pytest.param(None, make_node({"cpu": "4", "memory": "2Gi", "pods": "0"}), SKIP, id="added-node-takes-no-pods"),
        pytest.param(make_node(big("1", "2Gi")), make_node(big("4", "2Gi")), Q, id="cpu-grew-now-fits"),
        pytest.param(make_node(big("4", "2Gi")), make_node(big("8", "2Gi")), Q, id="cpu-grew-already-fit"),
        pytest.param(
            make_node(big("4", "2Gi")), make_node(big("4", "2Gi", **{EXT: "1"})), SKIP, id="unrequested-resource-grew"
        ),
        pytest.param(
            make_node(big("4", "2Gi")), make_node({"cpu": "4", "memory": "2Gi", "pods": "200"}), Q, id="pods-grew"
        ),
        pytest.param(make_node(big("8", "2Gi")), make_node(big("4", "2Gi")), SKIP, id="shrunk"),
    ],
)
def test_node_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    assert NodeResourcesFit.is_schedulable_after_node_change(TARGET, old, new) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(make_pod([ctr(cpu="1")], node="n1", name="o"), None, Q, id="assigned-pod-deleted"),
        pytest.param(make_pod([ctr(cpu="1")], name="o"), None, SKIP, id="unassigned-pod-deleted"),
        pytest.param(
            make_pod([ctr(cpu="2")], node="n1", name="o"),
            make_pod([ctr(cpu="1")], node="n1", name="o"),
            Q,
            id="scaled-down-cpu",
        ),
        pytest.param(
            make_pod([ctr(cpu="1", eph=2)], node="n1", name="o"),
            make_pod([ctr(cpu="1", eph=1)], node="n1", name="o"),
            SKIP,
            id="scaled-down-unrequested-resource",
        ),
        pytest.param(
            make_pod([ctr(cpu="2")], name="o"),
            make_pod([ctr(cpu="1")], name="o"),
            SKIP,
            id="unassigned-pod-scaled-down",
        ),
        pytest.param(
            make_pod([ctr(cpu="3")], name="target"),
            make_pod([ctr(cpu="2")], name="target"),
            Q,
            id="target-itself-scaled",
        ),
    ],
)
def test_pod_hint(old: Pod | None, new: Pod | None, want: QueueingHint) -> None:
    assert NodeResourcesFit.is_schedulable_after_pod_event(TARGET, old, new) is want


def test_name_and_repr() -> None:
    pl = NodeResourcesFit(None, None)
    assert pl.name == NAME == "NodeResourcesFit"
    assert repr(pl) == "<NodeResourcesFit LeastAllocated [('cpu', 1), ('memory', 1)]>"


@pytest.mark.parametrize(
    "resources",
    [
        [("cpu", 1), ("memory", 1)],
        [("memory", 2), ("cpu", 1), ("ephemeral-storage", 1)],
        [("example.com/gpu", 3), ("cpu", 1)],
        [],
    ],
)
@pytest.mark.parametrize(
    "requests",
    [{}, {"cpu": "0", "memory": "0"}, {"cpu": "250m", "ephemeral-storage": "1Gi"}, {"example.com/gpu": "2"}],
)
def test_pod_score_requests_table(resources: list[tuple[str, int]], requests: dict[str, str]) -> None:
    """Per configured resource, in order: the non-zero cpu and memory, the real request of any
    other (0 when not requested), as the mapping upstream's ``calculatePodResourceRequest`` reads."""
    from agents.scheduler.args import ResourceSpec
    from agents.scheduler.framework.types import PodInfo
    from agents.scheduler.plugins.noderesources_fit.resource_allocation import pod_score_requests

    pi = PodInfo(builders.pod("p", containers=[builders.container("c", requests=requests)]))
    specs = [ResourceSpec(name=n, weight=w) for n, w in resources]
    special = {"cpu": pi.non_zero_cpu, "memory": pi.non_zero_memory}
    want = tuple(special.get(n, pi.requests.get(n, 0)) for n, _ in resources)
    assert pod_score_requests(pi, specs) == want
