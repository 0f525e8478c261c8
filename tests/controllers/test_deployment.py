"""The Deployment controller on virtual time, with the ReplicaSet controller and a fake
kubelet: the new ReplicaSet and its pods, scaling, conditions, revisions and cleanup."""

from __future__ import annotations

import re

import pytest
from msgspec.structs import replace

from agents.controllers.controllerutils import is_pod_ready as is_ready
from agents.controllers.deployment.util import POD_TEMPLATE_HASH, REVISION, compute_hash, resolve_fenceposts
from emulator.base.api.apps import Deployment
from tests.controllers.appsworld import AppsWorld, apps_world, deployment, replicaset

pytestmark = pytest.mark.asyncio


def update(w: AppsWorld, name: str, **spec: object) -> Deployment:
    d: Deployment = w.get("Deployment", name)
    return w.cluster.server.update(replace(d, spec=replace(d.spec, **spec)))


def new_image(w: AppsWorld, name: str, image: str) -> Deployment:
    d: Deployment = w.get("Deployment", name)
    c = d.spec.template.spec.containers[0]
    tmpl = replace(d.spec.template, spec=replace(d.spec.template.spec, containers=[replace(c, image=image)]))
    return update(w, name, template=tmpl)


def conditions(d: Deployment) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status, c.reason) for c in d.status.conditions}


async def test_a_deployment_creates_its_replicaset_and_pods() -> None:
    async with apps_world() as w:
        await w.readiness(delay=2.0)
        created = w.cluster.server.create(deployment("web", 3))
        await w.cluster.at(10.0)
        d: Deployment = w.get("Deployment", "web")
        h = compute_hash(created.spec.template, None)
        assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{1,10}", h)
        rs = w.get("ReplicaSet", f"web-{h}")
        assert rs.spec.replicas == 3
        assert rs.metadata.labels == {"app": "web", POD_TEMPLATE_HASH: h}
        assert rs.spec.selector.match_labels == {"app": "web", POD_TEMPLATE_HASH: h}
        assert rs.metadata.annotations == {
            REVISION: "1",
            "deployment.kubernetes.io/desired-replicas": "3",
            "deployment.kubernetes.io/max-replicas": "4",
        }
        assert rs.metadata.owner_references[0].uid == d.metadata.uid
        pods = w.pods("web-")
        assert len(pods) == 3
        assert all(re.fullmatch(rf"web-{h}-[bcdfghjklmnpqrstvwxz2456789]{{5}}", p.metadata.name) for p in pods)
        s = d.status
        assert (s.replicas, s.updated_replicas, s.ready_replicas, s.available_replicas) == (3, 3, 3, 3)
        assert s.unavailable_replicas == 0
        assert s.observed_generation == d.metadata.generation
        assert d.metadata.annotations[REVISION] == "1"
        assert conditions(d) == {
            "Available": ("True", "MinimumReplicasAvailable"),
            "Progressing": ("True", "NewReplicaSetAvailable"),
        }
        assert w.events("ScalingReplicaSet") == [("ScalingReplicaSet", f"Scaled up replica set web-{h} from 0 to 3")]


def rs_sizes(w: AppsWorld, d: str) -> dict[str, int]:
    return {
        rs.metadata.name: rs.spec.replicas
        for rs in w.cluster.server.list("ReplicaSet")[0]
        if rs.metadata.name.startswith(f"{d}-")
    }


