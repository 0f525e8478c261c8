"""The garbage collector on a test cluster: Background, Foreground and Orphan propagation
for one and two levels of ownership (Deployment → ReplicaSet → Pod, made by hand with
ownerReferences), dangling owners, and what it costs when no workload exists."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from agents.controllers.controllerutils import owner_ref
from agents.controllers.garbagecollector import GarbageCollector
from agents.controllers.manager import start_workload_controllers
from emulator.base.api.codec import load_manifests
from emulator.base.api.errors import NotFound
from emulator.base.api.meta import OwnerReference
from tests.builders import node, pod
from tests.cluster import Cluster

pytestmark = pytest.mark.asyncio
_TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def workload(kind: str, name: str, owners: list[OwnerReference] | None = None) -> Any:
    manifest = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": _TEMPLATE},
    }
    (obj,) = load_manifests(msgspec.json.encode(manifest).decode(), source="m.json")
    return replace(obj, metadata=replace(obj.metadata, owner_references=owners or []))


def owned_pod(name: str, *owners: OwnerReference, finalizers: list[str] | None = None) -> Any:
    p = pod(name)
    return replace(p, metadata=replace(p.metadata, owner_references=list(owners), finalizers=finalizers or []))


@asynccontextmanager
async def collector(cluster: Cluster) -> AsyncIterator[GarbageCollector]:
    """The garbage collector, started as the controller manager starts it."""
    started: list[Any] = []
    ready = asyncio.Event()

    async def manager() -> None:
        async with asyncio.TaskGroup() as tg:
            started.extend(start_workload_controllers(tg, cluster.clock, cluster.client, names=["garbagecollector"]))
            ready.set()
            await asyncio.Event().wait()

    cluster.spawn(manager(), "controller-manager")
    await ready.wait()
    (gc,) = started
    assert isinstance(gc, GarbageCollector)
    yield gc


def exists(cluster: Cluster, kind: str, name: str) -> bool:
    try:
        cluster.server.get(kind, name, "default")
    except NotFound:
        return False
    return True


def removals(cluster: Cluster) -> list[str]:
    """``Kind/name`` of every object removed from the store, in order."""
    return [f"{w.kind}/{w.old.metadata.name}" for w in cluster.writes if w.verb == "delete" and w.new is None]


async def replica_set_with_pods(cluster: Cluster, n: int = 3, *, owner: Any = None) -> tuple[Any, list[str]]:
    rs = cluster.server.create(workload("ReplicaSet", "web-1", [owner_ref(owner)] if owner is not None else None))
    names = [f"web-1-{i}" for i in range(n)]
    for name in names:
        cluster.server.create(owned_pod(name, owner_ref(rs)))
    await cluster.at(cluster.clock.now() + 1.0)
    return rs, names


# --- one level -------------------------------------------------------------------------


@pytest.mark.parametrize("policy", [pytest.param(None, id="default"), pytest.param("Background", id="background")])
async def test_background_deletes_the_pods_after_their_owner(cluster: Cluster, policy: str | None) -> None:
    async with collector(cluster) as gc:
        _, pods = await replica_set_with_pods(cluster)
        cluster.server.delete("ReplicaSet", "web-1", "default", propagation_policy=policy)
        await cluster.until(lambda: not any(exists(cluster, "Pod", p) for p in pods))
        assert removals(cluster) == ["ReplicaSet/web-1", *(f"Pod/{p}" for p in pods)]
        assert [w.verb for w in cluster.writes if w.kind == "Pod" and w.new is None] == ["delete"] * 3
        assert gc.statistics()["deleted"] == 3


async def test_foreground_keeps_the_owner_until_its_pods_are_gone(cluster: Cluster) -> None:
    async with collector(cluster):
        _, pods = await replica_set_with_pods(cluster)
        cluster.server.delete("ReplicaSet", "web-1", "default", propagation_policy="Foreground")
        assert cluster.server.get("ReplicaSet", "web-1", "default").metadata.finalizers == ["foregroundDeletion"]
        await cluster.until(lambda: not exists(cluster, "ReplicaSet", "web-1"))
        assert removals(cluster) == [*(f"Pod/{p}" for p in pods), "ReplicaSet/web-1"]


async def test_foreground_waits_for_a_dependent_held_by_its_own_finalizer(cluster: Cluster) -> None:
    async with collector(cluster):
        rs = cluster.server.create(workload("ReplicaSet", "web-1"))
        cluster.server.create(owned_pod("held", owner_ref(rs), finalizers=["example.com/hold"]))
        await cluster.at(1.0)
        cluster.server.delete("ReplicaSet", "web-1", "default", propagation_policy="Foreground")
        await cluster.at(30.0)
        assert exists(cluster, "ReplicaSet", "web-1")
        held = cluster.pod("held")
        assert held.metadata.deletion_timestamp is not None
        cluster.server.update(replace(held, metadata=replace(held.metadata, finalizers=[])))
        await cluster.until(lambda: not exists(cluster, "ReplicaSet", "web-1"))
        assert removals(cluster) == ["Pod/held", "ReplicaSet/web-1"]


async def test_a_dependent_that_does_not_block_does_not_hold_a_foreground_owner(cluster: Cluster) -> None:
    async with collector(cluster):
        rs = cluster.server.create(workload("ReplicaSet", "web-1"))
        loose = replace(owner_ref(rs), block_owner_deletion=None)
        cluster.server.create(owned_pod("loose", loose, finalizers=["example.com/hold"]))
        await cluster.at(1.0)
        cluster.server.delete("ReplicaSet", "web-1", "default", propagation_policy="Foreground")
        await cluster.until(lambda: not exists(cluster, "ReplicaSet", "web-1"))
        assert cluster.pod("loose").metadata.deletion_timestamp is not None  # deleted too, kept by its finalizer


async def test_orphan_leaves_the_pods_without_the_owner_reference(cluster: Cluster) -> None:
    async with collector(cluster) as gc:
        _, pods = await replica_set_with_pods(cluster)
        cluster.server.delete("ReplicaSet", "web-1", "default", propagation_policy="Orphan")
        await cluster.until(lambda: not exists(cluster, "ReplicaSet", "web-1"))
        await cluster.at(cluster.clock.now() + 30.0)
        assert [cluster.pod(p).metadata.owner_references for p in pods] == [[], [], []]
        assert removals(cluster) == ["ReplicaSet/web-1"]
        assert gc.statistics()["orphaned"] == 3


# --- dangling owners ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("owner", "kept"),
    [
        pytest.param(
            OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="ghost", uid="u-0"), False, id="no-such-name"
        ),
        pytest.param(
            OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="live", uid="u-0"), False, id="other-uid"
        ),
        pytest.param(
            OwnerReference(api_version="example.com/v1", kind="Widget", name="w", uid="u-0"), True, id="unserved-kind"
        ),
    ],
)
async def test_a_pod_with_a_dangling_owner_is_collected(cluster: Cluster, owner: OwnerReference, kept: bool) -> None:
    async with collector(cluster):
        cluster.server.create(workload("ReplicaSet", "live"))  # a workload exists: pods are watched
        await cluster.at(1.0)
        cluster.server.create(owned_pod("stray", owner))
        await cluster.at(30.0)
        assert exists(cluster, "Pod", "stray") is kept


async def test_a_dangling_reference_beside_a_live_owner_is_removed(cluster: Cluster) -> None:
    async with collector(cluster):
        live = cluster.server.create(workload("ReplicaSet", "live"))
        ghost = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="ghost", uid="u-0")
        cluster.server.create(owned_pod("shared", ghost, owner_ref(live, controller=False)))
        await cluster.at(30.0)
        assert [r.name for r in cluster.pod("shared").metadata.owner_references] == ["live"]


async def test_an_owner_in_another_namespace_is_absent(cluster: Cluster) -> None:
    async with collector(cluster):
        other = cluster.server.create(
            replace(
                workload("ReplicaSet", "there"),
                metadata=replace(workload("ReplicaSet", "there").metadata, namespace="kube-system"),
            )
        )
        cluster.server.create(owned_pod("here", owner_ref(other)))
        await cluster.at(30.0)
        assert not exists(cluster, "Pod", "here")
        assert cluster.server.get("ReplicaSet", "there", "kube-system")


async def test_without_workloads_pods_are_not_watched(cluster: Cluster) -> None:
    async with collector(cluster) as gc:
        for i in range(20):
            cluster.server.create(pod(f"bare-{i}"))
        await cluster.at(60.0)
        assert not gc.ctx.informers.started("Pod")
        assert gc.client.stats.calls == {}
        assert [w for w in cluster.writes if w.verb != "create"] == []


# --- two levels ---------------------------------------------------------------------------


async def _deployment_tree(cluster: Cluster) -> list[str]:
    deploy = cluster.server.create(workload("Deployment", "web"))
    _, pods = await replica_set_with_pods(cluster, owner=deploy)
    return pods


async def test_background_cascades_through_two_levels(cluster: Cluster) -> None:
    async with collector(cluster):
        pods = await _deployment_tree(cluster)
        cluster.server.delete("Deployment", "web", "default", propagation_policy="Background")
        await cluster.until(lambda: not any(exists(cluster, "Pod", p) for p in pods))
        assert removals(cluster) == ["Deployment/web", "ReplicaSet/web-1", *(f"Pod/{p}" for p in pods)]


async def test_foreground_cascades_through_two_levels_leaves_first(cluster: Cluster) -> None:
    async with collector(cluster):
        pods = await _deployment_tree(cluster)
        watcher = cluster.server.watch("ReplicaSet")
        cluster.server.delete("Deployment", "web", "default", propagation_policy="Foreground")
        await cluster.until(lambda: not exists(cluster, "Deployment", "web"))
        assert removals(cluster) == [*(f"Pod/{p}" for p in pods), "ReplicaSet/web-1", "Deployment/web"]
        marked = [e.object for e in watcher.channel.get_nowait_batch() if e.type == "MODIFIED"]
        assert marked[0].metadata.finalizers == ["foregroundDeletion"]  # deleted in foreground in turn


async def test_orphan_of_the_top_keeps_the_rest_of_the_tree(cluster: Cluster) -> None:
    async with collector(cluster):
        pods = await _deployment_tree(cluster)
        cluster.server.delete("Deployment", "web", "default", propagation_policy="Orphan")
        await cluster.until(lambda: not exists(cluster, "Deployment", "web"))
        await cluster.at(cluster.clock.now() + 30.0)
        assert cluster.server.get("ReplicaSet", "web-1", "default").metadata.owner_references == []
        assert all([r.name for r in cluster.pod(p).metadata.owner_references] == ["web-1"] for p in pods)
        assert removals(cluster) == ["Deployment/web"]


async def test_foreground_waits_for_the_kubelet_to_end_running_pods(cluster: Cluster) -> None:
    cluster.server.create(node("n1"))
    await cluster.start_kubelet("n1")
    async with collector(cluster):
        rs = cluster.server.create(workload("ReplicaSet", "web-1"))
        for i in range(2):
            p = owned_pod(f"web-1-{i}", owner_ref(rs))
            cluster.server.create(replace(p, spec=replace(p.spec, node_name="n1")))
        await cluster.until(lambda: all(p.status.phase == "Running" for p in cluster.pods()))
        cluster.server.delete("ReplicaSet", "web-1", "default", propagation_policy="Foreground")
        await cluster.until(lambda: not exists(cluster, "ReplicaSet", "web-1"))
        assert removals(cluster) == ["Pod/web-1-0", "Pod/web-1-1", "ReplicaSet/web-1"]
        marks = [
            (w.new.metadata.name, w.new.metadata.deletion_grace_period_seconds)
            for w in cluster.writes
            if w.verb == "delete" and w.new is not None
        ]
        # the collector deletes the pods gracefully; the kubelet's confirmation removes them
        assert marks == [("web-1", 0), ("web-1-0", 30), ("web-1-1", 30)]


@pytest.mark.parametrize(
    ("adopted", "kept"),
    [
        pytest.param(False, False, id="labels-changed-delete-again-without-resource-version"),
        pytest.param(True, True, id="owners-changed-look-again"),
    ],
)
async def test_a_conflicting_delete(cluster: Cluster, adopted: bool, kept: bool) -> None:
    async with collector(cluster) as gc:
        live = cluster.server.create(workload("ReplicaSet", "live"))
        await cluster.at(1.0)
        touched: list[str] = []

        async def meddle(agent: str, verb: str, kind: str) -> None:
            if verb == "delete" and kind == "Pod" and not touched:
                touched.append(kind)  # someone writes the pod between the collector's read and delete
                p = cluster.pod("stray")
                refs = [owner_ref(live)] if adopted else p.metadata.owner_references
                cluster.server.update(
                    replace(p, metadata=replace(p.metadata, labels={"x": "y"}, owner_references=refs))
                )

        gc.client.interceptor = meddle
        ghost = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="ghost", uid="u-0")
        cluster.server.create(owned_pod("stray", ghost))
        await cluster.at(30.0)
        assert touched
        assert exists(cluster, "Pod", "stray") is kept
        assert gc.client.stats.errors["delete"] == 1  # the Conflict, in both cases
        assert gc.statistics()["errors"] == (1 if adopted else 0)
