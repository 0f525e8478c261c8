"""Property: whatever the sequence of node and pod events, the cache's per-node totals are the
sums over the pods it says are there, and an incremental snapshot equals a fresh one."""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduler.cache import Cache, CacheError, Snapshot
from agents.scheduler.framework.types import NodeInfo, Resource
from emulator.base.api.core import Container, Node, Pod
from emulator.base.api.resources import pod_requests
from tests import builders as b

NODE_NAMES = ["n0", "n1", "n2", "n3"]
POD_NAMES = [f"p{i}" for i in range(6)]
CPUS = {None: None, "0": 0, "50m": 50, "250m": 250, "1": 1000}
MEMS = {None: None, "0": 0, "64Mi": 64 << 20, "1Gi": 1 << 30}
ANTI = b.affinity(required_anti=[b.pod_term("kubernetes.io/hostname", b.label_selector({"a": "b"}))])

container = st.tuples(st.sampled_from(list(CPUS)), st.sampled_from(list(MEMS)))
Spec = tuple[list[tuple[str | None, str | None]], tuple[str | None, str | None] | None, bool]
spec_st = st.tuples(st.lists(container, min_size=1, max_size=2), st.none() | container, st.booleans())
pod_i = st.sampled_from(POD_NAMES)
node_i = st.sampled_from(NODE_NAMES)
op_st = st.one_of(
    st.tuples(st.just("add_node"), node_i, st.sampled_from(["a", "b", ""])),
    st.tuples(st.just("remove_node"), node_i),
    st.tuples(st.just("assume"), pod_i, node_i, spec_st),
    st.tuples(st.just("add"), pod_i, node_i, spec_st),  # confirms when assumed (maybe on another node)
    st.tuples(st.just("forget"), pod_i),
    st.tuples(st.just("update"), pod_i, spec_st),
    st.tuples(st.just("remove"), pod_i),
    st.tuples(st.just("finish"), pod_i),
    st.tuples(st.just("snapshot")),
)


def make_pod(name: str, node: str, spec: Spec) -> Pod:
    containers, init, anti = spec

    def ctr(name: str, cpu: str | None, mem: str | None) -> Container:
        return b.container(name, image="", cpu=cpu, memory=mem)

    return b.pod(
        name,
        namespace="ns",
        uid=f"uid-{name}",
        node=node,
        containers=[ctr(f"c{i}", *c) for i, c in enumerate(containers)],
        init_containers=[ctr("init", *init)] if init is not None else (),
        affinity=ANTI if anti else None,
    )


def non_zero(spec: Spec) -> Counter[str]:
    """Independent oracle: 100m / 200Mi for an unset request, explicit 0 stays 0."""
    containers, init, _ = spec

    def nz(c: tuple[str | None, str | None]) -> tuple[int, int]:
        cpu, mem = CPUS[c[0]], MEMS[c[1]]
        return (100 if cpu is None else cpu), (200 << 20 if mem is None else mem)

    cpu = sum(nz(c)[0] for c in containers)
    mem = sum(nz(c)[1] for c in containers)
    if init is not None:
        cpu, mem = max(cpu, nz(init)[0]), max(mem, nz(init)[1])
    return Counter({"cpu": cpu, "memory": mem})


def make_node(name: str, zone: str) -> Node:
    labels = {"topology.kubernetes.io/zone": zone} if zone else {}
    return b.node(name, cpu="8", memory=None, pods=None, labels=labels, allocatable_only=True)


def amounts(r: Resource) -> Counter[str]:
    c = Counter(
        {"cpu": r.milli_cpu, "memory": r.memory, "ephemeral-storage": r.ephemeral_storage, **r.scalar_resources}
    )
    return +c  # drop zeros


def key(info: NodeInfo) -> tuple[Any, ...]:
    return (
        info.name,
        info.generation,
        amounts(info.requested),
        amounts(info.non_zero_requested),
        sorted(p.uid for p in info.pods),
        sorted(p.uid for p in info.pods_with_required_anti_affinity),
    )


class Model:
    def __init__(self) -> None:
        self.nodes: dict[str, str] = {}  # name -> zone
        self.pods: dict[str, tuple[Pod, bool]] = {}  # name -> (pod, assumed)
        self.specs: dict[str, Spec] = {}  # uid -> the spec its pod was built from


