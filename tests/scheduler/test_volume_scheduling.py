"""The volume plugins end to end on the virtual clock: a scheduler with its storage informers
and the API server, the PV controller's part played by the test (it binds what the scheduler
chose, as upstream's controller would, through the API server only)."""

from __future__ import annotations

import msgspec
import pytest

from emulator.base.api.storage import ANN_BIND_COMPLETED
from tests.scheduler.plugins.volume_helpers import claim_pod, pv, pvc, storage_class
from tests.scheduler.world import World, node, world

ZONE = "topology.kubernetes.io/zone"


def _status(w: World, obj: object, phase: str) -> None:
    fresh = w.server.get(obj.kind, obj.metadata.name, obj.metadata.namespace)  # type: ignore[attr-defined]
    w.server.update_status(msgspec.structs.replace(fresh, status=msgspec.structs.replace(fresh.status, phase=phase)))


def _pod_message(w: World, name: str) -> str:
    cond = next((c for c in w.pod(name).status.conditions if c.type == "PodScheduled"), None)
    return cond.message if cond is not None else ""


@pytest.mark.asyncio
async def test_wait_for_first_consumer_claim_goes_to_the_node_of_its_local_pv() -> None:
    async with world() as w:
        w.server.create(storage_class("local", provisioner="kubernetes.io/no-provisioner"))
        for n in ("node-a", "node-b", "node-c"):
            w.server.create(node(n, labels={"kubernetes.io/hostname": n}))
        local = w.server.create(
            pv(
                "local-b",
                cls="local",
                affinity={"kubernetes.io/hostname": ["node-b"]},
                rv="",
                in_tree=("local", {"path": "/mnt/disks/b"}),
            )
        )
        _status(w, local, "Available")
        w.server.create(
            msgspec.structs.replace(
                pvc("data", cls="local", rv=""), status=msgspec.structs.replace(pvc("data").status, phase="Pending")
            )
        )
        w.server.create(claim_pod("db", "data"))

        def claimed() -> bool:
            ref = w.server.get("PersistentVolume", "local-b").spec.claim_ref
            return ref is not None and ref.name == "data"

        await w.until(claimed)
        assert not w.pod("db").spec.node_name  # PreBind waits for the PV controller
        # The PV controller's part: the claim is bound to the volume the scheduler chose.
        claim = w.server.get("PersistentVolumeClaim", "data", "default")
        ann = {**claim.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
        w.server.update(
            msgspec.structs.replace(
                claim,
                metadata=msgspec.structs.replace(claim.metadata, annotations=ann),
                spec=msgspec.structs.replace(claim.spec, volume_name="local-b"),
            )
        )
        await w.until(lambda: bool(w.pod("db").spec.node_name))
        assert w.pod("db").spec.node_name == "node-b"
        bound = w.server.get("PersistentVolume", "local-b")
        assert bound.spec.claim_ref.uid == claim.metadata.uid
        assert bound.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"


@pytest.mark.asyncio
async def test_bound_zonal_pv_without_its_zone_stays_pending_until_a_node_of_the_zone_returns() -> None:
    async with world() as w:
        w.server.create(storage_class("zonal", provisioner="ebs.csi.aws.com"))
        w.server.create(node("b-0", labels={ZONE: "zone-b"}))
        w.server.create(node("c-0", labels={ZONE: "zone-c"}))
        disk = pv(
            "disk-a",
            cls="zonal",
            claim=("default", "data"),
            affinity={ZONE: ["zone-a"]},
            phase="Bound",
            rv="",
            csi=("ebs.csi.aws.com", "vol-a"),
        )
        w.server.create(disk)
        claim = pvc("data", cls="zonal", volume="disk-a", bound=True, rv="")
        w.server.create(msgspec.structs.replace(claim, metadata=msgspec.structs.replace(claim.metadata, uid="")))
        w.server.create(claim_pod("db-0", "data"))
        await w.until(lambda: "volume node affinity conflict" in _pod_message(w, "db-0"))
        assert _pod_message(w, "db-0").startswith(
            "0/2 nodes are available: 2 node(s) had volume node affinity conflict."
        )
        assert not w.pod("db-0").spec.node_name
        # A node of zone-a returns: the Node/Add hint re-queues the pod, which lands there.
        w.server.create(node("a-0", labels={ZONE: "zone-a"}))
        await w.until(lambda: w.pod("db-0").spec.node_name == "a-0")
