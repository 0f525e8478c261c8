"""The resourceclaim controller on the virtual clock (upstream ``pkg/controller/resourceclaim``
v1.34): a template's claim per pod (name, annotation, owner), recorded in the pod status;
reservations of pods that are gone or done removed, the claim deallocated and its finalizer
dropped; a generated claim no pod needs deleted. The scheduler's writes (finalizer, allocation,
``reservedFor``) are the test's (``world.allocate``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from msgspec.structs import replace

from agents.controllers.resourceclaim import ResourceClaimController
from emulator.base.api.core import PodResourceClaimStatus
from emulator.base.api.errors import InternalError
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.resource import FINALIZER, POD_CLAIM_NAME_ANNOTATION, ResourceClaim
from emulator.base.api.resourceclaim import generate_name
from emulator.base.client.informer import Informer
from tests.builders import node
from tests.cluster import Cluster, open_cluster
from tests.controllers.stsdsworld import Controllers
from tests.dra.world import SPEC, allocate, claim, claim_pod, served, template


@asynccontextmanager
async def world(*names: str) -> AsyncIterator[tuple[Cluster, ResourceClaimController]]:
    with served():
        async with open_cluster(namespaces=("default",)) as c:
            ctl = Controllers(c, ["resource-claim-controller", *names])
            await c.start(ctl, "controllers")
            c.server.create(node("n1"))
            await c.at(1.0)
            controller = next(x for x in ctl.started if isinstance(x, ResourceClaimController))
            yield c, controller


def claims(c: Cluster) -> dict[str, ResourceClaim]:
    return {x.metadata.name: x for x in c.server.list("ResourceClaim")[0]}


@pytest.mark.parametrize(
    ("pod", "entry", "want"),
    [
        pytest.param("app", "gpu", "app-gpu-", id="short"),
        pytest.param("a" * 28, "b" * 27, "a" * 28 + "-" + "b" * 27 + "-", id="57-fits"),
        # 40 + 1 + 30 + 1 = 72 > 57: 40*57//72 = 31 and 30*57//72 = 23, no trailing hyphen
        pytest.param("a" * 40, "b" * 30, "a" * 31 + "-" + "b" * 23, id="cut-in-proportion"),
        pytest.param("p" * 63, "c", "p" * 54 + "-", id="long-pod-short-claim"),
    ],
)
def test_generate_name(pod: str, entry: str, want: str) -> None:
    assert generate_name(pod, entry) == want


@pytest.mark.asyncio
async def test_a_template_claim_is_made_per_pod_and_recorded_in_its_status() -> None:
    async with world() as (c, ctl):
        c.server.create(template(labels={"team": "ml"}, annotations={"note": "x"}))
        c.server.create(claim_pod("app"))
        await c.at(3.0)
        (made,) = claims(c).values()
        assert made.metadata.name.startswith("app-gpu-")
        assert len(made.metadata.name) == len("app-gpu-") + 5
        assert made.metadata.annotations == {"note": "x", POD_CLAIM_NAME_ANNOTATION: "gpu"}
        assert made.metadata.labels == {"team": "ml"}
        assert made.spec == c.server.get("ResourceClaimTemplate", "gpu-template", "default").spec.spec
        p = c.pod("app")
        (ref,) = made.metadata.owner_references
        assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
            "v1",
            "Pod",
            "app",
            p.metadata.uid,
            True,
            True,
        )
        ((entry, name),) = [(s.name, s.resource_claim_name) for s in p.status.resource_claim_statuses]
        assert (entry, name) == ("gpu", made.metadata.name)
        await c.at(30.0)
        assert len(claims(c)) == 1  # later syncs find it, never make another
        assert ctl.counts["created"] == 1


@pytest.mark.asyncio
async def test_a_missing_template_is_an_event_on_the_pod() -> None:
    async with world() as (c, _):
        c.server.create(template("other"))
        c.server.create(claim_pod("app", template_name="missing"))
        await c.at(3.0)
        (e,) = {(e.type, e.reason, e.source.component, e.message) for e in c.server.list("Event")[0]}
        assert e == (
            "Warning",
            "FailedResourceClaimCreation",
            "resource_claim",
            'PodResourceClaim gpu: resource claim template "missing": '
            'resourceclaimtemplate.resource.k8s.io "missing" not found',
        )
        c.server.create(template("missing"))  # the retry finds it
        await c.at(60.0)
        assert [x.metadata.annotations[POD_CLAIM_NAME_ANNOTATION] for x in claims(c).values()] == ["gpu"]


@pytest.mark.asyncio
async def test_a_deleted_pods_reservation_goes_and_the_claim_is_deallocated() -> None:
    async with world() as (c, ctl):
        c.server.create(claim("shared"))
        first = c.server.create(claim_pod("a", claim_name="shared", node="n1"))
        second = c.server.create(claim_pod("b", claim_name="shared", node="n1"))
        allocate(c.server, "shared", first, second)
        await c.at(2.0)
        c.server.delete("Pod", "a", "default", grace_period_seconds=0)
        await c.at(4.0)
        kept = claims(c)["shared"]
        assert [r.name for r in kept.status.reserved_for] == ["b"]
        assert kept.status.allocation is not None  # still in use
        assert FINALIZER in kept.metadata.finalizers
        c.server.delete("Pod", "b", "default", grace_period_seconds=0)
        await c.at(6.0)
        done = claims(c)["shared"]
        assert (done.status.reserved_for, done.status.allocation) == ([], None)
        assert done.metadata.finalizers == []
        assert ctl.counts["deallocated"] == 1
        assert "shared" in claims(c)  # a user's claim stays


@pytest.mark.asyncio
async def test_a_finished_pods_generated_claim_is_released_and_deleted() -> None:
    async with world() as (c, ctl):
        c.server.create(template())
        c.server.create(claim_pod("job-1", node="n1"))
        await c.at(2.0)
        (name,) = claims(c)
        allocate(c.server, name, c.pod("job-1"))
        await c.at(3.0)
        p = c.pod("job-1")
        c.server.update_status(replace(p, status=replace(p.status, phase="Succeeded")))
        await c.at(6.0)
        assert claims(c) == {}
        assert (ctl.counts["unreserved"], ctl.counts["deallocated"], ctl.counts["deleted"]) == (1, 1, 1)


@pytest.mark.asyncio
async def test_a_scheduled_pods_allocated_claim_is_reserved_for_it() -> None:
    """A pod bound without the scheduler (``nodeName`` set) gets the reservation here."""
    async with world() as (c, ctl):
        c.server.create(claim("handmade"))
        allocate(c.server, "handmade")
        p = c.server.create(claim_pod("app", claim_name="handmade", node="n1"))
        await c.at(3.0)
        (ref,) = claims(c)["handmade"].status.reserved_for
        assert (ref.resource, ref.name, ref.uid) == ("pods", "app", p.metadata.uid)
        assert ctl.counts["reserved"] == 1


@pytest.mark.asyncio
async def test_the_garbage_collector_removes_a_deleted_pods_claim() -> None:
    async with world("garbagecollector") as (c, _):
        c.server.create(template())
        c.server.create(claim_pod("app"))
        await c.at(2.0)
        assert len(claims(c)) == 1
        c.server.delete("Pod", "app", "default", grace_period_seconds=0)
        await c.at(10.0)
        assert claims(c) == {}


@pytest.mark.asyncio
async def test_a_claim_being_deleted_without_consumers_loses_allocation_and_finalizer() -> None:
    async with world() as (c, _):
        c.server.create(claim("orphan"))
        allocate(c.server, "orphan")
        c.server.delete("ResourceClaim", "orphan", "default")  # held by the finalizer
        await c.at(4.0)
        assert "orphan" not in claims(c)
        verbs = [w.verb for w in c.of("ResourceClaim", "orphan")]
        # the scheduler's three writes, the delete (held), then deallocated and the finalizer off (gone)
        assert verbs == ["create", "update", "updateStatus", "delete", "updateStatus", "delete"]


@pytest.mark.asyncio
async def test_a_recorded_claim_the_pod_does_not_own_waits_for_its_removal() -> None:
    """Upstream ``podNeedsWork``: the other claim must go first; then the pod's own is made."""
    async with world() as (c, _):
        c.server.create(template())
        c.server.create(claim("stranger"))
        p = c.server.create(claim_pod("app"))
        recorded = [PodResourceClaimStatus(name="gpu", resource_claim_name="stranger")]
        c.server.update_status(replace(p, status=replace(p.status, resource_claim_statuses=recorded)))
        await c.at(3.0)
        assert sorted(claims(c)) == ["stranger"]
        c.server.delete("ResourceClaim", "stranger", "default")
        await c.at(6.0)
        (status,) = c.pod("app").status.resource_claim_statuses
        (made,) = claims(c)
        assert status.resource_claim_name == made
        assert made.startswith("app-gpu-")


