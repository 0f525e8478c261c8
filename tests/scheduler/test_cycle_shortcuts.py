"""The scheduling cycle's per-pod shortcuts (session 42) against their plain forms.

* ``CycleState.read``/``write`` are the state dict's own ``__getitem__``/``__setitem__``: they
  behave as the methods did (``KeyError`` for a missing key, the last write wins), and a
  clone's are its own dict's (writes on either side stay on that side).
* ``HintEvaluator.is_event_of_interest`` answers the first instance of each event value by
  identity: over random sequences of shared and freshly built (and dropped, so their ids are
  reused) events it answers as ``ClusterEvent.match`` over the registration list.
* ``next_generation`` is the counter's ``__next__``: strictly increasing, shared by every
  NodeInfo change.
* The cache's inlined ``_key``: an empty UID still raises ``CacheError`` everywhere.
* ``Resource.from_amounts`` (``add`` inline) and ``_non_zero`` (its containers' loop inline)
  against their plain forms; a NodeInfo clone shares ``allocatable`` (replaced by
  ``set_node``, never changed in place) and has host ports of its own.
* ``BackoffQueue.delete`` asks each heap's index first: the same pod comes out as from the
  heaps' own ``delete``, and absent keys give None.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.scheduler.cache import Cache, CacheError
from agents.scheduler.framework.cycle_state import CycleState
from agents.scheduler.framework.pod_info import _non_zero
from agents.scheduler.framework.types import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    ActionType,
    ClusterEvent,
    EventResource,
    NodeInfo,
    Resource,
    next_generation,
)
from agents.scheduler.queue.backoff_queue import BackoffQueue
from agents.scheduler.queue.hints import HintEvaluator
from agents.scheduler.queue.queued_pod_info import QueuedPodInfo
from emulator.base.api.core import Pod
from tests import builders
from tests.scheduler.queue.queue_helpers import FakeClock

# --- CycleState -------------------------------------------------------------------------


def test_cycle_state_read_write_as_the_dict() -> None:
    state = CycleState()
    with pytest.raises(KeyError):
        state.read("missing")
    state.write("k", 1)
    state.write("k", 2)
    assert state.read("k") == 2
    assert list(state) == ["k"]
    state.delete("k")
    with pytest.raises(KeyError):
        state.read("k")


def test_cycle_state_clone_has_its_own_read_write() -> None:
    class _Cloned:
        def __init__(self, n: int) -> None:
            self.n = n

        def clone(self) -> _Cloned:
            return _Cloned(self.n)

    state = CycleState()
    state.write("a", 1)
    state.write("c", _Cloned(1))
    clone = state.clone()
    clone.write("a", 2)
    clone.write("b", 3)
    state.read("c").n = 5
    assert state.read("a") == 1
    assert clone.read("a") == 2
    assert clone.read("c").n == 1  # cloned, not shared
    with pytest.raises(KeyError):
        state.read("b")
    assert sorted(clone) == ["a", "b", "c"]


# --- is_event_of_interest ---------------------------------------------------------------

_RESOURCES = [EventResource.Pod, EventResource.AssignedPod, EventResource.Node, EventResource.WildCard]
_ACTIONS = [ActionType.Add, ActionType.Delete, ActionType.Update, ActionType.UpdatePodLabel, ActionType.All]
_events = st.builds(ClusterEvent, st.sampled_from(_RESOURCES), st.sampled_from(_ACTIONS), st.sampled_from(["", "x"]))


@settings(max_examples=150, deadline=None)
@given(
    registered=st.none() | st.lists(_events, max_size=4).map(tuple),
    shared=st.lists(_events, min_size=1, max_size=5),
    steps=st.lists(st.tuples(st.booleans(), st.integers(0, 4)), max_size=40),
)
def test_event_of_interest_by_identity_as_match_says(
    registered: tuple[ClusterEvent, ...] | None, shared: list[ClusterEvent], steps: list[tuple[bool, int]]
) -> None:
    decide = HintEvaluator(lambda pod: None, queueing_hints=True, registered_events=registered, namespace_labels=None)

    def want(event: ClusterEvent) -> bool:
        return event.is_wildcard() or registered is None or any(r.match(event) for r in registered)

    for fresh, i in steps:
        base = shared[i % len(shared)]
        if fresh:  # an equal event built afresh, then dropped (its id may be reused next)
            event = ClusterEvent(base.resource, base.action, base.label)
            assert decide.is_event_of_interest(event) is want(event)
            del event
            gc.collect(0)
        else:
            assert decide.is_event_of_interest(base) is want(base)


def test_event_of_interest_not_fooled_by_a_reused_id() -> None:
    """Events built anew of the same and of other values get the general answer each time (the
    first instance of each value is kept as the interest key, so its id cannot be reused: the
    identity check's value test is a defence this test cannot break)."""
    registered = (ClusterEvent(EventResource.Node, ActionType.Add),)
    decide = HintEvaluator(lambda pod: None, queueing_hints=True, registered_events=registered, namespace_labels=None)
    for _ in range(50):
        assert decide.is_event_of_interest(ClusterEvent(EventResource.Node, ActionType.Add)) is True
        assert decide.is_event_of_interest(ClusterEvent(EventResource.Node, ActionType.Delete)) is False
        assert decide.is_event_of_interest(ClusterEvent(EventResource.AssignedPod, ActionType.Add)) is False


# --- generations, cache keys, backoff -------------------------------------------------------


def test_next_generation_strictly_increases() -> None:
    seen = [next_generation() for _ in range(5)]
    assert seen == sorted(set(seen))
    info = NodeInfo()
    assert info.generation < next_generation()


def test_cache_empty_uid_still_raises() -> None:
    cache = Cache()
    pod = builders.pod("p", uid="u1", node="n1")
    nameless = replace(pod, metadata=replace(pod.metadata, uid=""))
    for call in (
        lambda: cache.add_pod(nameless),
        lambda: cache.assume_pod(nameless),
        lambda: cache.update_pod(nameless, nameless),
        lambda: cache.remove_pod(nameless),
        lambda: cache.is_assumed_pod(nameless),
        lambda: cache.forget_pod(nameless),
        lambda: cache.finish_binding(nameless),
    ):
        with pytest.raises(CacheError, match="empty UID"):
            call()
    unbound = builders.pod("q", uid="u2")
    with pytest.raises(CacheError, match=r"no spec\.nodeName"):
        cache.add_pod(unbound)
    with pytest.raises(CacheError, match=r"no spec\.nodeName"):
        cache.assume_pod(unbound)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "delete"]), st.integers(0, 5), st.booleans()), max_size=30))
