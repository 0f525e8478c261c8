"""The pure status builders: pod statuses (``podstatus``) and node status (``nodestatus``)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from msgspec.structs import replace

from agents.kubelet.nodestatus import (
    MAX_IMAGES,
    host_ip,
    node_conditions,
    node_index,
    normalize_image,
    pod_cidr,
    pod_ip_pool,
    report_images,
)
from agents.kubelet.podstatus import pending_status, rejected_status, running_status, succeeded_status
from emulator.base.api.core import (
    Container,
    ContainerImage,
    Node,
    NodeAddress,
    NodeCondition,
    Pod,
    PodCondition,
    PodIP,
    PodStatus,
)
from tests import builders

T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z", "2026-01-01T00:01:00Z"
SCHEDULED = PodCondition(type="PodScheduled", status="True", last_transition_time=T0)


def pod_with(*, init: list[Container] | None = None) -> Pod:
    containers = [builders.container("z-app", image="app:1"), builders.container("a-proxy", image="proxy:1")]
    p = builders.pod(
        "p", node="node-1", containers=containers, init_containers=init or (), phase="Pending", conditions=[SCHEDULED]
    )
    return replace(p, status=replace(p.status, qos_class="BestEffort"))


def test_pending_status_with_init_containers() -> None:
    pod = pod_with(init=[Container(name="migrate", image="tool:1")])
    status = pending_status(pod, host_ip="172.16.0.2", pod_ip="10.0.2.2", start_time=T0, now=T0)
    assert status.phase == "Pending"
    assert [(c.type, c.status, c.reason, c.message) for c in status.conditions] == [
        ("PodReadyToStartContainers", "False", "", ""),
        ("Initialized", "False", "ContainersNotInitialized", "containers with incomplete status: [migrate]"),
        ("Ready", "False", "ContainersNotReady", "containers with unready status: [a-proxy z-app]"),
        ("ContainersReady", "False", "ContainersNotReady", "containers with unready status: [a-proxy z-app]"),
        ("PodScheduled", "True", "", ""),
    ]
    assert [cs.name for cs in status.container_statuses] == ["a-proxy", "z-app"]  # sorted by name
    waiting = {
        cs.state.waiting.reason for cs in status.container_statuses + status.init_container_statuses if cs.state.waiting
    }
    assert waiting == {"PodInitializing"}
    assert (status.qos_class, status.start_time, status.pod_ip) == ("BestEffort", T0, "10.0.2.2")
    # upstream writes the plural lists too (kubectl describe pod prints IPs from podIPs)
    assert (status.host_ips, status.pod_ips) == ([PodIP(ip="172.16.0.2")], [PodIP(ip="10.0.2.2")])


def test_running_status_completes_init_containers_and_runs_sidecars() -> None:
    init = [Container(name="migrate", image="tool:1"), Container(name="mesh", image="mesh:1", restart_policy="Always")]
    pod = pod_with(init=init)
    pending = pending_status(pod, host_ip="h", pod_ip="p", start_time=T0, now=T0)
    status = running_status(
        Pod(metadata=pod.metadata, spec=pod.spec, status=pending), host_ip="h", pod_ip="p", start_time=T0, now=T1
    )
    assert status.phase == "Running"
    assert [(c.type, c.status, c.last_transition_time) for c in status.conditions] == [
        ("PodReadyToStartContainers", "True", T1),
        ("Initialized", "True", T1),
        ("Ready", "True", T1),
        ("ContainersReady", "True", T1),
        ("PodScheduled", "True", T0),  # not the kubelet's: kept as it was
    ]
    migrate, mesh = status.init_container_statuses
    assert migrate.state.terminated is not None
    assert migrate.state.terminated.reason == "Completed"
    assert mesh.state.running is not None
    assert mesh.ready
    assert [(cs.name, cs.ready) for cs in status.container_statuses] == [("a-proxy", True), ("z-app", True)]


def test_succeeded_keeps_start_times_and_terminates_containers() -> None:
    pod = pod_with()
    running = running_status(pod, host_ip="h", pod_ip="p", start_time=T0, now=T1)
    done = succeeded_status(Pod(metadata=pod.metadata, spec=pod.spec, status=running), now=T2)
    assert done.phase == "Succeeded"
    for cs in done.container_statuses:
        assert cs.state.terminated is not None
        assert (cs.state.terminated.started_at, cs.state.terminated.finished_at) == (T1, T2)
        assert (cs.ready, cs.state.terminated.exit_code) == (False, 0)
    assert [(c.type, c.status, c.reason) for c in done.conditions][:4] == [
        ("PodReadyToStartContainers", "False", ""),
        ("Initialized", "True", "PodCompleted"),
        ("Ready", "False", "PodCompleted"),
        ("ContainersReady", "False", "PodCompleted"),
    ]
    initialized = next(c for c in done.conditions if c.type == "Initialized")
    assert initialized.last_transition_time == T1  # True before and after: no transition
    assert done.pod_ip == "p"


def test_rejected_status_changes_only_phase_reason_message() -> None:
    pod = pod_with()
    status = rejected_status(pod, "OutOfcpu", "Node didn't have enough resource: cpu")
    assert status == PodStatus(
        phase="Failed",
        reason="OutOfcpu",
        message="Pod was rejected: Node didn't have enough resource: cpu",
        qos_class="BestEffort",
        conditions=[SCHEDULED],
    )


# --- node status ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        pytest.param("nginx", "nginx:latest", id="untagged"),
        pytest.param("nginx:1.27", "nginx:1.27", id="tagged"),
        pytest.param("localhost:5000/app", "localhost:5000/app:latest", id="registry-port-untagged"),
        pytest.param("repo/app@sha256:abc", "repo/app@sha256:abc", id="digest"),
    ],
)
def test_normalize_image(name: str, normalized: str) -> None:
    assert normalize_image(name) == normalized


def node(name: str, *, addresses: Sequence[NodeAddress] = ()) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, addresses=addresses)


def test_addresses_derive_from_the_node_index() -> None:
    assert node_index("node-1234") == 1234
    assert node_index("master") == node_index("master") < 2**20
    assert host_ip(node("node-0")) == "172.16.0.1"
    assert host_ip(node("node-300")) == "172.16.1.45"
    assert host_ip(node("n", addresses=[NodeAddress(type="InternalIP", address="192.168.1.5")])) == "192.168.1.5"
    assert pod_cidr(node("node-300")) == "10.1.45.0/24"
    assert pod_cidr(builders.node("x", cpu=None, memory=None, pods=None, pod_cidr="10.9.0.0/24")) == "10.9.0.0/24"
    pool = pod_ip_pool("10.1.45.0/24")
    assert (pool[0], pool[-1], len(pool)) == ("10.1.45.2", "10.1.45.254", 253)


def test_node_conditions_keep_foreign_ones_and_transition_times() -> None:
    old = [
        NodeCondition(type="NetworkUnavailable", status="False", reason="RouteCreated"),
        NodeCondition(type="Ready", status="Unknown", reason="NodeStatusUnknown", last_transition_time=T0),
        NodeCondition(type="MemoryPressure", status="False", last_transition_time=T0),
    ]
    fresh = node_conditions(old, T2)
    assert [c.type for c in fresh] == ["NetworkUnavailable", "Ready", "MemoryPressure", "DiskPressure", "PIDPressure"]
    by_type = {c.type: c for c in fresh}
    assert by_type["NetworkUnavailable"] == old[0]
    assert (by_type["Ready"].status, by_type["Ready"].last_transition_time) == ("True", T2)  # Unknown -> True
    assert by_type["MemoryPressure"].last_transition_time == T0  # still False
    assert {c.last_heartbeat_time for c in fresh[1:]} == {T2}


def test_report_images_largest_first_capped() -> None:
    entries = [ContainerImage(names=[f"img-{i}"], size_bytes=i) for i in range(60)]
    report = report_images(entries)
    assert len(report) == MAX_IMAGES
    assert [e.size_bytes for e in report[:3]] == [59, 58, 57]
