"""Watchers of the whole run that need history, not just the final state.

``Overcommit`` is one moment where a node's admitted pods requested more than its
allocatable (recorded by the invariant checker, read by the ``noOvercommit`` expectation).
``PodActivity`` remembers when a Pod was last
written (the runner's settle rule) and feeds each pod write to the active
``ConditionCounter``s (one per running ``waitFor``), waking the waiter when a count moved.

``workload_counters`` are the ``WorkloadCounter``s of running ``waitFor``s of
``workloadsReady`` and ``jobsComplete``, fed each write of their kinds the same way.

Both are a ``SelectionCounter``. ``ConditionCounter`` is pure: (pods the selector picks that
meet the condition, pods the selector picks), adjusted by each write's old and new object, so a ``waitFor`` costs O(1)
per pod write instead of listing every pod. A pod counts from its create until its final
delete (a pod marked for graceful deletion still counts), as a list of pods would show.

``ControllersReport`` reads the controllers' statistics for the run's report at its end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from emulator.app.scenario.workload_status import WorkloadFilter
from emulator.base.api.core import LabelSelector, Pod
from emulator.base.api.labelparse import format_label_selector
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.apiserver.server import Verb, WriteRecord

__all__ = ["ConditionCounter", "Overcommit", "PodActivity", "SelectionCounter", "WorkloadCounter"]


@dataclass(frozen=True, slots=True)
class Overcommit:
    time: float
    node: str
    resource: str
    requested: int
    allocatable: int


class SelectionCounter:
    """How many objects ``selects`` picks (``total``) and how many of those pass ``test``
    (``met``), kept current by ``update`` with each write: O(1) per write."""

    def __init__(
        self, selects: Callable[[Any], bool], test: Callable[[Any], bool], objects: Iterable[Any] = ()
    ) -> None:
        self.selects = selects
        self.test = test
        self.met = 0
        self.total = 0
        for obj in objects:
            self._count(obj, 1)

    def _count(self, obj: Any, sign: int) -> None:
        if self.selects(obj):
            self.total += sign
            if self.test(obj):
                self.met += sign

    def update(self, old: Any | None, new: Any | None) -> bool:
        """One write (``old`` None: a create; ``new`` None: the final delete); True when a
        count changed."""
        before = (self.met, self.total)
        if old is not None:
            self._count(old, -1)
        if new is not None:
            self._count(new, 1)
        return (self.met, self.total) != before


class ConditionCounter(SelectionCounter):
    """The pods ``selector`` picks, and those of them that pass ``test``."""

    def __init__(self, test: Callable[[Pod], bool], selector: LabelSelector, pods: Iterable[Pod] = ()) -> None:
        self.selector = selector
        super().__init__(lambda pod: label_selector_matches(selector, pod.metadata.labels), test, pods)

    def __repr__(self) -> str:
        selector = format_label_selector(self.selector)
        return f"<ConditionCounter met={self.met} total={self.total}{f' selector={selector!r}' if selector else ''}>"


class WorkloadCounter(SelectionCounter):
    """The workload objects ``filter`` picks (of ``filter.kinds``), and those that pass
    ``test`` (``workload_ready``, ``job_complete``)."""

    def __init__(self, filter: WorkloadFilter, test: Callable[[Any], bool], objects: Iterable[Any] = ()) -> None:
        self.filter = filter
        self.kinds = filter.kinds
        super().__init__(filter.selects, test, objects)

    def __repr__(self) -> str:
        return f"<WorkloadCounter {self.filter.describe()} met={self.met} total={self.total}>"


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

    def write_many(self, verb: Verb, kind: str, time: float, agent: str, writes: list[tuple[Any, Any, int]]) -> None:
        """A batch of writes of one kind (the Lease renewals of an instant): ``__call__`` for
        each, unless no counter reads ``kind``."""
        if kind == "Pod" or any(kind in wc.kinds for wc in self.workload_counters):
            for old, new, rev in writes:
                self(WriteRecord(rev, time, verb, kind, old, new, agent))


class CSIDriversReport:
    """The simulated CSI drivers of a run, for the report (``csiDrivers``: each one's counts)."""

    def __init__(self, drivers: list[Any]) -> None:
        self.drivers = drivers

    def report(self) -> dict[str, Any]:
        return {"csiDrivers": {d.name: d.statistics() for d in self.drivers}}


class ControllersReport:
    """The controllers of a run, for the report (``controllers``)."""

    def __init__(self, controllers: list[Any]) -> None:
        self.controllers = controllers

    def report(self) -> dict[str, Any]:
        """Each controller's statistics; a workload controller that saw nothing of its kind
        says so with empty statistics, and is left out (a run without workloads reports as
        before they existed)."""
        stats = ((c.client.name.removeprefix("controller:"), c.statistics()) for c in self.controllers)
        return {"controllers": {name: s for name, s in stats if s}}
