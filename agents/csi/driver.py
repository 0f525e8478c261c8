"""``CSIDriverAgent``: one simulated CSI driver, talking to the API server only (client
``csi:<name>``, its delays from the seeded stream ``csi/<name>``).

What it writes, and whose job that is upstream:

- the ``CSIDriver`` object (the driver's deployment manifest): ``attachRequired: true`` (every
  simulated driver is a block-device driver like EBS, PD or Azure Disk, whose volumes the
  attach/detach controller attaches through VolumeAttachments; without ``attachDelay`` they
  attach at once), ``podInfoOnMount: false``, ``volumeLifecycleModes: [Persistent]``,
  ``storageCapacity`` true when ``capacity.perTopology`` is set;
- each Node's ``CSINode`` entry for the driver (``nodeID`` = the node's name, its
  ``topologyKeys``, ``allocatable.count`` = ``attachLimit``): upstream's kubelet writes it when
  the driver's node plugin registers; here the agent does it when it sees the Node, creating
  the CSINode (owned by the Node, as the kubelet's) or adding its entry to it;
- the external-provisioner's work (``provisioner``): PVs for claims handed to the driver,
  deletion of its Released ``Delete`` volumes, and ``CSIStorageCapacity`` per topology
  segment and StorageClass when capacity is tracked (``capacity``);
- the external-attacher's work (``attacher``): VolumeAttachments with ``spec.attacher`` = the
  driver's name attached after ``attachDelay``, detached on deletion.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from msgspec.structs import replace

from agents.csi.attacher import Attacher
from agents.csi.capacity import CapacityPublisher
from agents.csi.keyqueue import KeyQueue
from agents.csi.provisioner import Provisioner
from agents.csi.settings import DriverSettings
from emulator.base.api.core import Node
from emulator.base.api.errors import AlreadyExists, ApiError, NotFound
from emulator.base.api.meta import ObjectMeta, OwnerReference, reference_to
from emulator.base.api.storage import CSIDriver, CSIDriverSpec, CSINode, CSINodeDriver, CSINodeSpec, VolumeNodeResources
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.client.informer import Informer
from emulator.base.runtime.clock import Clock

__all__ = ["RETRY_AFTER", "CSIDriverAgent"]

RETRY_AFTER = 1.0
"""Seconds before a write that failed (a conflict, a fault) is tried again."""


class CSIDriverAgent:
    """One CSI driver: ``await run()`` until cancelled; ``ready`` once its caches are synced."""

    def __init__(self, client: Client, clock: Clock, rng: random.Random, settings: DriverSettings) -> None:
        self.client = client
        self.clock = clock
        self.rng = rng
        self.settings = settings
        self.name = settings.name
        self.recorder = EventRecorder(client, clock, f"{settings.name}_csi-provisioner", naming="generated")
        self.ready = asyncio.Event()
        self.counts = {"provisioned": 0, "deleted": 0, "attached": 0, "detached": 0, "errors": 0}
        self.informers: dict[str, Informer] = {}
        self.tg: asyncio.TaskGroup | None = None
        self.nodes: KeyQueue[str] = KeyQueue(clock)
        self.capacity = CapacityPublisher(self)
        self.provisioner = Provisioner(self)
        self.attacher = Attacher(self)

    def __repr__(self) -> str:
        return f"<CSIDriverAgent {self.name} {self.counts}>"

    def statistics(self) -> dict[str, Any]:
        return dict(self.counts)

    def informer(self, kind: str) -> Informer:
        return self.informers[kind]

    def spawn(self, coro: Any, name: str) -> None:
        assert self.tg is not None
        self.tg.create_task(coro, name=f"{self.client.name}:{name}")

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            self.tg = tg
            await self._ensure_driver()
            for kind in ("Node", "StorageClass", "PersistentVolume", "PersistentVolumeClaim", "VolumeAttachment"):
                self.informers[kind] = Informer(self.client, kind)
            self.informers["Node"].add_handlers(self._node, lambda _o, n: self._node(n), self._node_gone)
            self.capacity.start()
            self.provisioner.start()
            self.attacher.start()
            for kind, inf in self.informers.items():
                tg.create_task(inf.run(), name=f"{self.client.name}:{kind}")
            tg.create_task(self.nodes.run(self._sync_node), name=f"{self.client.name}:csinodes")
            for inf in self.informers.values():
                await inf.synced.wait()
            self.ready.set()

    async def retry_later(self, queue: KeyQueue[Any], key: Any) -> None:
        self.counts["errors"] += 1
        await queue.add_after(key, RETRY_AFTER)

    # --- CSIDriver ----------------------------------------------------------------------

    async def _ensure_driver(self) -> None:
        spec = CSIDriverSpec(
            attach_required=True,
            pod_info_on_mount=False,
            volume_lifecycle_modes=["Persistent"],
            storage_capacity=self.settings.capacity_per_topology is not None,
        )
        while True:
            try:
                await self.client.create(CSIDriver(metadata=ObjectMeta(name=self.name), spec=spec))
                return
            except AlreadyExists:
                return
            except ApiError:
                self.counts["errors"] += 1
                await self.clock.sleep(RETRY_AFTER)

    # --- CSINode ------------------------------------------------------------------------

    def _node(self, node: Node) -> None:
        self.nodes.add(node.metadata.name)
        self.capacity.changed()

    def _node_gone(self, node: Node) -> None:
        self.capacity.changed()  # its CSINode goes with it (owned by the Node: the GC deletes it)

    def _entry(self, node: str) -> CSINodeDriver:
        limit = self.settings.attach_limit
        return CSINodeDriver(
            name=self.name,
            node_id=node,
            topology_keys=list(self.settings.topology_keys),
            allocatable=VolumeNodeResources(count=limit) if limit is not None else None,
        )

    async def _sync_node(self, name: str) -> None:
        node = self.informers["Node"].get(name)
        if node is None:
            return
        entry = self._entry(name)
        try:
            try:
                current: CSINode = await self.client.get("CSINode", name)
            except NotFound:
                owner = OwnerReference(api_version="v1", kind="Node", name=name, uid=node.metadata.uid)
                meta = ObjectMeta(name=name, owner_references=[owner])
                await self.client.create(CSINode(metadata=meta, spec=CSINodeSpec(drivers=[entry])))
                return
            drivers = [d for d in current.spec.drivers if d.name != self.name]
            if entry in current.spec.drivers:
                return
            spec = replace(current.spec, drivers=[*drivers, entry])
            await self.client.update(replace(current, spec=spec))
        except ApiError:
            self.spawn(self.retry_later(self.nodes, name), f"retry:csinode:{name}")

    async def event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        await self.recorder.event(reference_to(obj), type_, reason, message)
