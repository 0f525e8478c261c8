"""The vectorised Filter/Score path against the per-node reference, on random clusters and pods.

Two schedulers built alike (same profile, same seed), one with ``SchedulerOptions(vectorized=True)``
and one with ``vectorized=False``, get the same cache contents and schedule the same pods in the
same order. For every pod the tests compare what upstream behaviour depends on: the feasible nodes
in visiting order, how many nodes were processed (and so the next start index), every per-node
status (code, reasons, plugin) in insertion order, the rejecting plugins, the ``0/N nodes are
available`` message, each score plugin's raw and normalized scores, the chosen host and the state
of the random stream. The chosen host is assumed into both caches, so later pods see incremental
table updates. ``test_sampling_and_start_index_match`` does the same at 100–260 nodes, where
``percentageOfNodesToScore`` sampling stops the search early.
"""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.scheduler.config import load_config
from agents.scheduler.framework.diagnosis import FitError
from agents.scheduler.framework.interface import ExtensionPoint
from agents.scheduler.framework.node_table import NodeTable
from agents.scheduler.framework.types import PODS_TO_ACTIVATE_KEY, CycleState, NodeScore, PodInfo, PodsToActivate
from agents.scheduler.framework.vectorized import select_host as select_row
from agents.scheduler.registry import in_tree_registry
from agents.scheduler.scheduler import Scheduler, SchedulerOptions, select_host
from emulator.base.api.codec import convert
from emulator.base.api.core import Node, Pod
from emulator.base.apiserver.server import ApiServer
from emulator.base.client.client import Client

ZONES = ["a", "b", "c"]
LABEL_VALUES = {"zone": ZONES, "disk": ["ssd", "hdd"], "rank": ["1", "3", "7", "x"]}
TAINTS = [
    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "gpu", "effect": "NoExecute"},
    {"key": "spot", "value": "", "effect": "PreferNoSchedule"},
    {"key": "noisy", "value": "yes", "effect": "PreferNoSchedule"},
]
TOLERATIONS = [
    {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"},
    {"key": "dedicated", "operator": "Exists"},
    {"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"},
    {"operator": "Exists"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]
IMAGES = [("nginx", 300 * 1024 * 1024), ("redis:7", 120 * 1024 * 1024), ("big/app:1", 900 * 1024 * 1024)]
GPU = "example.com/gpu"


class _Clock:
    def now(self) -> float:
        return 0.0

    def timestamp(self, t: float | None = None) -> str:
        return "2025-01-01T00:00:00Z"


def _config(strategy: str, percentage: int | None, python_filters_first: bool = False) -> dict[str, Any]:
    """Upstream's default profile; ``python_filters_first`` moves InterPodAffinity's Filter (no
    vectorised one) first, so per-node verdicts come before and after vectorised ones."""
    fit: dict[str, Any] = {"scoringStrategy": {"type": strategy}}
    if strategy == "RequestedToCapacityRatio":
        shape = [{"utilization": 0, "score": 0}, {"utilization": 40, "score": 7}, {"utilization": 100, "score": 3}]
        fit["scoringStrategy"]["requestedToCapacityRatio"] = {"shape": shape}
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": fit}]}
        ],
    }
    if percentage is not None:
        doc["percentageOfNodesToScore"] = percentage
    if python_filters_first:
        doc["profiles"][0]["plugins"] = {"filter": {"enabled": [{"name": "InterPodAffinity"}]}}
    return doc


def _scheduler(config: dict[str, Any], *, vectorized: bool, seed: int) -> Scheduler:
    registry = in_tree_registry()
    cfg = load_config(config, registry)
    clock = _Clock()
    server = ApiServer(clock, random.Random(0))  # type: ignore[arg-type]
    client = Client(server, clock, random.Random(0), name="test")  # type: ignore[arg-type]
    return Scheduler(
        client=client,
        clock=clock,  # type: ignore[arg-type]
        rng=random.Random(seed),
        profiles=[p.to_spec() for p in cfg.profiles],
        registry=registry,
        options=SchedulerOptions(percentage_of_nodes_to_score=cfg.percentage_of_nodes_to_score, vectorized=vectorized),
    )


# --- strategies ------------------------------------------------------------------------------------


