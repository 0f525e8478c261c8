"""Watches: replay from a revision, Gone, selectors and their transitions, the nodeName
index, bookmarks, per-object order, and bounded buffers that end slow watchers."""

from __future__ import annotations

import random
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.codec import convert
from emulator.base.api.core import Binding, Namespace, Node, Pod
from emulator.base.api.errors import Gone
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer, ServerSettings, Watcher, WatchEvent, object_fields
from emulator.base.apiserver.watch import WatchHub
from emulator.base.apiserver.watcher import transition
from emulator.base.runtime.channel import ChannelClosed, Overflow
from tests.builders import pod
from tests.clocks import ManualClock
from tests.references import routed_candidates


def server(**settings: Any) -> tuple[ApiServer, ManualClock]:
    clock = ManualClock()
    srv = ApiServer(clock, random.Random(0), ServerSettings(**settings))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    return srv, clock


def bind(srv: ApiServer, name: str, node: str) -> Pod:
    return srv.bind(
        Binding(metadata=ObjectMeta(name=name, namespace="default"), target=ObjectReference(kind="Node", name=node))
    )


def relabel(srv: ApiServer, name: str, labels: dict[str, str], namespace: str = "default") -> Pod:
    cur = srv.get("Pod", name, namespace)
    return srv.update(replace(cur, metadata=replace(cur.metadata, labels=labels)))


def drain(w: Watcher) -> list[tuple[str, str, int]]:
    """Everything queued, as (type, name, revision)."""
    return [
        (e.type, e.object.metadata.name if e.object is not None else "", e.revision)
        for e in w.channel.get_nowait_batch()
    ]


# --- replay and Gone -------------------------------------------------------------------------------


def test_watch_from_revision_replays_exactly_the_later_events() -> None:
    srv, _ = server()
    srv.create(pod("a"))  # 2
    mark = srv.revision
    srv.create(pod("b"))  # 3
    srv.create(convert({"metadata": {"name": "n"}}, Node))  # 4: another kind
    relabel(srv, "a", {"x": "1"})  # 5
    srv.delete("Pod", "b")  # 6
    w = srv.watch("Pod", resource_version=mark)
    assert drain(w) == [("ADDED", "b", 3), ("MODIFIED", "a", 5), ("DELETED", "b", 6)]
    srv.create(pod("c"))  # live events follow the replay
    assert drain(w) == [("ADDED", "c", 7)]


@pytest.mark.parametrize("rv", [pytest.param(None, id="no-revision"), pytest.param("current", id="current-revision")])
def test_watch_without_older_revision_sends_only_new_events(rv: str | None) -> None:
    srv, _ = server()
    srv.create(pod("a"))
    w = srv.watch("Pod", resource_version=srv.revision if rv else None)
    assert drain(w) == []
    srv.create(pod("b"))
    assert drain(w) == [("ADDED", "b", 3)]


def test_replay_applies_the_selector_transitions() -> None:
    srv, _ = server()
    srv.create(pod("a"))  # 2
    bind(srv, "a", "node-1")  # 3
    w = srv.watch("Pod", fields={"spec.nodeName": ""}, resource_version=1)
    assert drain(w) == [("ADDED", "a", 2), ("DELETED", "a", 3)]
    w1 = srv.watch("Pod", fields={"spec.nodeName": "node-1"}, resource_version=1)
    assert drain(w1) == [("ADDED", "a", 3)]


def test_gone_for_a_revision_older_than_the_history_window() -> None:
    srv, _ = server(history_size=3)  # rev 1
    for name in "abcd":
        srv.create(pod(name))  # revs 2..5; history keeps 3, 4, 5
    assert srv.revision == 5
    w = srv.watch("Pod", resource_version=2)  # oldest replayable start: events 3, 4, 5 are all kept
    assert drain(w) == [("ADDED", "b", 3), ("ADDED", "c", 4), ("ADDED", "d", 5)]
    before = [x.id for x in srv.watchers()]
    with pytest.raises(Gone, match=r"^too old resource version: 1 \(2\)$") as err:
        srv.watch("Pod", resource_version=1)
    assert (err.value.code, err.value.reason) == (410, "Expired")
    assert [x.id for x in srv.watchers()] == before  # the failed watch was not registered


