"""PodGC on the virtual clock: pods bound to deleted (or never seen) nodes are marked
Failed and force-deleted after the quarantine; terminating pods on out-of-service nodes
are force-deleted; everything else is left alone. Passes run at 0, 20, 40... s."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest
from msgspec.structs import replace

from agents.controllers import PodGCController
from emulator.api.codec import convert
from emulator.api.core import Namespace, Node, Pod
from emulator.api.meta import ObjectMeta
from emulator.apiserver.server import ApiServer, WriteRecord
from emulator.client.client import Client
from emulator.runtime.clock import LoopClock

OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}


@dataclass
class World:
    clock: LoopClock
    server: ApiServer
    controller: PodGCController
    writes: list[WriteRecord] = field(default_factory=list)

    def gone(self) -> dict[str, float]:
        """Pod -> when it was removed from the store."""
        return {
            w.obj.metadata.name: round(w.time, 3)
            for w in self.writes
            if w.kind == "Pod" and w.verb == "delete" and w.new is None
        }

    def last_status(self, name: str) -> Pod:
        return next(
            w.new
            for w in reversed(self.writes)
            if w.kind == "Pod" and w.verb == "updateStatus" and w.obj.metadata.name == name
        )


def node(name: str, *, ready: str | None = "True", taints: list[dict[str, str]] | None = None) -> Node:
    conditions = [] if ready is None else [{"type": "Ready", "status": ready}]
    return convert(
        {"metadata": {"name": name}, "spec": {"taints": taints or []}, "status": {"conditions": conditions}}, Node
    )


def pod(name: str, node: str, phase: str = "Running") -> Pod:
    p = convert(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
        },
        Pod,
    )
    return replace(p, status=replace(p.status, phase=phase))


@asynccontextmanager
async def world(*nodes: Node, pods: tuple[Pod, ...] = ()) -> AsyncIterator[World]:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    server = ApiServer(clock, random.Random(0))
    server.create(Namespace(metadata=ObjectMeta(name="default")))
    for n in nodes:
        server.create(n)
    for p in pods:
        server.create(p, restore=True)
    controller = PodGCController(Client(server, clock, random.Random(1), name="controller:podgc"), clock)
    w = World(clock, server, controller)
    server.add_write_listener(w.writes.append)
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(controller.run())
        await controller.ready.wait()
        yield w
        task.cancel()


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_pods_of_a_deleted_node_go_after_the_quarantine() -> None:
    async with world(
        node("n1"), node("n2"), pods=(pod("a", "n1"), pod("b", "n1"), pod("c", "n2"), pod("done", "n1", "Succeeded"))
    ) as w:
        await w.clock.sleep_until(1.0)
        w.server.delete("Node", "n1")
        await w.clock.sleep_until(59.0)
        assert w.gone() == {}  # seen orphaned at 20 s: quarantined until 60 s
        assert w.controller.quarantine == {"n1": 60.0}
        await w.clock.sleep_until(100.0)
        assert w.gone() == {"a": 60.0, "b": 60.0, "done": 60.0}
        failed = w.last_status("a")
        assert failed.status.phase == "Failed"
        assert [(c.type, c.status, c.reason, c.message) for c in failed.status.conditions] == [
            ("DisruptionTarget", "True", "DeletionByPodGC", "PodGC: node no longer exists")
        ]
        assert not [
            x for x in w.writes if x.verb == "updateStatus" and x.obj.metadata.name == "done"
        ]  # terminal already
        assert w.server.get("Pod", "c", "default").status.phase == "Running"
        assert w.controller.statistics()["orphaned"] == 3


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_a_node_back_before_the_quarantine_ends_keeps_its_pods() -> None:
    async with world(node("n1"), pods=(pod("a", "n1"),)) as w:
        await w.clock.sleep_until(1.0)
        w.server.delete("Node", "n1")
        await w.clock.sleep_until(30.0)
        w.server.create(node("n1"))
        await w.clock.sleep_until(200.0)
        assert w.gone() == {}
        assert w.controller.missing == {}
        assert len(w.controller.pods) == 0  # the node's pods are no longer watched


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_pods_bound_to_a_node_missing_at_start_are_collected() -> None:
    async with world(pods=(pod("stray", "ghost"),)) as w:
        await w.clock.sleep_until(100.0)
        assert w.gone() == {"stray": 40.0}


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_a_pod_bound_to_a_missing_node_later_gets_its_own_quarantine() -> None:
    async with world(node("n1"), pods=(pod("a", "n1"),)) as w:
        await w.clock.sleep_until(1.0)
        w.server.delete("Node", "n1")
        await w.clock.sleep_until(70.0)
        w.server.create(pod("late", "n1"))
        await w.clock.sleep_until(200.0)
        assert w.gone() == {"a": 60.0, "late": 120.0}  # seen at 80 s, quarantined to 120 s


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_terminating_pods_on_out_of_service_nodes_are_force_deleted() -> None:
    async with world(
        node("n1", ready="False", taints=[OUT_OF_SERVICE]),
        node("n2", ready="True", taints=[OUT_OF_SERVICE]),
        node("n3", ready="Unknown"),
        pods=(pod("stuck", "n1"), pod("alive", "n1"), pod("ready-node", "n2"), pod("no-taint", "n3")),
    ) as w:
        for name in ("stuck", "ready-node", "no-taint"):
            w.server.delete("Pod", name, "default")  # graceful: terminating (no kubelet here)
        await w.clock.sleep_until(30.0)
        assert w.gone() == {"stuck": 20.0}  # the pass at 0 s ran before the deletes
        assert w.last_status("stuck").status.phase == "Failed"
        assert w.server.get("Pod", "alive", "default").metadata.deletion_timestamp is None
        assert w.controller.statistics()["terminating"] == 1
