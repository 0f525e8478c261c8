"""The pod statuses a kubelet writes, as pure functions of the pod and a few facts.

This module owns the *shape* of each status the emulated kubelet reports, following
upstream ``generateAPIPodStatus`` / ``pkg/kubelet/status``: which conditions the kubelet
owns, their reasons and messages, container statuses (regular ones sorted by name, init
ones in spec order) and what is kept from the previous status (``qosClass``,
``nominatedNodeName``, conditions the kubelet does not own such as ``PodScheduled``).
It does not decide *when* a status is written (``kubelet.py``).

=========  =========  ==========================  =====================================
status     phase      containers                  kubelet conditions
=========  =========  ==========================  =====================================
pending    Pending    waiting ContainerCreating   PodReadyToStartContainers, Ready,
                      (PodInitializing with init  ContainersReady False; Initialized
                      containers)                 True (False with init containers)
running    Running    running, ready, started;    all True
                      init: terminated Completed
succeeded  Succeeded  terminated, exit 0,         Initialized True, Ready and
                      Completed                   ContainersReady False (PodCompleted),
                                                  PodReadyToStartContainers False
rejected   Failed     unchanged                   unchanged ("Pod was rejected: ...")
failed     Failed     terminated, exit 128,       Initialized True, Ready and
(start)               the fault's reason          ContainersReady False (PodFailed),
                      (``StartError``)            PodReadyToStartContainers False
=========  =========  ==========================  =====================================

``start_failed_status`` is the emulator's stand-in for a container the runtime cannot
start (a ``containerStartFailure`` fault): upstream reports such a container as
terminated with ``StartError`` and exit code 128 and, under ``restartPolicy: Always``,
restarts it with a CrashLoopBackOff; here every container is reported terminated that
way and the pod fails at once, whatever its restart policy.

A condition keeps its ``lastTransitionTime`` while its status does not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from msgspec.structs import replace

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

__all__ = [
    "CONTAINERS_READY",
    "INITIALIZED",
    "KUBELET_CONDITIONS",
    "READY",
    "READY_TO_START",
    "go_list",
    "ip_list",
    "merge_conditions",
    "merge_conditions_reference",
    "needs_reconcile",
    "pending_status",
    "pending_status_reference",
    "reconciled_status",
    "rejected_status",
    "running_status",
    "start_failed_status",
    "succeeded_status",
]

READY_TO_START: Final = "PodReadyToStartContainers"
INITIALIZED: Final = "Initialized"
READY: Final = "Ready"
CONTAINERS_READY: Final = "ContainersReady"
KUBELET_CONDITIONS: Final = (READY_TO_START, INITIALIZED, READY, CONTAINERS_READY)
"""The pod conditions the kubelet owns, in the order it reports them."""

_COMPLETED: Final = "Completed"
_POD_COMPLETED: Final = "PodCompleted"
_POD_FAILED: Final = "PodFailed"
START_ERROR_EXIT_CODE: Final = 128
"""The exit code containerd reports for a container that could not be started."""


def ip_list(ip: str) -> list[PodIP]:
    """``status.podIPs``/``hostIPs`` of a single-stack address: the address, or none."""
    return [PodIP(ip=ip)] if ip else []


def go_list(names: Sequence[str]) -> str:
    """A string slice as Go's ``%s`` prints it: ``[a b]``."""
    return "[" + " ".join(names) + "]"