def test_backoff_delete_as_the_heaps_say(ops: list[tuple[str, int, bool]]) -> None:
    clock = FakeClock()
    queue = BackoffQueue(
        clock, initial=1.0, maximum=10.0, active_less=lambda a, b: a.timestamp < b.timestamp, pop_from_backoff_q=True
    )
    where: dict[str, bool] = {}  # key -> in the errors heap
    infos: dict[str, QueuedPodInfo] = {}
    for op, i, error in ops:
        pod = builders.pod(f"p{i}")
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if op == "add":
            if key in where:
                continue
            qpi = QueuedPodInfo.new(pod, clock.now())
            qpi.attempts = 1
            if error:
                qpi.consecutive_errors_count = 1
            else:
                qpi.unschedulable_count = 1
                qpi.unschedulable_plugins.add("NodeResourcesFit")
            queue.add(qpi)
            where[key], infos[key] = error, qpi
        else:
            got = queue.delete(key)
            if key in where:
                assert got is infos.pop(key)
                del where[key]
            else:
                assert got is None
            assert key not in queue
    assert len(queue) == len(where)


# --- PodInfo and NodeInfo clones ------------------------------------------------------------

_NAMES = ["cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu", "example.com/foo"]


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(_NAMES), st.integers(0, 10**12)))
def test_resource_from_amounts_as_add_says(amounts: dict[str, int]) -> None:
    want = Resource()
    for name, v in amounts.items():
        want.add(name, v)
    assert Resource.from_amounts(amounts) == want


def _non_zero_reference(pod: Pod) -> tuple[int, int]:
    """``_non_zero`` as written before its containers' loop was inlined."""

    def container(c: Any) -> tuple[int, int]:
        req = c.resources.requests
        cpu = req["cpu"].milli if "cpu" in req else DEFAULT_MILLI_CPU_REQUEST
        mem = req["memory"].value if "memory" in req else DEFAULT_MEMORY_REQUEST
        return cpu, mem

    cpu = mem = 0
    for c in pod.spec.containers:
        a, b = container(c)
        cpu += a
        mem += b
    init_cpu = init_mem = side_cpu = side_mem = 0
    for c in pod.spec.init_containers:
        a, b = container(c)
        if c.restart_policy == "Always":
            cpu, mem, side_cpu, side_mem = cpu + a, mem + b, side_cpu + a, side_mem + b
            eff = (side_cpu, side_mem)
        else:
            eff = (side_cpu + a, side_mem + b)
        init_cpu, init_mem = max(init_cpu, eff[0]), max(init_mem, eff[1])
    cpu, mem = max(cpu, init_cpu), max(mem, init_mem)
    overhead = pod.spec.overhead
    if overhead:
        cpu += overhead["cpu"].milli if "cpu" in overhead else 0
        mem += overhead["memory"].value if "memory" in overhead else 0
    return cpu, mem


