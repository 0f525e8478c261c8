"""The API server's checks of containers' probes (upstream ``pkg/apis/core/validation``
``validateProbe``, ``validateHandler``, ``validateLivenessProbe``, ``validateReadinessProbe``,
``validateStartupProbe`` and the init-container rule of ``validateInitContainers``).

``probe_problems(spec)`` yields each problem as ``(path, detail)`` with upstream's field
path and wording, in upstream's order for one container (liveness, readiness, startup; in a
probe: the handler, then the numeric fields). Fields are checked as stored, after
defaulting: an unset (0) threshold is 1 or 3, so ``successThreshold`` is "must be 1" only
when set to something else. A handler's own fields (ports, paths) are not checked: the
prober never contacts what a handler names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from emulator.base.api.core import Container, PodSpec
from emulator.base.api.probe import Probe

__all__ = ["probe_problems"]

Problem = tuple[str, str]

_NONNEGATIVE: Final = "must be greater than or equal to 0"
_FIELDS: Final = (
    ("initialDelaySeconds", "initial_delay_seconds"),
    ("timeoutSeconds", "timeout_seconds"),
    ("periodSeconds", "period_seconds"),
    ("successThreshold", "success_threshold"),
    ("failureThreshold", "failure_threshold"),
)


def _probe(probe: Probe, path: str) -> Iterator[Problem]:
    """``validateProbe``: one handler, non-negative numbers, a positive grace period."""
    handlers = [h for h in (probe.exec, probe.http_get, probe.tcp_socket, probe.grpc) if h is not None]
    if not handlers:
        yield path, "Required value: must specify a handler type"
    elif len(handlers) > 1:
        yield path, "Forbidden: may not specify more than 1 handler type"
    for wire, attr in _FIELDS:
        value: int = getattr(probe, attr)
        if value < 0:
            yield f"{path}.{wire}", f"Invalid value: {value}: {_NONNEGATIVE}"
    grace = probe.termination_grace_period_seconds
    if grace is not None and grace <= 0:
        yield f"{path}.terminationGracePeriodSeconds", f"Invalid value: {grace}: must be greater than 0"


def _must_be_one(probe: Probe, path: str) -> Iterator[Problem]:
    if probe.success_threshold not in (0, 1):  # 0: unset, defaulted to 1
        yield f"{path}.successThreshold", f"Invalid value: {probe.success_threshold}: must be 1"


def _container(c: Container, path: str) -> Iterator[Problem]:
    if c.liveness_probe is not None:
        yield from _probe(c.liveness_probe, f"{path}.livenessProbe")
        yield from _must_be_one(c.liveness_probe, f"{path}.livenessProbe")
    if c.readiness_probe is not None:
        p = f"{path}.readinessProbe"
        yield from _probe(c.readiness_probe, p)
        if c.readiness_probe.termination_grace_period_seconds is not None:
            grace = c.readiness_probe.termination_grace_period_seconds
            yield f"{p}.terminationGracePeriodSeconds", f"Invalid value: {grace}: must not be set for readinessProbes"
    if c.startup_probe is not None:
        yield from _probe(c.startup_probe, f"{path}.startupProbe")
        yield from _must_be_one(c.startup_probe, f"{path}.startupProbe")


def probe_problems(spec: PodSpec) -> Iterator[Problem]:
    """Every problem of the probes of ``spec``'s containers, as ``(path, detail)``."""
    for i, c in enumerate(spec.init_containers):
        path = f"spec.initContainers[{i}]"
        if c.restart_policy == "Always":  # a sidecar: probed like a regular container
            yield from _container(c, path)
            continue
        for wire, probe in (
            ("livenessProbe", c.liveness_probe),
            ("readinessProbe", c.readiness_probe),
            ("startupProbe", c.startup_probe),
        ):
            if probe is not None:
                yield f"{path}.{wire}", "Forbidden: may not be set for init containers without restartPolicy=Always"
    for i, c in enumerate(spec.containers):
        if c.liveness_probe is not None or c.readiness_probe is not None or c.startup_probe is not None:
            yield from _container(c, f"spec.containers[{i}]")
