"""Node order (``NodeTree``, zone keys), incremental snapshots, ``Snapshot.from_objects``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agents.scheduler.cache import Cache, NodeTree, Snapshot, get_zone_key, normalized_image_name
from agents.scheduler.framework.types import ImageStateSummary
from emulator.base.api.codec import convert
from emulator.base.api.core import Affinity, Node, Pod
from tests.builders import container, node, pod

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def make_node(
    name: str, zone: str | None = None, *, labels: dict[str, str] | None = None, images: Sequence[dict[str, Any]] = ()
) -> Node:
    """4 CPUs, 8Gi, 110 pods allocatable; ``zone`` is the zone label; ``images`` as the API writes them."""
    lbl = {**(labels or {}), **({ZONE: zone} if zone is not None else {})}
    sizes = {i["names"][0]: i["sizeBytes"] for i in images}
    return node(name, memory="8Gi", labels=lbl, allocatable_only=True, images=sizes)


def make_pod(name: str, node: str = "", cpu: str = "100m", affinity: dict[str, Any] | None = None) -> Pod:
    """A pod asking ``cpu``, uid ``uid-<name>``; ``affinity`` as a manifest writes it."""
    aff = convert(affinity, Affinity) if affinity else None
    return pod(name, uid=f"uid-{name}", node=node, containers=[container(image="", cpu=cpu)], affinity=aff)


TERM = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "x"}}}
ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [TERM]}}
PREFERRED = {
    "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": TERM}]}
}


def names(infos: list[Any]) -> list[str]:
    return [i.name for i in infos]


# --- zone key and node tree --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "key"),
    [
        pytest.param({}, "", id="no-labels"),
        pytest.param({"other": "x"}, "", id="unrelated-labels"),
        pytest.param({ZONE: "a"}, ":\x00:a", id="zone-only"),
        pytest.param({REGION: "r"}, "r:\x00:", id="region-only"),
        pytest.param({REGION: "r", ZONE: "a"}, "r:\x00:a", id="region-and-zone"),
        pytest.param({BETA_ZONE: "b", ZONE: "a", REGION: "r"}, "r:\x00:b", id="beta-zone-wins"),
        pytest.param({BETA_REGION: "old", REGION: "r", ZONE: "a"}, "old:\x00:a", id="beta-region-wins"),
        pytest.param({BETA_ZONE: "", ZONE: "a"}, "", id="empty-beta-zone-still-wins"),
    ],
)
def test_get_zone_key(labels: dict[str, str], key: str) -> None:
    assert get_zone_key(make_node("n", labels=labels)) == key


@pytest.mark.parametrize(
    ("nodes", "order"),
    [
        pytest.param([("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")], ["a1", "b1", "a2", "a3"], id="two-zones"),
        pytest.param(
            [("b1", "b"), ("a1", "a"), ("a2", "a"), ("b2", "b")],
            ["b1", "a1", "b2", "a2"],
            id="zone-order-is-first-appearance",
        ),
        pytest.param([("x", None), ("a1", "a"), ("y", None)], ["x", "a1", "y"], id="zoneless-nodes-share-a-zone"),
        pytest.param(
            [("c1", "c"), ("a1", "a"), ("b1", "b"), ("a2", "a"), ("a3", "a"), ("b2", "b")],
            ["c1", "a1", "b1", "a2", "b2", "a3"],
            id="three-zones-uneven",
        ),
        pytest.param([("only", "z")], ["only"], id="single-node"),
        pytest.param([], [], id="empty"),
    ],
)
def test_node_tree_round_robin(nodes: list[tuple[str, str | None]], order: list[str]) -> None:
    tree = NodeTree([make_node(n, z) for n, z in nodes])
    assert tree.list() == order
    assert tree.num_nodes == len(order)


def test_node_tree_add_remove_update() -> None:
    tree = NodeTree()
    a1, a2, b1 = make_node("a1", "a"), make_node("a2", "a"), make_node("b1", "b")
    assert [tree.add_node(n) for n in (a1, a2, b1, a1)] == [True, True, True, False]
    assert tree.num_nodes == 3
    tree.update_node(a1, make_node("a1", "b"))  # moves to the end of zone b
    assert tree.list() == ["a2", "b1", "a1"]
    tree.update_node(a2, make_node("a2", "a", labels={"other": "label"}))  # same zone: nothing moves
    assert tree.list() == ["a2", "b1", "a1"]
    assert tree.remove_node(a2) is True
    assert tree.zones == [":\x00:b"]  # zone a is gone
    assert tree.remove_node(a2) is False
    assert tree.remove_node(make_node("b1", "elsewhere")) is False  # looked up in the zone its labels name
    tree.add_node(make_node("a3", "a"))
    assert tree.list() == ["b1", "a3", "a1"]
    assert len(tree) == 3


# --- normalized image names --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        pytest.param("nginx", "nginx:latest", id="no-tag"),
        pytest.param("nginx:1.25", "nginx:1.25", id="tag"),
        pytest.param("docker.io/library/nginx", "docker.io/library/nginx:latest", id="path-no-tag"),
        pytest.param("localhost:5000/app", "localhost:5000/app:latest", id="registry-port-no-tag"),
        pytest.param("localhost:5000/app:v2", "localhost:5000/app:v2", id="registry-port-and-tag"),
        pytest.param("app@sha256:" + "a" * 64, "app@sha256:" + "a" * 64, id="digest"),
        pytest.param("reg.io/app:v1@sha256:abc", "reg.io/app:v1@sha256:abc", id="tag-and-digest"),
    ],
)
def test_normalized_image_name(name: str, normalized: str) -> None:
    assert normalized_image_name(name) == normalized


# --- incremental snapshots ---------------------------------------------------------------------


def zoned_cache() -> Cache:
    cache = Cache()
    for name, zone in (("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")):
        cache.add_node(make_node(name, zone))
    return cache


def test_snapshot_order_follows_zone_round_robin() -> None:
    cache = zoned_cache()
    s = Snapshot()
    cache.update_snapshot(s)
    assert names(s.node_info_list) == ["a1", "b1", "a2", "a3"]
    assert s.list() is s.node_info_list
    assert set(s.node_info_map) == {"a1", "a2", "a3", "b1"}
    assert s.num_nodes() == len(s) == 4


def test_only_changed_node_is_recloned() -> None:
    cache = zoned_cache()
    s = Snapshot()
    cache.update_snapshot(s)
    before = dict(s.node_info_map)
    listed = s.node_info_list
    gen = s.generation

    cache.assume_pod(make_pod("p", "a2", cpu="700m"))
    cache.update_snapshot(s)

    assert s.node_info_map["a2"] is not before["a2"]
    assert s.node_info_map["a2"].requested.milli_cpu == 700
    assert before["a2"].requested.milli_cpu == 0  # the old clone did not change under its holder
    for name in ("a1", "a3", "b1"):
        assert s.node_info_map[name] is before[name]
    assert s.node_info_list is listed  # not rebuilt: patched in place
    assert s.node_info_list[2] is s.node_info_map["a2"]
    assert names(s.node_info_list) == ["a1", "b1", "a2", "a3"]
    assert s.generation > gen
    assert s.generation == s.node_info_map["a2"].generation


def test_no_change_keeps_everything() -> None:
    cache = zoned_cache()
    s = Snapshot()
    cache.update_snapshot(s)
    before, listed, gen = dict(s.node_info_map), s.node_info_list, s.generation
    cache.update_snapshot(s)
    assert s.generation == gen
    assert s.node_info_list is listed
    assert all(s.node_info_map[n] is before[n] for n in before)


def test_added_node_rebuilds_the_list_in_tree_order() -> None:
    cache = zoned_cache()
    s = Snapshot()
    cache.update_snapshot(s)
    before = dict(s.node_info_map)
    cache.add_node(make_node("b2", "b"))
    cache.update_snapshot(s)
    assert names(s.node_info_list) == ["a1", "b1", "a2", "b2", "a3"]
    assert all(s.node_info_map[n] is before[n] for n in before)


@pytest.mark.parametrize("with_pods", [pytest.param(False, id="node-dropped"), pytest.param(True, id="ghost")])
def test_removed_node_leaves_the_snapshot(with_pods: bool) -> None:
    cache = zoned_cache()
    if with_pods:
        cache.add_pod(make_pod("p", "b1"))
    s = Snapshot()
    cache.update_snapshot(s)
    cache.remove_node(make_node("b1", "b"))
    cache.update_snapshot(s)
    assert names(s.node_info_list) == ["a1", "a2", "a3"]
    assert "b1" not in s.node_info_map
    with pytest.raises(KeyError):
        s.get("b1")


def test_removing_every_node_empties_the_snapshot() -> None:
    cache = zoned_cache()
    s = Snapshot()
    cache.update_snapshot(s)
    for name, zone in (("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")):
        cache.remove_node(make_node(name, zone))
    cache.update_snapshot(s)
    assert (s.node_info_list, s.node_info_map) == ([], {})


def test_zone_change_reorders_only_when_lists_are_rebuilt() -> None:
    """As upstream: a label update re-clones the node, the order follows at the next node add/remove."""
    cache = zoned_cache()
    s = Snapshot()
    cache.update_snapshot(s)
    cache.update_node(make_node("a1", "a"), make_node("a1", "b"))
    cache.update_snapshot(s)
    assert names(s.node_info_list) == ["a1", "b1", "a2", "a3"]
    cache.add_node(make_node("c1", "c"))
    cache.update_snapshot(s)
    assert names(s.node_info_list) == ["a2", "b1", "c1", "a3", "a1"]


def test_affinity_lists_track_membership() -> None:
    cache = zoned_cache()
    s = Snapshot()
    cache.update_snapshot(s)
    assert (s.have_pods_with_affinity_node_info_list, s.have_pods_with_required_anti_affinity_node_info_list) == (
        [],
        [],
    )
    anti = make_pod("anti", "b1", affinity=ANTI)
    pref = make_pod("pref", "a3", affinity=PREFERRED)
    cache.assume_pod(anti)
    cache.add_pod(pref)
    cache.update_snapshot(s)
    assert names(s.have_pods_with_affinity_node_info_list) == ["b1", "a3"]
    assert names(s.have_pods_with_required_anti_affinity_list()) == ["b1"]
    assert s.have_pods_with_affinity_list()[0] is s.get("b1")

    cache.add_pod(make_pod("anti2", "b1", affinity=ANTI))  # b1 stays a member: entries patched
    cache.update_snapshot(s)
    assert s.have_pods_with_affinity_node_info_list[0] is s.get("b1")
    assert s.have_pods_with_required_anti_affinity_node_info_list[0] is s.get("b1")
    assert len(s.get("b1").pods_with_required_anti_affinity) == 2

    cache.forget_pod(anti)
    cache.remove_pod(make_pod("anti2", "b1"))
    cache.update_snapshot(s)
    assert names(s.have_pods_with_affinity_node_info_list) == ["a3"]
    assert s.have_pods_with_required_anti_affinity_node_info_list == []


def test_incremental_equals_fresh_after_many_changes() -> None:
    cache = zoned_cache()
    s = Snapshot()
    cache.update_snapshot(s)
    cache.add_pod(make_pod("x", "a1", affinity=ANTI))
    cache.add_node(make_node("c1", "c"))
    cache.update_snapshot(s)
    cache.remove_node(make_node("a2", "a"))
    cache.assume_pod(make_pod("y", "c1", cpu="2"))
    cache.update_snapshot(s)
    fresh = Snapshot()
    cache.update_snapshot(fresh)
    assert names(s.node_info_list) == names(fresh.node_info_list) == ["a1", "b1", "c1", "a3"]
    for a, b in zip(s.node_info_list, fresh.node_info_list, strict=True):
        assert (a.requested, a.generation, [p.uid for p in a.pods]) == (
            b.requested,
            b.generation,
            [p.uid for p in b.pods],
        )
    assert names(s.have_pods_with_required_anti_affinity_node_info_list) == ["a1"]


# --- Snapshot.from_objects ---------------------------------------------------------------------


def test_from_objects() -> None:
    images = [{"names": ["nginx:1"], "sizeBytes": 10}, {"names": ["busybox"], "sizeBytes": 3}]
    nodes = [
        make_node("a1", "a", images=images),
        make_node("a2", "a", images=images[:1]),
        make_node("b1", "b"),
    ]
    pods = [
        make_pod("p1", "a2", cpu="1"),
        make_pod("p2", "a2", cpu="500m", affinity=ANTI),
        make_pod("pending"),
        make_pod("elsewhere", "zz"),
    ]
    s = Snapshot.from_objects(pods, nodes)
    assert names(s.list()) == ["a1", "b1", "a2"]
    assert s.get("a2").requested.milli_cpu == 1500
    assert [p.uid for p in s.get("a2").pods] == ["uid-p1", "uid-p2"]
    assert names(s.have_pods_with_required_anti_affinity_node_info_list) == ["a2"]
    assert s.get("a1").image_states == {
        "nginx:1": ImageStateSummary(10, 2),
        "busybox:latest": ImageStateSummary(3, 1),
    }
    assert s.get("b1").image_states == {}
    with pytest.raises(KeyError):
        s.get("zz")
    assert repr(s) == f"<Snapshot nodes=3 with_affinity=1 with_required_anti_affinity=1 generation={s.generation}>"


# --- pod priorities (DefaultPreemption's shortcut) -------------------------------------------------


def prioritized(name: str, node: str, priority: int | None) -> Pod:
    p = make_pod(name, node)
    return p if priority is None else pod(name, uid=f"uid-{name}", node=node, priority=priority)


@pytest.mark.parametrize(
    ("bound", "lowest"),
    [
        pytest.param([], None, id="no-pods"),
        pytest.param([("p", "a1", None)], 0, id="unset-is-zero"),
        pytest.param([("p", "a1", 5), ("q", "b1", -3), ("r", "b1", 7)], -3, id="lowest-of-all-nodes"),
        pytest.param([("p", "a1", 5), ("q", "zz", -3)], 5, id="pods-of-unlisted-nodes-left-out"),
    ],
)
def test_lowest_pod_priority(bound: list[tuple[str, str, int | None]], lowest: int | None) -> None:
    nodes = [make_node(n, z) for n, z in (("a1", "a"), ("b1", "b"))]
    pods = [prioritized(*b) for b in bound]
    assert Snapshot.from_objects(pods, nodes).lowest_pod_priority() == lowest


def test_lowest_pod_priority_follows_incremental_updates() -> None:
    """The count kept by ``_replace`` equals a fresh count after every kind of change."""
    cache = zoned_cache()
    s = Snapshot()
    cache.update_snapshot(s)
    assert s.lowest_pod_priority() is None

    def step(expected: int | None) -> None:
        cache.update_snapshot(s)
        fresh = Snapshot()
        cache.update_snapshot(fresh)
        assert s.lowest_pod_priority() == fresh.lowest_pod_priority() == expected

    low = prioritized("low", "a1", -5)
    cache.add_pod(prioritized("high", "a2", 10))
    step(10)
    cache.assume_pod(low)
    step(-5)
    cache.add_pod(prioritized("zero", "a1", None))
    step(-5)
    cache.forget_pod(low)
    step(0)
    cache.add_node(make_node("c1", "c"))  # a rebuild: counted afresh when asked
    cache.add_pod(prioritized("c", "c1", -1))
    step(-1)
    cache.remove_node(make_node("c1", "c"))  # its pod stays on a ghost, which is not listed
    step(0)