_requests = st.fixed_dictionaries(
    {}, optional={"cpu": st.sampled_from(["0", "50m", "1"]), "memory": st.sampled_from(["0", "64Mi", "1Gi"])}
)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(_requests, min_size=1, max_size=3),
    st.lists(st.tuples(_requests, st.booleans()), max_size=2),
    st.none() | _requests,
)
def test_non_zero_as_the_per_container_form(
    containers: list[dict[str, str]], inits: list[tuple[dict[str, str], bool]], overhead: dict[str, str] | None
) -> None:
    main = [builders.container(f"c{i}", requests=r) for i, r in enumerate(containers)]
    init = [
        builders.container(f"i{i}", requests=r, restart_policy="Always" if side else None)
        for i, (r, side) in enumerate(inits)
    ]
    pod = builders.pod("p", uid="u", containers=main, init_containers=init, overhead=overhead)
    assert _non_zero(pod) == _non_zero_reference(pod)


def test_node_info_clone_shares_allocatable_until_the_node_changes() -> None:
    info = NodeInfo(builders.node("n1", cpu="4", memory="8Gi"))
    info.used_ports.add("", "TCP", 80)
    clone = info.clone()
    assert clone.allocatable is info.allocatable
    assert clone.used_ports is not info.used_ports
    clone.used_ports.add("", "TCP", 81)
    assert len(info.used_ports) == 1
    assert len(clone.used_ports) == 2
    before = clone.allocatable.milli_cpu
    info.set_node(builders.node("n1", cpu="8", memory="8Gi"))
    assert info.allocatable.milli_cpu == 8000
    assert clone.allocatable.milli_cpu == before == 4000
    empty = NodeInfo().used_ports.clone()
    empty.add("", "UDP", 53)  # a clone of no ports has a map of its own
    assert not NodeInfo().used_ports


# --- the Handle's snapshot and the plugins' RowScore memo ------------------------------------


def test_snapshot_shared_lister_answers_the_set_snapshot() -> None:
    from tests.scheduler.framework.test_runtime import build

    fwk = build({})
    with pytest.raises(RuntimeError, match="no snapshot set"):
        fwk.snapshot_shared_lister()
    first, second = object(), object()
    fwk.set_snapshot(first)  # type: ignore[arg-type]
    assert fwk.snapshot_shared_lister() is first
    assert fwk.snapshot_shared_lister() is first  # every call, not once
    fwk.set_snapshot(second)  # type: ignore[arg-type]
    assert fwk.snapshot_shared_lister() is second
    fwk.set_snapshot(None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="no snapshot set"):
        fwk.snapshot_shared_lister()
    given_one = build({}, snapshot=first)
    assert given_one.snapshot_shared_lister() is first


def test_row_score_memo_peek_sees_what_get_keeps() -> None:
    from agents.scheduler.framework.interface import RowScore
    from agents.scheduler.plugins.helper import RowScoreMemo

    memo = RowScoreMemo(limit=2)

    def make(key: int) -> RowScore:
        return RowScore(key, lambda info: 0, lambda t, at: at)

    assert memo.peek(1) is None
    one = memo.get(1, lambda: make(1))
    assert memo.peek(1) is one
    memo.get(2, lambda: make(2))
    three = memo.get(3, lambda: make(3))  # the limit: emptied, then kept
    assert memo.peek(1) is None
    assert memo.peek(3) is three


# --- the node table's flags ---------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.booleans(), st.booleans(), st.booleans(), st.booleans()), max_size=8))
def test_update_row_flags_as_flag_says(updates: list[tuple[int, bool, bool, bool, bool]]) -> None:
    """``update_row``'s inlined flags: after each update, those a table gets from ``_flag`` over
    every NodeInfo it held (flags only ever turn on)."""
    from agents.scheduler.framework.node_table import NodeTable
    from agents.scheduler.framework.types import ImageStateSummary

    def info(name: str, taint: bool, image: bool, port: bool, scalar: bool) -> NodeInfo:
        taints = [builders.taint("k", "v")] if taint else []
        ni = NodeInfo(builders.node(name, taints=taints, extra={"example.com/gpu": "1"} if scalar else None))
        if image:
            ni.image_states = {"img": ImageStateSummary(10, 1)}
        if port:
            ni.used_ports.add("", "TCP", 8080)
        return ni

    infos = [info(f"n{i}", False, False, False, False) for i in range(3)]
    table, reference = NodeTable(infos), NodeTable(infos)
    for i, *flags in updates:
        ni = info(f"n{i}", *flags)
        table.update_row(i, ni)
        reference._flag(ni)
        got = (table.any_taints, table.any_images, table.any_ports, table.any_scalars)
        assert got == (reference.any_taints, reference.any_images, reference.any_ports, reference.any_scalars)
