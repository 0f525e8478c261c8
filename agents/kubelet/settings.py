"""``KubeletSettings``: the knobs of one emulated kubelet, as a typed, frozen value.

This module owns the settings and their validation only; the kubelet (``kubelet.py``)
reads them. Every delay is either a plain number or a seeded ``Latency`` sampled from
the kubelet's own random stream, so a run stays a pure function of its seed.

=======================  ==================================================================
field                    meaning
=======================  ==================================================================
image_pull_bandwidth     bytes per second of one node's image pulls; 0 = pulls are instant
serialize_image_pulls    pull one image at a time per node (upstream
                         ``serializeImagePulls``, default true); concurrent pulls of one
                         image are always shared
container_start          time from "images present" to "containers running" (per pod)
termination              time to stop a pod's containers on graceful deletion, capped by
                         the pod's grace period
heartbeat_interval       seconds between Lease renewals and node status heartbeats;
                         0 = neither (large runs: no periodic writes at all)
node_status_report_      on a heartbeat, the node status is posted only if it changed
frequency                (heartbeat times aside) or this many seconds passed since the last
                         post: upstream ``nodeStatusReportFrequency``, default 300 (5 min);
                         0 = on every heartbeat. The Lease is renewed every
                         ``heartbeat_interval`` either way, and node health is read from it
default_image_size       bytes of an image no node lists and ``image_sizes`` does not name
image_sizes              image -> bytes, for images no node lists in ``status.images``
report_pending_status    write the Pending/ContainerCreating status at admission, as the
                         upstream kubelet does (False saves one write per pod)
container_events         write the kubelet's container Events (``Pulling``, ``Pulled``,
                         ``Created``, ``Started``, ``Killing``), as upstream does (False
                         saves three or more writes per pod; ``BackOff`` and probes'
                         ``Unhealthy`` are written either way)
kubelet_version          ``status.nodeInfo.kubeletVersion`` the kubelet reports
lease_duration_seconds   ``spec.leaseDurationSeconds`` of the node Lease (upstream 40)
faults                   optional ``KubeletFaults`` hook (fault injection); ``None``: the
                         kubelet behaves normally and never asks
dra_plugins              the run's ``KubeletPlugins`` (DRA drivers' kubelet plugins per
                         node); ``None``: no driver is registered on any node
=======================  ==================================================================
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

from emulator.base.api.core import Pod
from emulator.base.client.client import Latency
from emulator.base.client.kubeletplugins import KubeletPlugins

__all__ = [
    "DEFAULT_IMAGE_SIZE",
    "DEFAULT_NODE_STATUS_REPORT_FREQUENCY",
    "KUBELET_VERSION",
    "KubeletFaults",
    "KubeletSettings",
]

DEFAULT_IMAGE_SIZE: Final = 100 * 2**20
"""100 MiB: a typical application image."""
KUBELET_VERSION: Final = "v1.34.0-emulated"
DEFAULT_NODE_STATUS_REPORT_FREQUENCY: Final = 300.0
"""Upstream's ``nodeStatusReportFrequency`` default (``pkg/kubelet/apis/config/v1beta1/
defaults.go``): 5 minutes, unless ``nodeStatusUpdateFrequency`` is set explicitly, in which
case it defaults to that (the scenario loader applies that rule to ``heartbeatInterval``)."""


class KubeletFaults(Protocol):
    """What fault injection may change in a kubelet (``emulator.app.scenario.faults.FaultPlan``)."""

    def heartbeat_enabled(self, node: str, now: float) -> bool:
        """False while the node's Lease renewals and status posts must not happen."""
        ...

    def pull_seconds(self, node: str, image: str, size: int, seconds: float, now: float) -> float:
        """How long a pull of ``image`` (``size`` bytes; ``seconds`` unfaulted) takes."""
        ...

    def start_failure(self, node: str, pod: Pod, now: float) -> tuple[str, str] | None:
        """(reason, message) when ``pod``'s containers fail to start, else None."""
        ...


def _check_latency(name: str, lat: Latency) -> None:
    if not (math.isfinite(lat.mean) and math.isfinite(lat.jitter)) or lat.mean < 0 or lat.jitter < 0:
        raise ValueError(f"{name} must have a finite, non-negative mean and jitter, got {lat!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class KubeletSettings:
    """How one kubelet behaves; shared by every kubelet of a run unless overridden."""

    image_pull_bandwidth: int = 0
    serialize_image_pulls: bool = True
    container_start: Latency = field(default_factory=Latency)
    termination: Latency = field(default_factory=Latency)
    heartbeat_interval: float = 10.0
    node_status_report_frequency: float = DEFAULT_NODE_STATUS_REPORT_FREQUENCY
    default_image_size: int = DEFAULT_IMAGE_SIZE
    image_sizes: Mapping[str, int] = field(default_factory=dict)
    report_pending_status: bool = True
    container_events: bool = True
    kubelet_version: str = KUBELET_VERSION
    lease_duration_seconds: int = 40
    faults: KubeletFaults | None = None
    dra_plugins: KubeletPlugins | None = None

    def __post_init__(self) -> None:
        if self.image_pull_bandwidth < 0:
            raise ValueError(f"image_pull_bandwidth must be >= 0 bytes/s, got {self.image_pull_bandwidth}")
        if not math.isfinite(self.heartbeat_interval) or self.heartbeat_interval < 0:
            raise ValueError(f"heartbeat_interval must be >= 0 seconds, got {self.heartbeat_interval!r}")
        if not math.isfinite(self.node_status_report_frequency) or self.node_status_report_frequency < 0:
            raise ValueError(
                f"node_status_report_frequency must be >= 0 seconds, got {self.node_status_report_frequency!r}"
            )
        if self.default_image_size < 0:
            raise ValueError(f"default_image_size must be >= 0 bytes, got {self.default_image_size}")
        for image, size in self.image_sizes.items():
            if size < 0:
                raise ValueError(f"image_sizes[{image!r}] must be >= 0 bytes, got {size}")
        if self.lease_duration_seconds <= 0:
            raise ValueError(f"lease_duration_seconds must be > 0, got {self.lease_duration_seconds}")
        _check_latency("container_start", self.container_start)
        _check_latency("termination", self.termination)

    def pull_seconds(self, size: int) -> float:
        """Time to pull ``size`` bytes over this node's link (0 when bandwidth is 0)."""
        if self.image_pull_bandwidth == 0:
            return 0.0
        return size / self.image_pull_bandwidth
