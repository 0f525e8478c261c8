"""The taint eviction controller: toleration rules as tables, then evictions on the virtual
clock in a world with an API server, one node per test case and no kubelet (a deleted
bound pod stays terminating, which is all these tests need)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial

import pytest
from msgspec.structs import replace

from agents.controllers import TaintEvictionController
from agents.controllers.common import update_pod_condition
from agents.controllers.tainteviction import matching_tolerations, min_toleration_seconds
from emulator.base.api.core import Pod, PodCondition, PodStatus, Taint, Toleration
from tests.builders import node, pod, toleration
from tests.cluster import Cluster, OnCluster, open_cluster

UNREACHABLE = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")
DEDICATED = Taint(key="dedicated", value="db", effect="NoExecute")


tol = partial(toleration, effect="NoExecute")


@pytest.mark.parametrize(
    ("taints", "tolerations", "tolerated", "used"),
    [
        pytest.param([], [], True, [], id="no-taints"),
        pytest.param([UNREACHABLE], [], False, [], id="no-tolerations"),
        pytest.param(
            [UNREACHABLE], [tol(UNREACHABLE.key, seconds=30)], True, [tol(UNREACHABLE.key, seconds=30)], id="tolerated"
        ),
        pytest.param([UNREACHABLE, DEDICATED], [tol(UNREACHABLE.key, seconds=30)], False, [], id="one-untolerated"),
        pytest.param(
            [UNREACHABLE, DEDICATED],
            [tol("dedicated", "db"), tol("", seconds=60)],
            True,
            [tol("", seconds=60), tol("dedicated", "db")],
            id="first-match-per-taint",
        ),
        pytest.param([DEDICATED], [tol("dedicated", "web")], False, [], id="value-differs"),
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
        pytest.param([tol("a", seconds=300), tol("b", seconds=30), tol("c")], 30.0, id="minimum"),
        pytest.param([tol("a", seconds=300), tol("b", seconds=0)], 0.0, id="zero"),
        pytest.param([tol("a", seconds=-5)], 0.0, id="negative"),
    ],
)
def test_min_toleration_seconds(tolerations: list[Toleration], seconds: float) -> None:
    assert min_toleration_seconds(tolerations) == seconds


@dataclass
class World(OnCluster):
    """The cluster and its taint eviction controller."""

    cluster: Cluster
    controller: TaintEvictionController

    def taint(self, node: str, *taints: Taint) -> None:
        n = self.cluster.node(node)
        self.server.update(replace(n, spec=replace(n.spec, taints=list(taints))))

    def deleted_at(self) -> dict[str, float]:
        """Pod -> when the controller's delete marked it terminating."""
        return {
            w.obj.metadata.name: round(w.time, 3) for w in self.cluster.of("Pod", verb="delete") if w.new is not None
        }

    def events(self) -> list[str]:
        return [e.message for e in self.server.list("Event")[0]]


@asynccontextmanager
async def world(nodes: Sequence[str] = ("n1", "n2")) -> AsyncIterator[World]:
    async with open_cluster(namespaces=("default",)) as c:
        for name in nodes:
            c.server.create(node(name))
        c.writes.clear()  # the log starts with the controller
        controller = TaintEvictionController(c.client("controller:tainteviction"), c.clock)
        await c.start(controller, "controller:tainteviction")
        yield World(c, controller)


FOREVER = tol(UNREACHABLE.key)
THIRTY = tol(UNREACHABLE.key, seconds=30)


