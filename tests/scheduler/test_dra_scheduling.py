"""DynamicResources end to end on the virtual clock: the scheduler's DRA informers, the API
server, and the objects a driver (ResourceSlices) and the resourceclaim controller (claims)
would have written, written here by the test through the API server."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from emulator.base.api.core import PodResourceClaimStatus
from tests.scheduler.plugins.dra_api import api_claim, api_class, api_node, api_slice, claim_pod, template_pod
from tests.scheduler.world import World, world

RACE_LOSER_MESSAGE = (
    "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
    "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
)


def _fresh(obj: Any) -> Any:
    """As written by its author: no uid, no resourceVersion (the API server sets them)."""
    return msgspec.structs.replace(obj, metadata=msgspec.structs.replace(obj.metadata, uid="", resource_version=""))


def _pod_message(w: World, name: str) -> str:
    cond = next((c for c in w.pod(name).status.conditions if c.type == "PodScheduled"), None)
    return cond.message if cond is not None else ""


@pytest.mark.asyncio
async def test_two_pods_race_for_the_last_device() -> None:
    """p1 is reserved the only device (in flight) before p2's cycle: p2 never gets it."""
    async with world() as w:
        w.server.create(api_node("worker"))
        w.server.create(_fresh(api_class()))
        w.server.create(_fresh(api_slice("worker", devices=1)))
        for name in ("claim-1", "claim-2"):
            w.server.create(_fresh(api_claim(name)))
        p1 = claim_pod("p1", "claim-1")
        p2 = claim_pod("p2", "claim-2")
        w.server.create(msgspec.structs.replace(p1, metadata=msgspec.structs.replace(p1.metadata, uid="")))
        w.server.create(msgspec.structs.replace(p2, metadata=msgspec.structs.replace(p2.metadata, uid="")))
        await w.until(lambda: bool(w.pod("p1").spec.node_name) and bool(_pod_message(w, "p2")))
        assert w.pod("p1").spec.node_name == "worker"
        assert not w.pod("p2").spec.node_name
        assert _pod_message(w, "p2") == RACE_LOSER_MESSAGE
        won = w.server.get("ResourceClaim", "claim-1", "default")
        assert won.status.allocation is not None
        assert [(r.driver, r.pool, r.device, r.request) for r in won.status.allocation.devices.results] == [
            ("some-driver", "worker", "device-0", "req-0")
        ]
        assert [(r.resource, r.name, r.uid) for r in won.status.reserved_for] == [
            ("pods", "p1", w.pod("p1").metadata.uid)
        ]
        assert "resource.kubernetes.io/delete-protection" in won.metadata.finalizers
        lost = w.server.get("ResourceClaim", "claim-2", "default")
        assert lost.status.allocation is None


@pytest.mark.asyncio
async def test_a_pod_waits_for_its_claim_then_schedules() -> None:
    """PreEnqueue keeps the pod out until its claim exists; the claim's Add event brings it back."""
    async with world() as w:
        w.server.create(api_node("worker"))
        w.server.create(_fresh(api_class()))
        w.server.create(_fresh(api_slice("worker", devices=1)))
        p = claim_pod("p", "late")
        w.server.create(msgspec.structs.replace(p, metadata=msgspec.structs.replace(p.metadata, uid="")))
        await w.clock.sleep(30)
        assert not w.pod("p").spec.node_name
        assert _pod_message(w, "p") == ""  # held at PreEnqueue: no attempt, no condition
        w.server.create(_fresh(api_claim("late")))
        await w.until(lambda: bool(w.pod("p").spec.node_name))
        assert w.server.get("ResourceClaim", "late", "default").status.reserved_for[0].name == "p"


@pytest.mark.asyncio
async def test_template_claim_recorded_in_pod_status_lets_the_pod_schedule() -> None:
    """The controller's part (claim from the template, its name in status.resourceClaimStatuses)
    played by the test: the pod update (UpdatePodGeneratedResourceClaim) requeues the pod."""
    async with world() as w:
        w.server.create(api_node("worker"))
        w.server.create(_fresh(api_class()))
        w.server.create(_fresh(api_slice("worker", devices=1)))
        waiting = template_pod("p", "gpu", claim_name=None)
        w.server.create(msgspec.structs.replace(waiting, metadata=msgspec.structs.replace(waiting.metadata, uid="")))
        await w.clock.sleep(30)
        assert not w.pod("p").spec.node_name
        pod = w.pod("p")
        claim = _fresh(api_claim("p-gpu-x1y2z", owner="p"))
        owner = msgspec.structs.replace(claim.metadata.owner_references[0], uid=pod.metadata.uid)
        w.server.create(
            msgspec.structs.replace(claim, metadata=msgspec.structs.replace(claim.metadata, owner_references=[owner]))
        )
        status = msgspec.structs.replace(
            pod.status, resource_claim_statuses=[PodResourceClaimStatus(name="gpu", resource_claim_name="p-gpu-x1y2z")]
        )
        w.server.update_status(msgspec.structs.replace(pod, status=status))
        await w.until(lambda: bool(w.pod("p").spec.node_name))
        assert w.server.get("ResourceClaim", "p-gpu-x1y2z", "default").status.reserved_for[0].name == "p"


@pytest.mark.asyncio
async def test_post_filter_deallocates_a_claim_allocated_elsewhere() -> None:
    """A claim allocated for a node that is gone, reserved for no one: PostFilter clears its
    allocation, the claim's update requeues the pod, and it is allocated again on a node here."""
    async with world() as w:
        w.server.create(api_node("worker"))
        w.server.create(_fresh(api_class()))
        w.server.create(_fresh(api_slice("worker", devices=1)))
        w.server.create(_fresh(api_claim("gpu", allocation=("gone", "device-0"))))
        p = claim_pod("p", "gpu")
        w.server.create(msgspec.structs.replace(p, metadata=msgspec.structs.replace(p.metadata, uid="")))
        await w.until(lambda: bool(w.pod("p").spec.node_name))
        claim = w.server.get("ResourceClaim", "gpu", "default")
        assert [(r.pool, r.device) for r in claim.status.allocation.devices.results] == [("worker", "device-0")]
