"""In-place pod resize on the node (``InPlacePodVerticalScaling``, beta and on in 1.33/1.34):
upstream's allocation manager (``pkg/kubelet/allocation/allocation_manager.go``:
``handlePodResourcesResize``, ``canResizePod``, ``RetryPendingResizes``) and the status
manager's resize conditions, on the kubelet's own accounting (``NodeUsage``).

A pod's *allocated* resources are what the kubelet admitted it with (its resizable containers'
requests and limits: the regular ones and the sidecars), its *actuated* ones what its
containers run with. When the desired resources (the spec, written through ``pods/resize``)
differ from the allocated ones:

==============================================  =============================================
check (in upstream's order)                      outcome
==============================================  =============================================
cpu or memory requested beyond the node's        ``PodResizePending`` ``Infeasible``: "Node
allocatable (memory first)                        didn't have enough capacity: memory,
                                                  requested: N, capacity: M"
the pod, resized, is not admitted next to the    ``PodResizePending`` ``Deferred`` with the
other admitted pods (their allocated resources)  admission's message ("Node didn't have enough
                                                  resource: cpu, requested: ..., used: ...,
                                                  capacity: ...")
otherwise                                         accepted: allocated = desired (the node's
                                                  accounting too), ``PodResizeInProgress``
                                                  while actuating (``ACTUATION_SECONDS`` on the
                                                  injected clock), then actuated = allocated
                                                  and the condition cleared
==============================================  =============================================

Pending resizes are tried again, highest priority first then oldest, whenever resources may
have come free: a pod released from the node, a resize actuated (upstream's
``RetryPendingResizes`` on pod removal and resize completion). The status the kubelet writes
carries ``containerStatuses[].allocatedResources`` (the allocated requests) and, for a running
container, ``resources`` (the actuated requirements), as upstream's
``convertToAPIContainerStatuses`` does; 1.34 no longer writes the deprecated ``status.resize``.
The kubelet's statuses also carry ``observedGeneration`` (1.34's PodObservedGenerationTracking,
beta and on), the pod's and its own conditions' (``with_resize_status``'s ``generation``).

A container whose ``resizePolicy`` says ``RestartContainer`` for a resource the resize changes
(a cpu or memory request or limit) is restarted to take it, as upstream's
``computePodResizeAction`` kills and starts it in the same sync (``restart_names``): a
``Killing`` Event "Container c resize requires restart", an exit 143, ``restartCount`` + 1,
the crash back-off as for any restart. Deviation: a pod's regular containers share one run in
this kubelet (``podrun.py``), so they restart together; a sidecar takes its resize in place.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final

from msgspec import UNSET
from msgspec.structs import replace

from agents.kubelet.admission import NodeUsage, admission_failures
from agents.kubelet.podstatus import KUBELET_CONDITIONS
from emulator.base.api.core import (
    ContainerStatus,
    Node,
    Pod,
    PodCondition,
    PodStatus,
    ResourceRequirements,
)
from emulator.base.api.podresize import RESTART_CONTAINER
from emulator.base.api.resources import CPU, MEMORY, node_allocatable, pod_requests
from emulator.base.runtime.clock import Clock

__all__ = [
    "ACTUATION_SECONDS",
    "DEFERRED",
    "INFEASIBLE",
    "POD_RESIZE_IN_PROGRESS",
    "POD_RESIZE_PENDING",
    "Allocation",
    "Resizer",
    "allocated_pod",
    "resizable",
    "restart_names",
    "settled",
    "with_resize_status",
    "with_resize_status_reference",
]

POD_RESIZE_PENDING: Final = "PodResizePending"
POD_RESIZE_IN_PROGRESS: Final = "PodResizeInProgress"
DEFERRED: Final = "Deferred"
INFEASIBLE: Final = "Infeasible"
ACTUATION_SECONDS: Final = 0.1
"""How long the emulated runtime takes to apply a resize to the containers."""
_RESIZE_CONDITIONS: Final = (POD_RESIZE_PENDING, POD_RESIZE_IN_PROGRESS)
_OWNED: Final = frozenset((*KUBELET_CONDITIONS, *_RESIZE_CONDITIONS))
_EMPTY: Final = PodStatus()

Allocation = dict[str, ResourceRequirements]
"""Container name → requirements, for the resizable containers (regular and sidecar)."""


def resizable(pod: Pod) -> Allocation:
    """The desired requirements of ``pod``'s resizable containers."""
    out: Allocation = {}
    for c in pod.spec.init_containers:
        if c.restart_policy == "Always":
            out[c.name] = c.resources
    for c in pod.spec.containers:
        out[c.name] = c.resources
    return out


