"""core/v1 Service: its ``selector`` and ``ports`` (the scheduler's default spreading reads
the selector), and the cluster IP the API server allocates (``emulator.base.apiserver.serviceips``)
so that ``kubectl get svc`` reads as upstream's. No networking: no endpoints, no proxying;
the other networking fields a manifest carries are ignored on decode (``clusterIP: None``
makes a headless Service, which needs no ports).
"""

from __future__ import annotations

import msgspec

from emulator.base.api.intstr import IntOrString
from emulator.base.api.meta import Condition, K8s, ObjectMeta

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
    cluster_ips: list[str] = msgspec.field(default_factory=list, name="clusterIPs")
    ip_families: list[str] = []
    ip_family_policy: str | None = None
    internal_traffic_policy: str | None = None
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
