"""``OwnerGraph`` without an event loop: the work each observed change makes, and (a
property) that its dependents index always equals the one recomputed from its nodes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.controllers.gcgraph import OwnerGraph
from emulator.base.api.core import Pod
from emulator.base.api.meta import ObjectMeta, OwnerReference


def obj(
    name: str,
    *owners: str,
    namespace: str = "default",
    deleting: bool = False,
    finalizers: tuple[str, ...] = (),
    block: bool = True,
) -> Any:
    """A Pod named ``name`` with uid ``name`` owned by the Pods whose uids are ``owners``."""
    refs = [
        OwnerReference(api_version="v1", kind="Pod", name=o, uid=o, controller=None, block_owner_deletion=block or None)
        for o in owners
    ]
    meta = ObjectMeta(
        name=name,
        namespace=namespace,
        uid=name,
        owner_references=refs,
        finalizers=list(finalizers),
        deletion_timestamp="2026-01-01T00:00:00Z" if deleting else None,
    )
    return Pod(metadata=meta)


def graph_of(*objs: Any) -> OwnerGraph:
    g = OwnerGraph()
    for o in objs:
        g.upsert(o)
    return g


@pytest.mark.parametrize(
    ("before", "change", "work"),
    [
        pytest.param([obj("rs")], obj("p", "rs"), [], id="owner-known"),
        pytest.param([], obj("p", "rs"), [("delete", "p")], id="owner-absent"),
        pytest.param([obj("rs", namespace="other")], obj("p", "rs"), [("delete", "p")], id="owner-other-namespace"),
        pytest.param([obj("rs")], obj("rs", deleting=True, finalizers=("orphan",)), [("orphan", "rs")], id="orphaning"),
        pytest.param(
            [obj("rs"), obj("b", "rs"), obj("a", "rs")],
            obj("rs", deleting=True, finalizers=("foregroundDeletion",)),
            [("delete", "a"), ("delete", "b"), ("delete", "rs")],
            id="foreground-queues-dependents-sorted-then-itself",
        ),
        pytest.param(
            [obj("rs", deleting=True, finalizers=("foregroundDeletion",)), obj("p", "rs")],
            obj("p"),
            [("delete", "rs")],
            id="a-dependent-leaves-a-waiting-owner",
        ),
        pytest.param(
            [obj("rs", deleting=True, finalizers=("foregroundDeletion",)), obj("p", "rs")],
            obj("p", "rs", block=False),
            [("delete", "rs")],
            id="a-dependent-stops-blocking",
        ),
        pytest.param(
            [obj("rs", deleting=True, finalizers=("orphan",))],
            obj("rs", deleting=True, finalizers=("orphan",)),
            [],
            id="no-transition-no-work",
        ),
        pytest.param(
            [obj("rs", deleting=True, finalizers=("foregroundDeletion",))],
            obj("late", "rs"),
            [("delete", "late")],
            id="a-new-dependent-of-a-foreground-owner",
        ),
    ],
)
def test_upsert_work(before: list[Any], change: Any, work: list[tuple[str, str]]) -> None:
    g = graph_of(*before)
    assert g.upsert(change) == work


@pytest.mark.parametrize(
    ("before", "gone", "work"),
    [
        pytest.param(
            [obj("rs"), obj("b", "rs"), obj("a", "rs")], obj("rs"), [("delete", "a"), ("delete", "b")], id="owner"
        ),
        pytest.param(
            [obj("rs", deleting=True, finalizers=("foregroundDeletion",)), obj("p", "rs")],
            obj("p", "rs"),
            [("delete", "rs")],
            id="dependent-of-a-waiting-owner",
        ),
        pytest.param([obj("rs"), obj("p", "rs")], obj("p", "rs"), [], id="dependent-of-a-live-owner"),
        pytest.param([], obj("p"), [], id="unknown"),
    ],
)
def test_remove_work(before: list[Any], gone: Any, work: list[tuple[str, str]]) -> None:
    g = graph_of(*before)
    assert g.remove(gone) == work
    assert gone.metadata.uid not in g.nodes


def test_blocking_dependents_are_those_with_block_owner_deletion() -> None:
    g = graph_of(obj("rs"), obj("a", "rs"), obj("b", "rs", block=False), obj("c", "rs"))
    assert [d.name for d in g.blocking_dependents("rs")] == ["a", "c"]
    assert [d.name for d in g.dependents_of("rs")] == ["a", "b", "c"]
    assert g.has_dependents("rs")
    assert not g.has_dependents("a")


_NAMES = ["a", "b", "c", "d"]
_changes = st.lists(
    st.tuples(
        st.booleans(),
        st.sampled_from(_NAMES),
        st.lists(st.sampled_from(_NAMES), max_size=3, unique=True),
    ),
    max_size=30,
)


@settings(max_examples=100, deadline=None)
@given(_changes)
def test_the_dependents_index_matches_the_nodes(changes: list[tuple[bool, str, list[str]]]) -> None:
    g = OwnerGraph()
    for is_upsert, name, owners in changes:
        o = obj(name, *owners)
        if is_upsert:
            g.upsert(o)
        else:
            current = g.nodes.get(name)
            g.remove(replace(o, metadata=replace(o.metadata, owner_references=list(current.owners))) if current else o)
    expected: dict[str, set[str]] = {}
    for node in g.nodes.values():
        for r in node.owners:
            expected.setdefault(r.uid, set()).add(node.uid)
    assert {k: set(v) for k, v in g.dependents.items()} == expected