def _changed(name: str, new: ResourceRequirements, old: ResourceRequirements) -> bool:
    def milli(rl: dict[str, Any]) -> int | None:
        q = rl.get(name)
        return None if q is None else int(q.milli)

    return milli(new.requests) != milli(old.requests) or milli(new.limits) != milli(old.limits)


def restart_names(pod: Pod, desired: Allocation, actuated: Allocation) -> list[str]:
    """The regular containers that must restart to take ``desired`` (upstream
    ``computePodResizeAction``: a changed cpu or memory request or limit whose resource's
    ``resizePolicy`` is ``RestartContainer``; no policy means ``NotRequired``)."""
    out: list[str] = []
    for c in pod.spec.containers:
        new, old = desired.get(c.name), actuated.get(c.name)
        if new is None or old is None or not c.resize_policy:
            continue
        policies = {p.resource_name: p.restart_policy for p in c.resize_policy}
        if any(policies.get(r) == RESTART_CONTAINER and _changed(r, new, old) for r in (CPU, MEMORY)):
            out.append(c.name)
    return out


def allocated_pod(pod: Pod, alloc: Allocation) -> Pod:
    """``pod`` as its allocation makes it (upstream ``updatePodFromAllocation``), no status."""

    def put(cs: list[Any]) -> list[Any]:
        return [replace(c, resources=alloc[c.name]) if c.name in alloc else c for c in cs]

    spec = replace(pod.spec, containers=put(pod.spec.containers), init_containers=put(pod.spec.init_containers))
    return replace(pod, spec=spec, status=_EMPTY)


def _decorate(cs: ContainerStatus, alloc: Allocation, actuated: Allocation) -> ContainerStatus:
    got = alloc.get(cs.name)
    allocated = dict(got.requests) if got is not None and got.requests else UNSET
    run = actuated.get(cs.name)
    resources = run if run is not None and cs.state.running is not None else UNSET
    if cs.allocated_resources == allocated and cs.resources == resources:
        return cs
    return replace(cs, allocated_resources=allocated, resources=resources)


def _unobserved(conditions: Any, generation: int) -> bool:
    """Whether one of the kubelet's ``conditions`` is not marked observed at ``generation``
    (a loop rather than ``any()``: no generator per status write)."""
    for c in conditions:  # noqa: SIM110 (a loop: no generator per status write)
        if c.type in _OWNED and c.observed_generation != generation:
            return True
    return False


def _conditions_observed(conditions: list[PodCondition], generation: int) -> list[PodCondition]:
    """``conditions`` with the kubelet's own marked observed at ``generation`` (the same list
    when they all are)."""
    if not _unobserved(conditions, generation):
        return conditions
    return [
        replace(c, observed_generation=generation) if c.type in _OWNED and c.observed_generation != generation else c
        for c in conditions
    ]


def _observed(status: PodStatus, generation: int) -> PodStatus:
    """``status`` and the kubelet's conditions in it marked observed at ``generation``."""
    if not generation:
        return status
    conditions = _conditions_observed(status.conditions, generation)
    if status.observed_generation == generation and conditions is status.conditions:
        return status
    return replace(status, observed_generation=generation, conditions=conditions)


def _has_resize_condition(conditions: Any) -> bool:
    for c in conditions:  # noqa: SIM110 (a loop: no generator per status write)
        if c.type in _RESIZE_CONDITIONS:
            return True
    return False


