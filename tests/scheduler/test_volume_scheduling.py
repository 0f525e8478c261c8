"""The volume plugins end to end on the virtual clock: a scheduler with its storage informers
and the API server, the PV controller's part played by the test (it binds what the scheduler
chose, as upstream's controller would, through the API server only)."""

from __future__ import annotations

import msgspec
import pytest

from emulator.base.api.storage import ANN_BIND_COMPLETED
from tests.scheduler.plugins.volume_helpers import claim_pod, csi_node, pv, pvc, storage_class
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


def _bind_claim(w: World, name: str, volume: str) -> None:
    """The PV controller's part: ``name`` bound to ``volume`` (volumeName, bind-completed)."""
    claim = w.server.get("PersistentVolumeClaim", name, "default")
    ann = {**claim.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
    w.server.update(
        msgspec.structs.replace(
            claim,
            metadata=msgspec.structs.replace(claim.metadata, annotations=ann),
            spec=msgspec.structs.replace(claim.spec, volume_name=volume),
        )
    )


@pytest.mark.asyncio
async def test_pod_on_an_unbound_immediate_claim_is_requeued_when_the_claim_binds() -> None:
    async with world() as w:
        w.server.create(storage_class("fast", mode="Immediate", provisioner="ebs.csi.aws.com"))
        w.server.create(node("n-0"))
        w.server.create(pvc("data", cls="fast", rv=""))
        w.server.create(claim_pod("app", "data"))
        await w.until(lambda: "pod has unbound immediate PersistentVolumeClaims" in _pod_message(w, "app"))
        disk = pv("disk", cls="fast", claim=("default", "data"), phase="Bound", rv="", csi=("ebs.csi.aws.com", "v"))
        w.server.create(disk)
        _bind_claim(w, "data", "disk")  # PVC/Update: VolumeBinding's hint queues the pod
        await w.until(lambda: w.pod("app").spec.node_name == "n-0")


@pytest.mark.asyncio
async def test_prebind_gives_up_after_bind_timeout_and_the_pod_is_retried() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}}]}],
    }
    async with world(config=config) as w:
        w.server.create(storage_class("prov", provisioner="csi.example.com"))
        w.server.create(node("n-0"))
        w.server.create(pvc("data", cls="prov", rv=""))
        w.server.create(claim_pod("app", "data"))

        def selected() -> bool:
            claim = w.server.get("PersistentVolumeClaim", "data", "default")
            return "volume.kubernetes.io/selected-node" in claim.metadata.annotations

        t0 = await w.until(selected)
        # Nobody provisions: after 30 s PreBind fails ("binding volumes: context deadline exceeded").
        failed = [e for e in w.server.list("Event")[0] if e.reason == "FailedScheduling"]
        assert not failed
        t1 = await w.until(lambda: any(e.reason == "FailedScheduling" for e in w.server.list("Event")[0]))
        assert 29.9 <= t1 - t0 <= 31.0, (t0, t1)
        msg = next(e.message for e in w.server.list("Event")[0] if e.reason == "FailedScheduling")
        assert "binding volumes: context deadline exceeded" in msg
        assert not w.pod("app").spec.node_name


@pytest.mark.asyncio
async def test_prebind_fails_when_the_provisioner_hands_the_claim_back() -> None:
    async with world() as w:
        w.server.create(storage_class("prov", provisioner="csi.example.com"))
        w.server.create(node("n-0"))
        w.server.create(pvc("data", cls="prov", rv=""))
        w.server.create(claim_pod("app", "data"))
        key = "volume.kubernetes.io/selected-node"
        await w.until(lambda: key in w.server.get("PersistentVolumeClaim", "data", "default").metadata.annotations)
        # The provisioner failed: it removes selected-node (upstream's signal to reschedule).
        claim = w.server.get("PersistentVolumeClaim", "data", "default")
        ann = {k: v for k, v in claim.metadata.annotations.items() if k != key}
        w.server.update(
            msgspec.structs.replace(claim, metadata=msgspec.structs.replace(claim.metadata, annotations=ann))
        )
        await w.until(lambda: any(e.reason == "FailedScheduling" for e in w.server.list("Event")[0]))
        msg = next(e.message for e in w.server.list("Event")[0] if e.reason == "FailedScheduling")
        assert 'provisioning failed for PVC "data"' in msg


@pytest.mark.asyncio
async def test_pod_waiting_for_a_pv_is_requeued_when_one_appears() -> None:
    async with world() as w:
        w.server.create(storage_class("local", provisioner="kubernetes.io/no-provisioner"))
        w.server.create(node("n-0", labels={"kubernetes.io/hostname": "n-0"}))
        w.server.create(pvc("data", cls="local", rv=""))
        w.server.create(claim_pod("app", "data"))
        await w.until(lambda: "didn't find available persistent volumes to bind" in _pod_message(w, "app"))
        local = w.server.create(
            pv(
                "pv-0",
                cls="local",
                rv="",
                affinity={"kubernetes.io/hostname": ["n-0"]},
                in_tree=("local", {"path": "/d"}),
            )
        )
        _status(w, local, "Available")  # PV/Add then PV/Update: VolumeBinding registers both
        await w.until(lambda: w.server.get("PersistentVolume", "pv-0").spec.claim_ref is not None)
        _bind_claim(w, "data", "pv-0")
        await w.until(lambda: w.pod("app").spec.node_name == "n-0")


@pytest.mark.asyncio
async def test_pod_over_the_attach_limit_is_requeued_when_the_csinode_limit_rises() -> None:
    async with world() as w:
        drv = "ebs.csi.aws.com"
        w.server.create(storage_class("ebs", provisioner=drv))
        w.server.create(node("n-0"))
        w.server.create(csi_node("n-0", {drv: 1}))
        for i in range(2):
            w.server.create(
                pv(f"d{i}", cls="ebs", claim=("default", f"c{i}"), phase="Bound", rv="", csi=(drv, f"v{i}"))
            )
            w.server.create(pvc(f"c{i}", cls="ebs", volume=f"d{i}", bound=True, rv=""))
        w.server.create(claim_pod("first", "c0"))
        await w.until(lambda: w.pod("first").spec.node_name == "n-0")
        w.server.create(claim_pod("second", "c1"))
        await w.until(lambda: "node(s) exceed max volume count" in _pod_message(w, "second"))
        current = w.server.get("CSINode", "n-0")
        w.server.update(msgspec.structs.replace(csi_node("n-0", {drv: 2}), metadata=current.metadata))
        await w.until(lambda: w.pod("second").spec.node_name == "n-0")