def test_history_window_counts_every_kind() -> None:
    srv, _ = server(history_size=2)
    srv.create(pod("a"))  # 2
    srv.create(convert({"metadata": {"name": "n1"}}, Node))  # 3
    srv.create(convert({"metadata": {"name": "n2"}}, Node))  # 4
    with pytest.raises(Gone):
        srv.watch("Pod", resource_version=1)
    assert drain(srv.watch("Pod", resource_version=2)) == []


# --- selectors ---------------------------------------------------------------------------------------


def test_label_selector_transitions() -> None:
    srv, _ = server()
    w = srv.watch("Pod", label_match=lambda labels: labels.get("app") == "web")
    srv.create(pod("a"))  # 2: not matching
    relabel(srv, "a", {"app": "web"})  # 3: starts matching → ADDED
    relabel(srv, "a", {"app": "web", "tier": "1"})  # 4: still matching → MODIFIED
    relabel(srv, "a", {"app": "db"})  # 5: stops matching → DELETED
    relabel(srv, "a", {"app": "db", "x": "y"})  # 6: never matched → nothing
    srv.create(pod("b", labels={"app": "web"}))  # 7
    srv.delete("Pod", "b")  # 8
    assert drain(w) == [
        ("ADDED", "a", 3),
        ("MODIFIED", "a", 4),
        ("DELETED", "a", 5),
        ("ADDED", "b", 7),
        ("DELETED", "b", 8),
    ]


@pytest.mark.parametrize(
    ("kwargs", "seen"),
    [
        pytest.param({"fields": {"metadata.name": "a"}}, ["a"], id="metadata.name"),
        pytest.param({"fields": {"metadata.namespace": "other"}}, ["c"], id="metadata.namespace"),
        pytest.param({"namespace": "other"}, ["c"], id="namespace-argument"),
        pytest.param({"fields": {"spec.nodeName": ""}}, ["a", "c"], id="nodeName-empty"),
        pytest.param({"fields": {"spec.nodeName": "node-1"}}, ["b"], id="nodeName-node-1"),
        pytest.param({"fields": {"spec.nodeName": "node-1", "metadata.name": "a"}}, [], id="two-fields"),
        pytest.param({"fields": {"status.phase": "Pending"}}, ["a", "b", "c"], id="status.phase"),
        pytest.param({"fields": {"spec.schedulerName": "default-scheduler"}}, ["a", "b", "c"], id="schedulerName"),
        pytest.param({"fields": {"spec.schedulerName": "other"}}, [], id="schedulerName-other"),
    ],
)
def test_field_selectors(kwargs: dict[str, Any], seen: list[str]) -> None:
    srv, _ = server()
    srv.create(Namespace(metadata=ObjectMeta(name="other")))
    w = srv.watch("Pod", **kwargs)
    srv.create(pod("a"))
    srv.create(pod("b", node="node-1"))
    srv.create(pod("c", namespace="other"))
    assert [name for _, name, _ in drain(w)] == seen
    assert [p.metadata.name for p in srv.list("Pod", **kwargs)[0]] == sorted(seen, key=lambda n: (n == "c", n))


def test_bind_moves_the_pod_between_node_name_watchers() -> None:
    srv, _ = server()
    unassigned = srv.watch("Pod", fields={"spec.nodeName": ""})
    node1 = srv.watch("Pod", fields={"spec.nodeName": "node-1"})
    node2 = srv.watch("Pod", fields={"spec.nodeName": "node-2"})
    srv.create(pod("a"))  # 2
    bound = bind(srv, "a", "node-1")  # 3
    relabel(srv, "a", {"x": "1"})  # 4
    srv.delete("Pod", "a", grace_period_seconds=0)  # 5
    assert drain(unassigned) == [("ADDED", "a", 2), ("DELETED", "a", 3)]
    assert drain(node1) == [("ADDED", "a", 3), ("MODIFIED", "a", 4), ("DELETED", "a", 5)]
    assert len(node2.channel) == 0
    assert bound.spec.node_name == "node-1"


# Regression (fixed bug): watch.transition sends DELETED for an object leaving the selector with the *new*
# object; upstream cacheWatcher sends the previous object content, stamped with the event's resourceVersion
def test_deleted_for_leaving_the_selector_carries_the_previous_state() -> None:
    srv, _ = server()
    unassigned = srv.watch("Pod", fields={"spec.nodeName": ""})
    srv.create(pod("a"))
    bind(srv, "a", "node-1")
    ev = unassigned.channel.get_nowait_batch()[-1]
    assert ev.type == "DELETED"
    assert ev.object.spec.node_name == ""
    assert ev.object.metadata.resource_version == str(ev.revision)


