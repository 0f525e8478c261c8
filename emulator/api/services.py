"""core/v1 Service: its ``selector`` and ``ports`` only (the scheduler's default spreading
reads the selector). No networking: no cluster IP allocation, no endpoints, no proxying;
the networking fields a manifest carries are ignored on decode, except ``type`` and
``clusterIP`` (``None`` makes a headless Service, which needs no ports).
"""

from __future__ import annotations

import msgspec

from emulator.api.intstr import IntOrString
from emulator.api.meta import Condition, K8s, ObjectMeta

__all__ = ["Service", "ServicePort", "ServiceSpec", "ServiceStatus"]


class ServicePort(K8s, frozen=True):
    port: int = 0
    name: str = ""
    protocol: str = ""
    target_port: IntOrString | None = None
    node_port: int = 0
    app_protocol: str | None = None


class ServiceSpec(K8s, frozen=True):
    ports: list[ServicePort] = []
    selector: dict[str, str] = {}
    type: str = ""
    """``ClusterIP`` (the default), ``NodePort``, ``LoadBalancer`` or ``ExternalName``."""
    cluster_ip: str = msgspec.field(default="", name="clusterIP")
    external_name: str = ""
    session_affinity: str = ""
    publish_not_ready_addresses: bool = False


class ServiceStatus(K8s, frozen=True):
    conditions: list[Condition] = []


class Service(K8s, frozen=True):
    api_version: str = "v1"
    kind: str = "Service"
    metadata: ObjectMeta = ObjectMeta()
    spec: ServiceSpec = ServiceSpec()
    status: ServiceStatus = ServiceStatus()
