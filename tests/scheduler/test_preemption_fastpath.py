"""DefaultPreemption's fast dry run (``defaultpreemption/fastpath.py``) against the reference.

Two frameworks are built alike (same profile, objects, nominations and seed); one evaluator runs
with ``fast_dry_run = False`` (``select_victims_on_node`` on copies of every node), the other with
the fast path. On random clusters (resources incl. zero and an extended resource, pod limits,
priorities, start times, PDB labels, taints, cordons, node labels, nominated pods incl. the
preemptor itself) and random sequences of changes (pods bound or deleted, nominations), every
preemption attempt must give the same candidates (node, victims in order, PDB violations), the
same per-node statuses (code, reasons, plugin, insertion order), the same errors, the same chosen
candidate and the same random stream. Profiles: the default one, NodeResourcesFit first (so the
pod-independent filters may fail only in the dry run and the fast path hands those nodes back
to the reference), and NodeResourcesFit ignoring the extended resource group.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.scheduler.cache.snapshot import Snapshot
from agents.scheduler.config import load_config
from agents.scheduler.framework.interface import NodeToStatus
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import CycleState
from agents.scheduler.plugins.defaultpreemption import DefaultPreemption
from agents.scheduler.plugins.defaultpreemption.fastpath import NO_VICTIMS, VictimSearch
from agents.scheduler.preemption import Candidate, PodDisruptionBudget
from agents.scheduler.registry import in_tree_registry
from emulator.base.api.core import ContainerPort, LabelSelector, Node, Pod
from emulator.base.runtime.clock import format_timestamp
from tests import builders
from tests.scheduler.preemption.preemption_helpers import FakeClock, FakeNominator

GPU = "example.com/gpu"
PROFILES: dict[str, dict[str, Any]] = {
    "default": {},
    "fit-first": {"plugins": {"filter": {"enabled": [{"name": "NodeResourcesFit"}]}}},
    "ignore-gpu": {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResourceGroups": ["example.com"]}}]},
}


def _config(profile: str) -> dict[str, Any]:
    doc = {"schedulerName": "default-scheduler", **PROFILES[profile]}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [doc]}


def make_node(name: str, cpu: int, mem: int, pods: int, gpu: int, tainted: bool, cordoned: bool, zone: str) -> Node:
    return builders.node(
        name,
        cpu=f"{cpu}m",
        memory=str(mem),
        pods=str(pods),
        extra={GPU: str(gpu)} if gpu else None,
        allocatable_only=True,
        labels={"zone": zone},
        taints=[builders.taint("dedicated", "infra")] if tainted else (),
        unschedulable=cordoned,
    )


def make_pod(
    name: str,
    *,
    cpu: int | None,
    mem: int | None,
    gpu: int = 0,
    priority: int | None = None,
    node: str = "",
    start: float | None = None,
    app: str = "",
    tolerate: bool = False,
    zone: str = "",
    host_port: bool = False,
) -> Pod:
    """A pod (uid = name) asking ``cpu`` milli-CPUs, ``mem`` bytes and ``gpu`` GPUs (limits too)."""
    ctr = builders.container(
        image="i",
        cpu=f"{cpu}m" if cpu is not None else None,
        memory=mem,
        requests={GPU: str(gpu)} if gpu else None,
        limits={GPU: str(gpu)} if gpu else None,
        ports=[ContainerPort(container_port=80, host_port=8080)] if host_port else (),
    )
    return builders.pod(
        name,
        uid=name,
        labels={"app": app} if app else None,
        containers=[ctr],
        node=node,
        priority=priority,
        tolerations=[builders.toleration("dedicated")] if tolerate else (),
        node_selector={"zone": zone} if zone else None,
        start_time=format_timestamp(start) if start is not None else None,
    )


# --- strategies ------------------------------------------------------------------------------------

PRIORITIES = st.sampled_from([None, -5, 0, 5, 10, 20])
CPU = st.sampled_from([None, 0, 0, 500, 900, 1500, 3000])
MEM = st.sampled_from([None, 0, 500, 2000])
START = st.sampled_from([None, 10.0, 50.0, 50.0, 90.0])


@st.composite
def pods(draw: st.DrawFn, name: str, node: str = "") -> Pod:
    return make_pod(
        name,
        cpu=draw(CPU),
        mem=draw(MEM),
        gpu=draw(st.sampled_from([0, 0, 1, 2])),
        priority=draw(PRIORITIES),
        node=node,
        start=draw(START),
        app=draw(st.sampled_from(["", "a", "b"])),
    )


@dataclass
class World:
    nodes: list[Node]
    bound: list[Pod]
    nominated: dict[str, list[Pod]] = field(default_factory=dict)
    serial: int = 0

    def name(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.serial}"


@st.composite
def worlds(draw: st.DrawFn) -> World:
    n = draw(st.integers(1, 8))
    shape = st.tuples(
        st.sampled_from([0, 2000, 4000, 4000]),
        st.sampled_from([4000, 4000, 1000]),
        st.integers(1, 5),
        st.sampled_from([0, 0, 2, 4]),
    )
    uniform = draw(shape) if draw(st.booleans()) else None  # equal nodes share memo entries
    nodes = []
    for i in range(n):
        cpu, mem, max_pods, gpu = uniform or draw(shape)
        tainted = draw(st.booleans()) and draw(st.booleans())
        cordoned = draw(st.integers(0, 5)) == 0
        nodes.append(make_node(f"n{i}", cpu, mem, max_pods, gpu, tainted, cordoned, draw(st.sampled_from(["a", "b"]))))
    world = World(nodes, [])
    for node in nodes:
        for _ in range(draw(st.integers(0, 5))):
            world.bound.append(draw(pods(world.name("p"), node.metadata.name)))
    return world


@st.composite
def preemptors(draw: st.DrawFn) -> Pod:
    return make_pod(
        "preemptor",
        cpu=draw(st.sampled_from([None, 100, 900, 2000, 3000])),
        mem=draw(MEM),
        gpu=draw(st.sampled_from([0, 0, 1, 3])),
        priority=draw(st.sampled_from([5, 10, 15, 30])),
        tolerate=draw(st.booleans()),
        zone=draw(st.sampled_from(["", "", "a"])),
        host_port=draw(st.integers(0, 7)) == 0,
    )


PDBS = st.lists(
    st.builds(
        lambda app, allowed: PodDisruptionBudget("default", LabelSelector(match_labels={"app": app}), allowed),
        st.sampled_from(["a", "b"]),
        st.integers(0, 1),
    ),
    max_size=2,
)


# --- the comparison ---------------------------------------------------------------------------------


def _framework(profile: str, world: World, seed: int) -> Framework:
    registry = in_tree_registry()
    spec = load_config(_config(profile), registry).profiles[0].to_spec()
    return Framework(
        spec,
        registry,
        clock=FakeClock(100.0),  # type: ignore[arg-type]
        rng=random.Random(seed),
        snapshot=Snapshot.from_objects(world.bound, world.nodes),
        nominator=FakeNominator(world.nominated),
    )


def _attempt(fwk: Framework, pod: Pod, pdbs: list[PodDisruptionBudget], fast: bool) -> tuple[Any, bool]:
    """(what upstream's behaviour depends on, whether the fast search was prepared)."""
    plugin = fwk.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    evaluator = plugin.evaluator
    evaluator.fast_dry_run = fast
    evaluator.pdb_lister = lambda: pdbs
    state = CycleState()
    nodes = fwk.snapshot_shared_lister().node_info_list
    _, status, _ = fwk.run_pre_filter_plugins(state, pod, nodes)
    if not status.is_success():
        return ("prefilter", status.code, status.reasons), False
    filtered = NodeToStatus()
    for ni in nodes:
        s = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
        if not s.is_success():
            filtered.set(ni.name, s)
    prepared = plugin.victim_search(state, pod, pdbs) is not None
    candidates, statuses, errors = evaluator.find_candidates(state, nodes, pod, filtered)
    best = evaluator.select_candidate(candidates)

    def cand(c: Candidate | None) -> Any:
        if c is None:
            return None
        return c.name, [p.metadata.name for p in c.victims.pods], c.victims.num_pdb_violations

    outcome = (
        [cand(c) for c in candidates],
        [(name, s.code, s.reasons, s.plugin) for name, s in statuses.explicit_nodes()],
        errors,
        cand(best),
        fwk.rng.getstate(),
    )
    return outcome, prepared


def _change(world: World, data: st.DataObject) -> None:
    """One random change: a pod bound or deleted, or a pod nominated to a node."""
    kind = data.draw(st.sampled_from(["bind", "delete", "nominate", "nominate-self"]))
    node = data.draw(st.sampled_from(world.nodes)).metadata.name
    if kind == "bind":
        world.bound.append(data.draw(pods(world.name("p"), node)))
    elif kind == "delete" and world.bound:
        world.bound.pop(data.draw(st.integers(0, len(world.bound) - 1)))
    elif kind == "nominate":
        world.nominated.setdefault(node, []).append(data.draw(pods(world.name("nom"))))
    else:  # the preemptor's own nomination never counts against it
        world.nominated.setdefault(node, []).append(make_pod("preemptor", cpu=4000, mem=None, priority=30))


@pytest.mark.slow
@pytest.mark.parametrize("profile", [pytest.param(p, id=p) for p in PROFILES])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(world=worlds(), pod=preemptors(), pdbs=PDBS, seed=st.integers(0, 2**16), data=st.data())
def test_fast_dry_run_matches_reference(
    profile: str, world: World, pod: Pod, pdbs: list[PodDisruptionBudget], seed: int, data: st.DataObject
) -> None:
    VictimSearch.verify = True  # every memo hit is also recomputed and compared
    try:
        for _ in range(data.draw(st.integers(1, 4))):
            _compare(profile, world, pod, pdbs, seed)
            _change(world, data)
    finally:
        VictimSearch.verify = False


def _compare(profile: str, world: World, pod: Pod, pdbs: list[PodDisruptionBudget], seed: int) -> None:
    fast, prepared = _attempt(_framework(profile, world, seed), pod, pdbs, fast=True)
    reference, _ = _attempt(_framework(profile, world, seed), pod, pdbs, fast=False)
    assert fast == reference
    if not pod.spec.containers[0].ports:  # no host port: only pod-independent and resource filters
        assert prepared


def _bench_like(nominated: int) -> tuple[World, Pod]:
    """PreemptionBasic's shapes: 4 CPU nodes full of 900m low-priority pods."""
    nodes = [make_node(f"n{i}", 4000, 32 * 2**30, 110, 0, False, False, "a") for i in range(12)]
    world = World(nodes, [])
    for node in nodes:
        for _ in range(4):
            world.bound.append(make_pod(world.name("low"), cpu=900, mem=500 * 2**20, node=node.metadata.name))
    for node in nodes[:nominated]:
        world.nominated[node.metadata.name] = [make_pod(world.name("nom"), cpu=3000, mem=500 * 2**20, priority=10)]
    return world, make_pod("preemptor", cpu=3000, mem=500 * 2**20, priority=10)


@pytest.mark.parametrize("nominated", [pytest.param(n, id=f"{n}-nominated") for n in (0, 5, 11, 12)])
def test_bench_shapes_match_reference(nominated: int) -> None:
    world, pod = _bench_like(nominated)
    fast, prepared = _attempt(_framework("default", world, 1), pod, [], fast=True)
    reference, _ = _attempt(_framework("default", world, 1), pod, [], fast=False)
    assert prepared
    assert fast == reference
    candidates = fast[0]
    assert len(candidates) == 12 - nominated
    assert all(len(victims) == 3 for _, victims, _ in candidates)  # one 900m pod reprieved


def _dry_run(world: World, pod: Pod, fast: bool) -> Any:
    """``dry_run_preemption`` over every node from offset 0: (node, victims) and statuses."""
    fwk = _framework("default", world, 0)
    plugin = fwk.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    plugin.evaluator.fast_dry_run = fast
    state = CycleState()
    nodes = fwk.snapshot_shared_lister().node_info_list
    fwk.run_pre_filter_plugins(state, pod, nodes)
    candidates, statuses, _ = plugin.evaluator.dry_run_preemption(state, pod, nodes, [], 0, 100)
    return (
        [(c.name, [p.metadata.name for p in c.victims.pods]) for c in candidates],
        [(name, s.code.name, s.reasons) for name, s in statuses.explicit_nodes()],
    )


def _node(name: str, pods: int) -> Node:
    return make_node(name, 4000, 4000, pods, 0, False, False, "a")


def _low(name: str, node: str, cpu: int, priority: int, start: float) -> Pod:
    return make_pod(name, cpu=cpu, mem=None, priority=priority, node=node, start=start)


COUNT_CASES = [
    pytest.param(
        World(
            [_node("n0", 3), _node("n1", 3)],
            [_low(f"p{i}", "n0", 0, 0, 1) for i in range(3)]
            + [_low("a", "n1", 3000, 5, 1), _low("b", "n1", 0, 1, 1), _low("c", "n1", 0, 0, 1)],
        ),
        ([("n0", ["p2"]), ("n1", ["a"])], []),
        id="count-restored-after-a-resource-victim",
    ),
    pytest.param(
        World(
            [_node("n0", 1), _node("n1", 1)],
            [_low("y", "n0", 0, 0, 1), _low("x", "n1", 0, 0, 1), _low("keep", "n1", 0, 50, 1)],
        ),
        ([("n0", ["y"])], [("n1", "Unschedulable", ("Too many pods",))]),
        id="kept-pod-count-in-the-key",
    ),
    pytest.param(
        World(
            [_node("n0", 2), _node("n1", 2)],
            [_low("y0", "n0", 0, 0, 1), _low("y1", "n1", 0, 0, 1)],
            {"n0": [_low("m0", "", 0, 20, 1)], "n1": [_low("m1", "", 0, 20, 1), _low("m2", "", 0, 20, 1)]},
        ),
        ([("n0", ["y0"])], [("n1", "Unschedulable", ("Too many pods",))]),
        id="nominated-pod-count-in-the-key",
    ),
    pytest.param(
        World([_node("n0", 4)], [_low("old", "n0", 1000, 0, 1), _low("new", "n0", 1000, 0, 5)]),
        ([("n0", ["new"])], []),
        id="earliest-start-reprieved-first",
    ),
]


@pytest.mark.parametrize(("world", "expected"), COUNT_CASES)
def test_pod_count_and_order_cases(world: World, expected: Any) -> None:
    pod = make_pod("preemptor", cpu=2500, mem=None, priority=10)
    assert _dry_run(world, pod, fast=True) == _dry_run(world, pod, fast=False) == expected


class _Overriding(DefaultPreemption):
    def select_victims_on_node(self, *args: Any) -> Any:
        return super().select_victims_on_node(*args)


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(make_pod("plain", cpu=100, mem=None, priority=10), True, id="resources-only"),
        pytest.param(make_pod("port", cpu=100, mem=None, priority=10, host_port=True), False, id="host-port"),
    ],
)
def test_prepared_only_when_exact(pod: Pod, expected: bool) -> None:
    world, _ = _bench_like(0)
    fwk = _framework("default", world, 0)
    plugin = fwk.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod, fwk.snapshot_shared_lister().node_info_list)
    assert (plugin.victim_search(state, pod, []) is not None) is expected
    overriding = _Overriding(None, fwk)
    assert overriding.victim_search(state, pod, []) is None


