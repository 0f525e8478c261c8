"""Informer indexes (``add_indexers``/``by_index``): after any sequence of watch events
(add, update, delete) and relists, with the indexes added before or in between, every
index equals a brute-force scan of the informer's store, in (namespace, name) order."""

from __future__ import annotations

from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.api.core import Pod
from emulator.base.api.meta import OwnerReference
from emulator.base.apiserver.watcher import WatchEvent
from emulator.base.client.client import Client
from emulator.base.client.indexer import CONTROLLER_UID_INDEX, ORPHAN, controller_uid
from emulator.base.client.informer import Informer
from tests.builders import pod


def by_label(obj: Any) -> list[str]:
    """An index function with zero, one or two values."""
    return sorted({v for k, v in obj.metadata.labels.items() if k in ("a", "b")})


INDEXERS = {CONTROLLER_UID_INDEX: controller_uid, "label": by_label}


def make(name: str, ns: str, owner: str | None, controller: bool, labels: dict[str, str], rev: int) -> Pod:
    p = pod(name, namespace=ns, labels=labels, resource_version=str(rev))
    if owner is None:
        return p
    ref = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name=owner, uid=owner, controller=controller)
    return replace(p, metadata=replace(p.metadata, owner_references=[ref]))


objects = st.builds(
    make,
    name=st.sampled_from(["a", "b", "c", "d"]),
    ns=st.sampled_from(["default", "other"]),
    owner=st.sampled_from([None, "u1", "u2"]),
    controller=st.booleans(),
    labels=st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y"]), max_size=3),
    rev=st.integers(1, 5),
)
ops = st.one_of(
    st.tuples(st.just("event"), st.sampled_from(["ADDED", "MODIFIED", "DELETED"]), objects),
    st.tuples(st.just("relist"), st.lists(objects, max_size=6)),
    st.tuples(st.just("index")),
)


def brute_force(inf: Informer, name: str, value: str) -> list[Any]:
    fn = INDEXERS[name]
    return [inf.store[k] for k in sorted(inf.store) if value in fn(inf.store[k])]


def check(inf: Informer) -> None:
    for name, fn in INDEXERS.items():
        values = sorted({v for o in inf.store.values() for v in fn(o)})
        assert inf.index_values(name) == values
        for value in [*values, "absent"]:
            assert inf.by_index(name, value) == brute_force(inf, name, value)
            keys = [(o.metadata.namespace, o.metadata.name) for o in brute_force(inf, name, value)]
            assert inf.index_keys(name, value) == keys


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(ops, max_size=25), early=st.booleans())
def test_by_index_equals_a_scan_of_the_store(steps: list[tuple[Any, ...]], early: bool) -> None:
    inf = Informer(cast(Client, None), "Pod")  # _apply and _replace never touch the client
    seen: list[str] = []
    inf.add_handlers(on_add=lambda o: seen.append(o.metadata.name))
    indexed = early
    if early:
        inf.add_indexers(INDEXERS)
    for rev, step in enumerate(steps, 1):
        if step[0] == "event":
            inf._apply([WatchEvent(step[1], step[2], rev)])
        elif step[0] == "relist":
            unique = {(o.metadata.namespace, o.metadata.name): o for o in step[1]}
            inf._replace(list(unique.values()), rev)
        else:
            inf.add_indexers(INDEXERS)  # again: the same functions are kept
            indexed = True
        if indexed:
            check(inf)


def test_a_handler_sees_the_index_already_updated() -> None:
    inf = Informer(cast(Client, None), "Pod")
    inf.add_indexers(INDEXERS)
    found: list[list[str]] = []
    inf.add_handlers(on_add=lambda o: found.append([p.metadata.name for p in inf.by_index(CONTROLLER_UID_INDEX, "u1")]))
    inf._apply([WatchEvent("ADDED", make("b", "default", "u1", True, {}, 1), 1)])
    inf._apply([WatchEvent("ADDED", make("a", "default", "u1", True, {}, 2), 2)])
    assert found == [["b"], ["a", "b"]]
    assert inf.by_index(CONTROLLER_UID_INDEX, ORPHAN) == []


def test_an_index_added_late_files_the_store_and_conflicts_are_refused() -> None:
    inf = Informer(cast(Client, None), "Pod")
    inf._replace([make("a", "default", None, False, {}, 1), make("b", "default", "u1", False, {}, 1)], 1)
    inf.add_indexers({CONTROLLER_UID_INDEX: controller_uid})
    assert [p.metadata.name for p in inf.by_index(CONTROLLER_UID_INDEX, ORPHAN)] == ["a", "b"]
    with pytest.raises(ValueError, match="indexer conflict: controllerUID"):
        inf.add_indexers({CONTROLLER_UID_INDEX: by_label})
    with pytest.raises(KeyError, match="no index"):
        inf.by_index("label", "x")