@st.composite
def nodes(draw: st.DrawFn, count: int) -> list[Node]:
    out = []
    for i in range(count):
        capacity: dict[str, str] = {
            "cpu": draw(st.sampled_from(["0", "500m", "1", "2", "4", "3500m"])),
            "memory": draw(st.sampled_from(["0", "1Gi", "2Gi", "4Gi", "1500Mi"])),
            "pods": str(draw(st.integers(0, 6))),
        }
        eph = draw(st.sampled_from([None, None, "0", "1Gi", "10Gi"]))
        if eph is not None:
            capacity["ephemeral-storage"] = eph
        if draw(st.integers(0, 9)) == 0:
            capacity[GPU] = str(draw(st.integers(0, 2)))
        labels = {k: draw(st.sampled_from(v)) for k, v in LABEL_VALUES.items() if draw(st.booleans())}
        images = draw(st.lists(st.sampled_from(IMAGES), max_size=2, unique=True))
        doc = {
            "metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}", **labels}},
            "spec": {
                "taints": draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique_by=lambda t: t["key"])),
                "unschedulable": draw(st.integers(0, 9)) == 0,
            },
            "status": {
                "capacity": capacity,
                "images": [{"names": [name], "sizeBytes": size} for name, size in images],
            },
        }
        out.append(convert(doc, Node))
    return out


def _requests(draw: st.DrawFn) -> dict[str, str]:
    req: dict[str, str] = {}
    for name, choices in (
        ("cpu", [None, "0", "100m", "700m", "1", "3"]),
        ("memory", [None, "0", "100Mi", "700Mi", "2Gi"]),
        ("ephemeral-storage", [None, None, None, "1Gi"]),
        (GPU, [None] * 8 + ["1"]),
    ):
        v = draw(st.sampled_from(choices))
        if v is not None:
            req[name] = v
    return req


def _ports(draw: st.DrawFn) -> list[dict[str, Any]]:
    ports = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["", "127.0.0.1", "0.0.0.0"]), st.sampled_from(["", "UDP"]), st.sampled_from([80, 8080])
            ),
            max_size=2,
        )
    )
    return [{"containerPort": p, "hostPort": p, "hostIP": ip, "protocol": proto} for ip, proto, p in ports]


def _expression(draw: st.DrawFn) -> dict[str, Any]:
    key = draw(st.sampled_from([*LABEL_VALUES, "missing"]))
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    if op in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": op}
    if op in ("Gt", "Lt"):
        return {"key": key, "operator": op, "values": [draw(st.sampled_from(["2", "5"]))]}
    values = draw(st.lists(st.sampled_from([*ZONES, "ssd", "1", "7"]), min_size=1, max_size=2, unique=True))
    return {"key": key, "operator": op, "values": values}


def _term(draw: st.DrawFn, count: int) -> dict[str, Any]:
    term: dict[str, Any] = {"matchExpressions": [_expression(draw) for _ in range(draw(st.integers(0, 2)))]}
    if draw(st.integers(0, 4)) == 0:
        name = f"node-{draw(st.integers(0, max(count - 1, 0)))}"
        term["matchFields"] = [
            {"key": "metadata.name", "operator": draw(st.sampled_from(["In", "NotIn"])), "values": [name]}
        ]
    return term


@st.composite
def pods(draw: st.DrawFn, name: str, count: int, *, assigned: bool) -> Pod:
    images = [draw(st.sampled_from([*(n for n, _ in IMAGES), "other:1"])) for _ in range(draw(st.integers(1, 2)))]
    containers: list[dict[str, Any]] = [
        {"name": f"c{i}", "image": image, "resources": {"requests": _requests(draw)}} for i, image in enumerate(images)
    ]
    containers[0]["ports"] = _ports(draw)
    spec: dict[str, Any] = {"containers": containers, "priority": draw(st.integers(0, 2))}
    app = draw(st.sampled_from(["web", "db"]))
    if assigned:
        spec["nodeName"] = f"node-{draw(st.integers(0, count - 1))}"
    else:
        if draw(st.integers(0, 3)) == 0:
            spec["nodeSelector"] = {"zone": draw(st.sampled_from(ZONES))}
        affinity: dict[str, Any] = {}
        if draw(st.integers(0, 2)) == 0:
            terms = [_term(draw, count) for _ in range(draw(st.integers(1, 2)))]
            affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
        if draw(st.integers(0, 2)) == 0:
            affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": draw(st.integers(0, 50)), "preference": _term(draw, count)}
                for _ in range(draw(st.integers(1, 2)))
            ]
        full: dict[str, Any] = {"nodeAffinity": affinity} if affinity else {}
        if draw(st.integers(0, 5)) == 0:
            full["podAntiAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        if full:
            spec["affinity"] = full
        spec["tolerations"] = draw(st.lists(st.sampled_from(TOLERATIONS), max_size=2))
        if draw(st.integers(0, 5)) == 0:
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                    "labelSelector": {"matchLabels": {"app": app}},
                }
            ]
        if draw(st.integers(0, 9)) == 0:
            spec["nodeName"] = f"node-{draw(st.integers(0, count))}"
    doc = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": app}},
        "spec": spec,
    }
    return convert(doc, Pod)


