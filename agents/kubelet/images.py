"""``ImageStore``: the images present on one node, and the pulls that bring more.

This module owns the node's image cache and pull mechanics; it never calls the API
(the kubelet writes ``status.images`` when told that the store changed).

- The store starts from the node's ``status.images`` and only grows (no image GC).
- A pull takes ``size / image_pull_bandwidth`` seconds of clock time (0 bandwidth:
  instant). The size is the one ``KubeletSettings.image_sizes`` gives for the image (as
  written, or normalised with ``:latest``), else ``default_image_size``.
- A pull runs in its own task (``spawn``), so it survives the pod that asked for it being
  deleted, as a real pull does. Pods asking for an image already being pulled wait for
  that pull (``shared``).
- With ``serialize_image_pulls`` (upstream's default) pulls queue behind one another in
  request order (``asyncio.Lock`` is FIFO); otherwise each gets the full bandwidth.
- Every image is treated as ``imagePullPolicy: IfNotPresent``: a present image is never
  pulled again, whatever its tag.
- Fault injection (``KubeletSettings.faults``) may stretch a pull (``pull_seconds``),
  decided when the pull starts transferring.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any

from agents.kubelet.nodestatus import normalize_image, report_images
from agents.kubelet.settings import KubeletSettings
from emulator.base.api.core import ContainerImage
from emulator.base.runtime.clock import Clock

__all__ = ["ImageStore", "Spawn"]

Spawn = Callable[[Coroutine[Any, Any, None], str], object]
"""``spawn(coro, name)``: start ``coro`` as a task of the kubelet's task group (what it
returns, the task, is not used here)."""


class ImageStore:
    """One node's images: ``ensure`` returns once every image asked for is present."""

    def __init__(
        self,
        clock: Clock,
        settings: KubeletSettings,
        *,
        spawn: Spawn,
        on_pulled: Callable[[], None],
        task_prefix: str,
        node_name: str = "",
    ) -> None:
        self._clock = clock
        self._node_name = node_name
        self._settings = settings
        self._spawn = spawn
        self._on_pulled = on_pulled
        self._task_prefix = task_prefix
        self._entries: list[ContainerImage] = []
        self._present: dict[str, int] = {}
        self._pulling: dict[str, asyncio.Event] = {}
        self._lock = asyncio.Lock()
        self.pulls = 0
        """Pulls completed."""
        self.shared = 0
        """Times a pod waited for a pull another pod had started."""
        self.pulled_bytes = 0
        self.pull_time: dict[str, float] = {}
        """Seconds each image's pull transferred (not counting its wait in the queue)."""

    def __repr__(self) -> str:
        return f"<ImageStore images={len(self._present)} pulling={len(self._pulling)} pulls={self.pulls}>"

    def __len__(self) -> int:
        return len(self._entries)

    def seed(self, entries: Iterable[ContainerImage]) -> None:
        """Add the images a node already lists (its ``status.images``)."""
        for entry in entries:
            fresh = [n for n in entry.names if normalize_image(n) not in self._present]
            if not fresh:
                continue
            self._entries.append(entry)
            for name in entry.names:
                self._present[normalize_image(name)] = entry.size_bytes

    def has(self, image: str) -> bool:
        return normalize_image(image) in self._present

    def all_present(self, images: Sequence[str]) -> bool:
        """Whether every image of ``images`` is present: ``ensure`` would return 0 at once."""
        present = self._present
        for image in images:  # noqa: SIM110 (a loop: no generator per pod)
            if normalize_image(image) not in present:
                return False
        return True

    def size_of(self, image: str) -> int:
        sizes = self._settings.image_sizes
        size = sizes.get(image)
        if size is None:
            size = sizes.get(normalize_image(image), self._settings.default_image_size)
        return size

    def report(self) -> list[ContainerImage]:
        """The node's ``status.images`` (largest first, capped as upstream)."""
        return report_images(self._entries)

    async def ensure(self, images: Sequence[str]) -> int:
        """Wait until every image of ``images`` is present; the number of pulls waited for."""
        waits: list[asyncio.Event] = []
        for image in images:
            name = normalize_image(image)
            if name in self._present:
                continue
            done = self._pulling.get(name)
            if done is None:
                done = asyncio.Event()
                self._pulling[name] = done
                self._spawn(self._pull(image, name, done), f"{self._task_prefix}:pull:{name}")
            else:
                self.shared += 1
            if done not in waits:
                waits.append(done)
        for done in waits:
            await done.wait()
        return len(waits)

    async def _pull(self, image: str, name: str, done: asyncio.Event) -> None:
        size = self.size_of(image)
        if self._settings.serialize_image_pulls:
            async with self._lock:
                seconds = self._seconds(image, size)
                await self._transfer(seconds)
        else:
            seconds = self._seconds(image, size)
            await self._transfer(seconds)
        self.pull_time[name] = seconds
        self._entries.append(ContainerImage(names=[name], size_bytes=size))
        self._present[name] = size
        del self._pulling[name]
        self.pulls += 1
        self.pulled_bytes += size
        done.set()
        self._on_pulled()

    def _seconds(self, image: str, size: int) -> float:
        seconds = self._settings.pull_seconds(size)
        faults = self._settings.faults
        if faults is not None:
            seconds = faults.pull_seconds(self._node_name, image, size, seconds, self._clock.now())
        return seconds

    async def _transfer(self, seconds: float) -> None:
        if seconds > 0:
            await self._clock.sleep(seconds)
