"""The driver's external-attacher (upstream ``kubernetes-csi/external-attacher``): for each
VolumeAttachment whose ``spec.attacher`` is the driver, it adds its finalizer
(``external-attacher/<driver>``), and after ``attachDelay`` (the driver's seeded stream) sets
``status.attached: true``; once the VolumeAttachment is being deleted (the attach/detach
controller detaches), it waits ``attachDelay`` again (the detach) and removes the finalizer,
which lets the object go."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec.structs import replace

from agents.csi.keyqueue import KeyQueue
from agents.csi.settings import attacher_finalizer
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.storage import VolumeAttachment

if TYPE_CHECKING:
    from agents.csi.driver import CSIDriverAgent

__all__ = ["Attacher"]


class Attacher:
    def __init__(self, agent: CSIDriverAgent) -> None:
        self.agent = agent
        self.finalizer = attacher_finalizer(agent.name)
        self.queue: KeyQueue[str] = KeyQueue(agent.clock)
        self.in_flight: set[str] = set()

    def start(self) -> None:
        a = self.agent
        a.informer("VolumeAttachment").add_handlers(self._changed, lambda _o, n: self._changed(n))
        a.spawn(self.queue.run(self._sync), "attacher")

    def _changed(self, va: VolumeAttachment) -> None:
        if va.spec.attacher == self.agent.name:
            self.queue.add(va.metadata.name)

    async def _sync(self, name: str) -> None:
        va = self.agent.informer("VolumeAttachment").get(name)
        if va is None or name in self.in_flight:
            return
        deleting = va.metadata.deletion_timestamp is not None
        if deleting and self.finalizer in va.metadata.finalizers:
            self.in_flight.add(name)
            self.agent.spawn(self._detach(name), f"detach:{name}")
        elif not deleting and not va.status.attached:
            self.in_flight.add(name)
            self.agent.spawn(self._attach(name), f"attach:{name}")

    async def _attach(self, name: str) -> None:
        a = self.agent
        try:
            va: VolumeAttachment = await a.client.get("VolumeAttachment", name)
            if self.finalizer not in va.metadata.finalizers:
                meta = replace(va.metadata, finalizers=[*va.metadata.finalizers, self.finalizer])
                va = await a.client.update(replace(va, metadata=meta))
            await a.clock.sleep(a.settings.attach_delay.sample(a.rng))
            va = await a.client.get("VolumeAttachment", name)
            if va.metadata.deletion_timestamp is None and not va.status.attached:
                await a.client.update_status(replace(va, status=replace(va.status, attached=True)))
                a.counts["attached"] += 1
        except NotFound:
            pass
        except ApiError:
            a.spawn(a.retry_later(self.queue, name), f"retry:attach:{name}")
        finally:
            self.in_flight.discard(name)
            self.queue.add(name)  # a deletion seen meanwhile is handled now

    async def _detach(self, name: str) -> None:
        a = self.agent
        try:
            await a.clock.sleep(a.settings.attach_delay.sample(a.rng))
            va: VolumeAttachment = await a.client.get("VolumeAttachment", name)
            finalizers = [f for f in va.metadata.finalizers if f != self.finalizer]
            await a.client.update(replace(va, metadata=replace(va.metadata, finalizers=finalizers)))
            a.counts["detached"] += 1
        except NotFound:
            pass
        except ApiError:
            a.spawn(a.retry_later(self.queue, name), f"retry:detach:{name}")
        finally:
            self.in_flight.discard(name)