def with_resize_status(rec: Any, status: PodStatus, generation: int = 0) -> PodStatus:
    """``status`` with the record's allocated/actuated resources in its container statuses and
    its resize conditions (none of them when the pod was never admitted), observed at the
    pod's ``generation``.

    One frame for every status write (``with_resize_status_reference`` is the same in its
    helpers' frames, and ``tests/kubelet/test_status_shortcuts.py`` compares both): the
    containers decorated in place of ``_decorate``, and, when the record holds no resize
    condition and the status carries none (every write of a pod never resized), the
    conditions' observation checked in the same pass that looks for a resize condition."""
    alloc: Allocation | None = rec.allocated
    if alloc is None:
        return _observed(status, generation)
    actuated: Allocation = rec.actuated or alloc
    containers: list[ContainerStatus] = []
    for cs in status.container_statuses:
        got = alloc.get(cs.name)
        allocated = dict(got.requests) if got is not None and got.requests else UNSET
        run = actuated.get(cs.name)
        resources = run if run is not None and cs.state.running is not None else UNSET
        if not (cs.allocated_resources == allocated and cs.resources == resources):
            cs = replace(cs, allocated_resources=allocated, resources=resources)
        containers.append(cs)
    inits: list[ContainerStatus] = []
    for cs in status.init_container_statuses:
        got = alloc.get(cs.name)
        allocated = dict(got.requests) if got is not None and got.requests else UNSET
        run = actuated.get(cs.name)
        resources = run if run is not None and cs.state.running is not None else UNSET
        if not (cs.allocated_resources == allocated and cs.resources == resources):
            cs = replace(cs, allocated_resources=allocated, resources=resources)
        inits.append(cs)
    conds: dict[str, PodCondition] = rec.resize_conditions
    conditions = status.conditions
    unobserved = False
    if not conds:
        for c in conditions:
            kind = c.type
            if kind in _RESIZE_CONDITIONS:
                break  # the general path below
            if generation and kind in _OWNED and c.observed_generation != generation:
                unobserved = True
        else:
            if not unobserved:
                if not generation:
                    return replace(
                        status, container_statuses=containers, init_container_statuses=inits, conditions=conditions
                    )
                return replace(
                    status,
                    container_statuses=containers,
                    init_container_statuses=inits,
                    conditions=conditions,
                    observed_generation=generation,
                )
    if conds or _has_resize_condition(conditions):
        conditions = [c for c in conditions if c.type not in _RESIZE_CONDITIONS]
        conditions += [conds[t] for t in _RESIZE_CONDITIONS if t in conds]
    if not generation:
        return replace(status, container_statuses=containers, init_container_statuses=inits, conditions=conditions)
    # ``_observed`` of the status just built, in the same replace (one copy of the status)
    conditions = _conditions_observed(conditions, generation)
    return replace(
        status,
        container_statuses=containers,
        init_container_statuses=inits,
        conditions=conditions,
        observed_generation=generation,
    )


def with_resize_status_reference(rec: Any, status: PodStatus, generation: int = 0) -> PodStatus:
    """``with_resize_status`` through its helpers (``_decorate``, ``_has_resize_condition``,
    ``_conditions_observed``): the general path its one frame is tested against."""
    alloc: Allocation | None = rec.allocated
    if alloc is None:
        return _observed(status, generation)
    actuated: Allocation = rec.actuated or alloc
    containers = [_decorate(cs, alloc, actuated) for cs in status.container_statuses]
    inits = [_decorate(cs, alloc, actuated) for cs in status.init_container_statuses]
    conds: dict[str, PodCondition] = rec.resize_conditions
    conditions = status.conditions
    if conds or _has_resize_condition(conditions):
        conditions = [c for c in conditions if c.type not in _RESIZE_CONDITIONS]
        conditions += [conds[t] for t in _RESIZE_CONDITIONS if t in conds]
    if not generation:
        return replace(status, container_statuses=containers, init_container_statuses=inits, conditions=conditions)
    conditions = _conditions_observed(conditions, generation)
    return replace(
        status,
        container_statuses=containers,
        init_container_statuses=inits,
        conditions=conditions,
        observed_generation=generation,
    )


Write = Callable[[Any, Callable[[Pod], PodStatus]], Awaitable[Pod | None]]


