"""``NodeTable.derived`` columns by dependency: which updates re-evaluate them, and that a column
kept by ``update_row`` always equals its function over the current NodeInfos.

``update_row`` visits only the columns a change can reach: every ``"info"`` column, the
``"images"`` columns when the image states differ by value, every column on a new Node object.
The unit tests count the evaluations per kind of update; the property replays random updates
(a pod added, image counts changed, a new Node object, a plain re-clone) and compares every
column with a fresh evaluation of its function (the reference) after each one.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduler.framework.node_table import MAX_DERIVED, Depends, NodeTable
from agents.scheduler.framework.types import ImageStateSummary, NodeInfo, PodInfo
from tests import builders

Update = str  # "pod" | "images" | "node" | "same"


def _info(name: str, num_nodes: int = 1, pods: int = 0) -> NodeInfo:
    info = NodeInfo(builders.node(name))
    info.image_states = {"img:latest": ImageStateSummary(1000, num_nodes)}
    for k in range(pods):
        info.add_pod(PodInfo(builders.pod(f"{name}-p{k}", uid=f"{name}-p{k}", node=name, cpu="10m")))
    return info


def _updated(info: NodeInfo, update: Update, serial: int) -> NodeInfo:
    """A fresh clone of ``info`` changed as ``update`` says."""
    c = info.clone()
    c.image_states = {k: ImageStateSummary(s.size, s.num_nodes) for k, s in info.image_states.items()}
    if update == "pod":
        pod = builders.pod(f"{info.name}-q{serial}", uid=f"{info.name}-q{serial}", node=info.name, cpu="10m")
        c.add_pod(PodInfo(pod))
    elif update == "images":
        c.image_states = {k: ImageStateSummary(s.size, s.num_nodes + 1) for k, s in info.image_states.items()}
    elif update == "node":
        assert info.node is not None
        c.node = msgspec.structs.replace(info.node)  # equal, but a new object
    return c


def _on_node(ni: NodeInfo) -> int:
    return id(ni.node) % 1_000_003


def _on_info(ni: NodeInfo) -> int:
    return len(ni.pods)


def _on_images(ni: NodeInfo) -> int:
    return sum(s.num_nodes for s in ni.image_states.values())


COLUMNS: dict[Depends, Callable[[NodeInfo], int]] = {"node": _on_node, "info": _on_info, "images": _on_images}


@pytest.mark.parametrize(
    ("update", "evaluated"),
    [
        pytest.param("same", ["info"], id="plain-re-clone"),
        pytest.param("pod", ["info"], id="pod-added-images-unchanged"),
        pytest.param("images", ["info", "images"], id="image-counts-changed"),
        pytest.param("node", ["node", "info", "images"], id="new-node-object"),
    ],
)
def test_update_row_evaluates_only_the_columns_it_can_reach(update: Update, evaluated: list[str]) -> None:
    infos = [_info(f"n{i}") for i in range(3)]
    table = NodeTable(infos)
    calls: list[str] = []

    def counting(kind: Depends) -> Callable[[NodeInfo], int]:
        def fn(ni: NodeInfo) -> int:
            calls.append(kind)
            return COLUMNS[kind](ni)

        return fn

    for kind in COLUMNS:
        table.derived(("col", kind), counting(kind), kind)
    calls.clear()
    infos[1] = _updated(infos[1], update, 0)
    table.update_row(1, infos[1])
    assert sorted(calls) == sorted(evaluated)


def test_an_evicted_column_is_no_longer_evaluated() -> None:
    infos = [_info("n0")]
    table = NodeTable(infos)
    calls: list[str] = []

    def first(ni: NodeInfo) -> int:
        calls.append("first")
        return 0

    table.derived("first", first, "images")
    for k in range(MAX_DERIVED):
        table.derived(("other", k), _on_node, "node")
    calls.clear()
    infos[0] = _updated(infos[0], "images", 0)
    table.update_row(0, infos[0])
    assert calls == []


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=5),
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=4), st.sampled_from(["pod", "images", "node", "same"])),
        max_size=25,
    ),
)
def test_kept_columns_equal_their_function(size: int, steps: list[tuple[int, Update]]) -> None:
    infos = [_info(f"n{i}", num_nodes=i + 1, pods=i % 2) for i in range(size)]
    table = NodeTable(infos)
    for kind, fn in COLUMNS.items():
        table.derived(kind, fn, kind)
    for serial, (row, update) in enumerate(steps):
        i = row % size
        infos[i] = _updated(infos[i], update, serial)
        table.update_row(i, infos[i])
        for kind, fn in COLUMNS.items():
            assert table.derived(kind, fn, kind).tolist() == [fn(ni) for ni in infos], (kind, serial, update)