@st.composite
def clusters(draw: st.DrawFn, min_nodes: int, max_nodes: int, max_existing: int) -> tuple[list[Node], list[Pod]]:
    count = draw(st.integers(min_nodes, max_nodes))
    existing = [draw(pods(f"old-{i}", count, assigned=True)) for i in range(draw(st.integers(0, max_existing)))]
    return draw(nodes(count)), existing


# --- comparing the two paths -----------------------------------------------------------------------


def _statuses(diagnosis: Any) -> list[tuple[str, int, tuple[str, ...], str]]:
    return [(n, int(s.code), s.reasons, s.plugin) for n, s in diagnosis.node_to_status.explicit_nodes()]


def _load(sched: Scheduler, cluster: tuple[list[Node], list[Pod]], nominated: list[tuple[Pod, str]]) -> None:
    node_list, existing = cluster
    for nd in node_list:
        sched.cache.add_node(nd)
    for p in existing:
        sched.cache.add_pod(p)
    for p, node_name in nominated:
        sched.queue.add_nominated_pod(PodInfo(p), node_name)


def _compare_scores(sched: Scheduler, pod: Pod, state: CycleState, feasible: list[Any]) -> None:
    """Each score plugin's ``score_all`` / ``normalize_score_all`` against ``score`` / ``normalize_score``."""
    rows = sched._feasible_rows
    assert rows is not None
    fwk = sched.frameworks["default-scheduler"]
    table: NodeTable = sched.snapshot.table
    if not fwk.run_pre_score_plugins(state, pod, feasible).is_success():
        return
    for pl in fwk._points[ExtensionPoint.Score]:
        if pl.name in state.skip_score_plugins:
            continue
        raw = [pl.score(state, pod, ni) for ni in feasible]
        if any(not s.is_success() for _, s in raw):
            continue
        vec = pl.score_all(state, pod, table, rows) if hasattr(pl, "score_all") else None
        if vec is None:
            continue
        assert vec.tolist() == [v for v, _ in raw], pl.name
        ext = pl.score_extensions()
        if ext is not None and hasattr(ext, "normalize_score_all"):
            lst = [NodeScore(ni.name, v) for ni, (v, _) in zip(feasible, raw, strict=True)]
            assert ext.normalize_score(state, pod, lst).is_success()
            assert ext.normalize_score_all(state, pod, vec).tolist() == [s.score for s in lst], pl.name


def _run(vec: Scheduler, ref: Scheduler, pod: Pod) -> None:
    """One cycle of ``pod`` on both schedulers; everything observable must agree."""
    fwk_v, fwk_r = vec.frameworks["default-scheduler"], ref.frameworks["default-scheduler"]
    vec.cache.update_snapshot(vec.snapshot)
    ref.cache.update_snapshot(ref.snapshot)
    start = vec.next_start_node_index
    assert start == ref.next_start_node_index
    # The search alone: feasible nodes, processed count, statuses.
    state_v, state_r = CycleState(), CycleState()
    try:
        got = vec.find_nodes_that_fit(fwk_v, state_v, pod)
    except Exception as err:  # a scheduling error: the reference must fail the same way
        with pytest.raises(type(err), match=f"^{re.escape(str(err))}$"):
            ref.find_nodes_that_fit(fwk_r, state_r, pod)
        return
    want = ref.find_nodes_that_fit(fwk_r, state_r, pod)
    assert [n.name for n in got[0]] == [n.name for n in want[0]]
    assert got[2] == want[2]
    assert _statuses(got[1]) == _statuses(want[1])
    assert got[1].unschedulable_plugins == want[1].unschedulable_plugins
    assert vec.next_start_node_index == ref.next_start_node_index
    if len(got[0]) > 1 and vec._feasible_rows is not None:
        _compare_scores(vec, pod, state_v, got[0])
    # The whole cycle: host, rng stream, failure message.
    vec.next_start_node_index = ref.next_start_node_index = start
    outcomes = []
    for sched, fwk in ((vec, fwk_v), (ref, fwk_r)):
        state = CycleState()
        state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
        try:
            result = sched.schedule_pod(fwk, state, pod)
            outcomes.append(("ok", result.node, result.evaluated, result.feasible))
        except FitError as fit:
            outcomes.append(("fit", str(fit), tuple(_statuses(fit.diagnosis)), None))
        except Exception as err:
            outcomes.append(("error", type(err).__name__, str(err), None))
    assert outcomes[0] == outcomes[1]
    assert vec.rng.getstate() == ref.rng.getstate()
    assert vec.next_start_node_index == ref.next_start_node_index
    if outcomes[0][0] == "ok":
        assumed = replace(pod, spec=replace(pod.spec, node_name=outcomes[0][1]))
        vec.cache.assume_pod(assumed)
        ref.cache.assume_pod(assumed)


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    cluster=clusters(1, 9, 8),
    data=st.data(),
    strategy=st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
    python_filters_first=st.booleans(),
    seed=st.integers(0, 3),
)
def test_vectorized_matches_reference(
    cluster: tuple[list[Node], list[Pod]], data: st.DataObject, strategy: str, python_filters_first: bool, seed: int
) -> None:
    count = len(cluster[0])
    incoming = [data.draw(pods(f"new-{i}", count, assigned=False)) for i in range(data.draw(st.integers(1, 4)))]
    nominated = [
        (data.draw(pods(f"nom-{i}", count, assigned=False)), f"node-{data.draw(st.integers(0, count - 1))}")
        for i in range(data.draw(st.integers(0, 2)))
    ]
    config = _config(strategy, None, python_filters_first)
    vec, ref = _scheduler(config, vectorized=True, seed=seed), _scheduler(config, vectorized=False, seed=seed)
    for sched in (vec, ref):
        _load(sched, cluster, nominated)
    for pod in incoming:
        _run(vec, ref, pod)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    count=st.integers(100, 260),
    data=st.data(),
    percentage=st.sampled_from([None, 0, 1, 20, 50, 100]),
    seed=st.integers(0, 3),
)
def test_sampling_and_start_index_match(count: int, data: st.DataObject, percentage: int | None, seed: int) -> None:
    node_list = data.draw(nodes(count))
    existing = [data.draw(pods(f"old-{i}", count, assigned=True)) for i in range(data.draw(st.integers(0, 40)))]
    config = _config("LeastAllocated", percentage)
    vec, ref = _scheduler(config, vectorized=True, seed=seed), _scheduler(config, vectorized=False, seed=seed)
    for sched in (vec, ref):
        _load(sched, (node_list, existing), [])
    for i in range(data.draw(st.integers(3, 8))):
        _run(vec, ref, data.draw(pods(f"new-{i}", count, assigned=False)))
    assert vec.next_start_node_index == ref.next_start_node_index


