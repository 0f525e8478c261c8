"""The scheduler and in-place resize (1.34: ``UseStatusResources``): an assigned pod counts the
larger of its desired and allocated requests in the cache (``PodInfo`` re-derived when the
status's resize state moves, not reused); a scale-down that only the status shows (the kubelet
actuating a smaller resize) is ``UpdatePodScaleDown``, which requeues pods NodeResourcesFit
rejected."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from agents.scheduler.framework.events import ActionType, ClusterEvent, EventResource
from agents.scheduler.framework.types import PodInfo, reuse_pod_info
from agents.scheduler.queue.events import pod_scheduling_properties_change, properties_change_reference
from emulator.base.api.core import ContainerState, ContainerStateRunning, ContainerStatus, Pod, ResourceRequirements
from emulator.base.api.quantity import parse_quantity
from tests import builders


def _running(pod: Pod, actual: str, allocated: str) -> Pod:
    c = pod.spec.containers[0]
    cs = ContainerStatus(
        name=c.name,
        state=ContainerState(running=ContainerStateRunning()),
        resources=ResourceRequirements(requests={"cpu": parse_quantity(actual)}),
        allocated_resources={"cpu": parse_quantity(allocated)},
    )
    return replace(pod, status=replace(pod.status, phase="Running", container_statuses=[cs]))


def _pod(cpu: str) -> Pod:
    return builders.pod("p", uid="p", node="n1", containers=[builders.container("c", cpu=cpu)])


def test_pod_info_counts_max_of_desired_and_allocated() -> None:
    table: list[tuple[str, str, str, int]] = [
        ("1", "1", "1", 1000),
        ("2", "1", "1", 2000),  # resized up, pending or in progress: the desired
        ("1", "2", "2", 2000),  # resized down, not actuated yet: the allocated
        ("1", "1", "3", 3000),  # allocated, actuation going on
    ]
    for spec, actual, allocated, want in table:
        assert PodInfo(_running(_pod(spec), actual, allocated)).requests == {"cpu": want}


def test_pod_info_not_reused_across_a_resize() -> None:
    before = _running(_pod("1"), "2", "2")
    after = _running(_pod("1"), "1", "1")
    info = PodInfo(before)
    assert reuse_pod_info(info, after) is None
    same = replace(after, status=replace(before.status, phase="Running"))
    reused = reuse_pod_info(info, same)
    assert reused is not None
    assert reused.requests == {"cpu": 2000}


def _actions(events: list[ClusterEvent]) -> list[Any]:
    return [(e.resource, e.action) for e in events]


def test_status_only_scale_down_is_update_pod_scale_down() -> None:
    old = _running(_pod("1"), "2", "2")
    new = _running(_pod("1"), "1", "1")
    events = pod_scheduling_properties_change(new, old)
    assert events == properties_change_reference(new, old)
    assert ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown).match(events[0])
    assert _actions(events)[0][1] == ActionType.UpdatePodScaleDown
    # the kubelet's other status writes (same resize state) stay a plain update
    same = replace(new, status=replace(new.status, phase="Running", pod_ip="10.0.0.1"))
    assert _actions(pod_scheduling_properties_change(same, new))[0][1] == ActionType.Update
    # an increase is not a scale-down
    up = _running(_pod("1"), "3", "3")
    assert ActionType.UpdatePodScaleDown not in [a for _, a in _actions(pod_scheduling_properties_change(up, new))]


async def _scale_down_frees_room() -> tuple[str, float]:
    from tests.cluster import open_cluster

    async with open_cluster(namespaces=("default", "kube-node-lease")) as c:
        c.server.create(builders.node("n1", cpu="2", memory="8Gi"))
        await c.start_kubelet("n1")
        await c.start_scheduler()
        c.server.create(builders.pod("big", containers=[builders.container("c", cpu="1500m")]))
        await c.until(lambda: c.pod("big").status.phase == "Running")
        c.server.create(builders.pod("waiting", containers=[builders.container("c", cpu="1")]))
        await c.until(lambda: any(x.type == "PodScheduled" for x in c.pod("waiting").status.conditions))
        assert not c.pod("waiting").spec.node_name  # Insufficient cpu
        t0 = c.clock.now()
        big = c.pod("big")
        small = ResourceRequirements(requests={"cpu": parse_quantity("500m")})
        c.server.update_resize(
            replace(big, spec=replace(big.spec, containers=[replace(big.spec.containers[0], resources=small)]))
        )
        await c.until(lambda: bool(c.pod("waiting").spec.node_name), within=60)
        return c.pod("waiting").spec.node_name, c.clock.now() - t0


def test_a_scale_down_lets_a_rejected_pod_in() -> None:
    """The scheduler keeps counting ``big`` at 1500m (max of desired and allocated) until the
    kubelet has actuated the resize; the status write that lowers it is UpdatePodScaleDown and
    requeues ``waiting`` (rejected by NodeResourcesFit) at once, not after the 5-minute flush."""
    from emulator.base.runtime.clock import run

    node, waited = run(_scale_down_frees_room)
    assert node == "n1"
    assert waited < 10