def test_fast_path_leaves_nodes_untouched() -> None:
    world, pod = _bench_like(3)
    fwk = _framework("default", world, 0)
    before = [(ni.generation, [pi.uid for pi in ni.pods], ni.requested.milli_cpu) for ni in _infos(fwk)]
    _attempt(fwk, pod, [], fast=True)
    assert [(ni.generation, [pi.uid for pi in ni.pods], ni.requested.milli_cpu) for ni in _infos(fwk)] == before


def _infos(fwk: Framework) -> list[Any]:
    return list(fwk.snapshot_shared_lister().node_info_list)


# --- the uniform shortcut: no lower-priority pod anywhere ----------------------------------------------

NO_VICTIMS_CASES = [
    pytest.param((None, 0, None), 0, True, id="equal-priority-everywhere"),
    pytest.param((20, 10, 10), 10, True, id="higher-or-equal"),
    pytest.param((None, 20, 20), 5, False, id="one-lower-pod"),
    pytest.param((-5, -5, -5), -5, True, id="negative-equal"),
    pytest.param((0, 0, -1), 0, False, id="lowest-on-the-last-node"),
]


@pytest.mark.parametrize(("priorities", "priority", "uniform"), NO_VICTIMS_CASES)
@pytest.mark.parametrize("seed", [0, 7])
def test_uniform_no_victims_matches_reference(
    priorities: tuple[int | None, ...], priority: int, uniform: bool, seed: int
) -> None:
    """Cluster-Autoscaler-burst shapes: every node is full for the preemptor; when no pod has a
    lower priority the shortcut answers for every node, as the full dry run does."""
    nodes = [make_node(f"n{i}", 1000, 4000, 110, 0, False, False, "a") for i in range(3)]
    bound = [make_pod(f"p{i}", cpu=900, mem=None, priority=p, node=f"n{i}") for i, p in enumerate(priorities)]
    world = World(nodes, bound)
    pod = make_pod("preemptor", cpu=900, mem=None, priority=priority)
    fwk = _framework("default", world, seed)
    plugin = fwk.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    assert (plugin.uniform_victims_status(pod) is not None) is uniform
    fast, _ = _attempt(fwk, pod, [], fast=True)
    reference, _ = _attempt(_framework("default", world, seed), pod, [], fast=False)
    assert fast == reference
    candidates, statuses, errors, _, _ = fast
    assert errors == []
    if uniform:
        assert candidates == []
        assert [(s[1].name, s[2]) for s in statuses] == [("UnschedulableAndUnresolvable", (NO_VICTIMS,))] * 3
    else:
        assert candidates


