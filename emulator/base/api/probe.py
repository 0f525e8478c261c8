"""core/v1 ``Probe`` and its handlers: what a container's readiness, liveness and startup
probes say (``k8s.io/api/core/v1`` ``Probe``, ``ProbeHandler``).

The handler is kept so that a probe without one can be refused and so that the prober can
word a failure as the handler's kind would (``agents.kubelet.prober``); what it would
contact is never contacted. The numeric fields keep 0 for "unset": upstream's defaulting
(``SetDefaults_Probe``) turns 0 into the defaults of ``PROBE_DEFAULTS``, and the prober
applies them where it reads a probe.
"""

from __future__ import annotations

from typing import Final

from emulator.base.api.intstr import IntOrString
from emulator.base.api.meta import K8s

__all__ = [
    "PROBE_DEFAULTS",
    "ExecAction",
    "GRPCAction",
    "HTTPGetAction",
    "HTTPHeader",
    "Probe",
    "TCPSocketAction",
]


class ExecAction(K8s, frozen=True):
    command: list[str] = []


class HTTPHeader(K8s, frozen=True):
    name: str = ""
    value: str = ""


class HTTPGetAction(K8s, frozen=True):
    path: str = ""
    port: IntOrString = 0
    host: str = ""
    scheme: str = ""
    http_headers: list[HTTPHeader] = []


class TCPSocketAction(K8s, frozen=True):
    port: IntOrString = 0
    host: str = ""


class GRPCAction(K8s, frozen=True):
    port: int = 0
    service: str | None = None


class Probe(K8s, frozen=True):
    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    grpc: GRPCAction | None = None
    initial_delay_seconds: int = 0
    timeout_seconds: int = 0
    period_seconds: int = 0
    success_threshold: int = 0
    failure_threshold: int = 0
    termination_grace_period_seconds: int | None = None


PROBE_DEFAULTS: Final = {"timeout_seconds": 1, "period_seconds": 10, "success_threshold": 1, "failure_threshold": 3}
"""Upstream ``SetDefaults_Probe``: what a 0 (unset) field of a ``Probe`` means."""
