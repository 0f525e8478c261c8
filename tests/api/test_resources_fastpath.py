"""``pod_requests``, ``pod_host_ports``, ``_uses_status`` and ``same_requests`` equal their references
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
    same_requests,
    same_requests_reference,
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
    return _with_status(draw, draw(pods()))


def _with_status(draw: st.DrawFn, pod: Pod) -> Pod:
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


@st.composite
def versions(draw: st.DrawFn) -> tuple[Pod, Pod]:
    """Two versions of a pod with the same spec: statuses drawn apart, or the same object."""
    pod = draw(pods_with_statuses())
    if draw(st.integers(0, 5)) == 0:
        return pod, pod
    return pod, _with_status(draw, pod)


@settings(max_examples=600, deadline=None)
@given(versions())
def test_same_requests_equals_reference(ab: tuple[Pod, Pod]) -> None:
    a, b = ab
    assert same_requests(a, b) == same_requests_reference(a, b)
    assert same_requests(b, a) == same_requests_reference(b, a)


def _status_of(pod: Pod, **fields: object) -> Pod:
    """``pod`` with one container status for its first container (``fields`` over the name)."""
    status = ContainerStatus(**{"name": pod.spec.containers[0].name, **fields})  # type: ignore[arg-type]
    return replace(pod, status=replace(pod.status, container_statuses=[status]))


def test_same_requests_reads_each_difference_of_either_version() -> None:
    """Each way a version's status may change its requests, on ``a`` and on ``b``, against a
    version that runs as specified: the answer is the reference's (``resize_state``s differ)."""
    pod = builders.pod("p", containers=[builders.container("c0", image="i", requests={"cpu": "1"})])
    want = pod.spec.containers[0].resources.requests
    plain = _status_of(pod)
    specified = _status_of(pod, resources=ResourceRequirements(requests=want), allocated_resources=want)
    two = {"cpu": parse_quantity("2")}
    changed = [
        _status_of(pod, resources=ResourceRequirements(requests=want), allocated_resources=two),
        _status_of(pod, resources=ResourceRequirements(requests=two)),
        _status_of(pod, name="other", resources=ResourceRequirements(requests=want)),
        replace(pod, status=replace(pod.status, container_statuses=[ContainerStatus(name="c0")] * 2)),
        replace(plain, status=replace(plain.status, init_container_statuses=[ContainerStatus(name="i0")])),
    ]
    for version in changed:
        for a, b in ((version, plain), (plain, version), (version, specified), (specified, version)):
            assert same_requests(a, b) == same_requests_reference(a, b) is False
    assert same_requests(plain, specified) == same_requests_reference(plain, specified) is True