def merge_conditions(
    old: Sequence[PodCondition], owned: Sequence[PodCondition], now: str, generation: int = 0
) -> list[PodCondition]:
    """The kubelet's ``owned`` conditions first (a transition time kept while the status
    holds, else ``now``), then the other conditions of ``old`` in their order, then
    ``PodScheduled=True`` if the pod had none (upstream always reports it). ``generation``
    (not 0): the owned ones marked observed at it, as the kubelet's write marks them
    (``resize.with_resize_status``, which then has nothing left to copy for them).

    One frame (every status write calls it): the lookups by type are filled by loops rather
    than by comprehensions, whose frames cost more than these few items
    (``merge_conditions_reference`` is the plain form, tested equal)."""
    before: dict[str, PodCondition] = {}
    for c in old:
        before[c.type] = c  # the last of a type wins, as in a dict display
    out: list[PodCondition] = []
    types: set[str] = set()
    for cond in owned:
        kind = cond.type
        types.add(kind)
        prev = before.get(kind)
        since = now
        if prev is not None and prev.status == cond.status and prev.last_transition_time:
            since = prev.last_transition_time
        if generation:
            out.append(replace(cond, last_transition_time=since, observed_generation=generation))
        else:
            out.append(replace(cond, last_transition_time=since))
    for c in old:
        if c.type not in types:
            out.append(c)
    if "PodScheduled" not in before:
        # upstream generateAPIPodStatus: a pod on a kubelet was scheduled, even if bound by
        # hand through spec.nodeName (the scheduler's binding sets it otherwise).
        out.append(PodCondition(type="PodScheduled", status="True", last_transition_time=now))
    return out


def merge_conditions_reference(
    old: Sequence[PodCondition], owned: Sequence[PodCondition], now: str, generation: int = 0
) -> list[PodCondition]:
    """``merge_conditions`` with comprehensions (the plain form its one frame is tested against)."""
    before = {c.type: c for c in old}
    out: list[PodCondition] = []
    for cond in owned:
        prev = before.get(cond.type)
        since = now
        if prev is not None and prev.status == cond.status and prev.last_transition_time:
            since = prev.last_transition_time
        if generation:
            out.append(replace(cond, last_transition_time=since, observed_generation=generation))
        else:
            out.append(replace(cond, last_transition_time=since))
    types = {c.type for c in owned}
    for c in old:
        if c.type not in types:
            out.append(c)
    if "PodScheduled" not in before:
        out.append(PodCondition(type="PodScheduled", status="True", last_transition_time=now))
    return out


def _owned(status: PodStatus) -> list[tuple[str, str]]:
    return sorted((c.type, c.status) for c in status.conditions if c.type in KUBELET_CONDITIONS)


def needs_reconcile(current: PodStatus, reported: PodStatus | None) -> bool:
    """Upstream status manager's ``needsReconcile``, on the conditions: whether the API's
    status (``current``) says otherwise than the last status this kubelet wrote
    (``reported``) in a condition the kubelet owns (someone else rewrote it)."""
    if reported is None or current is reported:
        return False
    return _owned(current) != _owned(reported)


def reconciled_status(current: PodStatus, reported: PodStatus | None) -> PodStatus:
    """``current`` with the kubelet's own conditions as it last reported them (the others,
    a ``DisruptionTarget`` say, kept: upstream ``mergePodStatus``)."""
    if reported is None:
        return current
    owned = {c.type: c for c in reported.conditions if c.type in KUBELET_CONDITIONS}
    conditions = [owned.pop(c.type) if c.type in owned else c for c in current.conditions]
    return replace(current, conditions=conditions + list(owned.values()))


def _sidecar(c: Container) -> bool:
    return c.restart_policy == "Always"


def _status(c: Container, state: ContainerState, *, ready: bool, started: bool) -> ContainerStatus:
    return ContainerStatus(name=c.name, image=c.image, ready=ready, started=started, state=state)


def _by_name(statuses: list[ContainerStatus]) -> list[ContainerStatus]:
    return sorted(statuses, key=lambda s: s.name)


def pending_status(pod: Pod, *, host_ip: str, pod_ip: str, start_time: str, now: str, generation: int = 0) -> PodStatus:
    """Admitted, containers being created (images pulling): phase Pending. ``generation``:
    as ``merge_conditions``'."""
    spec = pod.spec
    parts = _pending_parts(spec.containers, spec.init_containers)
    return _pending(pod, parts, host_ip=host_ip, pod_ip=pod_ip, start_time=start_time, now=now, generation=generation)


