"""``pod_requests`` of a resized pod (upstream ``PodRequests`` with ``UseStatusResources``, as
1.34's scheduler calls it; cases after upstream's ``TestPodResourceRequests``): the larger of
desired, actuated and allocated, resource by resource; the spec left out while Infeasible;
a container that does not run (no ``resources`` in its status) counts its spec. The fast path
agrees with the reference, and ``resize_state`` moves exactly when the status does."""

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
from emulator.base.api.resources import pod_requests, pod_requests_reference, resize_state

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
