"""``pod_requests`` and ``pod_host_ports`` equal their references (``*_reference``: the
general computation) on random pods: containers with and without requests and host ports,
init containers (sidecars or not), overhead. Equal includes the order of the keys and of the
ports, which callers iterate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.api.core import Container, ContainerPort, Pod
from emulator.base.api.resources import pod_host_ports, pod_host_ports_reference, pod_requests, pod_requests_reference
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
