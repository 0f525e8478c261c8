"""A pod's readiness, liveness and startup probes as upstream's prober manager runs them.

This module owns ``Prober``: one worker per (container, probe) as in upstream's
``pkg/kubelet/prober`` (``prober_manager.go``, ``worker.go`` ``doProbe``, ``results``), on
the virtual clock. It decides no container's fate itself: ``podrun.PodRun`` asks it when the
next probe is due (``next_due``), runs it (``tick``) and acts on what it returns (a
container to kill, Unhealthy events); ``runstatus.py`` reads ``started``/``ready``. A pod
with no probe gets no ``Prober`` (``prober_for`` returns None): it costs nothing.

The model:

- A worker probes at ``initialDelaySeconds`` after the container started, then every
  ``periodSeconds`` (defaults of ``SetDefaults_Probe``: period 10 s, timeout 1 s, success 1,
  failure 3). Upstream's workers tick from their creation and skip the initial delay; the
  random first-tick jitter upstream adds right after a kubelet restart is not modelled.
- A probe succeeds unless the pod says otherwise: ``emulator.k8s.io/liveness-fails-after``,
  ``readiness-fails-after`` and ``startup-fails-after`` (Go durations) make that probe fail
  from that long after the container started; a readiness probe also fails before the
  pod's ``ready-after`` (the app is not ready yet). ``timeoutSeconds`` is accepted and never
  reached (a probe answers at once).
- ``doProbe``'s thresholds: a result is set once the same outcome was seen
  ``successThreshold`` / ``failureThreshold`` times in a row; readiness starts Failure,
  liveness Success, startup unknown. Every failed probe is an ``Unhealthy`` Warning
  ("Liveness probe failed: <output>", ``prober.go``), worded as the handler would fail:
  httpGet ``HTTP probe failed with statuscode: 500``, tcpSocket ``dial tcp <ip>:<port>:
  connect: connection refused``, grpc ``service unhealthy (responded with "NOT_SERVING")``,
  exec: no output.
- A startup probe gates the others: liveness and readiness do not run, and the container
  is neither started nor ready, until it succeeds; then it stops.
- A liveness or startup Failure kills the container (``computePodActions``: "Container c
  failed liveness probe, will be restarted"); the worker holds until it runs again. The
  kill is immediate and the container exits 143 (128 + SIGTERM), then ``restartPolicy`` and
  CrashLoopBackOff apply as to any exit (``podrun.py``).

Deviation: the regular containers of a pod share one run (``podrun.py``), so a kill restarts
them all; readiness and ``started`` are per container.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from agents.kubelet.lifecycle import Lifecycle
from emulator.base.api.core import Container
from emulator.base.api.probe import PROBE_DEFAULTS, Probe

__all__ = ["KILLED_EXIT_CODE", "LIVENESS", "READINESS", "STARTUP", "Prober", "prober_for"]

STARTUP: Final = "Startup"
LIVENESS: Final = "Liveness"
READINESS: Final = "Readiness"
KILLED_EXIT_CODE: Final = 143
"""What a container killed after a failed probe exits with: 128 + SIGTERM."""
_NEVER: Final = math.inf


def _setting(probe: Probe, attr: str) -> int:
    value: int = getattr(probe, attr)
    return value or PROBE_DEFAULTS.get(attr, 0)


def _output(probe: Probe, pod_ip: str) -> str:
    if probe.http_get is not None:
        return "HTTP probe failed with statuscode: 500"
    if probe.tcp_socket is not None:
        return f"dial tcp {probe.tcp_socket.host or pod_ip}:{probe.tcp_socket.port}: connect: connection refused"
    if probe.grpc is not None:
        return 'service unhealthy (responded with "NOT_SERVING")'
    return ""


@dataclass(slots=True)
class _Worker:
    """Upstream's probe ``worker``: one probe of one container."""

    container: str
    kind: str
    delay: float
    period: float
    success: int
    failure: int
    ok_from: float
    fails_after: float | None
    output: str
    next_at: float = _NEVER
    last: bool | None = None
    count: int = 0
    result: bool | None = None

    def initial(self) -> bool | None:
        return {READINESS: False, LIVENESS: True}.get(self.kind)

    def ok(self, age: float) -> bool:
        return age >= self.ok_from and (self.fails_after is None or age < self.fails_after)

    def first_tick(self, origin: float, at_least: float) -> float:
        """The first tick of this worker at or after ``at_least``."""
        first = origin + self.delay
        if at_least <= first:
            return first
        return first + math.ceil((at_least - first) / self.period) * self.period


