"""``DRADriverAgent``: one simulated DRA driver (client ``dra:<driver>``, its prepare delays
from the seeded stream ``dra/<driver>``), as a driver's kubelet plugin DaemonSet would run it
on every node it serves.

What it does, and whose job that is upstream (``k8s.io/dynamic-resource-allocation``'s
``kubeletplugin`` helper and its ``resourceslice`` controller):

- for each Node of its ``nodes`` map, once the Node exists: one ``ResourceSlice``,
  ``generateName`` ``<node>-<driver>-``, owned by the Node (``controller: true``, so the
  garbage collector removes it with the Node as well), ``spec.driver`` the driver,
  ``spec.nodeName`` and ``spec.pool.name`` the node, ``pool.generation`` 1,
  ``pool.resourceSliceCount`` 1, the devices ``<prefix>0`` .. ``<prefix><count-1>`` with the
  group's attributes, capacity and ``allowMultipleAllocations``;
- the node's kubelet plugin (``plugin.NodePlugin``) registered in ``KubeletPlugins`` for that
  node, so the kubelet there can call ``NodePrepareResources``;
- when the Node is deleted: the plugin unregistered and the slice deleted (a slice already
  gone is fine).

A failed write is retried after ``RETRY_AFTER`` seconds. A group with ``count: 0`` publishes a
slice with no devices (the driver runs there and has nothing to offer).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any, Final

from agents.dra.plugin import NodePlugin
from agents.dra.settings import DRADriverSettings, NodeDevices
from emulator.base.api.core import Node
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.resource import Device, ResourcePool, ResourceSlice, ResourceSliceSpec
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from emulator.base.client.kubeletplugins import KubeletPlugins
from emulator.base.runtime.clock import Clock

__all__ = ["RETRY_AFTER", "DRADriverAgent", "slice_for"]

RETRY_AFTER: Final = 1.0
"""Seconds before a write that failed (a conflict, a fault) is tried again."""


def slice_for(driver: str, node: Node, devices: NodeDevices) -> ResourceSlice:
    """The ResourceSlice ``driver`` publishes for ``node`` (to create: no name yet)."""
    name = node.metadata.name
    owner = OwnerReference(api_version="v1", kind="Node", name=name, uid=node.metadata.uid, controller=True)
    spec = ResourceSliceSpec(
        driver=driver,
        pool=ResourcePool(name=name, generation=1, resource_slice_count=1),
        node_name=name,
        devices=[
            Device(
                name=d,
                attributes=dict(devices.attributes),
                capacity=dict(devices.capacity),
                allow_multiple_allocations=devices.allow_multiple_allocations,
            )
            for d in devices.names()
        ],
    )
    meta = ObjectMeta(generate_name=f"{name}-{driver}-", owner_references=[owner])
    return ResourceSlice(metadata=meta, spec=spec)


class DRADriverAgent:
    """One DRA driver: ``await run()`` until cancelled; ``ready`` once its node cache synced."""

    def __init__(
        self,
        client: Client,
        clock: Clock,
        rng: random.Random,
        settings: DRADriverSettings,
        plugins: KubeletPlugins | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.rng = rng
        self.settings = settings
        self.name = settings.name
        self.plugins = plugins
        self.ready = asyncio.Event()
        self.counts = dict.fromkeys(("slices_created", "slices_deleted", "prepared", "unprepared", "errors"), 0)
        self.nodes = Informer(client, "Node")
        self.published: dict[str, tuple[str, str]] = {}
        """Node name → (the name of its ResourceSlice, the UID of the Node it was made for)."""
        self.node_plugins: dict[str, NodePlugin] = {}
        self._queue: dict[str, None] = {}
        self._wake = asyncio.Event()
        self._tg: asyncio.TaskGroup | None = None

    def __repr__(self) -> str:
        return f"<DRADriverAgent {self.name} {self.counts}>"

    def statistics(self) -> dict[str, Any]:
        return dict(self.counts)

    async def run(self) -> None:
        self.nodes.add_handlers(self._changed, lambda _o, n: self._changed(n), self._changed)
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            tg.create_task(self.nodes.run(), name=f"{self.client.name}:Node")
            tg.create_task(self._work(), name=f"{self.client.name}:slices")
            await self.nodes.synced.wait()
            self.ready.set()

    def _changed(self, node: Node) -> None:
        if node.metadata.name in self.settings.nodes:
            self._queue[node.metadata.name] = None
            self._wake.set()

    async def _work(self) -> None:
        while True:
            while not self._queue:
                self._wake.clear()
                await self._wake.wait()
            name = next(iter(self._queue))
            del self._queue[name]
            try:
                await self._sync(name)
            except ApiError:
                self.counts["errors"] += 1
                assert self._tg is not None
                self._tg.create_task(self._retry(name), name=f"{self.client.name}:retry:{name}")

    async def _retry(self, name: str) -> None:
        await self.clock.sleep(RETRY_AFTER)
        self._queue[name] = None
        self._wake.set()

    async def _sync(self, name: str) -> None:
        node: Node | None = self.nodes.get(name)
        gone = node is None or node.metadata.deletion_timestamp is not None
        published = self.published.get(name)
        if published is not None and (gone or node is None or published[1] != node.metadata.uid):
            self._stop_plugin(name)
            await self._delete_slice(name, published)
        if gone or node is None:
            return
        devices = self.settings.nodes[name]
        if name not in self.published:
            created = await self.client.create(slice_for(self.name, node, devices))
            self.published[name] = (created.metadata.name, node.metadata.uid)
            self.counts["slices_created"] += 1
        if name not in self.node_plugins:
            plugin = NodePlugin(self, name, devices)
            self.node_plugins[name] = plugin
            if self.plugins is not None:
                self.plugins.register(name, plugin)

    async def _delete_slice(self, name: str, published: tuple[str, str]) -> None:
        with contextlib.suppress(NotFound):  # the garbage collector was first
            await self.client.delete("ResourceSlice", published[0])
        self.published.pop(name, None)
        self.counts["slices_deleted"] += 1

    def _stop_plugin(self, name: str) -> None:
        if self.node_plugins.pop(name, None) is not None and self.plugins is not None:
            self.plugins.unregister(name, self.name)