async def rolled_out(w: AppsWorld, name: str, within: float = 300.0) -> float:
    """Wait until the Deployment's rollout is complete; the time it was."""

    def done() -> bool:
        d: Deployment = w.get("Deployment", name)
        s = d.status
        r = d.spec.replicas
        return (
            s.observed_generation == d.metadata.generation
            and s.updated_replicas == r
            and s.replicas == r
            and s.available_replicas == r
        )

    return await w.cluster.until(done, within=within, step=0.1)


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable"),
    [
        pytest.param(10, 2, 1, id="surge2-unavailable1"),
        pytest.param(10, "25%", "25%", id="defaults-25pct"),
        pytest.param(4, 0, 1, id="no-surge"),
        pytest.param(5, "30%", 0, id="no-unavailable-surge-rounds-up"),
    ],
)
async def test_rolling_update_respects_surge_and_unavailability_at_every_instant(
    replicas: int, surge: int | str, unavailable: int | str
) -> None:
    async with apps_world() as w:
        await w.readiness(delay=3.0)
        w.cluster.server.create(deployment("web", replicas, max_surge=surge, max_unavailable=unavailable))
        await rolled_out(w, "web")
        start = len(w.cluster.writes)
        new_image(w, "web", "nginx:1.28")
        await rolled_out(w, "web")
        max_s, max_u = resolve_fenceposts(surge, unavailable, replicas)
        # replay the pod writes: at the end of every instant, pods <= replicas + surge, ready >=
        # replicas - unavailable (within an instant the ReplicaSet controller may create the new
        # ReplicaSet's pod before its delete of the old one's runs, as upstream's workers may:
        # the surge bounds replica counts, not each moment's pod objects)
        pods: dict[str, bool] = {
            p.metadata.name: is_ready(p)
            for p in (r.new for r in w.cluster.writes[:start] if r.kind == "Pod" and r.new is not None)
        }
        for r in w.cluster.writes[:start]:
            if r.kind == "Pod" and r.new is None:
                pods.pop(r.old.metadata.name, None)
        most, fewest_ready = len(pods), sum(pods.values())
        writes = [r for r in w.cluster.writes[start:] if r.kind == "Pod"]
        for i, r in enumerate(writes):
            if r.new is None:
                pods.pop(r.old.metadata.name, None)
            else:
                pods[r.new.metadata.name] = any(
                    c.type == "Ready" and c.status == "True" for c in r.new.status.conditions
                )
            if i + 1 == len(writes) or writes[i + 1].time > r.time:
                most = max(most, len(pods))
                fewest_ready = min(fewest_ready, sum(pods.values()))
        assert most <= replicas + max_s
        assert fewest_ready >= replicas - max_u
        assert len(pods) == replicas
        d: Deployment = w.get("Deployment", "web")
        assert d.metadata.annotations[REVISION] == "2"
        sizes = rs_sizes(w, "web")
        assert sorted(sizes.values()) == [0, replicas]


async def test_recreate_removes_every_old_pod_before_creating_new_ones() -> None:
    async with apps_world() as w:
        await w.readiness(delay=2.0)
        w.cluster.server.create(deployment("web", 3, strategy="Recreate"))
        await rolled_out(w, "web")
        old = {p.metadata.name for p in w.pods("web-")}
        start = len(w.cluster.writes)
        new_image(w, "web", "nginx:1.28")
        await rolled_out(w, "web")
        pod_writes = [r for r in w.cluster.writes[start:] if r.kind == "Pod"]
        last_old_gone = max(i for i, r in enumerate(pod_writes) if r.new is None and r.old.metadata.name in old)
        first_new = min(i for i, r in enumerate(pod_writes) if r.verb == "create")
        assert last_old_gone < first_new
        assert not old & {p.metadata.name for p in w.pods("web-")}
        assert len(w.pods("web-")) == 3


async def test_scaling_up_and_down_and_its_events() -> None:
    async with apps_world() as w:
        await w.readiness(delay=1.0)
        d = w.cluster.server.create(deployment("web", 3))
        h = compute_hash(d.spec.template, None)
        await rolled_out(w, "web")
        update(w, "web", replicas=5)
        await rolled_out(w, "web")
        assert len(w.pods("web-")) == 5
        update(w, "web", replicas=2)
        await rolled_out(w, "web")
        assert len(w.pods("web-")) == 2
        assert [m for _, m in w.events("ScalingReplicaSet")] == [
            f"Scaled up replica set web-{h} from 0 to 3",
            f"Scaled up replica set web-{h} from 3 to 5",
            f"Scaled down replica set web-{h} from 5 to 2",
        ]
        rs = w.get("ReplicaSet", f"web-{h}")
        assert rs.metadata.annotations["deployment.kubernetes.io/desired-replicas"] == "2"
        assert rs.metadata.annotations["deployment.kubernetes.io/max-replicas"] == "3"


async def test_scaling_mid_rollout_is_proportional() -> None:
    """The documented example: 10 replicas, maxSurge 3, maxUnavailable 2, a rollout stuck on
    an image that never gets ready, then scaled to 15: 3 more to the old ReplicaSet, 2 more
    to the new one."""
    async with apps_world() as w:
        d = w.cluster.server.create(deployment("web", 10, max_surge=3, max_unavailable=2))
        old_hash = compute_hash(d.spec.template, None)
        readiness = await w.readiness(delay=1.0)
        await rolled_out(w, "web")
        d = new_image(w, "web", "nginx:does-not-exist")
        new_hash = compute_hash(d.spec.template, None)
        readiness.hold.add(f"web-{new_hash}-")
        await w.cluster.at(w.cluster.clock.now() + 30.0)
        assert rs_sizes(w, "web") == {f"web-{old_hash}": 8, f"web-{new_hash}": 5}
        update(w, "web", replicas=15)
        await w.cluster.at(w.cluster.clock.now() + 30.0)
        assert rs_sizes(w, "web") == {f"web-{old_hash}": 11, f"web-{new_hash}": 7}


