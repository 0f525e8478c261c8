"""Watchers of the whole run that need history, not just the final state.

``OvercommitMonitor`` is a write listener: it keeps, per node, the summed requests of the
pods the kubelet has admitted and not yet finished (phase Running, or bound with a start
time) and records every moment where that sum exceeds the node's allocatable. The
``noOvercommit`` expectation reads it. ``PodActivity`` remembers when a Pod was last
written (the runner's settle rule) and wakes waiters on every pod write.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from emulator.api.resources import node_allocatable, pod_requests
from emulator.apiserver.server import WriteRecord

__all__ = ["Overcommit", "OvercommitMonitor", "PodActivity"]


@dataclass(frozen=True, slots=True)
class Overcommit:
    time: float
    node: str
    resource: str
    requested: int
    allocatable: int


def _running(pod: Any) -> bool:
    return pod is not None and bool(pod.spec.node_name) and pod.status.phase == "Running"


class OvercommitMonitor:
    def __init__(self) -> None:
        self._alloc: dict[str, dict[str, int]] = {}
        self._used: dict[str, dict[str, int]] = {}
        self._pods: dict[str, tuple[str, dict[str, int]]] = {}
        self.violations: list[Overcommit] = []

    def __call__(self, rec: WriteRecord) -> None:
        if rec.kind == "Node":
            name = rec.obj.metadata.name
            if rec.new is None:
                self._alloc.pop(name, None)
            else:
                self._alloc[name] = node_allocatable(rec.new)
            return
        if rec.kind != "Pod":
            return
        uid = rec.obj.metadata.uid
        was, now = _running(rec.old), _running(rec.new)
        if was and not now:
            node, req = self._pods.pop(uid)
            used = self._used[node]
            for r, v in req.items():
                used[r] -= v
        elif now and not was:
            node = rec.new.spec.node_name
            req = pod_requests(rec.new)
            req["pods"] = 1
            self._pods[uid] = (node, req)
            used = self._used.setdefault(node, {})
            for r, v in req.items():
                used[r] = used.get(r, 0) + v
            alloc = self._alloc.get(node, {})
            for r in sorted(req):
                if r in alloc and used[r] > alloc[r]:
                    self.violations.append(Overcommit(rec.time, node, r, used[r], alloc[r]))


class PodActivity:
    def __init__(self) -> None:
        self.last_write = 0.0
        self.changed = asyncio.Event()

    def __call__(self, rec: WriteRecord) -> None:
        if rec.kind == "Pod":
            self.last_write = rec.time
            self.changed.set()
