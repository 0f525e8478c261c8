"""The Deployment and ReplicaSet controllers with a real scheduler and kubelets: pods are
bound, started, made Ready by the kubelet, and terminate gracefully when deleted; and the
pod-template-hash collision path."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.controllers.deployment.util import compute_hash
from emulator.base.api.apps import Deployment
from tests.builders import node
from tests.controllers.appsworld import AppsWorld, apps_world, deployment, replicaset

pytestmark = pytest.mark.asyncio


async def with_nodes(w: AppsWorld, n: int) -> None:
    for i in range(n):
        w.cluster.server.create(node(f"n{i}", cpu="8", memory="16Gi", ready="True"))
    await w.cluster.start_scheduler()
    for i in range(n):
        await w.cluster.start_kubelet(f"n{i}")


def available(w: AppsWorld, name: str, count: int) -> bool:
    d: Deployment = w.get("Deployment", name)
    s = d.status
    done = s.available_replicas == count and s.updated_replicas == count and s.replicas == count
    return done and s.observed_generation == d.metadata.generation


async def test_a_deployment_becomes_available_on_real_kubelets() -> None:
    async with apps_world() as w:
        await with_nodes(w, 3)
        w.cluster.server.create(deployment("web", 6))
        await w.cluster.until(lambda: available(w, "web", 6), within=120.0)
        assert {p.spec.node_name for p in w.pods("web-")} <= {"n0", "n1", "n2"}


async def test_recreate_waits_for_terminating_pods_to_be_gone() -> None:
    async with apps_world() as w:
        await with_nodes(w, 2)
        w.cluster.server.create(deployment("web", 2, strategy="Recreate"))
        await w.cluster.until(lambda: available(w, "web", 2), within=120.0)
        old = {p.metadata.name for p in w.pods("web-")}
        start = len(w.cluster.writes)
        d: Deployment = w.get("Deployment", "web")
        c = d.spec.template.spec.containers[0]
        tmpl = replace(d.spec.template, spec=replace(d.spec.template.spec, containers=[replace(c, image="nginx:2")]))
        w.cluster.server.update(replace(d, spec=replace(d.spec, template=tmpl)))
        await w.cluster.until(lambda: available(w, "web", 2), within=300.0)
        writes = [r for r in w.cluster.writes[start:] if r.kind == "Pod"]
        marked = [r for r in writes if r.new is not None and r.new.metadata.deletion_timestamp]
        assert {r.old.metadata.name for r in marked} == old
        gone = max(i for i, r in enumerate(writes) if r.new is None and r.old.metadata.name in old)
        created = min(i for i, r in enumerate(writes) if r.verb == "create")
        assert max(writes.index(r) for r in marked) < gone  # graceful: marked, then removed by the kubelet
        assert gone < created


async def test_a_hash_collision_bumps_collision_count() -> None:
    async with apps_world() as w:
        d0 = w.cluster.server.create(deployment("web", 1, paused=True))
        h = compute_hash(d0.spec.template, None)
        # a stranger already has the name the new ReplicaSet would take
        w.cluster.server.create(replicaset(f"web-{h}", 0, labels={"app": "other"}))
        w.cluster.server.update(replace(d0, spec=replace(d0.spec, paused=False)))
        await w.cluster.at(5.0)
        d: Deployment = w.get("Deployment", "web")
        assert d.status.collision_count == 1
        h1 = compute_hash(d.spec.template, 1)
        assert h1 != h
        assert w.get("ReplicaSet", f"web-{h1}").spec.replicas == 1