@pytest.mark.asyncio
async def test_pods_leave_a_tainted_node_after_their_toleration() -> None:
    async with world() as w:
        w.server.create(pod("default-tolerations", node="n1"))  # the apiserver adds 300 s
        w.server.create(pod("thirty", node="n1", tolerations=[THIRTY]))
        w.server.create(pod("forever", node="n1", tolerations=[FOREVER]))
        w.server.create(pod("no-tolerations", node="n1", tolerations=[]))  # gets the defaults too
        w.server.create(pod("elsewhere", node="n2", tolerations=[]))
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
async def test_an_untolerated_taint_evicts_at_once() -> None:
    async with world() as w:
        w.server.create(pod("web", node="n1", tolerations=[THIRTY]))
        w.server.create(pod("db", node="n1", tolerations=[THIRTY, toleration("dedicated")]))
        await w.clock.sleep_until(5.0)
        w.taint("n1", UNREACHABLE, DEDICATED)
        await w.clock.sleep_until(100.0)
        assert w.deleted_at() == {"web": 5.0, "db": 35.0}


@pytest.mark.asyncio
async def test_lifting_the_taint_cancels_and_a_new_taint_starts_over() -> None:
    async with world() as w:
        w.server.create(pod("web", node="n1", tolerations=[THIRTY]))
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
async def test_another_taint_keeps_the_earlier_deadline() -> None:
    async with world() as w:
        w.server.create(pod("web", node="n1", tolerations=[THIRTY, tol("dedicated", seconds=30)]))
        await w.clock.sleep_until(5.0)
        w.taint("n1", UNREACHABLE)
        await w.clock.sleep_until(15.0)
        w.taint("n1", UNREACHABLE, DEDICATED)
        await w.clock.sleep_until(100.0)
        assert w.deleted_at() == {"web": 35.0}


@pytest.mark.asyncio
async def test_a_pod_deleted_meanwhile_is_not_evicted_and_new_pods_on_the_node_are() -> None:
    async with world() as w:
        w.server.create(pod("web", node="n1", tolerations=[THIRTY]))
        await w.clock.sleep_until(5.0)
        w.taint("n1", UNREACHABLE)
        await w.clock.sleep_until(10.0)
        w.server.delete("Pod", "web", "default", grace_period_seconds=0)
        await w.clock.sleep_until(20.0)
        w.server.create(pod("late", node="n1", tolerations=[THIRTY]))
        await w.clock.sleep_until(100.0)
        assert w.deleted_at() == {"late": 50.0}
        assert w.controller.statistics()["cancelled"] == 1


@pytest.mark.asyncio
async def test_the_eviction_condition_carries_the_pods_generation() -> None:
    """1.34 (PodObservedGenerationTracking, beta, on): ``addConditionAndDeletePod``'s
    DisruptionTarget has ``observedGeneration`` = the pod's ``metadata.generation`` (read just
    before; the delete that follows bumps it once more)."""
    async with world() as w:
        created = w.server.create(pod("web", node="n1", tolerations=[THIRTY]))
        spec = replace(created.spec, tolerations=[*created.spec.tolerations, tol("example.com/extra")])
        assert w.server.update(replace(created, spec=spec)).metadata.generation == 2
        w.taint("n1", UNREACHABLE)
        await w.clock.sleep_until(60.0)
        web: Pod = w.server.get("Pod", "web", "default")
        assert (web.metadata.deletion_timestamp is not None, web.metadata.generation) == (True, 3)
        (cond,) = [c for c in web.status.conditions if c.type == "DisruptionTarget"]
        assert (cond.reason, cond.observed_generation) == ("DeletionByTaintManager", 2)


def test_a_new_generation_alone_is_no_change() -> None:
    """Upstream ``UpdatePodCondition``'s ``isEqual`` leaves ``observedGeneration`` out: a pod
    evicted again (its delete bumped the generation) gets no second status write."""
    cond = PodCondition(type="DisruptionTarget", status="True", reason="DeletionByTaintManager", message="m")
    status = PodStatus(conditions=[replace(cond, last_transition_time="T0", observed_generation=1)])
    assert update_pod_condition(status, replace(cond, observed_generation=2), "T1") is None
    changed = update_pod_condition(status, replace(cond, reason="Other", observed_generation=2), "T1")
    assert changed is not None
    assert [(c.reason, c.observed_generation, c.last_transition_time) for c in changed.conditions] == [
        ("Other", 2, "T0")
    ]
