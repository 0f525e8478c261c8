"""Cluster IPs of Services: what upstream's allocator and Service strategy write.

Upstream allocates a free address of the service CIDR (kind's and kubeadm's default
``10.96.0.0/12``) at random, preferring the range above its static band (the first 256
addresses), and reserves ``10.96.0.1`` for the ``kubernetes`` Service. Here the address is
a function of the Service's namespace and name (CRC-32 into the dynamic band, then the next
free one), so a run is deterministic without drawing from the seeded random streams the
traces depend on. A ClusterIP, NodePort or LoadBalancer Service gets ``clusterIP``,
``clusterIPs``, ``ipFamilies: [IPv4]``, ``ipFamilyPolicy: SingleStack`` and
``internalTrafficPolicy: Cluster``; a headless one (``clusterIP: None``) the same with
``None``; an ExternalName one nothing. An update keeps the allocated values when the new
object leaves them out (upstream's ``patchAllocatedValues``) and refuses a change.

Owns allocation and its update rule, pure; it does not own where Services are stored.
"""

from __future__ import annotations

import ipaddress
import zlib
from collections.abc import Collection
from typing import Final

from msgspec.structs import replace

from emulator.base.api.errors import Invalid
from emulator.base.api.services import Service

__all__ = ["SERVICE_CIDR", "allocate", "keep_allocated"]

SERVICE_CIDR: Final = ipaddress.IPv4Network("10.96.0.0/12")
_STATIC_BAND: Final = 256
_FIRST: Final = int(SERVICE_CIDR.network_address)
_DYNAMIC: Final = SERVICE_CIDR.num_addresses - _STATIC_BAND - 1  # less the broadcast address


def _ip(offset: int) -> str:
    return str(ipaddress.IPv4Address(_FIRST + offset))


def _allocated(svc: Service, ip: str) -> Service:
    spec = replace(
        svc.spec,
        cluster_ip=ip,
        cluster_ips=[ip],
        ip_families=svc.spec.ip_families or ["IPv4"],
        ip_family_policy=svc.spec.ip_family_policy or "SingleStack",
        internal_traffic_policy=svc.spec.internal_traffic_policy or "Cluster",
    )
    return replace(svc, spec=spec)


def allocate(svc: Service, taken: Collection[str]) -> Service:
    """``svc`` (defaulted, about to be created) with its cluster IP; ``taken``: the addresses
    other Services hold. 422 for an address outside the range or already held."""
    spec = svc.spec
    if spec.type == "ExternalName":
        return svc
    if spec.cluster_ip == "None":
        return _allocated(svc, "None")
    if spec.cluster_ip:
        name = svc.metadata.name
        given = f'[]string{{"{spec.cluster_ip}"}}'
        try:
            inside = ipaddress.IPv4Address(spec.cluster_ip) in SERVICE_CIDR
        except ValueError:
            inside = False
        if not inside:
            raise Invalid.at(
                "Service",
                name,
                "spec.clusterIPs",
                f"Invalid value: {given}: failed to allocate IP {spec.cluster_ip}: the provided IP "
                f"({spec.cluster_ip}) is not in the valid range. The range of valid IPs is {SERVICE_CIDR}",
            )
        if spec.cluster_ip in taken:
            raise Invalid.at(
                "Service",
                name,
                "spec.clusterIPs",
                f"Invalid value: {given}: failed to allocate IP {spec.cluster_ip}: provided IP is already allocated",
            )
        return _allocated(svc, spec.cluster_ip)
    start = zlib.crc32(f"{svc.metadata.namespace}/{svc.metadata.name}".encode()) % _DYNAMIC
    for step in range(_DYNAMIC):
        ip = _ip(_STATIC_BAND + (start + step) % _DYNAMIC)
        if ip not in taken:
            return _allocated(svc, ip)
    raise Invalid.at("Service", svc.metadata.name, "spec.clusterIPs", "Internal error: range is full")


def keep_allocated(current: Service, new: Service) -> Service:
    """``new`` (an update of ``current``) with the allocated values it left out; a changed
    cluster IP is refused, as upstream's ``spec.clusterIPs[0]: ... may not change once set``."""
    old, spec = current.spec, new.spec
    if not old.cluster_ip or spec.type == "ExternalName":
        return new
    if spec.cluster_ip and spec.cluster_ip != old.cluster_ip:
        raise Invalid.at(
            "Service",
            new.metadata.name,
            "spec.clusterIPs[0]",
            f'Invalid value: []string{{"{spec.cluster_ip}"}}: may not change once set',
        )
    spec = replace(
        spec,
        cluster_ip=old.cluster_ip,
        cluster_ips=spec.cluster_ips or old.cluster_ips,
        ip_families=spec.ip_families or old.ip_families,
        ip_family_policy=spec.ip_family_policy or old.ip_family_policy,
        internal_traffic_policy=spec.internal_traffic_policy or old.internal_traffic_policy,
    )
    return replace(new, spec=spec)
