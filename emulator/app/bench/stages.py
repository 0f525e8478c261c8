"""How far each existing pod has got, as upstream scheduler_perf's ``barrier`` op judges it, kept
per namespace from the API server's writes. Pure bookkeeping: no event loop, no waiting.

Upstream (``getScheduledPods`` in ``test/integration/scheduler_perf/util.go``) sorts the pods
its informer holds in a namespace, filtered by the op's ``labelSelector`` (every given label
equal), into three stages:

===========  ====================================================================================
stage        a pod is in it when
===========  ====================================================================================
scheduled    ``spec.nodeName`` is set
attempted    not scheduled, and it has a ``PodScheduled`` condition (any status): the scheduler
             reported a failed attempt (Unschedulable, SchedulerError), or the API server marked
             it ``SchedulingGated`` at creation
unattempted  neither
===========  ====================================================================================

A ``Scheduled`` barrier waits until ``scheduled >= want``, an ``Attempted`` one until
``scheduled + attempted >= want``, per namespace; deleted pods no longer count.

One difference from upstream's API server, made up for here: ours does not add the
``PodScheduled=False, reason SchedulingGated`` condition to a pod created with
``schedulingGates``, so a pod with gates counts as attempted by its gates. A condition is never
removed, so once attempted a pod stays attempted (removing its gates does not undo it) until
it is scheduled.

Counts are kept for the selectors registered up front (``()``, every pod, always), so each
write costs O(selectors), never a list of the namespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

__all__ = ["ATTEMPTED", "SCHEDULED", "UNATTEMPTED", "Selector", "Stage", "StageCounts", "matches", "selector", "stage"]

Stage = Literal[0, 1, 2]
SCHEDULED: Final[Stage] = 0
ATTEMPTED: Final[Stage] = 1
UNATTEMPTED: Final[Stage] = 2

Selector = tuple[tuple[str, str], ...]
"""An op's ``labelSelector`` (upstream: ``map[string]string``), sorted; ``()`` selects every pod."""


def selector(labels: Mapping[str, str]) -> Selector:
    return tuple(sorted(labels.items()))


def matches(labels: Mapping[str, str], sel: Selector) -> bool:
    """Upstream's ``labelsMatch``: every label of the selector present with that value."""
    return all(labels.get(k) == v for k, v in sel)


def stage(pod: Any, before: Stage | None = None) -> Stage:
    """The stage of ``pod`` (a ``Pod``), given the stage of its previous version (None: created)."""
    if pod.spec.node_name:
        return SCHEDULED
    if before == ATTEMPTED or pod.spec.scheduling_gates:
        return ATTEMPTED
    if any(c.type == "PodScheduled" for c in pod.status.conditions):
        return ATTEMPTED
    return UNATTEMPTED


class StageCounts:
    """Existing pods per (namespace, selector) and stage, updated write by write."""

    def __init__(self, selectors: Iterable[Selector] = ()) -> None:
        self.selectors: tuple[Selector, ...] = ((), *sorted({s for s in selectors if s}))
        self._counts: dict[tuple[str, Selector], list[int]] = {}
        self._stages: dict[str, Stage] = {}
        """Pod uid → its stage now."""

    def __repr__(self) -> str:
        return f"StageCounts(pods={len(self._stages)}, selectors={len(self.selectors)})"

    def update(self, old: Any, new: Any) -> bool:
        """Account for one write of a pod (``old`` None: created; ``new`` None: deleted);
        whether any count changed. On the write path of every pod write: kept cheap."""
        uid = (new if new is not None else old).metadata.uid
        stages = self._stages
        before = stages.get(uid)
        if new is None:
            after = None
            stages.pop(uid, None)
        else:
            after = stage(new, before)
            stages[uid] = after
        if before == after and (old is None or new is None or old.metadata.labels == new.metadata.labels):
            return False
        changed = False
        for sel in self.selectors:
            was = before if before is not None and old is not None else None
            if was is not None and sel and not matches(old.metadata.labels, sel):
                was = None
            now = after if after is not None and (not sel or matches(new.metadata.labels, sel)) else None
            if was == now:
                continue
            changed = True
            if was is not None:
                self._row(old.metadata.namespace, sel)[was] -= 1
            if now is not None:
                self._row(new.metadata.namespace, sel)[now] += 1
        return changed

    def _row(self, namespace: str, sel: Selector) -> list[int]:
        row = self._counts.get((namespace, sel))
        if row is None:
            row = self._counts[(namespace, sel)] = [0, 0, 0]
        return row

    def count(self, namespace: str, sel: Selector, *stages: Stage) -> int:
        """Pods of ``namespace`` matching ``sel`` (a registered selector) in any of ``stages``."""
        if sel not in self.selectors:
            raise KeyError(f"selector {sel!r} was not registered")
        row = self._counts.get((namespace, sel), (0, 0, 0))
        return sum(row[s] for s in stages)
