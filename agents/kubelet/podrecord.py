"""A pod's record on its node: ``PodRecord`` and its ``PodState``.

This module owns the one record per pod that the kubelet keeps (by namespace/name, tied to a
UID): where the pod is in its life on the node (``PodState``, the table in ``kubelet.py``),
what runs it (its task, or its ``podsteps.FastRun``), its start and kill times, the statuses
this kubelet wrote or is writing (``needs_reconcile`` against them), and its resize state
(``resize.py``). It holds data and that one comparison; it does not change a pod's state
(``kubelet.py``, ``podworker.py``, ``podsteps.py``, ``podkill.py`` do)."""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import Protocol

from agents.kubelet.podstatus import needs_reconcile
from emulator.base.api.core import Pod, PodCondition, PodSpec, PodStatus, ResourceRequirements

__all__ = ["Cancellable", "Key", "PodRecord", "PodState"]

Key = tuple[str, str]


class PodState(enum.Enum):
    """Where a pod is in its life on this node (the table in ``kubelet.py``)."""

    QUEUED = "queued"
    REJECTED = "rejected"
    STARTING = "starting"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    TERMINATING = "terminating"
    GONE = "gone"


class Cancellable(Protocol):
    """A pod's run without a task of its own (``podsteps.FastRun``): stopped as a task is."""

    def cancel(self) -> bool: ...

    def done(self) -> bool: ...


@dataclass(eq=False, slots=True)
class PodRecord:
    """One pod on this node (``kubelet.py`` keeps them by namespace/name)."""

    key: Key
    uid: str
    pod: Pod
    """The newest version seen (watch or own write)."""
    state: PodState = PodState.QUEUED
    task: asyncio.Task[None] | Cancellable | None = None
    """What runs it: its task, or its ``podsteps.FastRun`` (the pod on the kubelet's handles)."""
    start_time: str = ""
    pod_ip: str = ""
    start_delay: float = 0.0
    kill_started: float = 0.0
    kill_delay: float = 0.0
    kill_deadline: float = 0.0
    reported: PodStatus | None = None
    """The last status this kubelet wrote (what its status manager caches)."""
    writing: dict[object, PodStatus] = field(default_factory=dict)
    """The statuses being written, one per write in flight, by the write's own token
    (upstream's status manager caches a status before it writes it): the pod informer,
    handed a write's own event in place before the write returns, compares with them rather
    than with ``reported`` (``needs_reconcile``). Two writes in flight (a probe's and a
    reconcile's, with API latency) each keep their own."""
    reconciling: bool = False
    kill_running: bool = False
    """Its containers were running when the delete came (``deletedstatus.py``)."""
    kill_unstarted: bool = False
    """It was queued or admitted, its containers not started, when the delete came."""
    kill_announced: bool = False
    """Its ``Killing`` Events are written (a shorter grace period does not repeat them)."""
    allocated: dict[str, ResourceRequirements] | None = None
    """Its resizable containers' allocated resources (``resize.py``); None until admitted."""
    actuated: dict[str, ResourceRequirements] | None = None
    resize_conditions: dict[str, PodCondition] = field(default_factory=dict)
    resize_judged: dict[str, ResourceRequirements] | None = None
    """The desired resources last found pending (not judged again until they change)."""
    resize_since: float = 0.0
    resize_spec: PodSpec | None = None
    resize_alloc: dict[str, ResourceRequirements] | None = None
    """The spec whose desired resources ``resize.observe`` last found equal to the
    allocation, and that allocation (``resize.settled``)."""

    @property
    def label(self) -> str:
        return f"{self.key[0]}/{self.key[1]}"

    def needs_reconcile(self, current: PodStatus) -> bool:
        """``needs_reconcile`` against what this kubelet wrote: the last status written, or,
        while writes are in flight, each of theirs (an event that is one write's own echo,
        handed in place before that write returns, is compared with that write's status)."""
        writing = self.writing
        if not writing:
            return needs_reconcile(current, self.reported)
        return all(needs_reconcile(current, status) for status in writing.values())
