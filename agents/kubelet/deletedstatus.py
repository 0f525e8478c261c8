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

A pod deleted before its containers started (admitted, still Pending: pulling an image,
in its start delay, ``CreateContainerConfigError``, a volume ``ContainerCreating``) ends
``Failed`` too (``unstarted_deleted_status``): upstream's ``syncTerminatingPod`` reports
it Pending (``getPhase``: a waiting container keeps a pod Pending) and the status
manager's ``TerminatePod`` then makes every pod that is not terminal ``Failed`` and marks
its containers terminated with ``ContainerStatusUnknown``, exit code 137, "The container
could not be located when the pod was terminated": every regular container once the pod
``hasPodInitialized`` (no init containers, or the last one exited 0), and the init
containers up to the last one that left Waiting (``initializedContainers``: at least the
first). Its conditions stay those of a Pending pod (``mergePodStatus`` only rewrites a
``Ready`` that is True).
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

__all__ = ["SIGKILL_EXIT_CODE", "STATUS_UNKNOWN", "deleted_status", "unstarted_deleted_status"]

SIGKILL_EXIT_CODE: Final = 137
"""128 + SIGKILL: a container still running when the grace period ended."""
_EMPTY: Final = ContainerState()
STATUS_UNKNOWN: Final = ContainerState(
    terminated=ContainerStateTerminated(
        exit_code=SIGKILL_EXIT_CODE,
        reason="ContainerStatusUnknown",
        message="The container could not be located when the pod was terminated",
    )
)
"""``TerminatePod``'s state for a container with no evidence of its end."""


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


def _left_waiting(cs: ContainerStatus) -> bool:
    return cs.state.waiting is None or cs.last_state.terminated is not None


def _exited_zero(state: ContainerState) -> bool:
    return state.terminated is not None and state.terminated.exit_code == 0


def _initialized(pod: Pod) -> bool:
    """Upstream ``hasPodInitialized``: no init containers, a regular container that left
    Waiting, or a last init container that exited 0."""
    if not pod.spec.init_containers:
        return True
    status = pod.status
    if any(_left_waiting(cs) for cs in status.container_statuses):
        return True
    if status.init_container_statuses:
        last = status.init_container_statuses[-1]
        return _exited_zero(last.last_state) or _exited_zero(last.state)
    return False


def _unknown(cs: ContainerStatus) -> ContainerStatus:
    return cs if cs.state.terminated is not None else replace(cs, ready=False, started=False, state=STATUS_UNKNOWN)


def unstarted_deleted_status(pod: Pod, pending: PodStatus) -> PodStatus:
    """The status the kubelet writes for ``pod``, deleted before its containers started,
    from ``pending`` (its Pending status as the kubelet generates it): upstream
    ``status_manager.go`` ``TerminatePod``."""
    containers = pending.container_statuses
    if _initialized(pod):
        containers = [_unknown(cs) for cs in containers]
    inits = pending.init_container_statuses
    tried = next((i + 1 for i in range(len(inits) - 1, -1, -1) if _left_waiting(inits[i])), min(len(inits), 1))
    inits = [_unknown(cs) if i < tried else cs for i, cs in enumerate(inits)]
    return replace(pending, phase="Failed", container_statuses=containers, init_container_statuses=inits)
