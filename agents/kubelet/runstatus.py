"""The pod status of a ``PodRun`` (``podrun.py``), as upstream's kubelet reports it.

This module owns the shape of a status written while the containers run, restart or
end by themselves: container statuses from the run (``restartCount``, ``lastState``,
``ready``/``started`` as upstream's prober manager sets them: a regular container is
started once running and ready once running past ``ready-after``, or as its startup and
readiness probes say (``prober.py``); a sidecar is both once
running; a regular init container is ready once it exited 0) and the kubelet's conditions
as ``pkg/kubelet/status/generate.go`` builds them. It does not decide when to write
(``kubelet.py``), nor the statuses of admission, the Pending status of a pod whose
containers are being created, a start failure or a success (``podstatus.py``: a run that
succeeds is written with ``succeeded_status``, so that it is the same whichever way the
pod got there).

===========================  =========================================================
condition                    value
===========================  =========================================================
PodReadyToStartContainers    True while the run is not over
Initialized                  True once a regular container started (restarts keep it);
                             before: False ``ContainersNotInitialized``, "containers with
                             incomplete status: [...]" (regular init containers not
                             exited 0, sidecars not started; spec order)
Ready, ContainersReady       True when every sidecar and regular container is ready;
                             else False ``ContainersNotReady``, "containers with unready
                             status: [...]" (sidecars then containers, spec order); over:
                             False ``PodFailed``
===========================  =========================================================

Statuses of regular containers are sorted by name, init ones kept in spec order, as in
``podstatus.py``. A container waiting in CrashLoopBackOff says so as upstream's
``doBackOff`` does: "back-off 20s restarting failed container=web pod=web-0_default(uid)".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from msgspec.structs import replace

from agents.kubelet.podrun import (
    CRASH_LOOP_BACK_OFF,
    RUNNING,
    TERMINATED,
    ContainerRun,
    PodRun,
    RunPhase,
)
from agents.kubelet.podstatus import (
    CONTAINERS_READY,
    INITIALIZED,
    READY,
    READY_TO_START,
    go_list,
    merge_conditions,
)
from emulator.base.api.core import (
    Container,
    ContainerState,
    ContainerStateRunning,
    ContainerStateTerminated,
    ContainerStateWaiting,
    ContainerStatus,
    Pod,
    PodCondition,
    PodIP,
    PodStatus,
)
from emulator.base.runtime.clock import format_duration

__all__ = ["run_status"]

_POD_FAILED: Final = "PodFailed"
_NOT_READY: Final = "ContainersNotReady"

Stamp = Callable[[float], str]


def _sidecar(c: Container) -> bool:
    return c.restart_policy == "Always"


def _terminated(started: float | None, finished: float, code: int, reason: str, stamp: Stamp) -> ContainerState:
    return ContainerState(
        terminated=ContainerStateTerminated(
            exit_code=code,
            reason=reason,
            started_at=None if started is None else stamp(started),
            finished_at=stamp(finished),
        )
    )


def _container_status(
    c: Container, run: ContainerRun, run_of: PodRun, stamp: Stamp, *, regular_init: bool
) -> ContainerStatus:
    if run.state == RUNNING:
        assert run.started is not None
        state = ContainerState(running=ContainerStateRunning(started_at=stamp(run.started)))
        ready, started = run.ready, True
        if run is run_of.app and run_of.prober is not None:  # a regular container with probes
            ready, started = run_of.container_ready(c.name), run_of.container_started(c.name)
    elif run.state == TERMINATED:
        assert run.finished is not None
        state = _terminated(run.started, run.finished, run.exit_code, run.reason, stamp)
        ready, started = regular_init and run.exit_code == 0, False
    else:
        message = ""
        if run.reason == CRASH_LOOP_BACK_OFF:
            message = (
                f"back-off {format_duration(run.wait)} restarting failed container={c.name} pod={run_of.pod_label}"
            )
        state = ContainerState(waiting=ContainerStateWaiting(reason=run.reason, message=message))
        ready, started = False, False
    last = _EMPTY if run.last is None else _terminated(*run.last, stamp=stamp)
    return ContainerStatus(
        name=c.name,
        image=c.image,
        ready=ready,
        started=started,
        restart_count=run.restarts,
        state=state,
        last_state=last,
    )


_ALL_TRUE: Final = tuple(
    PodCondition(type=t, status="True") for t in (READY_TO_START, INITIALIZED, READY, CONTAINERS_READY)
)
_EMPTY: Final = ContainerState()


def _owned(run: PodRun) -> Sequence[PodCondition]:
    """The kubelet's conditions, from the run (every regular container shares ``run.app``)."""
    spec = run.spec
    over = run.phase is RunPhase.DONE
    sidecars_unready = (
        [c.name for c, r in zip(spec.init_containers, run.inits, strict=True) if _sidecar(c) and not r.ready]
        if spec.init_containers
        else []
    )
    if not over and run.app_started and run.all_ready() and not sidecars_unready:
        return _ALL_TRUE  # the common case, built once
    owned = [PodCondition(type=READY_TO_START, status="False" if over else "True")]
    if run.app_started:
        owned.append(PodCondition(type=INITIALIZED, status="True"))
    else:
        incomplete = [
            c.name
            for c, r in zip(spec.init_containers, run.inits, strict=True)
            if not (r.state == RUNNING if _sidecar(c) else r.state == TERMINATED and r.exit_code == 0)
        ]
        owned.append(
            PodCondition(
                type=INITIALIZED,
                status="False",
                reason="ContainersNotInitialized",
                message=f"containers with incomplete status: {go_list(incomplete)}",
            )
        )
    if over:
        owned += [PodCondition(type=t, status="False", reason=_POD_FAILED) for t in (READY, CONTAINERS_READY)]
        return owned
    unready = sidecars_unready + [c.name for c in spec.containers if not run.container_ready(c.name)]
    message = f"containers with unready status: {go_list(unready)}"
    owned += [
        PodCondition(type=t, status="False", reason=_NOT_READY, message=message) for t in (READY, CONTAINERS_READY)
    ]
    return owned


def run_status(
    pod: Pod,
    run: PodRun,
    *,
    stamp: Stamp,
    now: float,
    host_ip: str,
    pod_ip: str,
    start_time: str,
    generation: int = 0,
) -> PodStatus:
    """The status of ``pod`` whose containers are in ``run`` at ``now`` (phase Pending
    while initializing, Running once its containers started, Failed when the run failed).
    ``generation``: as ``podstatus.merge_conditions``'."""
    spec = pod.spec
    app = run.app
    statuses = []  # loops, not comprehensions: no frame of their own per status write
    for c in spec.containers:
        statuses.append(_container_status(c, app, run, stamp, regular_init=False))
    if len(statuses) > 1:
        statuses.sort(key=lambda s: s.name)
    inits = []
    for c, r in zip(spec.init_containers, run.inits, strict=True):
        inits.append(_container_status(c, r, run, stamp, regular_init=not _sidecar(c)))
    return replace(
        pod.status,
        phase=run.pod_phase(),
        conditions=merge_conditions(pod.status.conditions, _owned(run), stamp(now), generation),
        host_ip=host_ip,
        pod_ip=pod_ip,
        host_ips=[PodIP(ip=host_ip)] if host_ip else [],  # ``ip_list``, written out
        pod_ips=[PodIP(ip=pod_ip)] if pod_ip else [],
        start_time=start_time,
        container_statuses=statuses,
        init_container_statuses=inits,
    )
