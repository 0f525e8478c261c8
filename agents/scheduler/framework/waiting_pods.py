"""Pods parked at Permit, as upstream's ``framework/runtime/waiting_pods_map.go``.

What this module owns: ``WaitingPod`` (one pod some Permit plugins asked to wait for, with one
deadline per waiting plugin) and ``WaitingPodsMap`` (uid → WaitingPod, shared by every profile
of a scheduler, as upstream). It does not own running the Permit plugins or deciding what a
rejection means for the pod (``runtime.py`` and the binding cycle do).

A WaitingPod resolves exactly once; the first event wins and later ones are no-ops (upstream
sends on a 1-buffered channel without blocking):

| event                                  | while pending                            | once resolved |
| -------------------------------------- | ---------------------------------------- | ------------- |
| ``allow(p)``, other plugins pending    | ``p`` leaves the pending set             | no-op         |
| ``allow(p)``, ``p`` the last pending   | resolved: Success                        | no-op         |
| ``reject(p, msg)``                     | resolved: Unschedulable ``msg``, plugin p | no-op         |
| a pending plugin's deadline passes     | resolved: Unschedulable "rejected due to | no-op         |
|                                        | timeout after waiting <d> at plugin <p>" |               |

Timers without tasks: deadlines are clock times fixed at creation. They are checked lazily —
before every ``allow``/``reject`` (so an event arriving at or after a deadline loses to the
timeout, as the timer would have fired first) and by ``wait()``, which awaits the resolution
future with a timeout equal to the time left until the earliest pending deadline. On the
virtual-time loop that timeout fires at exactly the deadline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping

from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock, format_duration

from .status import Code, Status

__all__ = ["WaitingPod", "WaitingPodsMap"]


class WaitingPod:
    """A pod waiting at Permit for ``allow`` from every plugin that returned Wait."""

    __slots__ = ("_clock", "_deadlines", "_future", "_pending", "_status", "pod")

    def __init__(self, pod: Pod, plugin_timeouts: Mapping[str, float], clock: Clock) -> None:
        """``plugin_timeouts``: plugin name → seconds to wait (already capped by the runtime)."""
        self.pod = pod
        self._clock = clock
        now = clock.now()
        self._pending: dict[str, float] = dict(plugin_timeouts)
        self._deadlines: dict[str, float] = {p: now + t for p, t in plugin_timeouts.items()}
        self._status: Status | None = None
        self._future: asyncio.Future[None] | None = None
        if not self._pending:
            self._resolve(Status())

    @property
    def uid(self) -> str:
        return self.pod.metadata.uid

    def get_pod(self) -> Pod:
        return self.pod

    def get_pending_plugins(self) -> list[str]:
        """Plugins that have not allowed the pod yet, in Permit order."""
        self._expire()
        return list(self._pending) if self._status is None else []

    @property
    def status(self) -> Status | None:
        """The outcome, or ``None`` while still waiting."""
        self._expire()
        return self._status

    def allow(self, plugin: str) -> None:
        self._expire()
        if self._status is not None:
            return
        self._pending.pop(plugin, None)
        if not self._pending:
            self._resolve(Status())

    def reject(self, plugin: str, msg: str) -> None:
        self._expire()
        if self._status is None:
            self._resolve(Status(Code.Unschedulable, msg, plugin=plugin))

    async def wait(self) -> Status:
        """Block until allowed by all, rejected, or a pending plugin times out."""
        while True:
            self._expire()
            if self._status is not None:
                return self._status
            plugin, deadline = self._earliest()
            if self._future is None:
                self._future = asyncio.get_running_loop().create_future()
            try:
                await asyncio.wait_for(asyncio.shield(self._future), deadline - self._clock.now())
            except TimeoutError:
                # The timer set for ``deadline`` fired: that plugin timed out, unless it
                # allowed meanwhile (then loop and wait for the next deadline).
                if self._status is None and self._deadlines.get(plugin) == deadline and plugin in self._pending:
                    self._timeout(plugin)

    def _earliest(self) -> tuple[str, float]:
        return min(((p, self._deadlines[p]) for p in self._pending), key=lambda item: item[1])

    def _expire(self) -> None:
        if self._status is None and self._pending:
            plugin, deadline = self._earliest()
            if self._clock.now() >= deadline:
                self._timeout(plugin)

    def _timeout(self, plugin: str) -> None:
        msg = f"rejected due to timeout after waiting {format_duration(self._pending[plugin])} at plugin {plugin}"
        self._resolve(Status(Code.Unschedulable, msg, plugin=plugin))

    def _resolve(self, status: Status) -> None:
        self._status = status
        if self._future is not None and not self._future.done():
            self._future.set_result(None)

    def __repr__(self) -> str:
        state = "waiting" if self._status is None else self._status.code.name
        meta = self.pod.metadata
        return f"<WaitingPod {meta.namespace}/{meta.name} {state} pending={list(self._pending)}>"


class WaitingPodsMap:
    """uid → WaitingPod, iterated in insertion order."""

    __slots__ = ("_pods",)

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, wp: WaitingPod) -> None:
        self._pods[wp.uid] = wp

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def iterate(self, fn: Callable[[WaitingPod], None]) -> None:
        for wp in list(self._pods.values()):
            fn(wp)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)

    def __repr__(self) -> str:
        return f"<WaitingPodsMap {list(self._pods)}>"