# Regression (fixed bug): watch.transition/ApiServer.delete send DELETED with the object's last stored
# resourceVersion; upstream stamps the deleted object with the deletion's revision
def test_deleted_object_carries_the_deletion_revision() -> None:
    srv, _ = server()
    w = srv.watch("Pod")
    srv.create(pod("a"))
    srv.delete("Pod", "a")
    ev = w.channel.get_nowait_batch()[-1]
    assert ev.object.metadata.resource_version == str(ev.revision)


# --- the nodeName index ----------------------------------------------------------------------------


def test_node_watchers_are_indexed_by_node_name() -> None:
    srv, _ = server()
    plain = srv.watch("Pod")
    kubelets = {f"node-{i}": srv.watch("Pod", fields={"spec.nodeName": f"node-{i}"}) for i in range(50)}
    unassigned = srv.watch("Pod", fields={"spec.nodeName": ""})
    hub: WatchHub = srv._hub
    assert sorted(v for (_, f, v) in hub._indexed if f == "spec.nodeName") == sorted([*kubelets, ""])
    assert list(hub._plain["Pod"].values()) == [plain]
    pod_on_1 = pod("a", node="node-1")
    candidates = routed_candidates(hub, "Pod", pod_on_1, pod_on_1)
    assert candidates == [plain, kubelets["node-1"]]
    moved = routed_candidates(hub, "Pod", pod("a"), pod_on_1)  # a bind: old and new node
    assert moved == [plain, unassigned, kubelets["node-1"]]
    assert routed_candidates(hub, "Node", None, convert({"metadata": {"name": "x"}}, Node)) == []


def test_node_watchers_by_name_see_only_their_node() -> None:
    # Every kubelet watches its own Node by metadata.name: a heartbeat of one node must not be
    # offered to the other kubelets' watchers.
    srv, _ = server()
    own = {f"n{i}": srv.watch("Node", fields={"metadata.name": f"n{i}"}) for i in range(100)}
    everything = srv.watch("Node")
    hub: WatchHub = srv._hub
    n5 = convert({"metadata": {"name": "n5"}}, Node)
    assert routed_candidates(hub, "Node", None, n5) == [everything, own["n5"]]
    srv.create(n5)
    assert len(own["n5"].channel) == 1
    assert all(len(w.channel) == 0 for name, w in own.items() if name != "n5")


def test_a_write_on_one_node_evaluates_only_interested_watchers() -> None:
    srv, _ = server()
    kubelets = [srv.watch("Pod", fields={"spec.nodeName": f"node-{i}"}) for i in range(200)]
    srv.create(pod("a", node="node-1"))
    calls: list[int] = []
    hub: WatchHub = srv._hub
    for w in kubelets:  # ``publish`` reads a one-field watcher's field through ``field_only``
        assert w.field_only is not None
        get, want = w.field_only

        def counting(obj: Any, get: Any = get, wid: int = w.id) -> Any:
            calls.append(wid)
            return get(obj)

        w.field_only = (counting, want)
    current = srv.get("Pod", "a")
    offered = routed_candidates(
        hub, "Pod", current, replace(current, metadata=replace(current.metadata, labels={"x": "1"}))
    )
    assert [w.id for w in offered] == [kubelets[1].id]
    relabel(srv, "a", {"x": "1"})
    assert set(calls) == {kubelets[1].id}
    assert [len(w.channel) for w in kubelets[:3]] == [0, 2, 0]


def test_stop_watch_removes_an_indexed_watcher() -> None:
    srv, _ = server()
    w = srv.watch("Pod", fields={"spec.nodeName": "node-1"})
    srv.stop_watch(w)
    assert srv.watchers() == []
    srv.create(pod("a", node="node-1"))
    assert len(w.channel) == 0
    with pytest.raises(ChannelClosed) as err:
        w.channel.get_nowait_batch()
    assert not isinstance(err.value, Overflow)


# --- bookmarks, order, overflow -------------------------------------------------------------------


