"""Property: the cache's in-place pod swap (``Cache._swap``: a status write, or the confirmation
of an assumed pod, that changes nothing of the node but the Pod object) leaves every NodeInfo,
every snapshot and its table exactly as the general path (a replace, or remove then add, with a
new generation and a re-clone) leaves them: the same Pod objects in the same order, the same
lists, amounts and rows. Only generations differ (the swap draws none).

Also: image states frozen once per change and shared by a node's successive snapshot clones
(``Cache._frozen_images``) hold the counts a fresh freeze would; a node update that keeps the
node's images leaves the image table as removing and adding them does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.scheduler.cache import Cache, CacheError, Snapshot
from agents.scheduler.cache import cache as cache_module
from agents.scheduler.framework.types import NodeInfo
from emulator.base.api.core import ContainerImage, Node, PodStatus
from emulator.base.api.resources import same_requests
from tests.scheduler.cache.test_cache_property import NODE_NAMES, POD_NAMES, Model, apply, make_node, make_pod, op_st

status_op = st.tuples(
    st.just("status"),
    st.sampled_from(POD_NAMES),
    st.sampled_from(["Pending", "Running"]),
    st.sampled_from(["same", "relabel", "deleting"]),
)
ops = st.lists(st.one_of(op_st, status_op, status_op), max_size=40)


def step(cache: Cache, model: Model, op: tuple[Any, ...]) -> str:
    """``apply``, plus ``status``: a write that keeps the spec object (told ``alike`` as the
    scheduler's handler tells it), with the labels or the deletion timestamp changed or not."""
    try:
        if op[0] != "status":
            return "ok" if apply(cache, model, op) else "skipped"
        _, p, phase, meta = op
        if p not in model.pods or model.pods[p][1]:
            return "skipped"
        old = model.pods[p][0]
        m = old.metadata
        if meta == "relabel":
            m = replace(m, labels={**m.labels, "v": str(len(m.labels))})
        elif meta == "deleting":
            m = replace(m, deletion_timestamp="2026-01-01T00:00:00Z")
        new = replace(old, metadata=m, status=PodStatus(phase=phase))
        cache.update_pod(old, new, alike=new.spec is old.spec and same_requests(new, old))
        model.pods[p] = (new, False)
        return "ok"
    except CacheError as err:
        return f"error: {err}"


def node_view(info: NodeInfo) -> tuple[Any, ...]:
    """Everything of a NodeInfo but its generation; the pods whole, in order."""
    return (
        info.name,
        info.node,
        [_enc(pi.pod) for pi in info.pods],
        [_enc(pi.pod) for pi in info.pods_with_affinity],
        [_enc(pi.pod) for pi in info.pods_with_required_anti_affinity],
        info.requested,
        info.non_zero_requested,
        info.allocatable,
        info.used_ports._ports,
        {k: (s.size, s.num_nodes) for k, s in info.image_states.items()},
    )


def _enc(pod: Any) -> Any:
    return pod  # (compared by value: the two caches are fed equal, not identical, objects)


def cache_view(cache: Cache) -> Any:
    return (
        {name: node_view(info) for name, info in sorted(cache._nodes.items())},
        sorted(cache._assumed),
        {uid: (_enc(s.pod), s.info is not None and s.info.pod is s.pod) for uid, s in sorted(cache._pods.items())},
    )


def snapshot_view(snapshot: Snapshot) -> Any:
    table = snapshot.table
    return (
        [node_view(info) for info in snapshot.node_info_list],
        [info.name for info in snapshot.have_pods_with_affinity_node_info_list],
        [info.name for info in snapshot.have_pods_with_required_anti_affinity_node_info_list],
        table.data.tolist(),
        table._row_values,
    )


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(ops)
def test_swap_leaves_what_the_general_path_leaves(seq: list[Any]) -> None:
    fast, fast_model, fast_snap = Cache(), Model(), Snapshot()
    ref, ref_model, ref_snap = Cache(), Model(), Snapshot()
    for op in seq:
        got = step(fast, fast_model, op)
        with pytest.MonkeyPatch.context() as m:
            m.setattr(Cache, "_swap", lambda self, state, pi, pod: False)
            want = step(ref, ref_model, op)
        assert got == want
        assert cache_view(fast) == cache_view(ref)
        newest = {pod.metadata.uid: pod for pod, _ in fast_model.pods.values()}
        assert all(pi.pod is newest[pi.uid] for info in fast._nodes.values() for pi in info.pods)
        # Snapshots taken now (the table built, so it is kept row by row from here on) agree.
        fast.update_snapshot(fast_snap)
        ref.update_snapshot(ref_snap)
        assert snapshot_view(fast_snap) == snapshot_view(ref_snap)


def test_status_write_swaps_the_pod_in_place_and_the_snapshot_shows_it() -> None:
    cache, model, snap = Cache(), Model(), Snapshot()
    for op in [("add_node", "n0", "a"), ("assume", "p0", "n0", ([("250m", "64Mi")], None, False))]:
        assert step(cache, model, op) == "ok"
    cache.update_snapshot(snap)
    assumed = model.pods["p0"][0]
    # The informer confirms it: same spec (an equal object), the node unchanged but the pod.
    assert step(cache, model, ("add", "p0", "n0", ([("250m", "64Mi")], None, False))) == "ok"
    gen = cache._nodes["n0"].generation
    listed = snap.get("n0")
    assert listed.pods[0].pod is not assumed  # the PodInfo is shared: the snapshot shows the bound pod
    assert listed.pods[0].pod is model.pods["p0"][0]
    assert step(cache, model, ("status", "p0", "Running", "same")) == "ok"
    assert cache._nodes["n0"].generation == gen  # no new generation: nothing to re-clone
    cache.update_snapshot(snap)
    assert snap.get("n0") is listed
    assert listed.pods[0].pod is model.pods["p0"][0]
    assert listed.pods[0].pod.status.phase == "Running"
    # A relabel is a replace: the per-generation memos read labels.
    assert step(cache, model, ("status", "p0", "Running", "relabel")) == "ok"
    assert cache._nodes["n0"].generation > gen


def test_swap_only_for_the_last_pod_of_the_node() -> None:
    cache, model = Cache(), Model()
    spec = ([("250m", "64Mi")], None, False)
    for op in [("add_node", "n0", "a"), ("add", "p0", "n0", spec), ("add", "p1", "n0", spec)]:
        assert step(cache, model, op) == "ok"
    gen = cache._nodes["n0"].generation
    assert step(cache, model, ("status", "p0", "Running", "same")) == "ok"  # not last: moved to the end
    assert cache._nodes["n0"].generation > gen
    assert [pi.pod.metadata.name for pi in cache._nodes["n0"].pods] == ["p1", "p0"]
    gen = cache._nodes["n0"].generation
    assert step(cache, model, ("status", "p0", "Pending", "same")) == "ok"  # last now: in place
    assert cache._nodes["n0"].generation == gen


# --- image states ------------------------------------------------------------------------------

IMAGES = ["a", "b", "c"]
image_op = st.one_of(
    st.tuples(st.just("node"), st.sampled_from(NODE_NAMES), st.lists(st.sampled_from(IMAGES), max_size=3)),
    st.tuples(st.just("same"), st.sampled_from(NODE_NAMES)),  # a status write that keeps the images
    st.tuples(st.just("remove_node"), st.sampled_from(NODE_NAMES)),
    st.tuples(st.just("pod"), st.sampled_from(NODE_NAMES)),
)


def image_node(name: str, images: list[ContainerImage]) -> Node:
    node = make_node(name, "a")
    return replace(node, status=replace(node.status, images=images))


def images_view(cache: Cache) -> Any:
    return {k: (s.summary.size, s.summary.num_nodes, sorted(s.nodes)) for k, s in sorted(cache._images.items())}


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(image_op, max_size=40))
def test_frozen_image_states_hold_the_counts_a_fresh_freeze_would(seq: list[Any]) -> None:
    """The reference removes and adds a node's image states on every update, and freezes every
    re-cloned node's counts afresh."""
    fast, fast_snap = Cache(), Snapshot()
    ref, ref_snap = Cache(), Snapshot()
    nodes: dict[str, Node] = {}
    for k, op in enumerate(seq):
        name = op[1]
        old = nodes.get(name)
        if op[0] in ("node", "same"):
            if op[0] == "node":
                images = [ContainerImage(names=[f"{i}:1"], size_bytes=ord(i)) for i in op[2]]
            else:
                images = list(old.status.images) if old is not None else []  # an equal list
            new = nodes[name] = image_node(name, images)
            for cache in (fast, ref):
                with pytest.MonkeyPatch.context() as m:
                    if cache is ref:
                        m.setattr(cache_module, "_same_images", lambda a, b: False)
                    if old is None:
                        cache.add_node(new)
                    else:
                        cache.update_node(old, new)
        elif op[0] == "remove_node" and old is not None:
            del nodes[name]
            for cache in (fast, ref):
                cache.remove_node(old)
        elif op[0] == "pod" and old is not None:
            pod = make_pod(f"p{k}", name, ([("50m", "64Mi")], None, False))
            for cache in (fast, ref):
                cache.add_pod(pod)
        fast.update_snapshot(fast_snap)
        ref._frozen_images.clear()
        ref.update_snapshot(ref_snap)
        assert [node_view(i) for i in fast_snap.node_info_list] == [node_view(i) for i in ref_snap.node_info_list]
        assert images_view(fast) == images_view(ref)
        assert {n: node_view(i) for n, i in fast._nodes.items()} == {n: node_view(i) for n, i in ref._nodes.items()}
        if fast_snap.node_info_list:
            table = fast_snap.table
            assert np.array_equal(table.data, ref_snap.table.data)
            assert [table._image_key(i) for i in range(table.size)] == [
                ref_snap.table._image_key(i) for i in range(table.size)
            ]