def _pending(
    pod: Pod, parts: _PendingParts, *, host_ip: str, pod_ip: str, start_time: str, now: str, generation: int = 0
) -> PodStatus:
    statuses, inits, owned = parts
    return replace(
        pod.status,
        phase="Pending",
        conditions=merge_conditions(pod.status.conditions, owned, now, generation),
        host_ip=host_ip,
        pod_ip=pod_ip,
        host_ips=[PodIP(ip=host_ip)] if host_ip else [],  # ``ip_list``, written out
        pod_ips=[PodIP(ip=pod_ip)] if pod_ip else [],
        start_time=start_time,
        container_statuses=list(statuses),
        init_container_statuses=list(inits),
    )


_PendingParts = tuple[tuple[ContainerStatus, ...], tuple[ContainerStatus, ...], tuple[PodCondition, ...]]
_PENDING_MEMO: dict[tuple[int, int], tuple[Sequence[Container], Sequence[Container], _PendingParts]] = {}
_PENDING_MEMO_SIZE: Final = 256


def _pending_parts(containers: Sequence[Container], inits: Sequence[Container]) -> _PendingParts:
    """What a Pending status takes from the spec alone: its container statuses (regular ones
    sorted by name, init ones in spec order) and the kubelet's conditions before their
    transition times; kept per pair of container lists. The lists are the spec's own (pods of
    one template share them: the API server's ``PodAdmission`` hands out one spec per
    template and binding keeps its lists), held here so an id is never reused while kept;
    like every spec list they are never mutated. ``tests/kubelet/test_status_shortcuts.py``
    compares the result with ``pending_status_reference``."""
    key = (id(containers), id(inits))
    hit = _PENDING_MEMO.get(key)
    if hit is not None and hit[0] is containers and hit[1] is inits:
        return hit[2]
    parts = _pending_parts_of(containers, inits)
    if len(_PENDING_MEMO) >= _PENDING_MEMO_SIZE:
        _PENDING_MEMO.clear()
    _PENDING_MEMO[key] = (containers, inits, parts)
    return parts


def _pending_parts_of(containers: Sequence[Container], inits: Sequence[Container]) -> _PendingParts:
    waiting = ContainerState(waiting=ContainerStateWaiting(reason="PodInitializing" if inits else "ContainerCreating"))
    unready = go_list(sorted(c.name for c in containers))
    owned = (
        PodCondition(type=READY_TO_START, status="False"),
        PodCondition(type=INITIALIZED, status="True")
        if not inits
        else PodCondition(
            type=INITIALIZED,
            status="False",
            reason="ContainersNotInitialized",
            message=f"containers with incomplete status: {go_list([c.name for c in inits])}",
        ),
        PodCondition(
            type=READY,
            status="False",
            reason="ContainersNotReady",
            message=f"containers with unready status: {unready}",
        ),
        PodCondition(
            type=CONTAINERS_READY,
            status="False",
            reason="ContainersNotReady",
            message=f"containers with unready status: {unready}",
        ),
    )
    statuses = tuple(_by_name([_status(c, waiting, ready=False, started=False) for c in containers]))
    return statuses, tuple(_status(c, waiting, ready=False, started=False) for c in inits), owned


def pending_status_reference(pod: Pod, *, host_ip: str, pod_ip: str, start_time: str, now: str) -> PodStatus:
    """``pending_status`` with its spec parts built afresh, not memoised (the reference its memo
    is tested against)."""
    spec = pod.spec
    parts = _pending_parts_of(spec.containers, spec.init_containers)
    return _pending(pod, parts, host_ip=host_ip, pod_ip=pod_ip, start_time=start_time, now=now)