def test_bookmarks_only_to_watchers_that_asked() -> None:
    srv, clock = server()
    wants = srv.watch("Pod", allow_bookmarks=True)
    plain = srv.watch("Pod")
    srv.create(pod("a"))
    clock.t = 9.0
    srv.bookmark()
    events = wants.channel.get_nowait_batch()
    assert [(e.type, e.revision) for e in events] == [("ADDED", 2), ("BOOKMARK", 2)]
    assert events[1] == WatchEvent("BOOKMARK", None, 2, 9.0)
    assert [e.type for e in plain.channel.get_nowait_batch()] == ["ADDED"]
    assert srv.revision == 2  # a bookmark is not a write


def test_events_carry_the_write_time() -> None:
    srv, clock = server()
    w = srv.watch("Pod")
    clock.t = 3.25
    srv.create(pod("a"))
    clock.t = 4.5
    relabel(srv, "a", {"x": "y"})
    assert [(e.type, e.time) for e in w.channel.get_nowait_batch()] == [("ADDED", 3.25), ("MODIFIED", 4.5)]


def test_per_object_order_is_preserved() -> None:
    srv, _ = server()
    w = srv.watch("Pod")
    rng = random.Random(3)
    names = ["a", "b", "c"]
    for n in names:
        srv.create(pod(n))
    expected: dict[str, list[int]] = {n: [] for n in names}
    for i in range(60):
        n = rng.choice(names)
        relabel(srv, n, {"i": str(i)})
        expected[n].append(srv.revision)
    events = w.channel.get_nowait_batch()
    revisions = [e.revision for e in events]
    assert revisions == sorted(revisions)
    for n in names:
        mods = [e for e in events if e.type == "MODIFIED" and e.object.metadata.name == n]
        assert [e.revision for e in mods] == expected[n]
        assert [e.object.metadata.labels["i"] for e in mods] == sorted(
            (e.object.metadata.labels["i"] for e in mods), key=int
        )


def test_small_buffer_overflow_ends_the_watcher_and_never_blocks_writers() -> None:
    srv, _ = server()
    slow = srv.watch("Pod", name="slow", buffer=2)
    fast = srv.watch("Pod", name="fast")
    for name in "abcde":
        srv.create(pod(name))  # synchronous: a writer cannot block
    assert srv.revision == 6
    assert slow not in srv.watchers()
    assert srv.watchers() == [fast]
    assert slow.channel.closed
    assert [e.revision for e in slow.channel.get_nowait_batch()] == [2, 3]  # what was queued is delivered
    with pytest.raises(Overflow, match=r"more than 2 items queued"):
        slow.channel.get_nowait_batch()
    assert [e.revision for e in fast.channel.get_nowait_batch()] == [2, 3, 4, 5, 6]


@pytest.mark.asyncio
async def test_overflow_reaches_a_waiting_consumer() -> None:
    srv, _ = server()
    w = srv.watch("Pod", buffer=1)
    srv.create(pod("a"))
    srv.create(pod("b"))
    assert [e.revision for e in await w.channel.get_batch()] == [2]
    with pytest.raises(Overflow):
        await w.channel.get_batch()


# Regression (fixed bug): ApiServer.watch adds the watcher to the hub even when the replay already overflowed
# its buffer, so a dead watcher stays registered until some later write happens to match it
def test_overflow_during_replay_does_not_register_the_watcher() -> None:
    srv, _ = server()
    for name in "abc":
        srv.create(pod(name))
    w = srv.watch("Pod", resource_version=1, buffer=2)
    assert w.channel.closed
    assert w not in srv.watchers()


# --- the pure parts --------------------------------------------------------------------------------


def _w(**kwargs: Any) -> Watcher:
    args: dict[str, Any] = {
        "namespace": None,
        "fields": {},
        "label_match": None,
        "maxsize": 10,
        "allow_bookmarks": False,
    }
    args.update(kwargs)
    return Watcher("Pod", name="t", **args)


A, B = pod("a", labels={"app": "web"}), pod("a", labels={"app": "db"})
A7 = replace(A, metadata=replace(A.metadata, resource_version="7"))  # A stamped with the event's revision
WEB = {"label_match": lambda labels: labels.get("app") == "web"}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(None, A, ("ADDED", A), id="create-matching"),
        pytest.param(None, B, None, id="create-not-matching"),
        pytest.param(A, A, ("MODIFIED", A), id="still-matching"),
        pytest.param(B, A, ("ADDED", A), id="starts-matching"),
        pytest.param(A, B, ("DELETED", A7), id="stops-matching-previous-content"),
        pytest.param(A, None, ("DELETED", A), id="removed-as-handed-over"),
        pytest.param(B, None, None, id="removed-not-matching"),
    ],
)
def test_transition(old: Pod | None, new: Pod | None, expected: tuple[str, Pod] | None) -> None:
    ev = transition(_w(**WEB), old, new, 7, 1.5)
    if expected is None:
        assert ev is None
    else:
        assert ev == WatchEvent(expected[0], expected[1], 7, 1.5)  # type: ignore[arg-type]


