"""``pod_requests`` of a resized pod (upstream ``PodRequests`` with ``UseStatusResources``, as
1.34's scheduler calls it; cases after upstream's ``TestPodResourceRequests``): the larger of
desired, actuated and allocated, resource by resource; the spec left out while Infeasible;
a container that does not run (no ``resources`` in its status) counts its spec. The fast path
agrees with the reference, and ``resize_state`` moves exactly when the status does;
``same_requests`` (what the scheduler's cache and queue compare) only says equal of states
that give equal requests."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from emulator.base.api.core import (
    Container,
    ContainerStatus,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    ResourceRequirements,
)
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.resources import pod_requests, pod_requests_reference, resize_state, same_requests

UNSET = msgspec.UNSET


def _rl(cpu: str | None = None, memory: str | None = None) -> dict[str, Any]:
    out = {}
    if cpu is not None:
        out["cpu"] = parse_quantity(cpu)
    if memory is not None:
        out["memory"] = parse_quantity(memory)
    return out


def _pod(
    spec: dict[str, Any],
    actual: dict[str, Any] | None,
    alloc: dict[str, Any] | None,
    reason: str = "",
    *,
    sidecar: bool = False,
) -> Pod:
    c = Container(name="c", resources=ResourceRequirements(requests=spec))
    cs = ContainerStatus(
        name="c",
        resources=UNSET if actual is None else ResourceRequirements(requests=actual),
        allocated_resources=UNSET if alloc is None else alloc,
    )
    conds = [PodCondition(type="PodResizePending", status="True", reason=reason)] if reason else []
    if sidecar:
        main = Container(name="m", resources=ResourceRequirements(requests=_rl("1")))
        side = msgspec.structs.replace(c, restart_policy="Always")
        return Pod(
            spec=PodSpec(containers=[main], init_containers=[side]),
            status=PodStatus(conditions=conds, init_container_statuses=[cs]),
        )
    return Pod(spec=PodSpec(containers=[c]), status=PodStatus(conditions=conds, container_statuses=[cs]))


CASES = [
    ("not running: spec", _pod(_rl("4"), None, _rl("2")), {"cpu": 4000}),
    ("resized up, deferred: spec", _pod(_rl("4"), _rl("2"), _rl("2"), "Deferred"), {"cpu": 4000}),
    ("resized up, in progress: spec", _pod(_rl("4"), _rl("2"), _rl("4")), {"cpu": 4000}),
    ("resized up, infeasible: actual", _pod(_rl("4"), _rl("2"), _rl("2"), "Infeasible"), {"cpu": 2000}),
    ("resized down, pending: actual", _pod(_rl("1"), _rl("2"), _rl("2"), "Deferred"), {"cpu": 2000}),
    ("resized down, allocated not actuated: allocated", _pod(_rl("1"), _rl("1"), _rl("3")), {"cpu": 3000}),
    ("per resource max", _pod(_rl("1", "2Gi"), _rl("2", "1Gi"), _rl("1", "1Gi")), {"cpu": 2000, "memory": 2**31}),
    ("unchanged", _pod(_rl("1"), _rl("1"), _rl("1")), {"cpu": 1000}),
    ("sidecar resized up, infeasible", _pod(_rl("4"), _rl("2"), _rl("2"), "Infeasible", sidecar=True), {"cpu": 3000}),
    ("sidecar resized down, pending", _pod(_rl("1"), _rl("2"), _rl("2"), "Deferred", sidecar=True), {"cpu": 3000}),
]


@pytest.mark.parametrize(("name", "pod", "want"), CASES, ids=[c[0] for c in CASES])
def test_pod_requests_with_status_resources(name: str, pod: Pod, want: dict[str, int]) -> None:
    assert pod_requests(pod) == want
    assert pod_requests_reference(pod) == want


def test_resize_state_follows_the_status() -> None:
    a = _pod(_rl("1"), _rl("1"), _rl("1"))
    assert resize_state(a) == resize_state(_pod(_rl("9"), _rl("1"), _rl("1")))
    assert resize_state(a) != resize_state(_pod(_rl("1"), _rl("1"), _rl("2")))
    assert resize_state(a) != resize_state(_pod(_rl("1"), _rl("1"), _rl("1"), "Infeasible"))
    assert resize_state(Pod()) == ()


def _pending(spec: dict[str, Any], *, sidecar: bool = False) -> Pod:
    """The same pod before its kubelet reported containers (Pending: no container statuses)."""
    pod = _pod(spec, None, None, sidecar=sidecar)
    return msgspec.structs.replace(pod, status=PodStatus())


SAME = [
    # (name, a, b, same): a and b have equal specs
    ("pending -> running as specified", _pending(_rl("1")), _pod(_rl("1"), _rl("1"), _rl("1")), True),
    ("pending -> running, allocated unset", _pending(_rl("1")), _pod(_rl("1"), _rl("1"), None), True),
    ("running, not reported -> as specified", _pod(_rl("1"), None, None), _pod(_rl("1"), _rl("1"), None), True),
    ("pending -> actuated differs", _pending(_rl("1")), _pod(_rl("1"), _rl("2"), _rl("1")), False),
    ("pending -> allocated differs", _pending(_rl("1")), _pod(_rl("1"), _rl("1"), _rl("3")), False),
    (
        "as specified -> infeasible, same amounts",
        _pod(_rl("1"), _rl("1"), _rl("1")),
        _pod(_rl("1"), _rl("1"), _rl("1"), "Infeasible"),
        True,
    ),
    (
        "as specified -> infeasible, smaller actual",
        _pod(_rl("4"), _rl("4"), _rl("4")),
        _pod(_rl("4"), _rl("2"), _rl("2"), "Infeasible"),
        False,
    ),
    (
        "sidecar pending -> running as specified",
        _pending(_rl("1"), sidecar=True),
        _pod(_rl("1"), _rl("1"), _rl("1"), sidecar=True),
        False,
    ),  # init containers: states compared
]


@pytest.mark.parametrize(("name", "a", "b", "same"), SAME, ids=[c[0] for c in SAME])
def test_same_requests(name: str, a: Pod, b: Pod, same: bool) -> None:
    assert same_requests(a, b) is same
    assert same_requests(b, a) is same
    if same:
        assert pod_requests(a) == pod_requests(b) == pod_requests_reference(a) == pod_requests_reference(b)
