"""The driver's topology segments and, with ``capacity.perTopology``, its storage capacity
tracking (upstream external-provisioner's ``--enable-capacity``): one ``CSIStorageCapacity``
per segment and StorageClass of the driver, in ``kube-system``, ``nodeTopology`` matching the
segment's labels, ``capacity`` = ``perTopology`` less what the driver provisioned there
(every class of the driver draws on the same space). Republished (created, updated,
deleted) whenever nodes, classes or the driver's volumes change."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from agents.csi.keyqueue import KeyQueue
from agents.csi.settings import CAPACITY_NAMESPACE, DRIVER_NAME_LABEL, MANAGED_BY_LABEL
from agents.csi.topology import Segment, segment_of, segment_of_volume
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.meta import LabelSelector, ObjectMeta
from emulator.base.api.quantity import Quantity
from emulator.base.api.storage import CSIStorageCapacity, PersistentVolume

if TYPE_CHECKING:
    from agents.csi.driver import CSIDriverAgent

__all__ = ["CapacityPublisher"]


class CapacityPublisher:
    def __init__(self, agent: CSIDriverAgent) -> None:
        self.agent = agent
        self.used: dict[str, tuple[Segment, int]] = {}
        """Provisioned volume → (its segment, its size in bytes)."""
        self.published: dict[tuple[Segment, str], CSIStorageCapacity] = {}
        self.queue: KeyQueue[str] = KeyQueue(agent.clock)

    @property
    def tracked(self) -> bool:
        return self.agent.settings.capacity_per_topology is not None

    def start(self) -> None:
        if self.tracked:
            self.agent.spawn(self.queue.run(self._sync), "capacity")

    def changed(self) -> None:
        if self.tracked:
            self.queue.add("all")

    def segments(self) -> list[Segment]:
        """The segments of the known nodes, sorted."""
        keys = self.agent.settings.topology_keys
        found = {segment_of(n.metadata.labels, keys) for n in self.agent.informer("Node").objects()}
        return sorted(s for s in found if s is not None)

    def free(self, segment: Segment) -> int | None:
        per = self.agent.settings.capacity_per_topology
        if per is None:
            return None
        used = sum(size for seg, size in self.used.values() if seg == segment)
        return max(per - used, 0)

    def fits(self, segment: Segment, size: int) -> bool:
        free = self.free(segment)
        return free is None or size <= free

    def _record(self, volume: PersistentVolume, segment: Segment | None) -> None:
        if segment is None:
            return
        q = volume.spec.capacity.get("storage")
        entry = (segment, 0 if q is None else q.value)
        if self.used.get(volume.metadata.name) != entry:
            self.used[volume.metadata.name] = entry
            self.changed()

    def provisioned(self, segment: Segment, volume: PersistentVolume) -> None:
        self._record(volume, segment)

    def seen(self, volume: PersistentVolume) -> None:
        self._record(volume, segment_of_volume(volume, self.agent.settings.topology_keys))

    def gone(self, volume: PersistentVolume) -> None:
        if self.used.pop(volume.metadata.name, None) is not None:
            self.changed()

    async def _sync(self, _key: str) -> None:
        a = self.agent
        keys = a.settings.topology_keys
        classes = sorted(sc.metadata.name for sc in a.informer("StorageClass").objects() if sc.provisioner == a.name)
        wanted: dict[tuple[Segment, str], int] = {}
        for segment in self.segments():
            free = self.free(segment)
            assert free is not None
            for cls in classes:
                wanted[(segment, cls)] = free
        try:
            for (segment, cls), free in wanted.items():
                have = self.published.get((segment, cls))
                if have is None:
                    self.published[(segment, cls)] = await a.client.create(self._object(segment, cls, free, keys))
                elif have.capacity is None or have.capacity.value != free:
                    obj = replace(have, capacity=Quantity.from_value(free))
                    self.published[(segment, cls)] = await a.client.update(obj)
            for key in [k for k in self.published if k not in wanted]:
                obj = self.published.pop(key)
                with contextlib.suppress(NotFound):
                    await a.client.delete("CSIStorageCapacity", obj.metadata.name, CAPACITY_NAMESPACE)
        except ApiError:
            a.spawn(a.retry_later(self.queue, "all"), "retry:capacity")

    def _object(self, segment: Segment, cls: str, free: int, keys: Any) -> CSIStorageCapacity:
        labels = {DRIVER_NAME_LABEL: self.agent.name, MANAGED_BY_LABEL: "external-provisioner"}
        return CSIStorageCapacity(
            metadata=ObjectMeta(generate_name="csisc-", namespace=CAPACITY_NAMESPACE, labels=labels),
            node_topology=LabelSelector(match_labels=dict(zip(keys, segment, strict=True))),
            storage_class_name=cls,
            capacity=Quantity.from_value(free),
        )
