"""Property: whatever the operations, every live pod is in exactly one place.

"Places" are activeQ, backoffQ, unschedulablePods and in flight. The driver plays the scheduler
(pop, fail with some rejectors, bind = done + the informer's delete) and the informers (add,
update, delete, cluster events), with time moving and both flushes running. With QueueingHints
off, upstream lets an update of an in-flight pod put it back into activeQ while its attempt is
still running; there the property is "in at most one sub-queue, and somewhere".
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduler.framework.types import ActionType, ClusterEvent, EventResource, QueueingHint
from agents.scheduler.queue import QueuedPodInfo, SchedulingQueue
from emulator.base.api.core import Pod
from tests.scheduler.queue.queue_helpers import (
    ASSIGNED_POD_DELETE,
    GATES_ELIMINATED,
    NODE_ADD,
    NODE_LABEL,
    SCHEDULING_GATES,
    FakeClock,
    Registry,
    always,
    fail,
    make_pod,
    make_queue,
)

EVENTS = [NODE_ADD, NODE_LABEL, ASSIGNED_POD_DELETE, GATES_ELIMINATED]
PLUGINS = [(), ("Fit",), ("Affinity",), ("Labels",), ("Fit", "Affinity"), ("Nobody",)]
POD_LABEL = ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel)


def gates_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.Queue if isinstance(new, Pod) and not new.spec.scheduling_gates else QueueingHint.QueueSkip


def registry() -> Registry:
    return (
        Registry()
        .register(SCHEDULING_GATES, GATES_ELIMINATED, gates_hint)
        .register("Fit", NODE_ADD, always(QueueingHint.Queue))
        .register("Fit", ASSIGNED_POD_DELETE, always(QueueingHint.QueueSkip))
        .register("Affinity", NODE_LABEL)
        .register("Claims", NODE_ADD, always(QueueingHint.Queue))
        .register("Labels", POD_LABEL, always(QueueingHint.Queue))
    )


k = st.integers(0, 5)
OPS = st.one_of(
    st.tuples(st.just("add"), k, st.booleans()),
    st.tuples(st.just("pop")),
    st.tuples(st.just("fail"), st.integers(0, 9), st.sampled_from(PLUGINS), st.booleans()),
    st.tuples(st.just("bind"), st.integers(0, 9)),
    st.tuples(st.just("event"), st.sampled_from(EVENTS)),
    st.tuples(st.just("advance"), st.sampled_from([0.3, 1.0, 7.0, 31.0, 301.0])),
    st.tuples(st.just("flush_backoff")),
    st.tuples(st.just("flush_leftover")),
    st.tuples(st.just("delete"), k),
    st.tuples(st.just("update"), k, st.booleans(), st.booleans()),
    st.tuples(st.just("activate"), k),
    st.tuples(st.just("assigned_pod_added")),
)


class Driver:
    def __init__(self, queueing_hints: bool, pop_from_backoff_q: bool) -> None:
        self.clock = FakeClock()
        self.q: SchedulingQueue = make_queue(
            self.clock, registry(), queueing_hints=queueing_hints, pop_from_backoff_q=pop_from_backoff_q
        )
        self.strict = queueing_hints
        self.live: dict[str, Pod] = {}
        self.attempts: list[QueuedPodInfo] = []
        self.generation = 0

    def apply(self, op: tuple[Any, ...]) -> None:
        q, name = self.q, None
        match op:
            case ("add", i, gated):
                name = f"p{i}"
                if name not in self.live:
                    self.generation += 1
                    self.live[name] = make_pod(name, uid=f"{name}-{self.generation}", gates=["g"] if gated else [])
                    q.add(self.live[name])
            case ("pop",):
                qpi = q.pop_nowait()
                if qpi is not None:
                    self.attempts.append(qpi)
            case ("fail", i, plugins, pending):
                if self.attempts:
                    qpi = self.attempts.pop(i % len(self.attempts))
                    if self._is_live(qpi):
                        fail(q, qpi, *plugins, pending=["Claims"] if pending else [])
                    else:
                        q.done(qpi.uid)  # the pod vanished: not requeued
            case ("bind", i):
                if self.attempts:
                    qpi = self.attempts.pop(i % len(self.attempts))
                    q.done(qpi.uid)
                    if self._is_live(qpi):
                        q.delete(self.live.pop(qpi.pod.metadata.name))  # now assigned: leaves the queue
            case ("event", event):
                q.move_all_to_active_or_backoff(event)
            case ("advance", dt):
                self.clock.advance(dt)
            case ("flush_backoff",):
                q.flush_backoff_q_completed()
            case ("flush_leftover",):
                q.flush_unschedulable_pods_leftover()
            case ("delete", i):
                pod = self.live.pop(f"p{i}", None)
                if pod is not None:
                    q.delete(pod)
            case ("update", i, lift_gates, add_toleration):
                old = self.live.get(f"p{i}")
                if old is not None:
                    rv = str(int(old.metadata.resource_version) + 1)
                    new = make_pod(
                        old.metadata.name,
                        uid=old.metadata.uid,
                        labels={"rv": rv},
                        gates=[] if lift_gates else [g.name for g in old.spec.scheduling_gates],
                        resource_version=rv,
                        tolerations=len(old.spec.tolerations) + add_toleration,
                    )
                    self.live[old.metadata.name] = new
                    q.update(old, new)
            case ("activate", i):
                if f"p{i}" in self.live:
                    q.activate([self.live[f"p{i}"]])
            case ("assigned_pod_added",):
                q.assigned_pod_added(make_pod("bound", node_name="n1"))
            case _:  # pragma: no cover
                raise AssertionError(op)

    def _is_live(self, qpi: QueuedPodInfo) -> bool:
        pod = self.live.get(qpi.pod.metadata.name)
        return pod is not None and pod.metadata.uid == qpi.uid

    def check(self) -> None:
        q = self.q
        stats = q.statistics()
        queued = Counter(p.metadata.name for p in q.pending_pods())
        for name, pod in self.live.items():
            in_flight = q.is_in_flight(pod.metadata.uid)
            if self.strict:
                assert queued[name] + in_flight == 1, (name, queued[name], in_flight)
            else:
                assert queued[name] <= 1, (name, queued[name])
                assert queued[name] + in_flight >= 1, name
        assert set(queued) <= set(self.live)
        assert stats["active"] + stats["backoff"] + stats["unschedulable"] == sum(queued.values())
        assert stats["gated"] <= stats["unschedulable"]
        if self.strict:
            assert stats["inflight"] == len(self.attempts)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(ops=st.lists(OPS, max_size=80), queueing_hints=st.booleans(), pop_from_backoff_q=st.booleans())
def test_every_live_pod_is_in_exactly_one_place(
    ops: list[tuple[Any, ...]], queueing_hints: bool, pop_from_backoff_q: bool
) -> None:
    d = Driver(queueing_hints, pop_from_backoff_q)
    for op in ops:
        d.apply(op)
        d.check()
    # Drain: with time, flushes and successful binds every live pod eventually leaves the queue.
    for _ in range(20):
        d.clock.advance(301)
        d.q.flush_unschedulable_pods_leftover()
        d.clock.advance(11)
        d.q.flush_backoff_q_completed()
        while d.attempts:
            d.apply(("bind", 0))
        while (qpi := d.q.pop_nowait()) is not None:
            d.attempts.append(qpi)
        d.check()
    gated = {n for n, p in d.live.items() if p.spec.scheduling_gates}
    assert {p.metadata.name for p in d.q.pending_pods()} == gated


def _trace(seed: int) -> list[Any]:
    rng = random.Random(seed)
    d = Driver(queueing_hints=True, pop_from_backoff_q=True)
    trace: list[Any] = []
    for _ in range(300):
        op = OPS_BY_KIND[rng.randrange(len(OPS_BY_KIND))](rng)
        d.apply(op)
        trace.append((op[0], [p.metadata.name for p in d.q.pending_pods()], repr(d.q)))
    trace.append(sorted(d.q.incoming_pods().items()))
    return trace


OPS_BY_KIND: list[Any] = [
    lambda r: ("add", r.randrange(6), r.random() < 0.2),
    lambda r: ("pop",),
    lambda r: ("fail", r.randrange(10), r.choice(PLUGINS), r.random() < 0.2),
    lambda r: ("bind", r.randrange(10)),
    lambda r: ("event", r.choice(EVENTS)),
    lambda r: ("advance", r.choice([0.3, 1.0, 7.0, 31.0, 301.0])),
    lambda r: ("flush_backoff",),
    lambda r: ("flush_leftover",),
    lambda r: ("delete", r.randrange(6)),
    lambda r: ("update", r.randrange(6), r.random() < 0.5, r.random() < 0.3),
    lambda r: ("activate", r.randrange(6)),
]


def test_same_operations_give_the_same_trace() -> None:
    first = _trace(7)
    assert first == _trace(7)
    assert first != _trace(8)
