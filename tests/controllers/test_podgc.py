"""PodGC on the virtual clock: pods bound to deleted (or never seen) nodes are marked
Failed and force-deleted after the quarantine; terminating pods on out-of-service nodes
are force-deleted; everything else is left alone. Passes run at 0, 20, 40... s."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest
from msgspec.structs import replace

from agents.controllers import PodGCController
from agents.controllers.podgc import ORPHAN_CONDITION, failed_patch
from emulator.base.api.core import Node, Pod, PodCondition
from emulator.base.api.errors import ApiError, Conflict, InternalError
from emulator.base.runtime.clock import format_timestamp
from tests.builders import node, pod, taint
from tests.cluster import Cluster, OnCluster, open_cluster

OUT_OF_SERVICE = taint("node.kubernetes.io/out-of-service", "nodeshutdown", effect="NoExecute")


@dataclass
class World(OnCluster):
    """The cluster and its PodGC controller."""

    cluster: Cluster
    controller: PodGCController

    def gone(self) -> dict[str, float]:
        """Pod -> when it was removed from the store."""
        return {w.obj.metadata.name: round(w.time, 3) for w in self.cluster.of("Pod", verb="delete") if w.new is None}

    def last_status(self, name: str) -> Pod:
        return next(w.new for w in reversed(self.cluster.of("Pod", name, "updateStatus")))


@asynccontextmanager
async def world(*nodes: Node, pods: tuple[Pod, ...] = ()) -> AsyncIterator[World]:
    async with open_cluster(namespaces=("default",)) as c:
        for n in nodes:
            c.server.create(n)
        for p in pods:
            c.server.create(p, restore=True)
        c.writes.clear()  # the log starts with the controller
        controller = PodGCController(c.client("controller:podgc"), c.clock)
        await c.start(controller, "controller:podgc")
        yield World(c, controller)


@pytest.mark.asyncio
async def test_pods_of_a_deleted_node_go_after_the_quarantine() -> None:
    async with world(
        node("n1", ready="True"),
        node("n2", ready="True"),
        pods=(
            pod("a", node="n1", phase="Running"),
            pod("b", node="n1", phase="Running"),
            pod("c", node="n2", phase="Running"),
            pod("done", node="n1", phase="Succeeded"),
        ),
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
async def test_a_node_back_before_the_quarantine_ends_keeps_its_pods() -> None:
    async with world(node("n1", ready="True"), pods=(pod("a", node="n1", phase="Running"),)) as w:
        await w.clock.sleep_until(1.0)
        w.server.delete("Node", "n1")
        await w.clock.sleep_until(30.0)
        w.server.create(node("n1", ready="True"))
        await w.clock.sleep_until(200.0)
        assert w.gone() == {}
        assert w.controller.missing == {}
        assert len(w.controller.pods) == 0  # the node's pods are no longer watched


@pytest.mark.asyncio
async def test_pods_bound_to_a_node_missing_at_start_are_collected() -> None:
    async with world(pods=(pod("stray", node="ghost", phase="Running"),)) as w:
        await w.clock.sleep_until(100.0)
        assert w.gone() == {"stray": 40.0}


@pytest.mark.asyncio
async def test_a_pod_bound_to_a_missing_node_later_goes_at_the_nodes_next_check() -> None:
    async with world(node("n1", ready="True"), pods=(pod("a", node="n1", phase="Running"),)) as w:
        await w.clock.sleep_until(1.0)
        w.server.delete("Node", "n1")
        await w.clock.sleep_until(70.0)
        w.server.create(pod("late", node="n1", phase="Running"))
        await w.clock.sleep_until(200.0)
        # the pass at 60 s found "a" there as it started and quarantined n1 again, to 100 s
        # (upstream's AddAfter at every pass); "late", seen at 80 s, keeps that earlier end
        assert w.gone() == {"a": 60.0, "late": 100.0}
        assert w.controller.quarantine == {}  # checked at 140 s with nothing left on it


@pytest.mark.asyncio
async def test_terminating_pods_on_out_of_service_nodes_are_force_deleted() -> None:
    async with world(
        node("n1", ready="False", taints=[OUT_OF_SERVICE]),
        node("n2", ready="True", taints=[OUT_OF_SERVICE]),
        node("n3", ready="Unknown"),
        pods=(
            pod("stuck", node="n1", phase="Running"),
            pod("alive", node="n1", phase="Running"),
            pod("ready-node", node="n2", phase="Running"),
            pod("no-taint", node="n3", phase="Running"),
        ),
    ) as w:
        for name in ("stuck", "ready-node", "no-taint"):
            w.server.delete("Pod", name, "default")  # graceful: terminating (no kubelet here)
        await w.clock.sleep_until(30.0)
        assert w.gone() == {"stuck": 20.0}  # the pass at 0 s ran before the deletes
        assert w.last_status("stuck").status.phase == "Failed"
        assert w.server.get("Pod", "alive", "default").metadata.deletion_timestamp is None
        assert w.controller.statistics()["terminating"] == 1


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "error",
    [
        pytest.param(Conflict("Precondition failed: UID in precondition"), id="conflict"),
        pytest.param(InternalError("etcd timeout"), id="internal-error"),
    ],
)
async def test_a_failed_mark_leaves_the_pod_for_a_later_pass(error: ApiError) -> None:
    # upstream ``markFailedAndDeletePodWithCondition`` returns the PATCH's error before its
    # delete: the pod stays (Running). The failing pass (60 s) had already quarantined n1
    # again, as ``gcOrphaned`` calls ``nodeQueue.AddAfter`` for every listed orphan's node
    # before it takes the ended ones: the retry comes one quarantine (40 s) later, at 100 s
    async with world(node("n1", ready="True"), pods=(pod("a", node="n1", phase="Running"),)) as w:
        patches: list[float] = []
        errors = [error]

        async def failing(agent: str, verb: str, kind: str) -> None:
            if verb == "patch" and kind == "Pod":
                patches.append(w.clock.now())
                if errors:
                    raise errors.pop()

        w.controller.client.interceptor = failing
        await w.clock.sleep_until(1.0)
        w.server.delete("Node", "n1")
        await w.clock.sleep_until(90.0)
        assert patches == [60.0]
        assert w.gone() == {}
        assert w.server.get("Pod", "a", "default").status.phase == "Running"
        assert w.controller.statistics()["errors"] == 1
        assert w.controller.quarantine == {"n1": 100.0}  # set by the failing pass itself
        await w.clock.sleep_until(110.0)
        assert patches == [60.0, 100.0]
        assert w.gone() == {"a": 100.0}
        assert w.last_status("a").status.phase == "Failed"
        assert w.controller.statistics()["orphaned"] == 1


@pytest.mark.asyncio
async def test_a_failed_node_get_is_retried_one_quarantine_later() -> None:
    # upstream ``discoverDeletedNodes`` logs the error ("added back to the queue in the
    # subsequent loop if still needed"): the pass's own AddAfter already re-queued the node
    async with world(node("n1", ready="True"), pods=(pod("a", node="n1", phase="Running"),)) as w:
        gets: list[float] = []

        async def failing(agent: str, verb: str, kind: str) -> None:
            if verb == "get" and kind == "Node":
                gets.append(w.clock.now())
                if len(gets) == 1:
                    raise InternalError("etcd timeout")

        w.controller.client.interceptor = failing
        await w.clock.sleep_until(1.0)
        w.server.delete("Node", "n1")
        await w.clock.sleep_until(90.0)
        assert gets == [60.0]
        assert w.gone() == {}
        assert w.controller.quarantine == {"n1": 100.0}
        await w.clock.sleep_until(110.0)
        assert gets == [60.0, 100.0]
        assert w.gone() == {"a": 100.0}
        assert w.controller.statistics() == {
            "terminated": 0,
            "orphaned": 1,
            "terminating": 0,
            "errors": 1,
            "missingNodes": 1,
        }


@pytest.mark.asyncio
async def test_a_pod_gone_before_its_mark_counts_as_collected() -> None:
    # the PATCH finds no pod (deleted meanwhile by someone else): what gc wanted is done, so
    # it is counted as collected, not as an error, and no delete follows
    async with world(node("n1", ready="True"), pods=(pod("a", node="n1", phase="Running"),)) as w:

        async def vanish(agent: str, verb: str, kind: str) -> None:
            if verb == "patch" and kind == "Pod":
                w.server.delete("Pod", "a", "default", grace_period_seconds=0)

        w.controller.client.interceptor = vanish
        await w.clock.sleep_until(1.0)
        w.server.delete("Node", "n1")
        await w.clock.sleep_until(70.0)
        assert w.gone() == {"a": 60.0}
        assert [x.verb for x in w.cluster.of("Pod", "a")] == ["delete"]  # the test's: no status, no 2nd delete
        assert w.controller.statistics()["orphaned"] == 1
        assert w.controller.statistics()["errors"] == 0


@pytest.mark.asyncio
async def test_a_failed_mark_on_an_out_of_service_node_is_retried_at_the_next_pass() -> None:
    # gcTerminating has no quarantine: the pod, still terminating there, is tried again 20 s later
    async with world(
        node("n1", ready="False", taints=[OUT_OF_SERVICE]), pods=(pod("stuck", node="n1", phase="Running"),)
    ) as w:
        patches: list[float] = []

        async def failing(agent: str, verb: str, kind: str) -> None:
            if verb == "patch" and kind == "Pod":
                patches.append(w.clock.now())
                if len(patches) == 1:
                    raise InternalError("etcd timeout")

        w.controller.client.interceptor = failing
        w.server.delete("Pod", "stuck", "default")  # graceful: terminating (no kubelet here)
        await w.clock.sleep_until(30.0)
        assert patches == [20.0]
        assert w.gone() == {}
        assert w.server.get("Pod", "stuck", "default").status.phase == "Running"
        await w.clock.sleep_until(50.0)
        assert patches == [20.0, 40.0]
        assert w.gone() == {"stuck": 40.0}
        assert w.last_status("stuck").status.phase == "Failed"
        assert w.controller.statistics()["terminating"] == 1
        assert w.controller.statistics()["errors"] == 1


def test_the_mark_is_a_patch_of_the_listed_difference_on_the_pod_as_stored() -> None:
    # PatchPodStatus: no resourceVersion (a newer stored copy takes the patch: nothing else of
    # it is lost), the UID as precondition, the condition merged by type
    listed = pod("a", uid="u1", node="n1", phase="Running", resource_version="5")
    other = PodCondition(type="Ready", status="False", reason="SomeoneElse")
    stored = replace(
        listed,
        metadata=replace(listed.metadata, resource_version="9"),
        status=replace(listed.status, conditions=[other]),
    )
    apply = failed_patch(listed, ORPHAN_CONDITION, format_timestamp(7.0))
    marked = apply(stored)
    assert marked.metadata.resource_version == "9"
    assert marked.status.phase == "Failed"
    assert [(c.type, c.status, c.reason, c.last_transition_time) for c in marked.status.conditions] == [
        ("Ready", "False", "SomeoneElse", None),
        ("DisruptionTarget", "True", "DeletionByPodGC", format_timestamp(7.0)),
    ]
    replaced = replace(stored, metadata=replace(stored.metadata, uid="u2"))
    with pytest.raises(Conflict, match="UID in precondition: u1, UID in object meta: u2"):
        apply(replaced)


def test_the_mark_carries_the_pods_generation_as_observed() -> None:
    # 1.34 (PodObservedGenerationTracking on): status.observedGeneration =
    # GetPodObservedGenerationIfEnabled(pod), the condition's from
    # GetPodObservedGenerationIfEnabledOnCondition: both the listed pod's generation
    listed = pod("a", uid="u1", node="n1", phase="Running")
    listed = replace(
        listed,
        metadata=replace(listed.metadata, generation=3),
        status=replace(listed.status, observed_generation=2),
    )
    marked = failed_patch(listed, ORPHAN_CONDITION, format_timestamp(7.0))(listed)
    assert marked.status.observed_generation == 3
    assert [(c.type, c.observed_generation) for c in marked.status.conditions] == [("DisruptionTarget", 3)]
    # the patch is the listed difference: an observedGeneration the listed status already
    # had is not in it, and the stored one stays
    seen = replace(listed, status=replace(listed.status, observed_generation=3))
    stored = replace(seen, status=replace(seen.status, observed_generation=4))
    assert failed_patch(seen, None, format_timestamp(7.0))(stored).status.observed_generation == 4
    # a DisruptionTarget listed for an older generation differs from the one UpdatePodCondition
    # puts in the new status: the patch carries it, its transition time kept (same status)
    old = replace(ORPHAN_CONDITION, observed_generation=1, last_transition_time=format_timestamp(1.0))
    stale = replace(seen, status=replace(seen.status, conditions=[old]))
    again = failed_patch(stale, ORPHAN_CONDITION, format_timestamp(7.0))(stale)
    assert [(c.observed_generation, c.last_transition_time) for c in again.status.conditions] == [
        (3, format_timestamp(1.0))
    ]