def test_uniform_on_an_empty_cluster() -> None:
    world = World([make_node("n0", 1000, 4000, 110, 0, False, False, "a")], [])
    plugin = _framework("default", world, 0).plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    status = plugin.uniform_victims_status(make_pod("p", cpu=1, mem=None, priority=-100))
    assert status is not None
    assert (status.code.name, status.reasons) == ("UnschedulableAndUnresolvable", (NO_VICTIMS,))


def test_uniform_message_is_upstreams() -> None:
    """The PostFilter message of a pod that fits nowhere and may preempt no one."""
    nodes = [make_node(f"n{i}", 1000, 4000, 110, 0, False, False, "a") for i in range(3)]
    world = World(nodes, [make_pod(f"a{i}", cpu=900, mem=None, node=f"n{i}") for i in range(3)])
    fwk = _framework("default", world, 0)
    pod = make_pod("preemptor", cpu=900, mem=None)
    state = CycleState()
    nodes_ = fwk.snapshot_shared_lister().node_info_list
    fwk.run_pre_filter_plugins(state, pod, nodes_)
    filtered = NodeToStatus()
    for ni in nodes_:
        filtered.set(ni.name, fwk.run_filter_plugins_with_nominated_pods(state, pod, ni))
    _, status = fwk.run_post_filter_plugins(state, pod, filtered)
    assert status.message().endswith(
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )


def test_overriding_plugin_has_no_uniform_shortcut() -> None:
    world = World([make_node("n0", 1000, 4000, 110, 0, False, False, "a")], [])
    fwk = _framework("default", world, 0)
    assert _Overriding(None, fwk).uniform_victims_status(make_pod("p", cpu=1, mem=None)) is None