class Prober:
    """The probe workers of one pod's regular containers (see the module docstring)."""

    def __init__(self, workers: Sequence[_Worker]) -> None:
        self._workers = list(workers)
        self._origin = 0.0
        self._startup = {w.container for w in workers if w.kind == STARTUP}
        self._readiness = {w.container for w in workers if w.kind == READINESS}

    def __repr__(self) -> str:
        return f"<Prober workers={len(self._workers)}>"

    def restart(self, origin: float, now: float, *, ready: bool = False) -> None:
        """The containers (re)started at ``origin``: every worker starts over; ``ready``:
        readiness and startup start Success (a pod adopted Ready after a kubelet restart)."""
        self._origin = origin
        for w in self._workers:  # each container's startup worker comes first
            w.last, w.count = None, 0
            w.result = True if ready and w.kind != LIVENESS else w.initial()
            if w.kind == STARTUP:
                w.next_at = _NEVER if ready else w.first_tick(origin, now)
            else:
                w.next_at = _NEVER if self.gated(w.container) else w.first_tick(origin, now)

    def stop(self) -> None:
        """The containers are not running: no probe until ``restart``."""
        for w in self._workers:
            w.next_at = _NEVER

    def gated(self, container: str) -> bool:
        """A startup probe has not succeeded yet."""
        return container in self._startup and not any(
            w.result for w in self._workers if w.container == container and w.kind == STARTUP
        )

    def started(self, container: str) -> bool:
        return not self.gated(container)

    def ready(self, container: str, fallback: bool) -> bool:
        """Started, and its readiness probe's result Success (none: ``fallback``)."""
        if self.gated(container):
            return False
        if container not in self._readiness:
            return fallback
        return any(w.result for w in self._workers if w.container == container and w.kind == READINESS)

    def next_due(self) -> float | None:
        due = min((w.next_at for w in self._workers), default=_NEVER)
        return None if due == _NEVER else due

    def tick(self, now: float) -> tuple[bool, list[tuple[str, str]], tuple[str, str] | None]:
        """Run the probes due at ``now`` (``doProbe``): whether a result changed, the failed
        probes' (container, Unhealthy message), the first (container, kind) to kill."""
        changed, failures, kill = False, list[tuple[str, str]](), None
        age = now - self._origin
        for w in self._workers:
            if w.next_at > now:
                continue
            ok = w.ok(age)
            if not ok:
                failures.append((w.container, f"{w.kind} probe failed: {w.output}"))
            w.count = w.count + 1 if ok is w.last else 1
            w.last = ok
            w.next_at = now + w.period
            if w.count < (w.success if ok else w.failure):
                continue
            changed |= w.result is not ok
            w.result = ok
            if not ok and w.kind != READINESS:
                kill = kill or (w.container, w.kind)
                w.count, w.next_at = 0, _NEVER  # on hold until the container runs again
            elif ok and w.kind == STARTUP:
                w.next_at = _NEVER
                for other in self._workers:
                    if other.container == w.container and other.kind != STARTUP:
                        other.next_at = other.first_tick(self._origin, now)
            elif ok:  # steady success: nothing to see until the probe would start failing
                fails = w.fails_after
                w.next_at = _NEVER if fails is None else w.first_tick(self._origin, self._origin + fails)
        return changed, failures, kill


def _workers(c: Container, life: Lifecycle, pod_ip: str) -> list[_Worker]:
    out = []
    for kind, probe, ok_from, fails in (
        (STARTUP, c.startup_probe, 0.0, life.startup_fails_after),
        (LIVENESS, c.liveness_probe, 0.0, life.liveness_fails_after),
        (READINESS, c.readiness_probe, life.ready_after, life.readiness_fails_after),
    ):
        if probe is None:
            continue
        out.append(
            _Worker(
                container=c.name,
                kind=kind,
                delay=float(probe.initial_delay_seconds),
                period=float(_setting(probe, "period_seconds")),
                success=_setting(probe, "success_threshold"),
                failure=_setting(probe, "failure_threshold"),
                ok_from=ok_from,
                fails_after=fails,
                output=_output(probe, pod_ip),
            )
        )
    return out


def prober_for(containers: Sequence[Container], life: Lifecycle, pod_ip: str) -> Prober | None:
    """The probe workers of ``containers`` (a pod's regular ones); None when none has a probe."""
    for c in containers:  # the common pod has none: no list built (a loop, not ``any()``)
        if c.startup_probe is not None or c.liveness_probe is not None or c.readiness_probe is not None:
            break
    else:
        return None
    workers = [
        w
        for c in containers
        if c.startup_probe is not None or c.liveness_probe is not None or c.readiness_probe is not None
        for w in _workers(c, life, pod_ip)
    ]
    return Prober(workers) if workers else None