def running_status(pod: Pod, *, host_ip: str, pod_ip: str, start_time: str, now: str) -> PodStatus:
    """Every container started and ready at ``now``: phase Running."""
    running = ContainerState(running=ContainerStateRunning(started_at=now))
    done = ContainerState(
        terminated=ContainerStateTerminated(exit_code=0, reason=_COMPLETED, started_at=now, finished_at=now)
    )
    owned = [PodCondition(type=t, status="True") for t in KUBELET_CONDITIONS]
    inits = [
        _status(c, running, ready=True, started=True) if _sidecar(c) else _status(c, done, ready=True, started=False)
        for c in pod.spec.init_containers
    ]
    return replace(
        pod.status,
        phase="Running",
        conditions=merge_conditions(pod.status.conditions, owned, now),
        host_ip=host_ip,
        pod_ip=pod_ip,
        host_ips=ip_list(host_ip),
        pod_ips=ip_list(pod_ip),
        start_time=start_time,
        container_statuses=_by_name([_status(c, running, ready=True, started=True) for c in pod.spec.containers]),
        init_container_statuses=inits,
    )


def _terminated(cs: ContainerStatus, now: str) -> ContainerStatus:
    state = cs.state
    if state.terminated is not None:
        return cs
    started_at = state.running.started_at if state.running is not None else None
    term = ContainerStateTerminated(exit_code=0, reason=_COMPLETED, started_at=started_at, finished_at=now)
    return replace(cs, ready=False, started=False, state=ContainerState(terminated=term))


_SUCCEEDED_OWNED: Final = (
    PodCondition(type=READY_TO_START, status="False"),
    PodCondition(type=INITIALIZED, status="True", reason=_POD_COMPLETED),
    PodCondition(type=READY, status="False", reason=_POD_COMPLETED),
    PodCondition(type=CONTAINERS_READY, status="False", reason=_POD_COMPLETED),
)
"""A success's conditions before their transition times: the same for every pod, built once."""


def succeeded_status(pod: Pod, *, now: str, generation: int = 0) -> PodStatus:
    """Every container exited 0 at ``now``: phase Succeeded (IPs and start time kept).
    ``generation``: as ``merge_conditions``'."""
    status = pod.status
    inits = status.init_container_statuses  # most pods have none: no comprehension then
    return replace(
        status,
        phase="Succeeded",
        conditions=merge_conditions(status.conditions, _SUCCEEDED_OWNED, now, generation),
        container_statuses=[_terminated(cs, now) for cs in status.container_statuses],
        init_container_statuses=[_terminated(cs, now) for cs in inits] if inits else [],
    )


def start_failed_status(
    pod: Pod, *, reason: str, message: str, host_ip: str, pod_ip: str, start_time: str, now: str
) -> PodStatus:
    """The containers could not be started: phase Failed, each container terminated with
    ``reason`` and exit code 128 at ``now``."""
    term = ContainerState(
        terminated=ContainerStateTerminated(
            exit_code=START_ERROR_EXIT_CODE, reason=reason, message=message, finished_at=now
        )
    )
    owned = [
        PodCondition(type=READY_TO_START, status="False"),
        PodCondition(type=INITIALIZED, status="True"),
        PodCondition(type=READY, status="False", reason=_POD_FAILED),
        PodCondition(type=CONTAINERS_READY, status="False", reason=_POD_FAILED),
    ]
    spec = pod.spec
    return replace(
        pod.status,
        phase="Failed",
        conditions=merge_conditions(pod.status.conditions, owned, now),
        host_ip=host_ip,
        pod_ip=pod_ip,
        host_ips=ip_list(host_ip),
        pod_ips=ip_list(pod_ip),
        start_time=start_time,
        container_statuses=_by_name([_status(c, term, ready=False, started=False) for c in spec.containers]),
        init_container_statuses=[_status(c, term, ready=False, started=False) for c in spec.init_containers],
    )


def rejected_status(pod: Pod, reason: str, message: str) -> PodStatus:
    """Upstream ``rejectPod``: phase Failed, the admission reason, ``"Pod was rejected: "``
    + message; everything else (QoS class, PodScheduled) as it was."""
    return replace(pod.status, phase="Failed", reason=reason, message=f"Pod was rejected: {message}")
