"""``pod_requests``, ``pod_host_ports`` and ``_uses_status`` equal their references
(``*_reference``: the general computation) on random pods: containers with and without requests and host ports,
init containers (sidecars or not), overhead. Equal includes the order of the keys and of the
ports, which callers iterate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import UNSET
from msgspec.structs import replace

from emulator.base.api.core import Container, ContainerPort, ContainerStatus, Pod, ResourceRequirements
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.resources import (
    _uses_status,
    _uses_status_reference,
    pod_host_ports,
    pod_host_ports_reference,
    pod_requests,
    pod_requests_reference,
)
from tests import builders

AMOUNTS = st.sampled_from(["0", "1", "100m", "1500m", "1Gi", "500Mi", "3", "1k"])
RESOURCES = st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "example.com/gpu"])


@st.composite
def containers(draw: st.DrawFn, name: str) -> Container:
    ports = [
        ContainerPort(
            container_port=draw(st.integers(1, 9)),
            host_port=draw(st.sampled_from([0, 0, -1, 80, 443])),
            protocol=draw(st.sampled_from(["", "TCP", "UDP"])),
            host_ip=draw(st.sampled_from(["", "10.0.0.1"])),
        )
        for _ in range(draw(st.integers(0, 2)))
    ]
    return builders.container(
        name,
        image="i",
        requests=draw(st.dictionaries(RESOURCES, AMOUNTS, max_size=3)),
        ports=ports,
        restart_policy=draw(st.sampled_from([None, None, "Always"])),
    )


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    regular = [draw(containers(f"c{i}")) for i in range(draw(st.integers(0, 3)))]
    init = [draw(containers(f"i{i}")) for i in range(draw(st.sampled_from([0, 0, 1, 2])))]
    overhead = draw(st.none() | st.dictionaries(RESOURCES, AMOUNTS, min_size=1, max_size=2))
    return builders.pod("p", containers=regular, init_containers=init, overhead=overhead)


@settings(max_examples=400, deadline=None)
@given(pods())
def test_pod_requests_equals_reference(pod: Pod) -> None:
    assert list(pod_requests(pod).items()) == list(pod_requests_reference(pod).items())


@settings(max_examples=400, deadline=None)
@given(pods())
def test_pod_host_ports_equals_reference(pod: Pod) -> None:
    assert pod_host_ports(pod) == pod_host_ports_reference(pod)


@st.composite
def pods_with_statuses(draw: st.DrawFn) -> Pod:
    """Pods with container statuses: reported and allocated resources unset, equal to the
    spec's requests or not, names matching or not, one status per container or not."""
    pod = draw(pods())
    statuses = []
    for c in pod.spec.containers:
        name = draw(st.sampled_from([c.name, c.name, "other"]))
        requests = c.resources.requests
        other = {k: parse_quantity(v) for k, v in draw(st.dictionaries(RESOURCES, AMOUNTS, max_size=2)).items()}
        reported = draw(st.sampled_from(["unset", "spec", "other"]))
        allocated = draw(st.sampled_from(["unset", "spec", "other"]))
        statuses.append(
            ContainerStatus(
                name=name,
                resources=UNSET
                if reported == "unset"
                else ResourceRequirements(requests=requests if reported == "spec" else other),
                allocated_resources=UNSET if allocated == "unset" else (requests if allocated == "spec" else other),
            )
        )
    statuses = statuses[: draw(st.sampled_from([len(statuses), len(statuses), max(0, len(statuses) - 1)]))]
    init = [ContainerStatus(name="i0")] if draw(st.integers(0, 4)) == 0 else []
    status = replace(pod.status, container_statuses=statuses, init_container_statuses=init)
    return replace(pod, status=status)


@settings(max_examples=400, deadline=None)
@given(pods_with_statuses())
def test_uses_status_equals_reference(pod: Pod) -> None:
    assert _uses_status(pod) == _uses_status_reference(pod)
