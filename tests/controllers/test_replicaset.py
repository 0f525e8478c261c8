"""The ReplicaSet controller on virtual time: pods created to ``spec.replicas`` (slow-start
batches, expectations), deleted in upstream's order, replaced, adopted and released; its
status, ``minReadySeconds`` and the ``ReplicaFailure`` condition."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.controllers.controllerutils import owner_ref
from agents.controllers.replicaset import ReplicaSetController
from emulator.base.api.errors import Invalid
from tests.builders import pod
from tests.controllers.appsworld import apps_world, replicaset

pytestmark = pytest.mark.asyncio


async def test_creates_the_replicas_and_reports_them_ready() -> None:
    async with apps_world("replicaset") as w:
        await w.readiness(delay=2.0)
        w.cluster.server.create(replicaset("web", 3))
        await w.cluster.at(10.0)
        pods = w.pods("web-")
        assert len(pods) == 3
        rs = w.get("ReplicaSet", "web")
        for p in pods:
            (ref,) = p.metadata.owner_references
            assert (ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
                "ReplicaSet",
                "web",
                rs.metadata.uid,
                True,
                True,
            )
            assert len(p.metadata.name) == len("web-") + 5
        assert sorted(w.events("SuccessfulCreate")) == sorted(
            ("SuccessfulCreate", f"Created pod: {p.metadata.name}") for p in pods
        )
        s = rs.status
        assert (s.replicas, s.fully_labeled_replicas, s.ready_replicas, s.available_replicas) == (3, 3, 3, 3)
        assert s.observed_generation == rs.metadata.generation
        assert {r.new.metadata.name for r in w.cluster.of("Pod", verb="create")} == {p.metadata.name for p in pods}


async def test_creations_go_in_slow_start_batches_and_stop_at_a_failing_batch() -> None:
    async with apps_world("replicaset") as w:
        ctl: ReplicaSetController = w.controller("replicaset")
        calls: list[float] = []

        async def quota(agent: str, verb: str, kind: str) -> None:
            if verb == "create" and kind == "Pod":
                calls.append(w.cluster.clock.now())
                if len(calls) > 3:
                    raise Invalid('pods "x" is forbidden: exceeded quota')

        per_sync: list[int] = []
        sync = ctl.sync

        async def counted(key: tuple[str, str]) -> None:
            before = len(calls)
            try:
                await sync(key)
            finally:
                per_sync.append(len(calls) - before)

        ctl.client.interceptor = quota
        ctl.sync = counted  # type: ignore[method-assign]
        w.cluster.server.create(replicaset("web", 10))
        await w.cluster.at(0.1)
        # batches of 1 and 2 succeed, the batch of 4 fails: no batch of 3. The 3 pods made
        # are observed, so the expectations (lowered by the 7 never made) are met: each
        # later sync tries again, and stops after its first batch of 1
        assert per_sync[0] == 1 + 2 + 4
        assert set(per_sync[1:]) == {1}
        assert len(w.pods("web-")) == 3
        rs = w.get("ReplicaSet", "web")
        (cond,) = rs.status.conditions
        assert (cond.type, cond.status, cond.reason) == ("ReplicaFailure", "True", "FailedCreate")
        assert "exceeded quota" in cond.message
        assert len(w.events("FailedCreate")) == len(calls) - 3
        ctl.client.interceptor = None
        await w.cluster.at(5.0)
        rs = w.get("ReplicaSet", "web")
        assert len(w.pods("web-")) == 10
        assert rs.status.conditions == []  # removed by the next good sync


@pytest.mark.parametrize("latency", [pytest.param(0.0, id="no-latency"), pytest.param(3.0, id="slow-watch")])
async def test_expectations_prevent_double_creation(latency: float) -> None:
    async with apps_world("replicaset", watch_latency=latency, api_latency=0.05) as w:
        w.cluster.server.create(replicaset("web", 5))
        await w.cluster.at(2.0)
        # status writes and resyncs happen before the pods are seen: nothing more is created
        rs = w.get("ReplicaSet", "web")
        w.cluster.server.update(replace(rs, metadata=replace(rs.metadata, labels={"touch": "1"})))
        await w.cluster.at(30.0)
        assert len(w.cluster.of("Pod", verb="create")) == 5
        assert len(w.pods("web-")) == 5


async def test_a_deleted_pod_is_replaced() -> None:
    async with apps_world("replicaset") as w:
        w.cluster.server.create(replicaset("web", 2))
        await w.cluster.at(1.0)
        victim = w.pods("web-")[0].metadata.name
        w.cluster.server.delete("Pod", victim, "default")
        await w.cluster.at(2.0)
        names = {p.metadata.name for p in w.pods("web-")}
        assert len(names) == 2
        assert victim not in names


async def test_scale_down_deletes_not_ready_pods_first() -> None:
    async with apps_world("replicaset") as w:
        await w.readiness(delay=1.0)
        w.cluster.server.create(replicaset("web", 3))
        await w.cluster.at(5.0)
        rs = w.get("ReplicaSet", "web")
        w.cluster.server.update(replace(rs, spec=replace(rs.spec, replicas=5)))
        await w.cluster.at(5.2)  # two new pods, not ready yet
        new = {p.metadata.name for p in w.pods("web-") if not any(c.type == "Ready" for c in p.status.conditions)}
        assert len(new) == 2
        rs = w.get("ReplicaSet", "web")
        w.cluster.server.update(replace(rs, spec=replace(rs.spec, replicas=3)))
        await w.cluster.at(5.4)
        deleted = {r.old.metadata.name for r in w.cluster.of("Pod", verb="delete")}
        assert deleted == new
        assert sorted(m for _, m in w.events("SuccessfulDelete")) == sorted(f"Deleted pod: {n}" for n in new)


async def test_scale_down_prefers_pods_doubled_up_on_a_node() -> None:
    async with apps_world("replicaset") as w:
        server = w.cluster.server
        rs = server.create(replicaset("web", 3))
        ref = replace(rs, kind="ReplicaSet")
        for name, node in [("web-a", "n1"), ("web-b", "n2"), ("web-c", "n2")]:
            p = pod(name, labels={"app": "web"}, node=node, phase="Running")
            p = replace(p, metadata=replace(p.metadata, owner_references=[owner_ref(ref)]))
            server.create(p, restore=True)
        await w.cluster.at(1.0)
        server.update(replace(w.get("ReplicaSet", "web"), spec=replace(rs.spec, replicas=2)))
        await w.cluster.at(2.0)
        gone = [r.old.metadata.name for r in w.cluster.of("Pod", verb="delete")]
        assert len(gone) == 1
        assert gone[0] in ("web-b", "web-c")


async def test_orphans_are_adopted_and_mismatched_pods_released() -> None:
    async with apps_world("replicaset") as w:
        server = w.cluster.server
        for name in ("lone-1", "lone-2"):
            server.create(pod(name, labels={"app": "web"}))
        server.create(pod("other", labels={"app": "db"}))
        server.create(replicaset("web", 3))
        await w.cluster.at(1.0)
        rs = w.get("ReplicaSet", "web")
        uid = rs.metadata.uid
        owned = sorted(
            p.metadata.name for p in w.cluster.pods() if any(r.uid == uid for r in p.metadata.owner_references)
        )
        assert len(owned) == 3
        assert {"lone-1", "lone-2"} <= set(owned)
        assert not w.cluster.pod("other").metadata.owner_references
        assert len(w.cluster.of("Pod", verb="create")) == 4  # three bare pods, one made
        # a pod relabelled out of the selector is released and replaced
        p = w.cluster.pod("lone-1")
        server.update(replace(p, metadata=replace(p.metadata, labels={"app": "debug"})))
        await w.cluster.at(2.0)
        assert w.cluster.pod("lone-1").metadata.owner_references == []
        assert w.get("ReplicaSet", "web").status.replicas == 3
        assert w.controller("replicaset").statistics()["released"] == 1


async def test_min_ready_seconds_delays_availability() -> None:
    async with apps_world("replicaset") as w:
        await w.readiness(delay=1.0, hold=set())
        w.cluster.server.create(replicaset("web", 2, min_ready_seconds=10))
        await w.cluster.at(5.0)
        s = w.get("ReplicaSet", "web").status
        assert (s.ready_replicas, s.available_replicas) == (2, 0)
        await w.cluster.at(13.0)
        s = w.get("ReplicaSet", "web").status
        assert (s.ready_replicas, s.available_replicas) == (2, 2)


async def test_no_pod_watch_without_replicasets() -> None:
    async with apps_world("replicaset") as w:
        w.cluster.server.create(pod("bare"))
        await w.cluster.at(5.0)
        assert not w.controller("replicaset").informers.started("Pod")
        assert w.controller("replicaset").statistics() == {}  # left out of the run report
        assert [r.kind for r in w.cluster.writes] == ["Pod"]
