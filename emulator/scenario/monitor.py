"""Watchers of the whole run that need history, not just the final state.

``Overcommit`` is one moment where a node's admitted pods requested more than its
allocatable (recorded by the invariant checker, read by the ``noOvercommit`` expectation).
``PodActivity`` remembers when a Pod was last
written (the runner's settle rule) and feeds each pod write to the active
``ConditionCounter``s (one per running ``waitFor``), waking the waiter when a count moved.

``workload_counters`` are the ``workloads.WorkloadCounter`` of running ``waitFor``s of
``workloadsReady`` and ``jobsComplete``, fed each write of their kinds the same way.

``ConditionCounter`` is pure: (pods the selector picks that meet the condition, pods the
selector picks), adjusted by each write's old and new object, so a ``waitFor`` costs O(1)
per pod write instead of listing every pod. A pod counts from its create until its final
delete (a pod marked for graceful deletion still counts), as a list of pods would show.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from emulator.api.core import LabelSelector, Pod
from emulator.api.labelparse import format_label_selector
from emulator.api.labelselector import label_selector_matches
from emulator.apiserver.server import WriteRecord
from emulator.scenario.workloads import WorkloadCounter

__all__ = ["ConditionCounter", "Overcommit", "PodActivity"]


@dataclass(frozen=True, slots=True)
class Overcommit:
    time: float
    node: str
    resource: str
    requested: int
    allocatable: int


class ConditionCounter:
    """How many pods ``selector`` picks (``total``) and how many of those pass ``test``
    (``met``), kept current by ``update`` with each pod write."""

    def __init__(self, test: Callable[[Pod], bool], selector: LabelSelector, pods: Iterable[Pod] = ()) -> None:
        self.test = test
        self.selector = selector
        self.met = 0
        self.total = 0
        for pod in pods:
            self._count(pod, 1)

    def _count(self, pod: Pod, sign: int) -> None:
        if label_selector_matches(self.selector, pod.metadata.labels):
            self.total += sign
            if self.test(pod):
                self.met += sign

    def update(self, old: Pod | None, new: Pod | None) -> bool:
        """One pod write (``old`` None: a create; ``new`` None: the final delete); True when
        a count changed."""
        before = (self.met, self.total)
        if old is not None:
            self._count(old, -1)
        if new is not None:
            self._count(new, 1)
        return (self.met, self.total) != before

    def __repr__(self) -> str:
        selector = format_label_selector(self.selector)
        return f"<ConditionCounter met={self.met} total={self.total}{f' selector={selector!r}' if selector else ''}>"


class PodActivity:
    def __init__(self) -> None:
        self.last_write = 0.0
        self.changed = asyncio.Event()
        """Set when a count of an active counter moved."""
        self.counters: list[ConditionCounter] = []
        self.workload_counters: list[WorkloadCounter] = []

    def __call__(self, rec: WriteRecord) -> None:
        if rec.kind == "Pod":
            self.last_write = rec.time
            moved = False
            for counter in self.counters:
                moved = counter.update(rec.old, rec.new) or moved
            if moved:
                self.changed.set()
        elif self.workload_counters:
            moved = False
            for wc in self.workload_counters:
                if rec.kind in wc.kinds:
                    moved = wc.update(rec.old, rec.new) or moved
            if moved:
                self.changed.set()