# --- unit cases ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "totals",
    [
        pytest.param([5], id="one"),
        pytest.param([1, 9, 3], id="strict-max"),
        pytest.param([4, 4, 4, 4, 4], id="all-tied"),
        pytest.param([3, 3, 7, 7, 2, 7, 9, 9], id="ties-then-new-best"),
        pytest.param([9, 1, 9, 1, 9], id="ties-apart"),
    ],
)
def test_select_host_consumes_the_random_stream_as_the_reference(totals: list[int]) -> None:
    for seed in range(20):
        r1, r2 = random.Random(seed), random.Random(seed)
        names = [f"n{i}" for i in range(len(totals))]
        want = select_host(list(zip(names, totals, strict=True)), r1)
        got = names[select_row(np.array(totals, dtype=np.int64), r2)]
        assert got == want
        assert r1.getstate() == r2.getstate()


def test_sampling_stops_after_to_find_feasible_nodes() -> None:
    """200 nodes, every third full: 50% of nodes to score stops the search early, and the
    next search starts where this one stopped."""
    node_list = [
        convert(
            {"metadata": {"name": f"node-{i}"}, "status": {"capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}}},
            Node,
        )
        for i in range(200)
    ]
    blockers = [
        convert(
            {
                "metadata": {"name": f"b{i}", "namespace": "default", "uid": f"b{i}"},
                "spec": {
                    "nodeName": f"node-{i}",
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                },
            },
            Pod,
        )
        for i in range(0, 200, 3)
    ]
    incoming = convert(
        {
            "metadata": {"name": "p", "namespace": "default", "uid": "p"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "500m"}}}]},
        },
        Pod,
    )
    sched = _scheduler(_config("LeastAllocated", 50), vectorized=True, seed=0)
    _load(sched, (node_list, blockers), [])
    sched.cache.update_snapshot(sched.snapshot)
    fwk = sched.frameworks["default-scheduler"]
    feasible, diagnosis, processed = sched.find_nodes_that_fit(fwk, CycleState(), incoming)
    # 100 feasible wanted; nodes 0, 3, ..., 147 are full: the 100th feasible node is node-149.
    assert len(feasible) == 100
    assert feasible[-1].name == "node-149"
    assert processed == 150
    assert len(diagnosis.node_to_status) == 50
    assert sched.next_start_node_index == 150
    feasible, _, processed = sched.find_nodes_that_fit(fwk, CycleState(), incoming)
    assert (feasible[0].name, processed) == ("node-151", 151)  # from 150 (full), wrapping after node-199
    assert {(s.plugin, s.reasons) for _, s in diagnosis.node_to_status.explicit_nodes()} == {
        ("NodeResourcesFit", ("Insufficient cpu",))
    }