@pytest.mark.asyncio
async def test_without_claims_or_templates_no_pod_watch_is_opened() -> None:
    async with world() as (c, ctl):
        c.server.create(claim_pod("app"))
        await c.at(5.0)
        assert ctl.pods is None
        assert ctl.statistics() == {}
        assert claims(c) == {}
        c.server.create(ResourceClaim(metadata=ObjectMeta(name="x", namespace="default"), spec=SPEC))
        await c.at(6.0)
        assert ctl.pods is not None


# --- races ---------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_race_the_pod_status_changes_between_read_and_write() -> None:
    """Another writer (the kubelet) updates the pod's status first: the controller's write
    conflicts, it reads the pod again and keeps the other writer's fields."""
    async with world() as (c, ctl):
        real = ctl.client.update_status
        raced = False

        async def racing(obj: Any) -> Any:
            nonlocal raced
            if obj.kind == "Pod" and not raced:
                raced = True
                p = c.pod(obj.metadata.name)
                c.server.update_status(replace(p, status=replace(p.status, phase="Pending", message="kubelet")))
            return await real(obj)

        ctl.client.update_status = racing  # type: ignore[method-assign]
        c.server.create(template())
        c.server.create(claim_pod("app"))
        await c.at(3.0)
        p = c.pod("app")
        assert (p.status.message, [s.name for s in p.status.resource_claim_statuses]) == ("kubelet", ["gpu"])
        assert len(claims(c)) == 1


