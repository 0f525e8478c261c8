"""The taint eviction controller: toleration rules as tables, then evictions on the virtual
clock in a world with an API server, one node per test case and no kubelet (a deleted
bound pod stays terminating, which is all these tests need)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from msgspec.structs import replace

from agents.controllers import TaintEvictionController
from agents.controllers.tainteviction import matching_tolerations, min_toleration_seconds
from emulator.api.codec import convert
from emulator.api.core import Namespace, Node, Pod, Taint, Toleration
from emulator.api.meta import ObjectMeta
from emulator.apiserver.server import ApiServer, WriteRecord
from emulator.client.client import Client
from emulator.runtime.clock import LoopClock

UNREACHABLE = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")
DEDICATED = Taint(key="dedicated", value="db", effect="NoExecute")


def tol(key: str = "", seconds: int | None = None, *, op: str = "Exists", value: str = "") -> Toleration:
    return Toleration(key=key, operator=op, value=value, effect="NoExecute", toleration_seconds=seconds)


@pytest.mark.parametrize(
    ("taints", "tolerations", "tolerated", "used"),
    [
        pytest.param([], [], True, [], id="no-taints"),
        pytest.param([UNREACHABLE], [], False, [], id="no-tolerations"),
        pytest.param([UNREACHABLE], [tol(UNREACHABLE.key, 30)], True, [tol(UNREACHABLE.key, 30)], id="tolerated"),
        pytest.param([UNREACHABLE, DEDICATED], [tol(UNREACHABLE.key, 30)], False, [], id="one-untolerated"),
        pytest.param(
            [UNREACHABLE, DEDICATED],
            [tol("dedicated", op="Equal", value="db"), tol("", 60)],
            True,
            [tol("", 60), tol("dedicated", op="Equal", value="db")],
            id="first-match-per-taint",
        ),
        pytest.param([DEDICATED], [tol("dedicated", op="Equal", value="web")], False, [], id="value-differs"),
    ],
)
def test_matching_tolerations(
    taints: list[Taint], tolerations: list[Toleration], tolerated: bool, used: list[Toleration]
) -> None:
    assert matching_tolerations(taints, tolerations) == (tolerated, used)


@pytest.mark.parametrize(
    ("tolerations", "seconds"),
    [
        pytest.param([], 0.0, id="none"),
        pytest.param([tol("a")], -1.0, id="forever"),
        pytest.param([tol("a", 300), tol("b", 30), tol("c")], 30.0, id="minimum"),
        pytest.param([tol("a", 300), tol("b", 0)], 0.0, id="zero"),
        pytest.param([tol("a", -5)], 0.0, id="negative"),
    ],
)
def test_min_toleration_seconds(tolerations: list[Toleration], seconds: float) -> None:
    assert min_toleration_seconds(tolerations) == seconds


@dataclass
class World:
    clock: LoopClock
    server: ApiServer
    controller: TaintEvictionController
    writes: list[WriteRecord] = field(default_factory=list)

    def taint(self, node: str, *taints: Taint) -> None:
        n: Node = self.server.get("Node", node)
        self.server.update(replace(n, spec=replace(n.spec, taints=list(taints))))

    def deleted_at(self) -> dict[str, float]:
        """Pod -> when the controller's delete marked it terminating."""
        return {
            w.obj.metadata.name: round(w.time, 3)
            for w in self.writes
            if w.kind == "Pod" and w.verb == "delete" and w.new is not None
        }

    def events(self) -> list[str]:
        return [e.message for e in self.server.list("Event")[0]]


def bound_pod(name: str, node: str, tolerations: Sequence[dict[str, Any]] | None = None) -> Pod:
    spec: dict[str, Any] = {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}
    if tolerations is not None:
        spec["tolerations"] = list(tolerations)
    return convert({"metadata": {"name": name, "namespace": "default"}, "spec": spec}, Pod)


@asynccontextmanager
async def world(nodes: Sequence[str] = ("n1", "n2")) -> AsyncIterator[World]:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    server = ApiServer(clock, random.Random(0))
    server.create(Namespace(metadata=ObjectMeta(name="default")))
    for name in nodes:
        server.create(Node(metadata=ObjectMeta(name=name)))
    controller = TaintEvictionController(
        Client(server, clock, random.Random(1), name="controller:tainteviction"), clock
    )
    w = World(clock, server, controller)
    server.add_write_listener(w.writes.append)
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(controller.run())
        await controller.ready.wait()
        yield w
        task.cancel()