def test_object_fields() -> None:
    p = pod("a", namespace="ns", node="n1")
    assert object_fields(p) == {
        "metadata.name": "a",
        "metadata.namespace": "ns",
        "spec.nodeName": "n1",
        "spec.restartPolicy": "",
        "spec.schedulerName": "",
        "spec.serviceAccountName": "",
        "spec.hostNetwork": "false",
        "status.phase": "",
        "status.podIP": "",
        "status.nominatedNodeName": "",
    }
    assert object_fields(convert({"metadata": {"name": "x"}}, Node)) == {
        "metadata.name": "x",
        "metadata.namespace": "",
        "spec.unschedulable": "false",
    }


def test_watcher_repr_and_ids() -> None:
    a, b = _w(fields={"spec.nodeName": "n1"}), _w()
    assert b.id > a.id
    assert repr(a).startswith("<Watcher 't' Pod fields='spec.nodeName=n1' <Channel queued=0 maxsize=10")


# --- the history's time window (upstream's eventFreshDuration) ------------------------------------


def test_history_keeps_the_fresh_duration_and_trims_once_past_the_slack() -> None:
    from emulator.base.apiserver.records import EVENT_FRESH_DURATION, HISTORY_LOWER_BOUND, HISTORY_TRIM_SLACK

    srv, clock = server()
    revisions_at: list[tuple[float, int]] = []
    for i in range(4 * HISTORY_LOWER_BOUND):  # 400 writes over 200 simulated seconds
        clock.t = i * 0.5
        srv.create(pod(f"p{i}"))
        revisions_at.append((clock.t, srv.revision))
    now = clock.t
    # Every write of the last fresh duration can be replayed ...
    start = next(rev for t, rev in revisions_at if t >= now - EVENT_FRESH_DURATION) - 1
    assert len(drain(srv.watch("Pod", resource_version=start))) == srv.revision - start
    # ... and nothing older than the fresh duration plus the slack is kept.
    too_old = next(rev for t, rev in revisions_at if t >= now - EVENT_FRESH_DURATION - HISTORY_TRIM_SLACK) - 2
    with pytest.raises(Gone):
        srv.watch("Pod", resource_version=too_old)


def test_history_never_trims_below_the_lower_bound() -> None:
    from emulator.base.apiserver.records import HISTORY_LOWER_BOUND

    srv, clock = server()
    for i in range(HISTORY_LOWER_BOUND):
        clock.t = i * 10.0  # 100 writes over 1,000 s: all older than the fresh duration but the last ones
        srv.create(pod(f"p{i}"))
    assert len(drain(srv.watch("Pod", resource_version=1))) == HISTORY_LOWER_BOUND


def test_a_kubelets_watcher_matches_in_transition_as_matches_says() -> None:
    """``Watcher.node_only`` (a pod watcher selecting exactly ``spec.nodeName``): ``transition``
    reads the node itself; the events are those ``matches`` gives, on every pair of nodes."""
    kubelet = Watcher(
        "Pod",
        name="k",
        namespace=None,
        fields={"spec.nodeName": "n1"},
        label_match=None,
        maxsize=9,
        allow_bookmarks=False,
    )
    spaced = Watcher(
        "Pod",
        name="s",
        namespace="default",
        fields={"spec.nodeName": "n1"},
        label_match=None,
        maxsize=9,
        allow_bookmarks=False,
    )
    assert kubelet.node_only == "n1"
    assert spaced.node_only is None
    versions = [None, pod("a", node=""), pod("a", node="n1"), pod("a", node="n2")]
    for old in versions:
        for new in versions:
            if old is None and new is None:
                continue
            was = old is not None and kubelet.matches(old)
            now = new is not None and kubelet.matches(new)
            got = transition(kubelet, old, new, 7, 1.0)
            want = transition(spaced, old, new, 7, 1.0)  # the same selection through ``matches``
            assert (got is None) == (not (was or now)) == (want is None)
            if got is not None and want is not None:
                assert (got.type, got.object, got.revision) == (want.type, want.object, want.revision)
