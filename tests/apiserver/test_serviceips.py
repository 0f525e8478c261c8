"""Cluster IPs of Services (``emulator.base.apiserver.serviceips``), through the store."""

from __future__ import annotations

import ipaddress
import random

import pytest
from msgspec.structs import replace

from emulator.base.api.core import Namespace
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.services import Service, ServicePort, ServiceSpec
from emulator.base.apiserver import ApiServer
from emulator.base.apiserver.serviceips import SERVICE_CIDR
from emulator.base.runtime.clock import StoppedClock


def _service(name: str, **spec: object) -> Service:
    ports = [ServicePort(port=80)]
    return Service(metadata=ObjectMeta(name=name, namespace="default"), spec=ServiceSpec(ports=ports, **spec))  # type: ignore[arg-type]


def new_api() -> ApiServer:
    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    return api


@pytest.fixture
def api() -> ApiServer:
    return new_api()


def test_a_cluster_ip_service_gets_an_address_of_the_range(api: ApiServer) -> None:
    svc = api.create(_service("web"))
    spec = svc.spec
    assert ipaddress.IPv4Address(spec.cluster_ip) in SERVICE_CIDR
    assert int(ipaddress.IPv4Address(spec.cluster_ip)) - int(SERVICE_CIDR.network_address) >= 256
    assert (spec.cluster_ips, spec.ip_families, spec.ip_family_policy, spec.internal_traffic_policy) == (
        [spec.cluster_ip],
        ["IPv4"],
        "SingleStack",
        "Cluster",
    )


def test_addresses_are_deterministic_and_distinct() -> None:
    first, second = new_api(), new_api()
    ips = [first.create(_service(f"s{i}")).spec.cluster_ip for i in range(20)]
    assert ips == [second.create(_service(f"s{i}")).spec.cluster_ip for i in range(20)]
    assert len(set(ips)) == 20


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param({"cluster_ip": "None"}, ("None", ["None"]), id="headless"),
        pytest.param({"cluster_ip": "10.96.0.10"}, ("10.96.0.10", ["10.96.0.10"]), id="chosen"),
        pytest.param({"type": "ExternalName", "external_name": "example.com"}, ("", []), id="external-name"),
    ],
)
def test_given_addresses(api: ApiServer, spec: dict[str, object], want: tuple[str, list[str]]) -> None:
    svc = api.create(_service("web", **spec))
    assert (svc.spec.cluster_ip, svc.spec.cluster_ips) == want


@pytest.mark.parametrize(
    ("ip", "message"),
    [
        pytest.param(
            "10.0.0.1",
            r'^Service "b" is invalid: spec.clusterIPs: Invalid value: \[\]string\{"10.0.0.1"\}: failed to allocate '
            r"IP 10.0.0.1: the provided IP \(10.0.0.1\) is not in the valid range. The range of valid IPs is "
            r"10.96.0.0/12$",
            id="outside",
        ),
        pytest.param(
            "10.96.0.10",
            r'^Service "b" is invalid: spec.clusterIPs: Invalid value: \[\]string\{"10.96.0.10"\}: failed to allocate '
            r"IP 10.96.0.10: provided IP is already allocated$",
            id="taken",
        ),
    ],
)
def test_refused_addresses(api: ApiServer, ip: str, message: str) -> None:
    api.create(_service("a", cluster_ip="10.96.0.10"))
    with pytest.raises(Invalid, match=message):
        api.create(_service("b", cluster_ip=ip))


def test_an_update_keeps_the_address_and_may_not_change_it(api: ApiServer) -> None:
    svc = api.create(_service("web"))
    without = replace(svc, spec=replace(svc.spec, cluster_ip="", cluster_ips=[], selector={"app": "web"}))
    updated = api.update(without)
    assert (updated.spec.cluster_ip, updated.spec.selector) == (svc.spec.cluster_ip, {"app": "web"})
    with pytest.raises(Invalid, match=r"spec.clusterIPs\[0\]: Invalid value: .*: may not change once set$"):
        api.update(replace(updated, spec=replace(updated.spec, cluster_ip="10.96.0.10")))