FOREVER = {"key": UNREACHABLE.key, "operator": "Exists", "effect": "NoExecute"}
THIRTY = {**FOREVER, "tolerationSeconds": 30}


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_pods_leave_a_tainted_node_after_their_toleration() -> None:
    async with world() as w:
        w.server.create(bound_pod("default-tolerations", "n1"))  # the apiserver adds 300 s
        w.server.create(bound_pod("thirty", "n1", [THIRTY]))
        w.server.create(bound_pod("forever", "n1", [FOREVER]))
        w.server.create(bound_pod("no-tolerations", "n1", []))  # gets the defaults too
        w.server.create(bound_pod("elsewhere", "n2", []))
        await w.clock.sleep_until(10.0)
        assert len(w.controller.pods) == 0  # no tainted node: no pod is watched
        w.taint("n1", UNREACHABLE)
        await w.clock.sleep_until(400.0)
        assert w.deleted_at() == {"thirty": 40.0, "default-tolerations": 310.0, "no-tolerations": 310.0}
        assert "forever" not in w.deleted_at()
        thirty: Pod = w.server.get("Pod", "thirty", "default")
        assert thirty.metadata.deletion_timestamp is not None
        (cond,) = [c for c in thirty.status.conditions if c.type == "DisruptionTarget"]
        assert (cond.status, cond.reason, cond.message) == (
            "True",
            "DeletionByTaintManager",
            "Taint manager: deleting due to NoExecute taint",
        )
        assert sorted(w.events()) == [
            "Marking for deletion Pod default/default-tolerations",
            "Marking for deletion Pod default/no-tolerations",
            "Marking for deletion Pod default/thirty",
        ]


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_an_untolerated_taint_evicts_at_once() -> None:
    async with world() as w:
        w.server.create(bound_pod("web", "n1", [THIRTY]))
        w.server.create(bound_pod("db", "n1", [THIRTY, {"key": "dedicated", "operator": "Exists"}]))
        await w.clock.sleep_until(5.0)
        w.taint("n1", UNREACHABLE, DEDICATED)
        await w.clock.sleep_until(100.0)
        assert w.deleted_at() == {"web": 5.0, "db": 35.0}


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_lifting_the_taint_cancels_and_a_new_taint_starts_over() -> None:
    async with world() as w:
        w.server.create(bound_pod("web", "n1", [THIRTY]))
        await w.clock.sleep_until(5.0)
        w.taint("n1", UNREACHABLE)
        await w.clock.sleep_until(20.0)
        assert w.controller.scheduled() == {("default", "web"): 35.0}
        w.taint("n1")
        await w.clock.sleep_until(50.0)
        assert w.deleted_at() == {}
        assert w.controller.scheduled() == {}
        assert len(w.controller.pods) == 0
        assert w.events() == ["Cancelling deletion of Pod default/web"]
        w.taint("n1", UNREACHABLE)
        await w.clock.sleep_until(100.0)
        assert w.deleted_at() == {"web": 80.0}


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_another_taint_keeps_the_earlier_deadline() -> None:
    async with world() as w:
        w.server.create(bound_pod("web", "n1", [THIRTY, {**THIRTY, "key": "dedicated"}]))
        await w.clock.sleep_until(5.0)
        w.taint("n1", UNREACHABLE)
        await w.clock.sleep_until(15.0)
        w.taint("n1", UNREACHABLE, DEDICATED)
        await w.clock.sleep_until(100.0)
        assert w.deleted_at() == {"web": 35.0}


@pytest.mark.asyncio
@pytest.mark.virtual_time
async def test_a_pod_deleted_meanwhile_is_not_evicted_and_new_pods_on_the_node_are() -> None:
    async with world() as w:
        w.server.create(bound_pod("web", "n1", [THIRTY]))
        await w.clock.sleep_until(5.0)
        w.taint("n1", UNREACHABLE)
        await w.clock.sleep_until(10.0)
        w.server.delete("Pod", "web", "default", grace_period_seconds=0)
        await w.clock.sleep_until(20.0)
        w.server.create(bound_pod("late", "n1", [THIRTY]))
        await w.clock.sleep_until(100.0)
        assert w.deleted_at() == {"late": 50.0}
        assert w.controller.statistics()["cancelled"] == 1