async def test_min_ready_seconds_holds_back_availability_and_the_rollout() -> None:
    async with apps_world() as w:
        await w.readiness(delay=1.0)
        w.cluster.server.create(deployment("web", 2, min_ready_seconds=10, max_surge=1, max_unavailable=0))
        t = await rolled_out(w, "web")
        assert t >= 11.0
        d: Deployment = w.get("Deployment", "web")
        rs = w.get("ReplicaSet", next(iter(rs_sizes(w, "web"))))
        assert rs.spec.min_ready_seconds == 10
        assert d.status.available_replicas == 2
        start = w.cluster.clock.now()
        new_image(w, "web", "nginx:1.28")
        t = await rolled_out(w, "web")
        # one pod at a time (surge 1, unavailable 0), each ready after 1 s and available 10 s later
        assert t - start >= 2 * 11.0 - 0.01


async def test_progress_deadline_exceeded() -> None:
    async with apps_world() as w:
        await w.readiness(delay=1.0, hold={"web-"})
        d = w.cluster.server.create(deployment("web", 2, progress_deadline_seconds=10))
        h = compute_hash(d.spec.template, None)
        await w.cluster.at(5.0)
        assert conditions(w.get("Deployment", "web"))["Progressing"] == ("True", "ReplicaSetUpdated")
        await w.cluster.at(30.0)
        d = w.get("Deployment", "web")
        assert conditions(d) == {
            "Available": ("False", "MinimumReplicasUnavailable"),
            "Progressing": ("False", "ProgressDeadlineExceeded"),
        }
        cond = next(c for c in d.status.conditions if c.type == "Progressing")
        assert cond.message == f'ReplicaSet "web-{h}" has timed out progressing.'
        # checked at the deadline plus a second, not polled
        timed_out = next(
            r.time
            for r in w.cluster.of("Deployment", "web", "updateStatus")
            if any(c.reason == "ProgressDeadlineExceeded" for c in r.new.status.conditions)
        )
        assert 10.0 < timed_out <= 12.0


async def test_revision_history_is_cleaned_up() -> None:
    async with apps_world() as w:
        await w.readiness(delay=1.0)
        w.cluster.server.create(deployment("web", 2, revision_history_limit=1))
        await rolled_out(w, "web")
        for image in ("nginx:2", "nginx:3", "nginx:4"):
            new_image(w, "web", image)
            await rolled_out(w, "web")
            await w.cluster.at(w.cluster.clock.now() + 2.0)
        rss = list(w.cluster.server.list("ReplicaSet")[0])
        revisions = sorted(int(rs.metadata.annotations[REVISION]) for rs in rss)
        assert revisions == [3, 4]
        assert w.get("Deployment", "web").metadata.annotations[REVISION] == "4"


async def test_paused_deployment_does_not_roll_out() -> None:
    async with apps_world() as w:
        await w.readiness(delay=1.0)
        w.cluster.server.create(deployment("web", 2))
        await rolled_out(w, "web")
        update(w, "web", paused=True)
        new_image(w, "web", "nginx:1.28")
        await w.cluster.at(w.cluster.clock.now() + 20.0)
        assert len(rs_sizes(w, "web")) == 1
        assert conditions(w.get("Deployment", "web"))["Progressing"] == ("Unknown", "DeploymentPaused")
        update(w, "web", replicas=3)  # scaling still applies while paused
        await w.cluster.at(w.cluster.clock.now() + 5.0)
        assert list(rs_sizes(w, "web").values()) == [3]
        update(w, "web", paused=False)
        await rolled_out(w, "web")
        assert len(rs_sizes(w, "web")) == 2


async def test_a_deployment_adopts_a_matching_orphan_replicaset() -> None:
    async with apps_world() as w:
        rs = replicaset("web-old", 2, labels={"app": "web", "version": "old"})
        w.cluster.server.create(rs)
        await w.cluster.at(1.0)
        await w.readiness(delay=1.0)
        d = w.cluster.server.create(deployment("web", 2))
        h = compute_hash(d.spec.template, None)
        await w.cluster.at(30.0)
        old = w.get("ReplicaSet", "web-old")
        assert old.metadata.owner_references[0].uid == d.metadata.uid
        assert old.spec.replicas == 0  # the adopted revision was rolled away
        assert w.get("ReplicaSet", f"web-{h}").spec.replicas == 2
