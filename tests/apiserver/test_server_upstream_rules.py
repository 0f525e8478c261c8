"""Upstream apiserver rules added after review: bind preconditions, watch resourceVersion
semantics, graceful deletion bookkeeping."""

from __future__ import annotations

import random
from typing import Any

import pytest

from emulator.base.api.codec import convert
from emulator.base.api.core import Binding, Namespace, Node, Pod
from emulator.base.api.errors import Conflict, Invalid, Timeout
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer
from emulator.base.runtime.clock import format_timestamp


class FakeClock:
    virtual = True

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def timestamp(self, t: float | None = None) -> str:
        return format_timestamp(self.t if t is None else t)


def server() -> tuple[ApiServer, FakeClock]:
    clock = FakeClock()
    srv = ApiServer(clock, random.Random(0))  # type: ignore[arg-type]
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    return srv, clock


def pod(name: str, **spec: Any) -> Pod:
    return convert({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}, Pod)


def binding(name: str, node: str, kind: str = "Node") -> Binding:
    return Binding(metadata=ObjectMeta(name=name, namespace="default"), target=ObjectReference(kind=kind, name=node))


def test_bind_of_a_gated_pod_is_a_conflict_and_changes_nothing() -> None:
    srv, _ = server()
    srv.create(pod("g", schedulingGates=[{"name": "wait"}]))
    rev = srv.revision
    with pytest.raises(Conflict, match=r'pods/binding "g": pod g has non-empty \.spec\.schedulingGates'):
        srv.bind(binding("g", "n1"))
    assert srv.revision == rev
    assert srv.get("Pod", "g").spec.node_name == ""


def test_bind_to_something_else_than_a_node_is_invalid() -> None:
    srv, _ = server()
    srv.create(pod("p"))
    with pytest.raises(Invalid, match=r'target\.kind: Unsupported value: "Pod"'):
        srv.bind(binding("p", "n1", kind="Pod"))


def test_watch_from_zero_starts_with_the_current_objects() -> None:
    srv, _ = server()
    srv.create(pod("a"))
    srv.create(pod("b"))
    w = srv.watch("Pod", resource_version=0)
    srv.create(pod("c"))
    events = w.channel.get_nowait_batch()
    assert [(e.type, e.object.metadata.name) for e in events] == [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "c")]


def test_watch_from_a_future_revision_times_out() -> None:
    srv, _ = server()
    with pytest.raises(Timeout, match=r"Too large resource version: 99, current: 1"):
        srv.watch("Pod", resource_version=99)


def test_graceful_delete_bumps_generation_and_a_repeat_without_grace_changes_nothing() -> None:
    srv, clock = server()
    srv.create(convert({"metadata": {"name": "n1"}}, Node))
    srv.create(pod("p", nodeName="n1", terminationGracePeriodSeconds=60))
    first = srv.delete("Pod", "p", "default")
    assert first.metadata.generation == 2
    assert first.metadata.deletion_grace_period_seconds == 60
    rev = srv.revision
    clock.t = 10
    again = srv.delete("Pod", "p", "default")  # no explicit grace: pending deletion stays as is
    assert srv.revision == rev
    assert again.metadata.deletion_timestamp == first.metadata.deletion_timestamp
    shorter = srv.delete("Pod", "p", "default", grace_period_seconds=20)  # explicit and shorter
    assert shorter.metadata.deletion_timestamp == format_timestamp(20)
    assert shorter.metadata.generation == 2