def settled(rec: Any) -> bool:
    """Whether ``observe`` has nothing to do for the record's pod: its spec is the very object
    whose desired resources were found equal to the allocation it still holds, and no resize
    is pending (nor any resize condition held). Specs are never mutated, so the same spec
    asks for the same resources, and ``observe`` would find them allocated and return: a
    kubelet's own status write coming back by watch (the spec is the stored one), O(1)
    instead of the desired resources rebuilt and compared. ``tests/kubelet/test_kubelet_shortcuts.py``
    plays resizes with and without it. ``Kubelet._on_pod_update`` repeats this test written out:
    a condition added here must be added there too."""
    return rec.resize_spec is rec.pod.spec and rec.resize_alloc is rec.allocated and not rec.resize_conditions


class Resizer:
    """The resizes of one kubelet's pods, against its ``usage``; writes through ``write``
    (the pod worker's status write, which adds ``with_resize_status``)."""

    shortcut: bool = True
    """``observe`` returns at once for a ``settled`` record (False: the general path, which
    the tests compare)."""

    def __init__(
        self,
        clock: Clock,
        usage: NodeUsage,
        node: Callable[[], Node | None],
        worker: Any,
        spawn: Callable[[Coroutine[Any, Any, None], str], Any],
        prefix: str,
    ) -> None:
        self._clock = clock
        self._usage = usage
        self._node = node
        self._worker = worker
        """The kubelet's pod worker: ``write_status``, ``restart_for_resize``."""
        self._write: Write = worker.write_status
        self._spawn = spawn
        self._prefix = prefix
        self._pending: dict[tuple[str, str], Any] = {}
        self._waiting: dict[tuple[str, str], Any] = {}
        self.accepted = 0
        self.deferred = 0
        self.infeasible = 0

    @property
    def pending(self) -> list[tuple[str, str]]:
        """The pods whose resize is pending (Deferred or Infeasible)."""
        return list(self._pending)

    def admitted(self, rec: Any) -> None:
        """The pod was admitted with its spec's resources: allocated and actuated."""
        rec.allocated = rec.actuated = alloc = resizable(rec.pod)
        rec.resize_spec, rec.resize_alloc = rec.pod.spec, alloc

    def released(self, rec: Any) -> None:
        """The pod left the node's accounting: its resources are free for pending resizes."""
        if self._pending.pop(rec.key, None) is None and not self._pending:
            return
        if self._pending:
            self.retry()

    def request(self, rec: Any, *, after_admissions: bool) -> None:
        """A new version of an admitted pod; ``after_admissions``: pods seen before it wait
        for admission, so it is handled at ``flush`` (upstream's kubelet handles pod additions
        and updates in the order they come)."""
        if after_admissions:
            self._waiting[rec.key] = rec
        else:
            self.observe(rec)

    def flush(self) -> None:
        """Handle the resizes that waited for the admissions before them."""
        waiting, self._waiting = self._waiting, {}
        for rec in waiting.values():
            if rec.allocated is not None and rec.state.value in ("starting", "running"):
                self.observe(rec)

    def observe(self, rec: Any) -> None:
        """A new version of an admitted pod: handle a resize it asks for."""
        if rec.allocated is None or (self.shortcut and settled(rec)):
            return
        desired = resizable(rec.pod)
        if desired == rec.allocated:
            if POD_RESIZE_PENDING in rec.resize_conditions:  # resized back: nothing pending
                self._pending.pop(rec.key, None)
                del rec.resize_conditions[POD_RESIZE_PENDING]
                rec.resize_judged = None
                self._spawn(self._post(rec), f"{self._prefix}:resize:{rec.key[0]}/{rec.key[1]}")
            rec.resize_spec, rec.resize_alloc = rec.pod.spec, rec.allocated
            return
        if desired == rec.resize_judged:
            return  # already pending with this very request
        if rec.key not in self._pending:
            rec.resize_since = self._clock.now()
        self._decide(rec, desired)

    def retry(self) -> None:
        """Try every pending resize again (upstream ``RetryPendingResizes``)."""
        order = sorted(self._pending.values(), key=lambda r: (-(r.pod.spec.priority or 0), r.resize_since, r.key))
        for rec in order:
            if rec.key in self._pending and self._pending[rec.key] is rec:
                self._decide(rec, resizable(rec.pod))

    def _verdict(self, rec: Any, desired: Allocation) -> tuple[str, str] | None:
        """(reason, message) of a resize that cannot be allocated now; None: it can."""
        node = self._node()
        if node is None:
            return DEFERRED, "Kubelet cannot get node info."
        wanted = allocated_pod(rec.pod, desired)
        allocatable = node_allocatable(node)
        requests = pod_requests(wanted)
        cpu, memory = requests.get(CPU, 0), requests.get(MEMORY, 0)
        cpu_have, memory_have = allocatable.get(CPU, 0), allocatable.get(MEMORY, 0)
        if memory > memory_have:
            return INFEASIBLE, f"Node didn't have enough capacity: memory, requested: {memory}, capacity: {memory_have}"
        if cpu > cpu_have:
            return INFEASIBLE, f"Node didn't have enough capacity: cpu, requested: {cpu}, capacity: {cpu_have}"
        counted = self._usage.remove(rec.uid)
        try:
            failures = admission_failures(wanted, node, self._usage)
        finally:
            if counted:
                self._usage.add(rec.uid, allocated_pod(rec.pod, rec.allocated))
        return (DEFERRED, failures[0].message) if failures else None

    def _decide(self, rec: Any, desired: Allocation) -> None:
        verdict = self._verdict(rec, desired)
        label = f"{rec.key[0]}/{rec.key[1]}"
        if verdict is not None:
            reason, message = verdict
            rec.resize_judged = desired
            self._pending[rec.key] = rec
            old = rec.resize_conditions.get(POD_RESIZE_PENDING)
            if old is not None and old.reason == reason and old.message == message:
                return
            if reason == DEFERRED:
                self.deferred += 1
            else:
                self.infeasible += 1
            now = self._clock.timestamp()
            rec.resize_conditions[POD_RESIZE_PENDING] = PodCondition(
                type=POD_RESIZE_PENDING,
                status="True",
                reason=reason,
                message=message,
                last_probe_time=now,
                last_transition_time=now,
            )
            self._spawn(self._post(rec), f"{self._prefix}:resize:{label}")
            return
        self.accepted += 1
        self._pending.pop(rec.key, None)
        rec.resize_judged = None
        rec.resize_conditions.pop(POD_RESIZE_PENDING, None)
        self._usage.remove(rec.uid)
        self._usage.add(rec.uid, allocated_pod(rec.pod, desired))
        rec.allocated = desired
        now = self._clock.timestamp()
        if POD_RESIZE_IN_PROGRESS not in rec.resize_conditions:
            rec.resize_conditions[POD_RESIZE_IN_PROGRESS] = PodCondition(
                type=POD_RESIZE_IN_PROGRESS, status="True", last_probe_time=now, last_transition_time=now
            )
        self._spawn(self._actuate(rec, desired), f"{self._prefix}:resize:{label}")

    async def _post(self, rec: Any) -> None:
        await self._write(rec, lambda p: p.status)

    async def _actuate(self, rec: Any, desired: Allocation) -> None:
        await self._write(rec, lambda p: p.status)
        await self._clock.sleep(ACTUATION_SECONDS)
        if rec.allocated is not desired:
            return  # a newer resize was accepted meanwhile: its own actuation finishes it
        before, rec.actuated = rec.actuated, desired
        rec.resize_conditions.pop(POD_RESIZE_IN_PROGRESS, None)
        restart = restart_names(rec.pod, desired, before or {})
        if restart and rec.state.value == "running" and rec.task is not None:  # not starting, not being killed
            rec.task.cancel()  # the run's timer; its first status write carries the actuation
            rec.task = self._spawn(self._worker.restart_for_resize(rec, restart), f"{self._prefix}:pod:{rec.label}")
        else:
            await self._write(rec, lambda p: p.status)
        if self._pending:
            self.retry()
