"""The cache's pod state machine (assume / forget / confirm), ghost nodes, per-node totals,
host ports, image states, ``dump`` and ``statistics``."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, cast

import msgspec
import pytest

from agents.scheduler.cache import Cache, CacheDump, CacheError, NodeDump, Snapshot
from agents.scheduler.framework.types import ImageStateSummary
from emulator.base.api.codec import convert
from emulator.base.api.core import Container, ContainerImage, ContainerPort, Node, Pod
from emulator.base.runtime.clock import Clock
from tests import builders

MI = 1024 * 1024
GI = 1024 * MI


def ctr(
    name: str = "c",
    cpu: str | None = None,
    mem: str | None = None,
    *,
    requests: dict[str, str] | None = None,
    ports: Sequence[dict[str, Any]] = (),
    restart: str | None = None,
) -> Container:
    """A container (no image) requesting ``cpu``/``mem``/``requests``; ``ports`` as manifests write them."""
    return builders.container(
        name,
        image="",
        cpu=cpu,
        memory=mem,
        requests=requests,
        ports=[convert(p, ContainerPort) for p in ports],
        restart_policy=restart,
    )


def make_pod(name: str, node: str = "", containers: list[Container] | None = None, **spec: Any) -> Pod:
    """A pod (uid ``uid-<name>``) with these containers (default one asking 100m/100Mi);
    ``spec`` goes to ``tests.builders.pod``."""
    ctrs = containers if containers is not None else [ctr(cpu="100m", mem="100Mi")]
    return builders.pod(name, uid=f"uid-{name}", node=node, containers=ctrs, **spec)


def on(pod: Pod, node: str) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))


def make_node(name: str, images: list[tuple[list[str], int]] | None = None, **labels: str) -> Node:
    """4 CPUs, 8Gi, 110 pods allocatable; ``images`` as (names, size)."""
    imgs = [ContainerImage(names=names, size_bytes=size) for names, size in images or []]
    return builders.node(name, memory="8Gi", allocatable_only=True, labels=labels, images=imgs)


def cache_with(*nodes: str) -> Cache:
    cache = Cache()
    for n in nodes:
        cache.add_node(make_node(n))
    return cache


def snap(cache: Cache) -> Snapshot:
    s = Snapshot()
    cache.update_snapshot(s)
    return s


def placement(cache: Cache) -> dict[str, tuple[str, ...]]:
    return {name: d.pod_uids for name, d in cache.dump().nodes.items()}


# --- the state machine -----------------------------------------------------------------------

P1 = make_pod("p1")


def run(cache: Cache, op: str, pod: Pod, node: str, to: str | None = None) -> None:
    p = on(pod, node)
    match op:
        case "assume":
            cache.assume_pod(p)
        case "add":
            cache.add_pod(p)
        case "finish":
            cache.finish_binding(p)
        case "forget":
            cache.forget_pod(p)
        case "remove":
            cache.remove_pod(p)
        case "update":
            cache.update_pod(p, on(pod, to or node))
        case _:
            raise AssertionError(op)


@pytest.mark.parametrize(
    ("steps", "nodes", "assumed"),
    [
        pytest.param([("assume", "n1")], {"n1": ("uid-p1",), "n2": ()}, ("uid-p1",), id="assume"),
        pytest.param([("assume", "n1"), ("finish", "n1")], {"n1": ("uid-p1",), "n2": ()}, ("uid-p1",), id="finish"),
        pytest.param([("assume", "n1"), ("add", "n1")], {"n1": ("uid-p1",), "n2": ()}, (), id="confirm"),
        pytest.param(
            [("assume", "n1"), ("finish", "n1"), ("add", "n2")], {"n1": (), "n2": ("uid-p1",)}, (), id="confirm-moved"
        ),
        pytest.param([("assume", "n1"), ("forget", "n1")], {"n1": (), "n2": ()}, (), id="forget"),
        pytest.param([("assume", "n1"), ("remove", "n1")], {"n1": (), "n2": ()}, (), id="remove-assumed"),
        pytest.param([("add", "n2")], {"n1": (), "n2": ("uid-p1",)}, (), id="add"),
        pytest.param([("add", "n2"), ("update", "n2")], {"n1": (), "n2": ("uid-p1",)}, (), id="update"),
        pytest.param([("add", "n2"), ("remove", "n2")], {"n1": (), "n2": ()}, (), id="remove"),
        pytest.param([("add", "n2"), ("remove", "")], {"n1": (), "n2": ()}, (), id="remove-with-empty-node-name"),
        pytest.param(
            [("assume", "n1"), ("forget", "n1"), ("assume", "n2")],
            {"n1": (), "n2": ("uid-p1",)},
            ("uid-p1",),
            id="assume-again-after-forget",
        ),
    ],
)
def test_state_machine(
    steps: list[tuple[str, str]], nodes: dict[str, tuple[str, ...]], assumed: tuple[str, ...]
) -> None:
    cache = cache_with("n1", "n2")
    for op, node in steps:
        run(cache, op, P1, node)
    assert placement(cache) == nodes
    assert cache.dump().assumed_pods == assumed
    assert cache.is_assumed_pod(P1) == bool(assumed)
    assert cache.pod_count() == sum(len(v) for v in nodes.values())


@pytest.mark.parametrize(
    ("steps", "bad", "match"),
    [
        pytest.param(
            [("assume", "n1")],
            ("assume", "n1"),
            r"pod uid-p1\(default/p1\) is in the cache, so can't be assumed",
            id="double-assume",
        ),
        pytest.param([("add", "n1")], ("assume", "n1"), "is in the cache, so can't be assumed", id="assume-added"),
        pytest.param(
            [], ("forget", "n1"), r"pod uid-p1\(default/p1\) wasn't assumed so cannot be forgotten", id="forget-unknown"
        ),
        pytest.param([("add", "n1")], ("forget", "n1"), "wasn't assumed so cannot be forgotten", id="forget-added"),
        pytest.param([("assume", "n1"), ("add", "n1")], ("forget", "n1"), "wasn't assumed", id="forget-confirmed"),
        pytest.param(
            [("assume", "n1")], ("forget", "n2"), "was assumed on n2 but assigned to n1", id="forget-other-node"
        ),
        pytest.param(
            [("add", "n1")], ("add", "n1"), r"pod uid-p1\(default/p1\) was already in added state", id="double-add"
        ),
        pytest.param(
            [], ("update", "n1"), "is not added to scheduler cache, so cannot be updated", id="update-unknown"
        ),
        pytest.param(
            [("assume", "n1")],
            ("update", "n1"),
            r"assumed pod uid-p1\(default/p1\) should not be updated",
            id="update-assumed",
        ),
        pytest.param([("add", "n1")], ("update", "n1", "n2"), "updated on a different node", id="update-moves-node"),
        pytest.param(
            [], ("remove", "n1"), "is not found in scheduler cache, so cannot be removed from it", id="remove-unknown"
        ),
        pytest.param([("add", "n1")], ("remove", "n2"), "scheduler cache is corrupted", id="remove-other-node"),
        pytest.param([], ("assume", ""), "has no spec.nodeName", id="assume-without-node"),
        pytest.param([("assume", "n1")], ("add", ""), "has no spec.nodeName", id="confirm-without-node"),
    ],
)
def test_rejected_calls_raise_and_change_nothing(
    steps: list[tuple[str, str]], bad: tuple[str, ...], match: str
) -> None:
    cache = cache_with("n1", "n2")
    for op, node in steps:
        run(cache, op, P1, node)
    before = cache.dump()
    with pytest.raises(CacheError, match=match):
        run(cache, bad[0], P1, bad[1], *bad[2:])
    assert cache.dump() == before


def test_pod_without_uid_is_an_error() -> None:
    pod = convert({"metadata": {"name": "x", "namespace": "default"}, "spec": {"nodeName": "n1"}}, Pod)
    with pytest.raises(CacheError, match="with empty UID"):
        Cache().add_pod(pod)


def test_forget_returns_totals_exactly_to_previous_values() -> None:
    cache = cache_with("n1")
    cache.add_pod(make_pod("base", "n1", [ctr(cpu="250m", mem="1Gi")], overhead={"cpu": "5m"}))
    before = cache.dump().nodes["n1"]
    odd = make_pod("odd", "n1", [ctr(cpu="333m"), ctr("d", mem="7Mi", ports=[{"containerPort": 80, "hostPort": 80}])])
    cache.assume_pod(odd)
    during = cache.dump().nodes["n1"]
    assert during.requested == {"cpu": 250 + 5 + 333, "memory": GI + 7 * MI}
    cache.forget_pod(odd)
    after = cache.dump().nodes["n1"]
    assert (after.requested, after.non_zero_requested, after.pod_uids) == (
        before.requested,
        before.non_zero_requested,
        before.pod_uids,
    )
    assert after.generation > during.generation > before.generation
    assert not snap(cache).get("n1").used_ports.check_conflict("0.0.0.0", "TCP", 80)


def test_confirmed_pod_is_the_informers_copy() -> None:
    cache = cache_with("n1")
    assumed = make_pod("p", "n1")
    cache.assume_pod(assumed)
    real = msgspec.structs.replace(assumed, metadata=msgspec.structs.replace(assumed.metadata, resource_version="7"))
    cache.add_pod(real)
    assert cache.get_pod(assumed) is real
    assert [pi.pod for pi in snap(cache).get("n1").pods] == [real]


def test_bound_pod_seen_on_another_node_than_assumed_moves_there() -> None:
    cache = cache_with("n1", "n2")
    pod = make_pod("p", "n1", [ctr(cpu="1", mem="1Gi")])
    cache.assume_pod(pod)
    cache.finish_binding(pod)
    cache.add_pod(on(pod, "n2"))
    s = snap(cache)
    assert (s.get("n1").requested.milli_cpu, len(s.get("n1").pods)) == (0, 0)
    assert (s.get("n2").requested.milli_cpu, s.get("n2").requested.memory) == (1000, GI)
    assert not cache.is_assumed_pod(pod)
    # The pod now lives on n2: removing it from there works, and nothing is left.
    cache.remove_pod(on(pod, "n2"))
    assert cache.pod_count() == 0


def test_get_pod_unknown_is_none() -> None:
    assert Cache().get_pod(make_pod("nope", "n1")) is None


# --- assumed-pod TTL (off by default, as in v1.30–v1.34) ----------------------------------------


class FakeClock:
    virtual = True

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


@pytest.mark.parametrize(
    ("ttl", "finish", "at", "expired"),
    [
        pytest.param(0.0, True, 10_000.0, False, id="ttl-0-never-expires"),
        pytest.param(30.0, False, 10_000.0, False, id="binding-not-finished"),
        pytest.param(30.0, True, 30.0, False, id="at-deadline"),
        pytest.param(30.0, True, 30.5, True, id="after-deadline"),
    ],
)
def test_assumed_ttl(ttl: float, finish: bool, at: float, expired: bool) -> None:
    clock = FakeClock()
    cache = Cache(cast(Clock, clock), assumed_ttl=ttl)
    cache.add_node(make_node("n1"))
    pod = make_pod("p", "n1")
    cache.assume_pod(pod)
    if finish:
        cache.finish_binding(pod)
    clock.t = at
    assert cache.cleanup_assumed_pods() == ([pod] if expired else [])
    assert cache.is_assumed_pod(pod) is not expired
    assert cache.pod_count() == (0 if expired else 1)


def test_ttl_needs_a_clock() -> None:
    with pytest.raises(ValueError, match="needs a clock"):
        Cache(assumed_ttl=1.0)


# --- nodes and ghosts -------------------------------------------------------------------------


def test_removed_node_with_pods_is_a_ghost_until_its_last_pod_goes() -> None:
    cache = cache_with("n1", "n2")
    a, b = make_pod("a", "n1"), make_pod("b", "n1")
    cache.add_pod(a)
    cache.assume_pod(b)
    cache.remove_node(make_node("n1"))
    assert cache.node_count() == 2
    assert cache.statistics().ghost_nodes == 1
    assert cache.dump().nodes["n1"].has_node is False
    s = snap(cache)
    assert [i.name for i in s.list()] == ["n2"]
    with pytest.raises(KeyError, match='nodeinfo not found for node name "n1"'):
        s.get("n1")
    assert cache.get_pod(a) is a  # pods on a ghost are still known
    cache.remove_pod(a)
    assert cache.node_count() == 2
    cache.forget_pod(b)
    assert cache.node_count() == 1
    assert "n1" not in cache.dump().nodes


def test_removed_node_without_pods_is_dropped_and_cannot_be_removed_twice() -> None:
    cache = cache_with("n1")
    cache.remove_node(make_node("n1"))
    assert cache.node_count() == 0
    with pytest.raises(CacheError, match="node n1 is not found"):
        cache.remove_node(make_node("n1"))


def test_pod_before_its_node_creates_a_ghost_that_add_node_fills_in() -> None:
    cache = Cache()
    cache.add_pod(make_pod("early", "n1", [ctr(cpu="300m", mem="1Mi")]))
    assert cache.dump().nodes["n1"].has_node is False
    assert snap(cache).num_nodes() == 0
    info = cache.add_node(make_node("n1"))
    assert (info.name, info.requested.milli_cpu, len(info.pods)) == ("n1", 300, 1)
    assert snap(cache).get("n1").requested.milli_cpu == 300


def test_ghost_node_can_come_back() -> None:
    cache = cache_with("n1")
    cache.add_pod(make_pod("a", "n1"))
    cache.remove_node(make_node("n1"))
    cache.add_node(make_node("n1"))
    assert snap(cache).get("n1").requested.milli_cpu == 100
    assert cache.statistics().ghost_nodes == 0


def test_add_and_update_node_return_clones() -> None:
    cache = Cache()
    first = cache.add_node(make_node("n1", disk="ssd"))
    cache.add_pod(make_pod("a", "n1"))
    assert first.pods == []
    second = cache.update_node(make_node("n1", disk="ssd"), make_node("n1", disk="hdd"))
    assert second.node is not None
    assert second.node.metadata.labels == {"disk": "hdd"}
    assert len(second.pods) == 1


# --- requested and non-zero requested totals ---------------------------------------------------

DEF_CPU, DEF_MEM = 100, 200 * MI  # upstream DefaultMilliCPURequest / DefaultMemoryRequest


@pytest.mark.parametrize(
    ("spec", "requested", "non_zero"),
    [
        pytest.param({"containers": [ctr()]}, {}, {"cpu": DEF_CPU, "memory": DEF_MEM}, id="best-effort-gets-defaults"),
        pytest.param({"containers": [ctr(cpu="500m")]}, {"cpu": 500}, {"cpu": 500, "memory": DEF_MEM}, id="cpu-only"),
        pytest.param({"containers": [ctr(cpu="0", mem="0")]}, {}, {}, id="explicit-zero-stays-zero"),
        pytest.param(
            {"containers": [ctr(cpu="200m", mem="1Gi"), ctr("d")]},
            {"cpu": 200, "memory": GI},
            {"cpu": 200 + DEF_CPU, "memory": GI + DEF_MEM},
            id="defaults-per-container",
        ),
        pytest.param(
            {"containers": [ctr(cpu="100m", mem="100Mi")], "init_containers": [ctr("i", cpu="1", mem="1Gi")]},
            {"cpu": 1000, "memory": GI},
            {"cpu": 1000, "memory": GI},
            id="init-container-max",
        ),
        pytest.param(
            {"containers": [ctr(cpu="50m", mem="50Mi")], "init_containers": [ctr("i")]},
            {"cpu": 50, "memory": 50 * MI},
            {"cpu": DEF_CPU, "memory": DEF_MEM},
            id="init-container-without-requests",
        ),
        pytest.param(
            {
                "containers": [ctr(cpu="200m", mem="200Mi")],
                "init_containers": [
                    ctr("side", cpu="100m", mem="100Mi", restart="Always"),
                    ctr("init", cpu="250m", mem="100Mi"),
                ],
            },
            {"cpu": 350, "memory": 300 * MI},
            {"cpu": 350, "memory": 300 * MI},
            id="sidecar-then-init",
        ),
        pytest.param(
            {"containers": [ctr(cpu="100m", mem="100Mi")], "overhead": {"cpu": "10m", "memory": "10Mi"}},
            {"cpu": 110, "memory": 110 * MI},
            {"cpu": 110, "memory": 110 * MI},
            id="overhead",
        ),
        pytest.param(
            {"containers": [ctr()], "overhead": {"cpu": "10m", "memory": "10Mi"}},
            {"cpu": 10, "memory": 10 * MI},
            {"cpu": DEF_CPU + 10, "memory": DEF_MEM + 10 * MI},
            id="overhead-on-best-effort",
        ),
        pytest.param(
            {"containers": [ctr(requests={"example.com/gpu": "2", "ephemeral-storage": "1Gi"})]},
            {"example.com/gpu": 2, "ephemeral-storage": GI},
            {"cpu": DEF_CPU, "memory": DEF_MEM},
            id="scalar-and-ephemeral",
        ),
    ],
)
def test_requested_totals(spec: dict[str, Any], requested: dict[str, int], non_zero: dict[str, int]) -> None:
    cache = cache_with("n1")
    pod = make_pod("p", "n1", **spec)
    for add in (cache.assume_pod, cache.add_pod):  # assumed, then confirmed: same totals
        add(pod)
        d = cache.dump().nodes["n1"]
        assert (d.requested, d.non_zero_requested) == (requested, non_zero)
    twice = make_pod("q", "n1", **spec)
    cache.add_pod(twice)
    d = cache.dump().nodes["n1"]
    assert d.requested == {k: 2 * v for k, v in requested.items()}
    assert d.non_zero_requested == {k: 2 * v for k, v in non_zero.items()}


# --- host ports --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("port", "probe", "conflict"),
    [
        pytest.param({"hostPort": 8080}, ("0.0.0.0", "TCP", 8080), True, id="same-port"),
        pytest.param({"hostPort": 8080}, ("0.0.0.0", "UDP", 8080), False, id="other-protocol"),
        pytest.param({"hostPort": 8080}, ("10.0.0.1", "TCP", 8080), True, id="wildcard-used-specific-probe"),
        pytest.param({"hostPort": 8080, "hostIP": "10.0.0.1"}, ("10.0.0.2", "TCP", 8080), False, id="other-ip"),
        pytest.param({"hostPort": 8080, "hostIP": "10.0.0.1"}, ("0.0.0.0", "TCP", 8080), True, id="wildcard-probe"),
        pytest.param({}, ("0.0.0.0", "TCP", 80), False, id="container-port-only"),
    ],
)
def test_host_ports_tracked(port: dict[str, Any], probe: tuple[str, str, int], conflict: bool) -> None:
    cache = cache_with("n1")
    pod = make_pod("p", "n1", [ctr(ports=[{"containerPort": 80, **port}])])
    cache.assume_pod(pod)
    assert snap(cache).get("n1").used_ports.check_conflict(*probe) is conflict
    cache.forget_pod(pod)
    assert len(snap(cache).get("n1").used_ports) == 0


# --- image states ------------------------------------------------------------------------------


def images_of(s: Snapshot, name: str) -> dict[str, tuple[int, int]]:
    return {k: (v.size, v.num_nodes) for k, v in s.get(name).image_states.items()}


def test_image_states_count_nodes_and_normalize_names() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", [(["nginx:1.25", "nginx@sha256:abc"], 100)]))
    cache.add_node(make_node("n2", [(["nginx:1.25"], 100), (["redis"], 50), (["localhost:5000/app"], 7)]))
    s = snap(cache)
    assert images_of(s, "n1") == {"nginx:1.25": (100, 2), "nginx@sha256:abc": (100, 1)}
    assert images_of(s, "n2") == {"nginx:1.25": (100, 2), "redis:latest": (50, 1), "localhost:5000/app:latest": (7, 1)}
    assert cache.statistics().images == 4


def test_image_counts_follow_node_removal_and_update() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", [(["nginx:1"], 10)]))
    cache.add_node(make_node("n2", [(["nginx:1"], 10)]))
    cache.remove_node(make_node("n2"))
    cache.add_pod(make_pod("touch", "n1"))  # n1 changes, so it is re-cloned with the new count
    assert images_of(snap(cache), "n1") == {"nginx:1": (10, 1)}
    cache.update_node(make_node("n1", [(["nginx:1"], 10)]), make_node("n1", [(["redis:7"], 5)]))
    assert images_of(snap(cache), "n1") == {"redis:7": (5, 1)}
    assert cache.statistics().images == 1


def test_untouched_node_keeps_its_image_count_until_it_changes() -> None:
    """Upstream: NumNodes is computed when a NodeInfo is cloned into the snapshot."""
    cache = Cache()
    cache.add_node(make_node("n1", [(["nginx:1"], 10)]))
    s = snap(cache)
    cache.add_node(make_node("n2", [(["nginx:1"], 10)]))
    cache.update_snapshot(s)
    assert s.get("n1").image_states["nginx:1"] == ImageStateSummary(10, 1)
    assert s.get("n2").image_states["nginx:1"] == ImageStateSummary(10, 2)
    cache.add_pod(make_pod("touch", "n1"))
    cache.update_snapshot(s)
    assert s.get("n1").image_states["nginx:1"] == ImageStateSummary(10, 2)


# --- dump, statistics, repr --------------------------------------------------------------------


def test_dump_shape() -> None:
    cache = cache_with("n1", "n2")
    cache.add_pod(make_pod("b", "n1", [ctr(cpu="1", mem="1Gi")]))
    cache.assume_pod(make_pod("a", "n1", [ctr()]))
    cache.add_pod(make_pod("ghost-pod", "n3", [ctr(cpu="2")]))
    d = cache.dump()
    gens = {name: nd.generation for name, nd in d.nodes.items()}
    expected = CacheDump(
        nodes={
            "n1": NodeDump(
                "n1",
                True,
                {"cpu": 1000, "memory": GI},
                {"cpu": 1100, "memory": GI + DEF_MEM},
                ("uid-a", "uid-b"),
                gens["n1"],
            ),
            "n2": NodeDump("n2", True, {}, {}, (), gens["n2"]),
            "n3": NodeDump(
                "n3", False, {"cpu": 2000}, {"cpu": 2000, "memory": DEF_MEM}, ("uid-ghost-pod",), gens["n3"]
            ),
        },
        assumed_pods=("uid-a",),
    )
    assert d == expected
    assert list(d.nodes) == ["n1", "n2", "n3"]
    assert dataclasses.asdict(d)["assumed_pods"] == ("uid-a",)


def test_statistics_and_repr() -> None:
    cache = cache_with("n1", "n2")
    cache.assume_pod(make_pod("a", "n1"))
    cache.add_pod(make_pod("b", "n2"))
    cache.remove_node(make_node("n2"))
    stats = cache.statistics()
    assert (stats.nodes, stats.ghost_nodes, stats.pods, stats.assumed_pods, stats.images) == (2, 1, 2, 1, 0)
    assert repr(cache) == "<Cache nodes=1 ghosts=1 pods=2 assumed=1 images=0>"
