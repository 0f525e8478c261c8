"""What ``Timeline`` replays: the steps of a scenario as events, and generated-name groups.

Owns ``GeneratedGroup`` (objects ``prefix + str(i)`` for ``i < count``, with which were
deleted, probed arithmetically rather than listed), ``split_generated`` (which group a name
belongs to), and the event records ``Timeline._events`` yields in the runner's order
(``Make``, ``MakeGroup``, ``Remove``, ``UseNode``, ``UseObject``, ``EnsureClass``). Does not
own the checks (``timeline``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from emulator.app.scenario.readers import Origin
from emulator.app.scenario.schema import Delete, Scale, Update
from emulator.base.api.core import LabelSelector, Pod
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.api.scheduling import PriorityClass

__all__ = [
    "EnsureClass",
    "GeneratedGroup",
    "Make",
    "MakeGroup",
    "Remove",
    "TimelineEvent",
    "UseNode",
    "UseObject",
    "constant_labels",
    "split_generated",
]


def split_generated(name: str) -> tuple[str, int]:
    """``(prefix, i)`` when ``name`` is generated object ``i`` of a group whose names start
    with ``prefix`` (which ends with ``-``); ``("", -1)`` when no group makes it."""
    tail = len(name) - len(name.rstrip("0123456789"))
    prefix, digits = name[: len(name) - tail], name[len(name) - tail :]
    if not digits or not prefix.endswith("-") or (len(digits) > 1 and digits[0] == "0"):
        return "", -1
    return prefix, int(digits)


@dataclass(slots=True)
class GeneratedGroup:
    """Generated objects ``prefix + str(i)`` for ``i < count``, and which were deleted."""

    kind: str
    namespace: str
    prefix: str
    count: int
    label: str
    labels: Callable[[int], Mapping[str, str]]
    period: int
    """``labels(i) == labels(i % period)``."""
    gone: dict[int, str] = field(default_factory=dict)
    """Index -> the step that deleted it."""
    gone_by: str = ""
    """The step that deleted every member."""

    def alive(self, i: int) -> bool:
        return not self.gone_by and 0 <= i < self.count and i not in self.gone

    def deleted_by(self, i: int) -> str:
        return (self.gone.get(i) or self.gone_by) if 0 <= i < self.count else ""

    def first_alive(self, below: int) -> int | None:
        """The smallest live index under ``below``: ``len(gone) + 1`` probes at most."""
        n = min(below, self.count)
        i = 0
        while i < n and i in self.gone:
            i += 1
        return None if self.gone_by or i >= n else i

    def delete_matching(self, selector: LabelSelector, where: str) -> None:
        if self.gone_by:
            return
        n = min(self.count, self.period)
        hits = {i for i in range(n) if label_selector_matches(selector, self.labels(i))}
        if len(hits) == n:
            self.gone_by = where
        elif hits:
            for i in range(self.count):
                if i % self.period in hits:
                    self.gone.setdefault(i, where)


@dataclass(frozen=True, slots=True)
class Make:
    obj: Any
    origin: Origin


@dataclass(frozen=True, slots=True)
class MakeGroup:
    group: GeneratedGroup
    path: str
    template: Pod | None


@dataclass(frozen=True, slots=True)
class Remove:
    step: Delete
    path: str


@dataclass(frozen=True, slots=True)
class UseNode:
    node: str
    path: str


@dataclass(frozen=True, slots=True)
class UseObject:
    step: Scale | Update
    path: str


@dataclass(frozen=True, slots=True)
class EnsureClass:
    """A ``replay`` step's ``priority-<n>`` class: the runner creates it unless it exists."""

    obj: PriorityClass
    origin: Origin


TimelineEvent = Make | MakeGroup | Remove | UseNode | UseObject | EnsureClass


def constant_labels(labels: Mapping[str, str]) -> Callable[[int], Mapping[str, str]]:
    return lambda _: labels