def test_a_node_keeps_its_frozen_image_states_while_no_count_moves() -> None:
    cache, snap = Cache(), Snapshot()
    images = [ContainerImage(names=["a:1"], size_bytes=10)]
    n0, n1 = image_node("n0", images), image_node("n1", images)
    cache.add_node(n0)
    cache.add_node(n1)
    cache.update_snapshot(snap)
    first = snap.get("n0").image_states
    assert {k: (s.size, s.num_nodes) for k, s in first.items()} == {"a:1": (10, 2)}
    cache.add_pod(make_pod("p", "n0", ([("50m", "64Mi")], None, False)))
    cache.update_node(n1, image_node("n1", list(images)))  # the same images: no count moves
    cache.update_snapshot(snap)
    assert snap.get("n0").image_states is first
    cache.update_node(n1, image_node("n1", []))  # n1 drops the image: n0's count is 1 from now on
    cache.add_pod(make_pod("q", "n0", ([("50m", "64Mi")], None, False)))
    cache.update_snapshot(snap)
    assert {k: (s.size, s.num_nodes) for k, s in snap.get("n0").image_states.items()} == {"a:1": (10, 1)}
    assert {k: (s.size, s.num_nodes) for k, s in first.items()} == {"a:1": (10, 2)}  # frozen as it was