@pytest.mark.asyncio
async def test_race_the_status_write_fails_after_the_claim_was_made() -> None:
    """Upstream's mutation cache: the retry finds the claim it made (by owner and annotation)
    instead of making a second one."""
    async with world() as (c, ctl):
        real = ctl.client.update_status
        failed = False

        async def failing(obj: Any) -> Any:
            nonlocal failed
            if obj.kind == "Pod" and not failed:
                failed = True
                raise InternalError("the status write failed")
            return await real(obj)

        ctl.client.update_status = failing  # type: ignore[method-assign]
        c.server.create(template())
        c.server.create(claim_pod("app"))
        await c.at(10.0)
        (made,) = claims(c)
        (status,) = c.pod("app").status.resource_claim_statuses
        assert status.resource_claim_name == made
        assert (ctl.counts["created"], ctl.counts["errors"]) == (1, 1)


@pytest.mark.asyncio
async def test_race_the_pod_is_synced_again_before_the_informers_see_the_claim_or_the_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pod's status was written but neither informer has caught up when the pod is synced
    again (a burst of pod events, a busy replay): the claim just made is remembered until the
    claim informer has it, so the second sync records it again rather than making a second.
    Informers woken for each batch (handed events in place, they never lag on a direct stream)."""
    monkeypatch.setattr(Informer, "deliver_in_place", False)
    async with world() as (c, ctl):
        real = ctl._record
        again: dict[str, str] = {}

        async def then_sync_again(pod: Any, new: dict[str, str]) -> Any:
            written = await real(pod, new)
            if not again:
                assert ctl.claims is not None
                assert not ctl.claims.objects()  # the claim not seen yet
                await ctl._handle_claim(pod, pod.spec.resource_claims[0], again)  # the pod as read before
            return written

        ctl._record = then_sync_again  # type: ignore[method-assign]
        c.server.create(template())
        c.server.create(claim_pod("app"))
        await c.at(10.0)
        (made,) = claims(c)
        assert again == {"gpu": made}
        (status,) = c.pod("app").status.resource_claim_statuses
        assert status.resource_claim_name == made
        assert ctl.counts["created"] == 1
