"""The StatefulSet controller on the virtual clock: ordinal pods created in order under
OrderedReady (each only once the one before is Running and Ready), all at once under
Parallel, removed highest ordinal first, rolled by partition, failed pods replaced; the
pods' identity and the status fields. Readiness is written by hand, as the kubelet would."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from msgspec.structs import replace

from agents.controllers.history import CONTROLLER_REVISION_HASH
from agents.controllers.statefulset.identity import new_versioned_pod
from emulator.base.api.apps import (
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetOrdinals,
    StatefulSetUpdateStrategy,
)
from emulator.base.api.core import Container, Event
from tests.builders import node, pod
from tests.cluster import Cluster, open_cluster
from tests.controllers.stsdsworld import Controllers, make_ready, set_phase, statefulset, update_spec


@asynccontextmanager
async def world(*sets: StatefulSet) -> AsyncIterator[Cluster]:
    async with open_cluster(namespaces=("default",)) as c:
        await c.start(Controllers(c, ["statefulset"]), "controllers")
        for s in sets:
            c.server.create(s)
        await c.at(1.0)
        yield c


def names(c: Cluster) -> list[str]:
    return sorted(p.metadata.name for p in c.pods())


def created(c: Cluster) -> list[str]:
    return [w.obj.metadata.name for w in c.of("Pod", verb="create")]


def deleted(c: Cluster) -> list[str]:
    return [w.obj.metadata.name for w in c.of("Pod", verb="delete")]


def status(c: Cluster, name: str = "web") -> StatefulSet:
    got: StatefulSet = c.server.get("StatefulSet", name, "default")
    return got


async def all_ready(c: Cluster, n: int, t: float) -> float:
    """Make ordinals 0..n-1 ready one by one (each as it appears)."""
    for i in range(n):
        await c.until(lambda i=i: f"web-{i}" in names(c))  # type: ignore[misc]
        make_ready(c, f"web-{i}")
        t += 1.0
        await c.at(t)
    return t


@pytest.mark.asyncio
async def test_ordered_ready_creates_each_ordinal_after_the_previous_is_ready() -> None:
    async with world(statefulset(replicas=3)) as c:
        assert names(c) == ["web-0"]
        await c.at(30.0)
        assert names(c) == ["web-0"], "web-1 waits for web-0 to be Running and Ready"
        await all_ready(c, 3, 30.0)
        assert created(c) == ["web-0", "web-1", "web-2"]
        # from the write history: each create comes after its predecessor's Ready write
        order = [(w.verb, w.obj.metadata.name) for w in c.writes if w.kind == "Pod"]
        for i in (1, 2):
            assert order.index(("updateStatus", f"web-{i - 1}")) < order.index(("create", f"web-{i}"))
        s = status(c).status
        assert (s.replicas, s.ready_replicas, s.available_replicas) == (3, 3, 3)
        assert s.current_revision == s.update_revision != ""
        assert (s.current_replicas, s.updated_replicas, s.observed_generation) == (3, 3, 1)


@pytest.mark.asyncio
async def test_parallel_creates_every_ordinal_at_once() -> None:
    async with world(statefulset(replicas=4, policy="Parallel")) as c:
        assert names(c) == ["web-0", "web-1", "web-2", "web-3"]
        assert status(c).status.ready_replicas == 0


@pytest.mark.parametrize(
    ("policy", "first_sync_deletes"),
    [
        pytest.param("OrderedReady", ["web-3"], id="ordered-one-at-a-time"),
        pytest.param("Parallel", ["web-3", "web-2", "web-1"], id="parallel-all-at-once"),
    ],
)
@pytest.mark.asyncio
async def test_scale_down_removes_the_highest_ordinal_first(policy: str, first_sync_deletes: list[str]) -> None:
    async with world(statefulset(replicas=4, policy=policy)) as c:
        await all_ready(c, 4, 1.0)
        before = len(c.writes)
        update_spec(c, "StatefulSet", "web", replicas=1)
        await c.at(c.clock.now() + 0.5)
        gone = [w.obj.metadata.name for w in c.writes[before:] if w.kind == "Pod" and w.verb == "delete"]
        assert gone[: len(first_sync_deletes)] == first_sync_deletes
        await c.until(lambda: names(c) == ["web-0"])
        assert deleted(c) == ["web-3", "web-2", "web-1"]
        assert status(c).status.replicas == 1


@pytest.mark.asyncio
async def test_ordered_scale_down_waits_for_an_unhealthy_pod() -> None:
    async with world(statefulset(replicas=3)) as c:
        t = await all_ready(c, 3, 1.0)
        set_phase(c, "web-1", "Pending")  # web-1 not ready: not the highest, so nothing is removed
        update_spec(c, "StatefulSet", "web", replicas=2)
        await c.at(t + 5.0)
        assert deleted(c) == []
        make_ready(c, "web-1")
        await c.until(lambda: names(c) == ["web-0", "web-1"])


@pytest.mark.asyncio
async def test_pods_carry_their_identity() -> None:
    async with world(statefulset(replicas=2, policy="Parallel", service="nginx")) as c:
        sts = status(c)
        for i in (0, 1):
            p = c.pod(f"web-{i}")
            assert p.spec.hostname == f"web-{i}"
            assert p.spec.subdomain == "nginx"
            assert p.metadata.labels == {
                "app": "web",
                "statefulset.kubernetes.io/pod-name": f"web-{i}",
                "apps.kubernetes.io/pod-index": str(i),
                CONTROLLER_REVISION_HASH: sts.status.update_revision,
            }
            (ref,) = p.metadata.owner_references
            assert (ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
                "StatefulSet",
                "web",
                sts.metadata.uid,
                True,
                True,
            )
        assert sts.status.update_revision.startswith("web-")
        events = [e for e in c.server.list("Event")[0] if isinstance(e, Event)]
        assert sorted(e.message for e in events if e.reason == "SuccessfulCreate") == [
            "create Pod web-0 in StatefulSet web successful",
            "create Pod web-1 in StatefulSet web successful",
        ]
        assert {e.source.component for e in events} == {"statefulset-controller"}


def _new_image(c: Cluster, image: str, partition: int) -> None:
    sts = status(c)
    template = sts.spec.template
    template = replace(template, spec=replace(template.spec, containers=[Container(name="c", image=image)]))
    strategy = StatefulSetUpdateStrategy(
        type="RollingUpdate", rolling_update=RollingUpdateStatefulSetStrategy(partition=partition)
    )
    update_spec(c, "StatefulSet", "web", template=template, update_strategy=strategy)


def _image(c: Cluster, name: str) -> str:
    return c.pod(name).spec.containers[0].image


@pytest.mark.asyncio
async def test_rolling_update_by_partition_keeps_lower_ordinals_at_the_old_revision() -> None:
    async with world(statefulset(replicas=3)) as c:
        t = await all_ready(c, 3, 1.0)
        old = status(c).status.current_revision
        _new_image(c, "nginx:2", partition=1)
        # web-2 goes first, then web-1 once web-2 is back and ready; web-0 stays
        for i in (2, 1):
            await c.until(lambda i=i: f"web-{i}" in names(c) and _image(c, f"web-{i}") == "nginx:2")  # type: ignore[misc]
            make_ready(c, f"web-{i}")
            t = c.clock.now() + 1.0
            await c.at(t)
        await c.at(t + 10.0)
        assert deleted(c) == ["web-2", "web-1"]
        assert _image(c, "web-0") == "nginx:1"
        s = status(c).status
        assert s.current_revision == old != s.update_revision
        assert (s.current_replicas, s.updated_replicas, s.ready_replicas) == (1, 2, 3)
        assert c.pod("web-0").metadata.labels[CONTROLLER_REVISION_HASH] == old
        assert c.pod("web-2").metadata.labels[CONTROLLER_REVISION_HASH] == s.update_revision
        # partition 0: web-0 follows, and the update completes
        _new_image(c, "nginx:2", partition=0)
        await c.until(lambda: "web-0" in names(c) and _image(c, "web-0") == "nginx:2")
        make_ready(c, "web-0")
        await c.until(lambda: status(c).status.current_revision == status(c).status.update_revision)
        s = status(c).status
        assert (s.current_replicas, s.updated_replicas) == (3, 3)


@pytest.mark.asyncio
async def test_on_delete_leaves_old_pods_alone() -> None:
    async with world(statefulset(replicas=2, on_delete=True)) as c:
        t = await all_ready(c, 2, 1.0)
        update_spec(
            c,
            "StatefulSet",
            "web",
            template=replace(
                status(c).spec.template,
                spec=replace(status(c).spec.template.spec, containers=[Container(name="c", image="nginx:2")]),
            ),
        )
        await c.at(t + 30.0)
        assert deleted(c) == []
        assert status(c).status.updated_replicas == 0


@pytest.mark.asyncio
async def test_a_failed_pod_is_deleted_and_created_again() -> None:
    async with world(statefulset(replicas=2)) as c:
        t = await all_ready(c, 2, 1.0)
        uid = c.pod("web-1").metadata.uid
        set_phase(c, "web-1", "Failed")
        await c.at(t + 1.0)
        assert deleted(c) == ["web-1"]
        assert c.pod("web-1").metadata.uid != uid
        assert created(c) == ["web-0", "web-1", "web-1"]


@pytest.mark.asyncio
async def test_min_ready_seconds_holds_the_next_ordinal_and_available_replicas() -> None:
    async with world(statefulset(replicas=2, min_ready=10)) as c:
        make_ready(c, "web-0")
        await c.at(5.0)
        assert names(c) == ["web-0"]
        assert status(c).status.available_replicas == 0
        await c.until(lambda: "web-1" in names(c))
        assert c.clock.now() >= 11.0
        assert status(c).status.available_replicas == 1


@pytest.mark.asyncio
async def test_parallel_with_min_ready_seconds_reports_available_after_it() -> None:
    """Upstream ``stateful_set.go`` ``updatePod``: a pod turning Ready queues its set again
    after ``minReadySeconds`` + 1 s; under Parallel nothing else syncs the set then, so without
    it ``availableReplicas`` stayed 0."""
    async with world(statefulset(replicas=2, policy="Parallel", min_ready=10)) as c:
        for name in ("web-0", "web-1"):
            make_ready(c, name)
        await c.at(5.0)
        assert status(c).status.available_replicas == 0
        await c.at(12.5)
        s = status(c).status
        assert (s.ready_replicas, s.available_replicas) == (2, 2)


@pytest.mark.asyncio
async def test_ordinals_start_numbers_the_replicas_from_it() -> None:
    """``spec.ordinals.start`` (GA 1.31; upstream ``stateful_set_utils.go`` ``getStartOrdinal``,
    ``podInOrdinalRange``): replicas are ``web-5 .. web-7``; moving the start condemns the pods
    now out of range (highest first) and creates the new ordinals; a partition counts from it."""
    sts = statefulset(replicas=3)
    sts = replace(sts, spec=replace(sts.spec, ordinals=StatefulSetOrdinals(start=5)))
    async with world(sts) as c:
        for i in (5, 6, 7):
            await c.until(lambda i=i: f"web-{i}" in names(c))  # type: ignore[misc]
            make_ready(c, f"web-{i}")
        await c.at(c.clock.now() + 1.0)
        assert names(c) == ["web-5", "web-6", "web-7"]
        assert c.pod("web-6").metadata.labels["apps.kubernetes.io/pod-index"] == "6"
        assert c.pod("web-6").spec.hostname == "web-6"
        s = status(c).status
        assert (s.replicas, s.ready_replicas) == (3, 3)
        update_spec(c, "StatefulSet", "web", ordinals=StatefulSetOrdinals(start=6))
        await c.until(lambda: "web-8" in names(c))
        make_ready(c, "web-8")
        await c.until(lambda: "web-5" not in names(c))
        assert names(c) == ["web-6", "web-7", "web-8"]
        assert created(c) == ["web-5", "web-6", "web-7", "web-8"]
        assert deleted(c) == ["web-5"]


def test_ordinals_start_and_partition_pick_the_revision() -> None:
    """Upstream ``newVersionedStatefulSetPod``: below ``start + partition`` the current revision."""
    sts = statefulset(replicas=3, partition=1)
    strategy = replace(sts.spec.update_strategy, type="RollingUpdate")
    sts = replace(sts, spec=replace(sts.spec, ordinals=StatefulSetOrdinals(start=5), update_strategy=strategy))
    old_t = sts.spec.template
    new_t = replace(old_t, spec=replace(old_t.spec, containers=[Container(name="c", image="nginx:2")]))
    pods = [new_versioned_pod(old_t, new_t, "web-old", "web-new", sts, i) for i in (5, 6, 7)]
    assert [p.metadata.labels[CONTROLLER_REVISION_HASH] for p in pods] == ["web-old", "web-new", "web-new"]


@pytest.mark.asyncio
async def test_with_a_scheduler_and_kubelets_ordered_ready_comes_up_one_by_one() -> None:
    async with open_cluster(namespaces=("default",)) as c:
        for n in ("n1", "n2"):
            c.server.create(node(n))
        await c.start_scheduler()
        for n in ("n1", "n2"):
            await c.start_kubelet(n)
        await c.start(Controllers(c, ["statefulset"]), "controllers")
        c.server.create(statefulset(replicas=3))
        await c.until(lambda: status(c).status.ready_replicas == 3, within=120.0)
        assert created(c) == ["web-0", "web-1", "web-2"]
        s = status(c).status
        assert (s.replicas, s.available_replicas, s.current_replicas, s.updated_replicas) == (3, 3, 3, 3)


@pytest.mark.asyncio
async def test_a_failed_create_does_not_stall_the_set_once_the_cause_is_gone() -> None:
    """Regression: the names of a slow-start batch cut short by an error stayed expected, so
    the set was not synced again for 5 minutes."""
    async with open_cluster(namespaces=("default",)) as c:
        await c.start(Controllers(c, ["statefulset"]), "controllers")
        c.server.create(pod("web-1"))  # not the set's: creating web-1 fails with AlreadyExists
        c.server.create(statefulset(replicas=4, policy="Parallel"))
        await c.at(1.0)
        # batches [web-0], [web-1, web-2]: web-1 fails, so web-3 is not tried (as upstream)
        assert sorted(p.metadata.name for p in c.pods() if p.metadata.owner_references) == ["web-0", "web-2"]
        warnings = [e for e in c.server.list("Event")[0] if isinstance(e, Event) and e.reason == "FailedCreate"]
        assert warnings[0].message.startswith("create Pod web-1 in StatefulSet web failed error: ")
        c.server.delete("Pod", "web-1", "default")
        await c.until(lambda: names(c) == ["web-0", "web-1", "web-2", "web-3"], within=10.0)
