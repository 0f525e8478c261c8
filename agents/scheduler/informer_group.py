"""``InformerGroup``: a set of the scheduler's informers (one per kind) started and awaited
together — the base of the workload, storage and DRA listers (``workload_listers.py``,
``volume_listers.py``, ``dra_manager.py``), which differ in the kinds and what they derive."""

from __future__ import annotations

import asyncio

from emulator.base.client.informer import Informer

__all__ = ["InformerGroup"]


class InformerGroup:
    """``informers`` (kind → informer, set by the subclass) run as named tasks of the caller."""

    informers: dict[str, Informer]

    def start(self, tg: asyncio.TaskGroup, prefix: str) -> None:
        for kind, informer in self.informers.items():
            tg.create_task(informer.run(), name=f"{prefix}:informer:{kind}")

    async def synced(self) -> None:
        for informer in self.informers.values():
            await informer.synced.wait()
