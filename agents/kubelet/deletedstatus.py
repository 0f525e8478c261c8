"""The status the kubelet writes for a pod deleted while its containers ran: a terminal phase.

Since 1.27 (upstream #115331) the kubelet, on a graceful delete, stops the containers and
writes the pod's final status before it confirms the deletion (``pkg/kubelet/status``
``status_manager.go`` ``TerminatePod``/``syncPod``, ``kubelet_pods.go``
``generateAPIPodStatus`` with ``podIsTerminal``), so a controller or ``kubectl get -w`` sees
the pod end as ``Succeeded`` or ``Failed`` before it is gone. This module owns that status,
``deleted_status``; ``kubelet.py`` decides when to write it.

- Each running container is terminated at the kill: exit code 0, ``Completed``, when it
  stopped by itself within the grace period (the emulator's ``kubelet.termination`` time: an
  app that handles SIGTERM); 137, ``Error``, when it was still running at the grace period's
  end and was SIGKILLed. A container waiting in CrashLoopBackOff reports its last exit.
- The phase is ``getPhase``'s for a terminal pod: ``Succeeded`` if every regular container
  exited 0, else ``Failed``, whatever the ``restartPolicy`` (sidecars' exits do not count).
- The kubelet's conditions as ``generate.go`` builds them for a terminal phase:
  ``PodReadyToStartContainers`` False; ``Ready``/``ContainersReady`` False with reason
  ``PodCompleted`` (Succeeded) or ``PodFailed``; ``Initialized`` kept (``PodCompleted`` on
  a Succeeded pod).

A pod whose containers had not started yet (queued, pulling) gets no such write: it is
confirmed deleted as before.
"""

from __future__ import annotations

from typing import Final

from msgspec.structs import replace

from agents.kubelet.podstatus import CONTAINERS_READY, INITIALIZED, READY, READY_TO_START, merge_conditions
from emulator.base.api.core import (
    ContainerState,
    ContainerStateTerminated,
    ContainerStatus,
    Pod,
    PodCondition,
    PodStatus,
)

__all__ = ["SIGKILL_EXIT_CODE", "deleted_status"]

SIGKILL_EXIT_CODE: Final = 137
"""128 + SIGKILL: a container still running when the grace period ended."""
_EMPTY: Final = ContainerState()


def _stopped(cs: ContainerStatus, code: int, now: str) -> ContainerStatus:
    state = cs.state
    if state.terminated is not None:
        return cs
    if state.running is None:  # waiting: a crash-looping container's last exit is its state
        if cs.last_state.terminated is None:
            return cs
        return replace(cs, ready=False, started=False, state=cs.last_state, last_state=_EMPTY)
    term = ContainerStateTerminated(
        exit_code=code,
        reason="Completed" if code == 0 else "Error",
        started_at=state.running.started_at,
        finished_at=now,
    )
    return replace(cs, ready=False, started=False, state=ContainerState(terminated=term))


def deleted_status(pod: Pod, *, killed: bool, now: str) -> PodStatus:
    """``pod``'s status once the kubelet stopped its containers at ``now`` for its deletion;
    ``killed``: they were SIGKILLed at the end of the grace period."""
    code = SIGKILL_EXIT_CODE if killed else 0
    status = pod.status
    containers = [_stopped(cs, code, now) for cs in status.container_statuses]
    ok = all(cs.state.terminated is not None and cs.state.terminated.exit_code == 0 for cs in containers)
    phase = "Succeeded" if ok else "Failed"
    reason = "PodCompleted" if ok else "PodFailed"
    init = next((c for c in status.conditions if c.type == INITIALIZED), None)
    if ok or init is None:
        init = PodCondition(type=INITIALIZED, status="True", reason=reason if ok else "")
    owned = [PodCondition(type=READY_TO_START, status="False"), init]
    owned += [PodCondition(type=t, status="False", reason=reason) for t in (READY, CONTAINERS_READY)]
    return replace(
        status,
        phase=phase,
        conditions=merge_conditions(status.conditions, owned, now),
        container_statuses=containers,
        init_container_statuses=[_stopped(cs, code, now) for cs in status.init_container_statuses],
    )
