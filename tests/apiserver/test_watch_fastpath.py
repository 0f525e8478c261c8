"""The watch hub's routing tables equal their reference: ``routed_candidates`` (the watchers
found from ``WatchHub._routes`` as ``publish`` finds them) gives the watchers of
``candidates_reference`` (``tests/references.py``) in the same order, ``Watcher.matches``
agrees with ``matches_reference``, on random watchers (kinds, namespaces, field and label selectors,
added and removed) and random writes (creates, updates that move pods between nodes or
rename nothing, deletions)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.base.api.codec import convert
from emulator.base.api.core import Node, Pod
from emulator.base.apiserver.watch import WatchHub
from emulator.base.apiserver.watcher import Watcher
from tests.references import candidates_reference, routed_candidates

NAMES = st.sampled_from(["a", "b", "c"])
NODES = st.sampled_from(["", "n1", "n2"])
NAMESPACES = st.sampled_from(["default", "team"])
FIELDS = st.sampled_from(
    ["metadata.name", "metadata.namespace", "spec.nodeName", "status.phase", "spec.schedulerName", "other"]
)
VALUES = st.sampled_from(["", "a", "b", "n1", "n2", "default", "team", "Running", "default-scheduler"])


def app_is(app: str) -> Callable[[Mapping[str, str]], bool]:
    return lambda labels: labels.get("app") == app


@st.composite
def watchers(draw: st.DrawFn) -> Watcher:
    app = draw(st.sampled_from([None, "web", "db"]))
    return Watcher(
        draw(st.sampled_from(["Pod", "Node"])),
        name="w",
        namespace=draw(st.one_of(st.none(), NAMESPACES)),
        fields=draw(st.dictionaries(FIELDS, VALUES, max_size=2)),
        label_match=None if app is None else app_is(app),
        maxsize=1_000,
        allow_bookmarks=False,
    )


@st.composite
def objects(draw: st.DrawFn, kind: str) -> Any:
    meta = {"name": draw(NAMES), "labels": {"app": draw(st.sampled_from(["web", "db"]))}}
    if kind == "Node":
        return convert({"metadata": meta}, Node)
    meta["namespace"] = draw(NAMESPACES)
    spec = {"containers": [{"name": "c", "image": "i"}], "nodeName": draw(NODES)}
    spec["schedulerName"] = draw(st.sampled_from(["default-scheduler", "other"]))
    return convert({"metadata": meta, "spec": spec, "status": {"phase": draw(st.sampled_from(["", "Running"]))}}, Pod)


@st.composite
def writes(draw: st.DrawFn) -> tuple[str, Any, Any]:
    kind = draw(st.sampled_from(["Pod", "Node"]))
    shape = draw(st.sampled_from(["create", "update", "delete"]))
    old = None if shape == "create" else draw(objects(kind))
    new = None if shape == "delete" else draw(objects(kind))
    return kind, old, new


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ws=st.lists(watchers(), max_size=8),
    removed=st.lists(st.integers(0, 7), max_size=3),
    batch=st.lists(writes(), min_size=1, max_size=6),
)
def test_fast_routing_equals_the_reference(ws: list[Watcher], removed: list[int], batch: list[Any]) -> None:
    hub = WatchHub()
    for w in ws:
        hub.add(w)
    for i in removed:
        if i < len(ws):
            hub.remove(ws[i])
    for kind, old, new in batch:
        fast = routed_candidates(hub, kind, old, new)
        reference = candidates_reference(hub, kind, old, new)
        assert [w.id for w in fast] == [w.id for w in reference]
        for w in ws:
            for obj in (old, new):
                if obj is not None:
                    assert w.matches(obj) == w.matches_reference(obj)