def apply(cache: Cache, model: Model, op: tuple[Any, ...]) -> bool:
    """Apply one op to the cache and the model; ``False`` if the model says it must be rejected."""
    match op:
        case ("add_node", name, zone):
            if name in model.nodes:
                cache.update_node(make_node(name, model.nodes[name]), make_node(name, zone))
            else:
                cache.add_node(make_node(name, zone))
            model.nodes[name] = zone
        case ("remove_node", name):
            if name not in model.nodes:
                return False
            cache.remove_node(make_node(name, model.nodes.pop(name)))
        case ("assume", p, node, spec):
            if p in model.pods:
                return False
            pod = make_pod(p, node, spec)
            cache.assume_pod(pod)
            model.pods[p] = (pod, True)
            model.specs[pod.metadata.uid] = spec
        case ("add", p, node, spec):
            if p in model.pods and not model.pods[p][1]:
                return False
            if p in model.pods:  # the informer confirms the assumed pod, on whichever node it got
                spec = model.specs[f"uid-{p}"]
            pod = make_pod(p, node, spec)
            cache.add_pod(pod)
            model.pods[p] = (pod, False)
            model.specs[pod.metadata.uid] = spec
        case ("forget", p):
            if p not in model.pods or not model.pods[p][1]:
                return False
            cache.forget_pod(model.pods.pop(p)[0])
        case ("update", p, spec):
            if p not in model.pods or model.pods[p][1]:
                return False
            old = model.pods[p][0]
            new = make_pod(p, old.spec.node_name, spec)
            cache.update_pod(old, new)
            model.pods[p] = (new, False)
            model.specs[new.metadata.uid] = spec
        case ("remove", p):
            if p not in model.pods:
                return False
            cache.remove_pod(model.pods.pop(p)[0])
        case ("finish", p):
            cache.finish_binding(make_pod(p, "n0", ([], None, False)))
        case ("snapshot",):
            pass
        case _:
            raise AssertionError(op)
    return True


def check(cache: Cache, model: Model, snapshot: Snapshot) -> None:
    cache.update_snapshot(snapshot)
    dump = cache.dump()
    # The cache holds exactly the model's pods, where the model put them.
    expected: dict[str, list[str]] = {n: [] for n in model.nodes}
    for pod, _ in model.pods.values():
        expected.setdefault(pod.spec.node_name, []).append(pod.metadata.uid)
    assert {n: list(d.pod_uids) for n, d in dump.nodes.items()} == {n: sorted(u) for n, u in expected.items()}
    assert {n for n, d in dump.nodes.items() if d.has_node} == set(model.nodes)
    assert dump.assumed_pods == tuple(sorted(pod.metadata.uid for pod, assumed in model.pods.values() if assumed))
    assert cache.pod_count() == len(model.pods)
    # Totals in the snapshot are the sums over the pods the cache says are on the node.
    assert set(snapshot.node_info_map) == set(model.nodes)
    for info in snapshot.list():
        pods = [cache.get_pod(pi.pod) for pi in info.pods]
        assert sorted(p.metadata.uid for p in pods if p) == list(dump.nodes[info.name].pod_uids)
        requested: Counter[str] = Counter()
        nz: Counter[str] = Counter()
        for p in pods:
            assert p is not None
            requested.update(pod_requests(p))
            nz.update(non_zero(model.specs[p.metadata.uid]))
        assert amounts(info.requested) == +requested
        assert amounts(info.non_zero_requested) == +nz
    # The incremental snapshot is what a fresh one would be.
    fresh = Snapshot()
    cache.update_snapshot(fresh)
    assert [key(i) for i in snapshot.list()] == [key(i) for i in fresh.list()]
    assert [i.name for i in snapshot.have_pods_with_required_anti_affinity_node_info_list] == [
        i.name for i in fresh.have_pods_with_required_anti_affinity_node_info_list
    ]
    assert [i.name for i in snapshot.have_pods_with_affinity_node_info_list] == [
        i.name for i in fresh.have_pods_with_affinity_node_info_list
    ]
    assert all(snapshot.get(i.name) is i for i in snapshot.list())
    assert all(snapshot.get(i.name) is i for i in snapshot.have_pods_with_affinity_node_info_list)
    assert all(snapshot.get(i.name) is i for i in snapshot.have_pods_with_required_anti_affinity_node_info_list)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True)
@given(ops=st.lists(op_st, max_size=40))
def test_totals_match_pods_for_any_event_sequence(ops: list[tuple[Any, ...]]) -> None:
    cache, model, snapshot = Cache(), Model(), Snapshot()
    for op in ops:
        before = cache.dump()
        if not apply(cache, model, op):
            with pytest.raises(CacheError):
                _force(cache, model, op)
            assert cache.dump() == before
        if op[0] == "snapshot":
            check(cache, model, snapshot)
    check(cache, model, snapshot)


def _force(cache: Cache, model: Model, op: tuple[Any, ...]) -> None:
    """Make the call the model rejected, with the pod the cache would be asked about."""
    match op:
        case ("remove_node", name):
            cache.remove_node(make_node(name, ""))
        case ("assume", p, node, spec):
            cache.assume_pod(make_pod(p, node, spec))
        case ("add", p, node, spec):
            cache.add_pod(model.pods[p][0])
        case ("forget", p):
            pod = model.pods[p][0] if p in model.pods else make_pod(p, "n0", ([], None, False))
            cache.forget_pod(pod)
        case ("update", p, spec):
            old = model.pods[p][0] if p in model.pods else make_pod(p, "n0", spec)
            cache.update_pod(old, msgspec.structs.replace(old))
        case ("remove", p):
            cache.remove_pod(make_pod(p, "n0", ([], None, False)))
        case _:
            raise AssertionError(op)
