"""``QueuedPodInfo.new(pod, now, like)``: a pod with the very spec object of ``like``'s pod (pods
created from one template) gets ``like``'s derived data, which equals what ``PodInfo(pod)``
derives; a pod whose status moves its requests (an in-place resize), or with another spec
object, is derived afresh. ``SchedulingQueue.add`` passes the last PodInfo it queued."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from agents.scheduler.framework.types import PodInfo
from agents.scheduler.queue import QueuedPodInfo
from emulator.base.api.core import ContainerState, ContainerStateRunning, ContainerStatus, Pod, ResourceRequirements
from emulator.base.api.quantity import parse_quantity
from tests import builders


def slots(pi: PodInfo) -> tuple[Any, ...]:
    """Every slot but the pod."""
    return tuple(getattr(pi, s) for s in PodInfo.__slots__ if s != "pod")


def _pod(name: str, spec_of: Pod | None = None) -> Pod:
    pod = builders.pod(name, uid=name, containers=[builders.container("c", cpu="250m", memory="64Mi")])
    return pod if spec_of is None else replace(pod, spec=spec_of.spec)


def _resized(pod: Pod) -> Pod:
    cs = ContainerStatus(
        name="c",
        state=ContainerState(running=ContainerStateRunning()),
        resources=ResourceRequirements(requests={"cpu": parse_quantity("2")}),
        allocated_resources={"cpu": parse_quantity("2")},
    )
    return replace(pod, status=replace(pod.status, container_statuses=[cs]))


def test_same_spec_object_copies_the_derived_data() -> None:
    first = _pod("a")
    like = PodInfo(first)
    second = _pod("b", spec_of=first)
    got = QueuedPodInfo.new(second, 0.0, like).pod_info
    assert got is not like
    assert got.pod is second
    assert slots(got) == slots(PodInfo(second))
    assert got.requests is like.requests  # shared, not derived again


def test_resized_status_or_another_spec_object_is_derived_afresh() -> None:
    first = _pod("a")
    like = PodInfo(first)
    resized = _resized(_pod("b", spec_of=first))
    got = QueuedPodInfo.new(resized, 0.0, like).pod_info
    assert got.requests is not like.requests
    assert got.requests == PodInfo(resized).requests == {"cpu": 2000, "memory": 64 << 20}
    other = _pod("c")  # an equal spec, but its own object: no comparison made
    got = QueuedPodInfo.new(other, 0.0, like).pod_info
    assert got.requests is not like.requests
    assert slots(got) == slots(PodInfo(other))
    assert QueuedPodInfo.new(other, 0.0).pod_info.pod is other
