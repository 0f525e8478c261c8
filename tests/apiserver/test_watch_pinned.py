"""Pinned watchers: a watcher whose field selector pins a field other than ``metadata.name`` or
``spec.nodeName`` (podgc's ``status.phase`` pod watchers) is offered only the writes whose old
or new object has its value, yet every watcher receives exactly what it would if it were
offered every write, and the order of delivery across watchers is unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.base.api.codec import convert
from emulator.base.api.core import Node, Pod
from emulator.base.apiserver.watch import WatchHub
from emulator.base.apiserver.watcher import Watcher, WatchEvent, transition
from tests.references import candidates_reference, routed_candidates

PHASES = ["", "Pending", "Running", "Succeeded", "Failed"]


def watcher(kind: str = "Pod", **fields: str) -> Watcher:
    return Watcher(
        kind, name="w", namespace=None, fields=fields, label_match=None, maxsize=1_000, allow_bookmarks=False
    )


def pod(name: str = "p", phase: str = "", node: str = "", namespace: str = "default") -> Any:
    spec = {"containers": [{"name": "c", "image": "i"}], "nodeName": node}
    meta = {"name": name, "namespace": namespace}
    return convert({"metadata": meta, "spec": spec, "status": {"phase": phase}}, Pod)


def test_phase_watchers_are_offered_only_writes_to_or_from_their_phase() -> None:
    hub = WatchHub()
    succeeded = watcher(**{"status.phase": "Succeeded"})
    everything = watcher()
    failed = watcher(**{"status.phase": "Failed"})
    kubelet = watcher(**{"spec.nodeName": "n1"})
    for w in (succeeded, everything, failed, kubelet):
        hub.add(w)
    assert routed_candidates(hub, "Pod", pod(phase="Pending", node="n1"), pod(phase="Running", node="n1")) == [
        everything,
        kubelet,
    ]
    finished = routed_candidates(hub, "Pod", pod(phase="Running", node="n1"), pod(phase="Succeeded", node="n1"))
    assert finished == [succeeded, everything, kubelet]  # in watcher order, as when offered all
    assert routed_candidates(hub, "Pod", pod(phase="Succeeded"), None) == [succeeded, everything]
    hub.remove(succeeded)
    assert routed_candidates(hub, "Pod", pod(phase="Succeeded"), None) == [everything]
    assert hub._pinned_fields == {"Pod": {"status.phase": 1}}
    hub.remove(failed)
    assert hub._pinned_fields == {"Pod": {}}
    assert hub.watchers() == [everything, kubelet]


@pytest.mark.parametrize(
    ("fields", "pin"),
    [
        pytest.param({"status.phase": "Running"}, ("Pod", "status.phase", "Running"), id="phase"),
        pytest.param(
            {"status.phase": "Running", "metadata.namespace": "team"},
            ("Pod", "metadata.namespace", "team"),
            id="first-field-in-order",
        ),
        pytest.param({"spec.nodeName": "n1", "status.phase": "Running"}, None, id="indexed-by-node-instead"),
        pytest.param({}, None, id="no-selector"),
    ],
)
def test_the_pin_is_the_first_selected_field_of_an_unindexed_watcher(
    fields: dict[str, str], pin: tuple[str, str, str] | None
) -> None:
    w = watcher(**fields)
    got = WatchHub._pin_key(w) if WatchHub._index_key(w) is None else None
    assert got == pin


FIELDS = st.sampled_from(["status.phase", "metadata.namespace", "spec.nodeName", "metadata.name", "other"])
VALUES = st.sampled_from([*PHASES, "n1", "a", "default", "team"])


@st.composite
def watchers(draw: st.DrawFn) -> Watcher:
    kind = draw(st.sampled_from(["Pod", "Node"]))
    return watcher(kind, **draw(st.dictionaries(FIELDS, VALUES, max_size=2)))


@st.composite
def objects(draw: st.DrawFn, kind: str) -> Any:
    name = draw(st.sampled_from(["a", "b"]))
    if kind == "Node":
        return convert({"metadata": {"name": name}}, Node)
    return pod(
        name,
        phase=draw(st.sampled_from(PHASES)),
        node=draw(st.sampled_from(["", "n1"])),
        namespace=draw(st.sampled_from(["default", "team"])),
    )


@st.composite
def writes(draw: st.DrawFn) -> tuple[str, Any, Any]:
    kind = draw(st.sampled_from(["Pod", "Node"]))
    shape = draw(st.sampled_from(["create", "update", "delete"]))
    old = None if shape == "create" else draw(objects(kind))
    new = None if shape == "delete" else draw(objects(kind))
    return kind, old, new


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ws=st.lists(watchers(), max_size=8),
    removed=st.lists(st.integers(0, 7), max_size=3),
    batch=st.lists(writes(), min_size=1, max_size=6),
)
def test_pinned_routing_delivers_what_offering_every_watcher_would(
    ws: list[Watcher], removed: list[int], batch: list[tuple[str, Any, Any]]
) -> None:
    hub = WatchHub()
    for w in ws:
        hub.add(w)
    for i in removed:
        if i < len(ws):
            hub.remove(ws[i])
    live = hub.watchers()
    for rev, (kind, old, new) in enumerate(batch, start=1):
        fast = routed_candidates(hub, kind, old, new)
        assert [w.id for w in fast] == [w.id for w in candidates_reference(hub, kind, old, new)]
        # Offered every watcher of the kind, each would get exactly what the candidates get.
        naive: dict[int, WatchEvent | None] = {w.id: transition(w, old, new, rev, 0.0) for w in live if w.kind == kind}
        offered = {w.id for w in fast}
        assert all(ev is None for wid, ev in naive.items() if wid not in offered)
        hub.publish(kind, old, new, rev, 0.0)
        for w in live:
            got = w.channel.get_nowait_batch()
            want = naive.get(w.id)
            assert got == ([] if want is None else [want])


def test_publish_routes_every_phase_and_node_move_as_the_reference() -> None:
    """``publish`` (the routing written out in it) against ``publish_reference`` (through
    ``candidates_reference`` and ``transition``), on every pair of phases and nodes, with two pinned
    groups on one field, a plain watcher, a kubelet's and an unassigned-pods watcher: each
    watcher gets the same events (type, object, revision), a write hitting two groups included.
    A fast twin of ``test_watch_shared_events``' slow property."""
    from tests.references import publish_reference

    def hub_and_watchers() -> tuple[WatchHub, list[Watcher]]:
        hub = WatchHub()
        ws = [
            watcher(**{"status.phase": "Succeeded"}),
            watcher(),
            watcher(**{"status.phase": "Failed"}),
            watcher(**{"spec.nodeName": "n1"}),
            watcher(**{"spec.nodeName": ""}),
            watcher(**{"status.phase": "Running", "spec.nodeName": "n1"}),
        ]
        for w in ws:
            hub.add(w)
        return hub, ws

    fast, fast_ws = hub_and_watchers()
    ref, ref_ws = hub_and_watchers()
    revision = 0
    for was in [None, *PHASES]:
        for now in [None, *PHASES]:
            for old_node, new_node in [("", ""), ("", "n1"), ("n1", "n1"), ("n2", "n2"), ("n1", "n2")]:
                old = None if was is None else pod(phase=was, node=old_node)
                new = None if now is None else pod(phase=now, node=new_node)
                if old is None and new is None:
                    continue
                revision += 1
                fast.publish("Pod", old, new, revision, 1.0)
                publish_reference(ref, "Pod", old, new, revision, 1.0)
    got = [[(e.type, e.object, e.revision) for e in w.channel.get_nowait_batch()] for w in fast_ws]
    want = [[(e.type, e.object, e.revision) for e in w.channel.get_nowait_batch()] for w in ref_ws]
    assert got == want
    assert all(got)  # every watcher saw some write
