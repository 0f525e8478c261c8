"""``PodCounts`` kept current one pod event at a time, and ``calculate_status``."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.controllers.replicasetutils import PodCounts, calculate_status
from emulator.base.api.apps import ReplicaSetCondition
from emulator.base.api.core import Pod, PodCondition
from emulator.base.api.errors import Invalid
from emulator.base.runtime.clock import StoppedClock, format_timestamp
from tests.builders import pod
from tests.controllers.appsworld import replicaset


def ready(name: str, at: float = 0.0, **labels: str) -> Pod:
    cond = PodCondition(type="Ready", status="True", last_transition_time=format_timestamp(at))
    return pod(name, labels=labels or {"app": "web"}, phase="Running", conditions=[cond])


def test_counts_follow_each_pod_event() -> None:
    c = PodCounts({"app": "web"})
    c.put(("d", "a"), pod("a", labels={"app": "web"}, phase="Pending"))
    c.put(("d", "b"), ready("b"))
    assert (c.active, c.ready, c.labeled) == (2, 1, 2)
    c.put(("d", "a"), ready("a"))  # an update replaces the pod's contribution
    assert (c.active, c.ready, c.labeled) == (2, 2, 2)
    c.put(("d", "b"), replace(ready("b"), metadata=replace(ready("b").metadata, deletion_timestamp="x")))
    assert (c.active, c.ready, c.labeled) == (1, 1, 1)  # terminating: not active
    c.drop(("d", "b"))
    c.drop(("d", "b"))
    assert (c.active, c.ready, c.labeled) == (1, 1, 1)
    c.relabel({"app": "web", "tier": "x"}, {("d", "a"): ready("a")})
    assert (c.active, c.ready, c.labeled) == (1, 1, 0)


@pytest.mark.parametrize(
    ("min_ready", "now", "available"),
    [
        pytest.param(0, 0.0, 2, id="ready-is-available"),
        pytest.param(10, 5.0, 1, id="one-ready-long-enough"),
        pytest.param(10, 20.0, 2, id="both"),
    ],
)
def test_calculate_status(min_ready: int, now: float, available: int) -> None:
    rs = replicaset("web", 3, min_ready_seconds=min_ready)
    store = {("d", "a"): ready("a", at=-10.0), ("d", "b"): ready("b", at=4.0)}
    c = PodCounts({"app": "web"})
    for k, p in store.items():
        c.put(k, p)
    clock = StoppedClock()
    clock.now = lambda: now  # type: ignore[method-assign]
    s = calculate_status(rs, c, store, None, -1, clock)
    assert (s.replicas, s.fully_labeled_replicas, s.ready_replicas, s.available_replicas) == (2, 2, 2, available)
    assert s.conditions == []


def test_replica_failure_condition_is_set_then_removed() -> None:
    rs = replicaset("web", 3)
    c = PodCounts({})
    failed = calculate_status(rs, c, {}, Invalid("quota"), -3, StoppedClock())
    (cond,) = failed.conditions
    assert (cond.type, cond.status, cond.reason, cond.message) == ("ReplicaFailure", "True", "FailedCreate", "quota")
    again = calculate_status(replace(rs, status=failed), c, {}, Invalid("other"), 2, StoppedClock())
    assert again.conditions == failed.conditions  # kept as first set
    ok = calculate_status(replace(rs, status=failed), c, {}, None, 0, StoppedClock())
    assert ok.conditions == []
    deleting = calculate_status(rs, c, {}, Invalid("no"), 1, StoppedClock())
    assert deleting.conditions[0].reason == "FailedDelete"
    assert isinstance(deleting.conditions[0], ReplicaSetCondition)
